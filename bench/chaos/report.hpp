// The end of a chaos run: what leaked, and the report (faults by kind,
// jobs, violations with the timeline around each, memory, queue times).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/chaos/harness.hpp"

namespace octorun::chaos {

struct report {
  std::string profile;
  std::chrono::seconds duration{};
  std::uint64_t seed = 0;
  std::map<fault_kind, int> injected, skipped;
  world::jobs_summary jobs;
  std::vector<violation> violations;
  std::vector<std::string> leaks;
  std::vector<replicas::memory> rss_start, rss_end;
  int restarts = 0, crashes = 0;
  bool drained = false, clean_stop = false;
  std::string load_start, load_end;
  double wall_seconds = 0;
};

// After the teardown: Runners, runner Pods and Secrets left in the
// namespaces; runners, scale sets and sessions left on GitHub. Each is also
// recorded as a violation ("leak").
std::vector<std::string> check_leaks(env& e);

// Markdown: the summary table, then each violation with its timeline.
std::string render(const report& r, const timeline& tl);

}  // namespace octorun::chaos
