// A RunnerSet's event series (actors/metrics/event_metrics.hpp) are written
// by its actor and removed by the cleanup of an earlier actor of the same
// name, on another thread. Written and removed from two threads at once,
// they end as the last call left them. (The window the lock closes, a
// removal between a series' lookup and its write, is too narrow for this
// test to hit without it: it stands as a check of the series' lifetime.)
#include "actors/metrics/event_metrics.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace octorun::metrics {
namespace {

double deferred_of(const std::string& ns, const std::string& set) {
  for (const auto& family : collect_event_metrics()) {
    if (family.name != "octorun_github_deferred_removals") continue;
    for (const auto& m : family.metric) {
      int matched = 0;
      for (const auto& l : m.label)
        matched += (l.name == "namespace" && l.value == ns) + (l.name == "runnerset" && l.value == set);
      if (matched == 2) return m.gauge.value;
    }
  }
  return -1;
}

TEST(EventMetrics, ASetsSeriesWrittenAndRemovedFromTwoThreadsEndAsTheLastCallLeftThem) {
  std::thread writer([] {
    for (int i = 0; i < 20000; ++i) {
      set_deferred_removals("race", "linux", i);
      record_github_pause("race", "linux", i % 2 == 0);
    }
  });
  std::thread remover([] {
    for (int i = 0; i < 20000; ++i) forget_runnerset("race", "linux");
  });
  writer.join();
  remover.join();
  set_deferred_removals("race", "linux", 7);
  EXPECT_EQ(deferred_of("race", "linux"), 7);
  forget_runnerset("race", "linux");
  EXPECT_EQ(deferred_of("race", "linux"), -1) << "forgotten: no series left";
}

}  // namespace
}  // namespace octorun::metrics
