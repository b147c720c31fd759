// What the tests of several manager replicas share (binary_test_base plus):
// replicas started by identity on one Lease, their logs (kept when the test
// fails), and the check that nothing is left once the jobs are done.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "test/binary/binary_test_base.hpp"

namespace octorun::test {

class replicas_test_base : public binary_test_base {
 protected:
  using binary_test_base::binary_test_base;

  ~replicas_test_base() override {
    for (auto& m : managers_)
      if (!HasFailure()) std::remove(m->log_path().c_str());
    managers_.clear();
  }

  // Starts replica `identity` of OCTORUN_BINARY with `extra` options.
  octorun_process& start_manager(const std::string& identity, const std::vector<std::string>& extra = {}) {
    auto args = octorun_args(c_.kubeconfig, ns_, identity);
    args.insert(args.end(), extra.begin(), extra.end());
    managers_.push_back(std::make_unique<octorun_process>(
        OCTORUN_BINARY, args, secret_, "/tmp/octorun-manager-" + ns_ + "-" + identity + ".log"));
    return *managers_.back();
  }

  std::string kubectl_count(const std::string& kind) {
    auto out = kubectl(c_, "-n " + ns_ + " get " + kind + " -o name | wc -l");
    return out.substr(0, out.find_first_of(" \n"));
  }

  // No Runner, pod or JIT Secret left, and no runner left on GitHub.
  void expect_nothing_left(const std::string& why) {
    EXPECT_TRUE(watch_->wait([](const auto& w) { return w.runners() == 0 && w.pods() == 0; },
                             std::chrono::seconds(120)))
        << why << ": " << kubectl(c_, "-n " + ns_ + " get runners,pods") << log_tails();
    EXPECT_EQ(kubectl_count("secrets -l octorun.io/runner"), "0") << why;
    EXPECT_EQ(sim_->state_json().find("\"ephemeral\":true"), std::string::npos)
        << why << ": a GitHub runner leaked";
  }

  std::string log_tails() {
    std::string out;
    for (const auto& m : managers_) out += "\n--- " + m->log_path() + ":\n" + m->log_tail();
    return out;
  }

  std::string secret_ = "It's a Secret to Everybody";
  std::vector<std::unique_ptr<octorun_process>> managers_;
};

}  // namespace octorun::test
