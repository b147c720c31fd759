// The manager process's parts, split by where they run. Every replica serves
// /healthz and /readyz (on loopback), /metrics and (with --admission) the admission
// webhook; only the replica holding the Lease runs the controller and the
// GitHub webhook intake. Starting a server blocks, so both start on the
// caller's thread (main), never on an actor of the shared scheduler; their
// failures come back as errors for main to report.
#pragma once

#include <atomic>
#include <caf/all.hpp>
#include <memory>
#include <string>

#include "actors/metrics/manager_metrics.hpp"
#include "actors/runnerset/pod_resources.hpp"
#include "adapters/github/webhook_intake.hpp"
#include "adapters/http/http_client.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"
#include "cmd/octorun/options.hpp"
#include "common/expected.hpp"

namespace octorun::manager {

// What the options resolve to before anything starts (files read, defaults filled).
struct settings {
  kube::config kube;
  // With the --kube-qps/--kube-burst token bucket and the metrics as observer.
  kube::client_options kube_options;
  // The process's metrics (served on /metrics by every replica).
  std::shared_ptr<metrics::manager_metrics> metrics;
  std::string identity;
  std::string webhook_secret;  // empty with --webhook-intake=false or --insecure-webhook
  http::tls_options github_tls;
  // The proxy the environment names (http/proxy.hpp), for the GitHub calls
  // of every RunnerSet without its own spec.proxy.
  http::proxy_options github_proxy;
};

// Reads what the options name (kubeconfig, webhook secret, GitHub CA bundle);
// the error is one sentence naming the flag or file at fault.
expected<settings, std::string> resolve(const options& o);

// The token bucket every Kubernetes client of the process shares; qps 0: none.
std::shared_ptr<kube::token_bucket> kube_limiter(const options& o);

class manager {
 public:
  // Starts the parts every replica runs. Blocking.
  static expected<std::unique_ptr<manager>, std::string> start(caf::actor_system& sys, options o, settings s);
  ~manager();
  manager(const manager&) = delete;
  manager& operator=(const manager&) = delete;

  // Leadership gained: starts the controller, and the webhook intake (every
  // replica serves it, unless --webhook-intake=false) hands deliveries to it.
  // Blocking; at most once.
  expected<ok_t, std::string> lead();
  bool leading() const { return static_cast<bool>(controller_); }
  // Whether this replica leads, for the metrics.
  void set_leader_gauge(bool leading);

  // Where the every-replica endpoints listen: the probes' base URL, the
  // metrics URL, the admission port (0: none), the intake URL (empty: none).
  std::string probes_url() const;
  std::string metrics_url() const;
  std::uint16_t admission_port() const;
  std::string intake_url() const;

  // Stops the intake first (no new deliveries), then the controller (its
  // writes in flight finish or time out), then the every-replica parts.
  void stop();

 private:
  struct replica_parts;
  manager(caf::actor_system& sys, options o, settings s);
  expected<ok_t, std::string> start_webhook_intake();
  caf::actor_system& sys_;
  options options_;
  settings settings_;
  std::unique_ptr<replica_parts> replica_;
  // The reads binding each RunnerSet makes (--tenant-reads-cluster-role).
  runnerset::manager_reads reads_;
  caf::actor controller_;
  // Every replica, unless --webhook-intake=false: a follower answers 202 and
  // leaves the job to the leader's sweep of GitHub's queue (docs/intakes.md).
  std::unique_ptr<github::webhook_intake> intake_;
};

}  // namespace octorun::manager
