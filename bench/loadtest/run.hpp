// One load-test run, from the checks to the report (see README.md).
#pragma once

#include <atomic>

#include "bench/loadtest/options.hpp"

namespace octorun::loadtest {

// Exit statuses (README.md).
inline constexpr int exit_passed = 0, exit_target_missed = 1, exit_unusable = 2, exit_timed_out = 3,
                     exit_interrupted = 130;

// Runs the whole load test; `interrupted` is set by a signal (Ctrl-C), after
// which the run stops, cleans up and returns exit_interrupted; `abandon`
// (a second signal) cuts the cleanup short.
int run(const options& o, const std::atomic<bool>& interrupted, const std::atomic<bool>& abandon);

}  // namespace octorun::loadtest
