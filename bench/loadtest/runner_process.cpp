#include "bench/loadtest/runner_process.hpp"

#include <cstdio>

#include "bench/common/lifecycle.hpp"
#include "bench/loadtest/schedule.hpp"
#include "bench/loadtest/simulator_client.hpp"

namespace octorun::loadtest {

runner_process::runner_process(const std::string& sim_url, distribution start_delay, std::uint64_t seed)
    : start_delay_(std::move(start_delay)), rng_(seed), thread_([this, sim_url] { serve(sim_url); }) {}

runner_process::~runner_process() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void runner_process::pod_running(const std::string& runner) {
  {
    std::lock_guard lock(mu_);
    const auto delay = std::chrono::milliseconds(draw_ms(start_delay_, rng_));
    waiting_.emplace(std::chrono::steady_clock::now() + delay, runner);
  }
  cv_.notify_all();
}

std::map<std::string, double> runner_process::online_ms() const {
  std::lock_guard lock(mu_);
  return online_;
}

void runner_process::serve(const std::string& sim_url) {
  simulator_client sim(sim_url);
  for (;;) {
    std::string name;
    {
      std::unique_lock lock(mu_);
      for (;;) {
        if (stop_) return;
        if (waiting_.empty()) {
          cv_.wait(lock);
          continue;
        }
        // A runner drawn later may be due sooner: wake for every new one.
        const auto when = waiting_.top().first;
        if (std::chrono::steady_clock::now() >= when) break;
        cv_.wait_until(lock, when);
      }
      name = waiting_.top().second;
      waiting_.pop();
    }
    const double at = bench::unix_ms_now();
    if (auto r = sim.runner_online(name); !r) {
      std::fprintf(stderr, "octorun-loadtest: bringing runner %s online: %s\n", name.c_str(),
                   r.error().c_str());
      continue;
    }
    std::lock_guard lock(mu_);
    online_.emplace(name, at);
  }
}

}  // namespace octorun::loadtest
