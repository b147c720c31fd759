#include "actors/runnerset/stabilization.hpp"

namespace octorun::runnerset {

std::int32_t scale_down_window::floor(clock::time_point now, std::int32_t desired) {
  while (!samples_.empty() && samples_.front().at < now - window_) samples_.pop_front();
  // A sample dominated by a newer, higher one can never be the maximum again.
  while (!samples_.empty() && samples_.back().desired <= desired) samples_.pop_back();
  samples_.push_back({now, desired});
  return samples_.front().desired;
}

}  // namespace octorun::runnerset
