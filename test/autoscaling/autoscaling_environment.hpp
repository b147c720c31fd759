// The environment the autoscaling tests share (autoscaling_test.cpp), every
// part real: a private control plane (the aggregation layer configured,
// kube-controller-manager running the HPA controller every second), the
// octorun binary watching one namespace, the GitHub simulator delivering its
// webhooks, Prometheus (Debian's package) scraping the manager, and
// prometheus-adapter (built from its Go module) with
// deploy/monitoring/prometheus-adapter-rules.yaml registered as
// v1beta1.custom.metrics.k8s.io.
//
// The adapter runs on this machine, not in a pod: the API server's
// aggregation layer reaches it at an EndpointSlice address (aggregator
// routing), and EndpointSlices refuse loopback addresses, so it listens on
// the machine's own address; its serving certificate is the cluster CA's for
// prometheus-adapter.NS.svc, the name the aggregator verifies.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "adapters/http/http_client.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/chart/helm.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::test::autoscaling {

using clock_type = std::chrono::steady_clock;

extern const std::string deploy;    // deploy/ in the source tree
extern const std::string set_name;  // test::create_runnerset's

// The body of a 200 answer to GET `url` ("" otherwise).
std::string http_get(const std::string& url);

struct environment {
  const test::cluster_info* c = nullptr;
  std::string dir;  // scratch: configs, certificates, logs, Prometheus' data
  std::string ns;   // the manager's namespace (it watches this one only)
  std::string ip;   // where the adapter listens
  int prometheus_port = 0, adapter_port = 0;
  std::string metrics_url;  // the manager's /metrics
  std::unique_ptr<sim::simulator> sim;
  std::unique_ptr<test::namespace_watch> watch;
  std::unique_ptr<test::octorun_process> manager, prometheus, adapter;

  std::string kubectl(const std::string& args) const { return test::kubectl(*c, args); }
  // kubectl that may fail: its exit status and everything it printed.
  test::command_result try_kubectl(const std::string& args) const {
    return test::run_shell(test::shell_quote(c->bin + "/kubectl") +
                           " --kubeconfig=" + test::shell_quote(c->kubeconfig) + " " + args);
  }
  std::string get(const std::string& what, const std::string& in_ns = "") const {
    auto r = try_kubectl("-n " + (in_ns.empty() ? ns : in_ns) + " get " + what);
    return r.status == 0 ? r.output : std::string{};
  }

  std::string prometheus_url() const { return "http://127.0.0.1:" + std::to_string(prometheus_port); }

  // An instant query's result as Prometheus' JSON ("" when it failed).
  std::string query(const std::string& promql) const {
    return http_get(prometheus_url() + "/api/v1/query?query=" + http::url_encode(promql));
  }

  // prometheus-adapter on ip:adapter_port, serving the chart's rules from Prometheus.
  void start_adapter();

  // The binary test/tools/prometheus-adapter/build.sh built ("" if it failed).
  static std::string adapter_binary();

  std::string logs() const {
    std::string out;
    for (auto [name, p] : {std::pair{"manager", manager.get()}, std::pair{"adapter", adapter.get()}})
      if (p != nullptr) out += std::string("--- ") + name + " log (tail):\n" + p->log_tail(3000) + "\n";
    return out;
  }
};

// Brings every part up in `e`. Throws a runtime_error naming what did not come up.
void set_up(environment& e);

}  // namespace octorun::test::autoscaling
