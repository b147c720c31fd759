// The tests' one poll loop: observe something that offers no event to wait
// on (another process's log or endpoint, the apiserver through kubectl, a
// collector) until a condition holds or a deadline passes. Free of
// GoogleTest so that the benchmarks can use it; test/support/wait.hpp adds
// the test failure on timeout.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>
#include <type_traits>
#include <utility>

namespace octorun::test {

// What a wait saw: whether the condition held before the deadline, and the
// last value observed (the one that met it, when it did).
template <class T>
struct observed {
  bool met = false;
  T last{};
  explicit operator bool() const { return met; }
};

namespace poll_detail {
// The pause between observations: 10 ms, doubling, at most 200 ms, so a
// condition that holds soon is seen soon and a slow one costs few observations.
inline constexpr std::chrono::milliseconds first_pause{10};
inline constexpr std::chrono::milliseconds max_pause{200};
}  // namespace poll_detail

// Observes `observe()` until `done(value)` holds or `within` passes (the value
// is observed once more at the deadline). Records no failure: for callers
// that decide themselves what a timeout means.
template <class Observe, class Done>
auto poll(Observe&& observe, Done&& done, std::chrono::milliseconds within)
    -> observed<std::decay_t<std::invoke_result_t<Observe&>>> {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + within;
  auto pause = poll_detail::first_pause;
  observed<std::decay_t<std::invoke_result_t<Observe&>>> seen;
  for (;;) {
    seen.last = observe();
    if (done(std::as_const(seen.last))) {
      seen.met = true;
      return seen;
    }
    const auto now = clock::now();
    if (now >= deadline) return seen;
    // Between observations, not a synchronisation: the next observation decides.
    std::this_thread::sleep_for(std::min<clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, poll_detail::max_pause);
  }
}

}  // namespace octorun::test
