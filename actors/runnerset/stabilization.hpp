// Scale-down stabilization, as the HorizontalPodAutoscaler does it: runners
// are removed only down to the highest desired count seen within a window.
// Demand dips for a moment whenever one job completes before the next is
// assigned (the scale set's statistics move job by job); without a window
// each dip removes a runner that is being registered and the next message
// creates another — churn in Kubernetes writes and GitHub registrations.
// Scale-up is never delayed.
//
// A desired count holds from the moment it is recorded until the next one:
// a count recorded long ago and never replaced is still the count of the
// whole window, so a dip after a quiet spell waits the full window too.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace octorun::runnerset {

class scale_down_window {
 public:
  using clock = std::chrono::steady_clock;

  explicit scale_down_window(clock::duration window) : window_(window) {}

  // Records `desired` at `now`; returns the count scale-down may go down to:
  // the highest desired within the window (never below `desired`).
  std::int32_t floor(clock::time_point now, std::int32_t desired);
  // What floor() would return, recording nothing.
  std::int32_t peek(clock::time_point now, std::int32_t desired) const;
  // When the count peek() returns would next fall, were `desired` recorded
  // at `now` and kept: the moment the highest count leaves the window.
  // nullopt: it is `desired` already.
  std::optional<clock::time_point> next_drop(clock::time_point now, std::int32_t desired) const;

 private:
  struct sample {
    clock::time_point at;
    std::int32_t desired;
    clock::time_point until = clock::time_point::max();  // replaced then; max: still in force
  };
  clock::duration window_;
  std::deque<sample> samples_;  // decreasing desired values, oldest first
};

}  // namespace octorun::runnerset
