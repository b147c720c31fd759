// Waiting in tests: poll() (test/support/poll.hpp) plus a test failure on
// timeout that says what was awaited, for how long, and what was last seen.
//
// Polling is for what offers no event to wait on; where there is one (a
// watch, a reply, the simulator's wait_until), wait on it instead.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

#include "test/support/poll.hpp"

namespace octorun::test {

namespace wait_detail {
// A value as a failure message shows it: strings quoted as they are (kubectl
// output stays readable), anything else as GoogleTest prints it.
template <class T>
std::string describe(const T& value) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>)
    return "'" + std::string(std::string_view(value)) + "'";
  else
    return testing::PrintToString(value);
}
inline double seconds(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }
}  // namespace wait_detail

// As poll(); on timeout records a non-fatal test failure naming `what`, the
// time waited and the last value observed, followed by `context()` when
// given (e.g. the objects in the namespace, a process's log).
template <class Observe, class Done>
auto wait_for(Observe&& observe, Done&& done, std::chrono::milliseconds within, std::string_view what,
              const std::function<std::string()>& context = {}) {
  auto seen = poll(observe, done, within);
  if (!seen)
    ADD_FAILURE() << "timed out after " << wait_detail::seconds(within) << " s waiting for " << what
                  << "; last observed: " << wait_detail::describe(seen.last) << "\n"
                  << (context ? context() : std::string{});
  return seen;
}

// Waits until `observe()` returns `want`; the failure shows both.
template <class Observe, class T>
auto wait_for_value(Observe&& observe, const T& want, std::chrono::milliseconds within, std::string_view what,
                    const std::function<std::string()>& context = {}) {
  return wait_for(
      observe, [&](const auto& got) { return got == want; }, within,
      std::string(what) + " to be " + wait_detail::describe(want), context);
}

// Waits until `done()` holds (a condition with no value worth showing, or
// an attempt that acts and reports whether it took effect).
inline bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds within,
                     std::string_view what, const std::function<std::string()>& context = {}) {
  auto held = [](bool h) { return h; };
  if (poll(done, held, within)) return true;
  ADD_FAILURE() << "timed out after " << wait_detail::seconds(within) << " s waiting for " << what << "\n"
                << (context ? context() : std::string{});
  return false;
}

}  // namespace octorun::test
