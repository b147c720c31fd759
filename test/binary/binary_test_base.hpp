// What the binary tests share: the cluster with the CRDs, a fresh namespace,
// the GitHub simulator with organisation "acme", and a watch of the
// namespace that brings each runner pod's runner online (binary_harness.hpp).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "adapters/kube/config.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::test {

class binary_test_base : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { install_crds(cluster()); }

  binary_test_base(const std::string& ns_prefix, const sim::simulator_options& options)
      : c_(cluster()), ns_(make_namespace(c_, ns_prefix)) {
    auto sim = sim::simulator::start(options);
    if (!sim) ADD_FAILURE() << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
    auto cfg = kube::load_kubeconfig(c_.kubeconfig);
    if (!cfg) ADD_FAILURE() << cfg.error();
    watch_ = std::make_unique<namespace_watch>(*cfg, ns_, *sim_);
  }

  ~binary_test_base() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    watch_.reset();
    kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
  }

  // Starts `binary` as the one manager replica (identity "m", its log in
  // /tmp, kept when the test fails); the URL of its webhook intake once it
  // leads ("" if it does not within a minute).
  std::string start_manager_process(const std::string& binary, const std::string& webhook_secret) {
    manager_ = std::make_unique<octorun_process>(binary, octorun_args(c_.kubeconfig, ns_, "m"),
                                                 webhook_secret, "/tmp/octorun-manager-" + ns_ + ".log");
    return manager_->wait_leading(std::chrono::seconds(60));
  }

  // The credentials Secret "github" (the simulator's PAT) and the RunnerSet
  // "linux" (runner label "linux", minRunners 0) of organisation acme, with
  // `intake` (Webhook or Listener).
  void create_linux_set(const std::string& intake, int max_runners) {
    kubectl(c_, "-n " + ns_ +
                    " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
    kubectl(
        c_,
        "-n " + ns_ + " create -f - >/dev/null <<'EOF'\n" +
            R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"linux"},"spec":{)"
            R"("scopeURL":")" +
            sim_->ghes_url() + "/acme" + R"(","credentialsSecretName":"github","intake":")" + intake +
            R"(","runnerLabels":["linux"],"minRunners":0,"maxRunners":)" + std::to_string(max_runners) +
            R"(,"template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}}})"
            "\nEOF");
  }

  const cluster_info& c_;
  std::string ns_;
  std::unique_ptr<sim::simulator> sim_;
  std::unique_ptr<namespace_watch> watch_;
  std::unique_ptr<octorun_process> manager_;  // start_manager_process
};

}  // namespace octorun::test
