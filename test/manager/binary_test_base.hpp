// What the binary tests share: the cluster with the CRDs, a fresh namespace,
// the GitHub simulator with organisation "acme", and a watch of the
// namespace that brings each runner pod's runner online (binary_harness.hpp).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "adapters/kube/config.hpp"
#include "test/manager/binary_harness.hpp"
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
    watch_.reset();
    kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
  }

  const cluster_info& c_;
  std::string ns_;
  std::unique_ptr<sim::simulator> sim_;
  std::unique_ptr<namespace_watch> watch_;
};

}  // namespace octorun::test
