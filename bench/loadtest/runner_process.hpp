// The runner process the tool plays in every runner pod: once the pod runs,
// the runner comes online on the simulator after a start-up delay drawn from
// --runner-start (registration and the broker connection of a real runner),
// off the watch's thread. Records when each runner came online.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/loadtest/options.hpp"

namespace octorun::loadtest {

class runner_process {
 public:
  runner_process(const std::string& sim_url, distribution start_delay, std::uint64_t seed);
  ~runner_process();
  runner_process(const runner_process&) = delete;
  runner_process& operator=(const runner_process&) = delete;

  // The runner's pod runs: bring it online once its start-up delay has passed.
  void pod_running(const std::string& runner);
  // Unix ms at which each runner connected to the simulator (the instant
  // before the call, since the simulator may assign it a job during the call).
  std::map<std::string, double> online_ms() const;

 private:
  using due = std::pair<std::chrono::steady_clock::time_point, std::string>;
  void serve(const std::string& sim_url);

  distribution start_delay_;
  std::mt19937_64 rng_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<due, std::vector<due>, std::greater<>> waiting_;  // earliest first
  std::map<std::string, double> online_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace octorun::loadtest
