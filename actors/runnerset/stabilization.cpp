#include "actors/runnerset/stabilization.hpp"

#include <algorithm>

namespace octorun::runnerset {

std::int32_t scale_down_window::floor(clock::time_point now, std::int32_t desired) {
  if (!samples_.empty() && samples_.back().desired == desired) {
    // Still in force: nothing changes.
  } else {
    // A sample dominated by the new, higher or equal one can never be the
    // maximum again; the one left before it was in force until the first
    // one dropped (or until now).
    auto replaced_at = now;
    while (!samples_.empty() && samples_.back().desired <= desired) {
      replaced_at = samples_.back().at;
      samples_.pop_back();
    }
    if (!samples_.empty()) samples_.back().until = std::min(samples_.back().until, replaced_at);
    samples_.push_back({now, desired});
  }
  // Samples replaced before the window began are out of it.
  while (samples_.front().until <= now - window_) samples_.pop_front();
  return samples_.front().desired;
}

std::int32_t scale_down_window::peek(clock::time_point now, std::int32_t desired) const {
  auto copy = *this;
  return copy.floor(now, desired);
}

std::optional<scale_down_window::clock::time_point> scale_down_window::next_drop(clock::time_point now,
                                                                                 std::int32_t desired) const {
  auto copy = *this;
  copy.floor(now, desired);
  const auto& highest = copy.samples_.front();
  if (highest.until == clock::time_point::max()) return std::nullopt;  // `desired` itself
  return highest.until + window_;
}

}  // namespace octorun::runnerset
