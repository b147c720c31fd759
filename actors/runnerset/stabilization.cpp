#include "actors/runnerset/stabilization.hpp"

#include <algorithm>

namespace octorun::runnerset {

std::int32_t scale_down_window::floor(clock::time_point now, std::int32_t desired) {
  while (!samples_.empty() && samples_.front().at < now - window_) samples_.pop_front();
  // A sample dominated by a newer, higher one can never be the maximum again.
  while (!samples_.empty() && samples_.back().desired <= desired) samples_.pop_back();
  samples_.push_back({now, desired});
  return samples_.front().desired;
}

std::int32_t scale_down_window::peek(clock::time_point now, std::int32_t desired) const {
  // Samples are decreasing oldest first: the first one still inside the
  // window is the highest there.
  for (const auto& s : samples_)
    if (!(s.at < now - window_)) return std::max(s.desired, desired);
  return desired;
}

}  // namespace octorun::runnerset
