// Client-side politeness, pure and clock-injectable: a QPS/burst token bucket
// shared by every request of a process, and capped jittered backoff.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>

namespace octorun::kube {

using steady_clock = std::chrono::steady_clock;
using clock_fn = std::function<steady_clock::time_point()>;

// Go's rate.Limiter semantics: `reserve` always takes a token and says how
// long the caller must wait for it, so waiting callers queue fairly.
// Thread-safe. qps <= 0 disables limiting.
class token_bucket {
 public:
  token_bucket(
      double qps, int burst, clock_fn now = [] { return steady_clock::now(); });
  // Takes one token; returns the wait before it may be used (zero if available).
  std::chrono::nanoseconds reserve();
  // Takes a token only if one is available now.
  bool try_take();
  // reserve() and sleep: only on detached workers / blocking threads.
  void acquire();
  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void refill(steady_clock::time_point now);
  double qps_;
  int burst_;
  clock_fn now_;
  std::mutex mu_;
  double tokens_;
  steady_clock::time_point last_;
};

// Exponential backoff with jitter: attempt n waits a uniformly random time in
// [(1 - jitter) * d, d] with d = min(initial * factor^n, max). `reset` after
// a period of health (the caller decides what healthy means).
class backoff {
 public:
  backoff(std::chrono::milliseconds initial = std::chrono::milliseconds(800),
          std::chrono::milliseconds max = std::chrono::seconds(30), double factor = 2.0, double jitter = 0.5,
          uint64_t seed = std::random_device{}());
  std::chrono::milliseconds next();
  void reset() { attempt_ = 0; }
  int attempts() const { return attempt_; }

 private:
  std::chrono::milliseconds initial_, max_;
  double factor_, jitter_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

// Sleeps for `d`, waking within ~20 ms once `stop` (if given) is set.
void sleep_unless(const std::atomic<bool>* stop, std::chrono::milliseconds d);

}  // namespace octorun::kube
