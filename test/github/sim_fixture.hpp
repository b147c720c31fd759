// A simulator per test plus clients with fast, observable retry policies.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "adapters/github/rest_client.hpp"
#include "test/simulator/simulator.hpp"

namespace octorun::github::testing {

// Records the backoff sleeps instead of sleeping.
struct sleep_log {
  std::mutex mu;
  std::vector<std::chrono::milliseconds> waits;
  void operator()(std::chrono::milliseconds d) {
    std::lock_guard l(mu);
    waits.push_back(d);
  }
  std::vector<std::chrono::milliseconds> get() {
    std::lock_guard l(mu);
    return waits;
  }
};

inline call_options fast_calls(std::shared_ptr<sleep_log> log) {
  call_options c;
  c.retry.base = std::chrono::milliseconds(10);
  c.retry.cap = std::chrono::milliseconds(100);
  c.retry.secondary_min = std::chrono::milliseconds(1000);
  c.retry.max_blocking_wait = std::chrono::seconds(120);
  c.sleep = [log](std::chrono::milliseconds d) { (*log)(d); };
  c.jitter = [] { return 0.5; };
  c.budget = std::make_shared<rate_limit_budget>();
  c.timeout = std::chrono::seconds(20);
  return c;
}

inline sim::fault fault_at(std::string endpoint, int status, int count) {
  sim::fault f;
  f.endpoint = std::move(endpoint);
  f.status = status;
  f.count = count;
  return f;
}

inline std::unique_ptr<sim::simulator> start_simulator(sim::simulator_options o = {}) {
  auto s = sim::simulator::start(std::move(o));
  if (!s) ADD_FAILURE() << s.error();
  if (!s) return nullptr;
  (*s)->add_repository("octo/app");
  (*s)->add_organization("octo");
  (*s)->add_enterprise("big");
  return std::move(*s);
}

}  // namespace octorun::github::testing
