// A CAF actor system on CAF's deterministic test scheduler, for GoogleTest:
// actors run only when the test says so, and time is virtual.
#pragma once

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <chrono>

namespace octorun::test {

struct caf_test_system {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;

  caf_test_system()
      : sys(configure(cfg)), sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {}

  // Runs every actor until no message is left.
  void run() { sched.run(); }
  // Moves the virtual clock and runs whatever became due.
  void advance(std::chrono::nanoseconds d) {
    sched.advance_time(d);
    sched.run();
  }

 private:
  static caf::actor_system_config& configure(caf::actor_system_config& cfg) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.inline-output", true);
    return cfg;
  }
};

}  // namespace octorun::test
