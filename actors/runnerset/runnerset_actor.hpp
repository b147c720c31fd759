// The RunnerSet actor: one per RunnerSet. It reads the set's GitHub
// credentials and owns the REST worker pool that uses them; it keeps the job
// demand of each variant; it creates Runners up to the desired count,
// replaces finished ones, and scales down idle ones — removing each from
// GitHub first and keeping any that GitHub reports busy; it publishes the
// set's status. Its Runners' actors live under a supervisor it owns, and
// reach GitHub through it (so a credential rotation reaches them all).
//
// Messages: kube::informer_event for the RunnerSet, its Runners and their
// Pods and Secrets; messages::job_available / job_assigned / job_started /
// job_completed; its Runner actors' GitHub requests (runner_github_api,
// the typed part of its interface: the rest arrives from informers and the
// controller, which hold untyped handles).
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "actors/metrics/recorder.hpp"
#include "actors/runner/runner_actor.hpp"
#include "actors/runnerset/runner_github_api.hpp"
#include "adapters/http/http_client.hpp"

namespace octorun::runnerset {

struct runnerset_actor_config {
  std::string ns;
  std::string name;
  caf::actor kube;  // kube::spawn_request_pool
  // Answers the set's GitHub calls instead of the clients it builds from its
  // credentials (REST and scale-set pools); none: those. For tests.
  caf::actor github;
  std::string user_agent = "octorun";
  std::size_t github_workers = 2;
  std::chrono::milliseconds resync{30'000};        // re-read credentials, reconcile from scratch
  std::chrono::milliseconds busy_recheck{30'000};  // a busy runner chosen for scale-down
  // Idle runners are removed only down to the highest desired count of this
  // window (actors/runnerset/stabilization.hpp); scale-up is immediate.
  std::chrono::milliseconds scale_down_window{10'000};
  std::chrono::milliseconds request_timeout{90'000};
  // Off (--webhook-intake=false): no deliveries come, a Webhook set says so
  // in its IntakeReady condition (intake_condition.hpp).
  bool webhook_intake_enabled = true;
  // TLS for GitHub calls (--github-ca-file: the system CAs plus a private one).
  http::tls_options github_tls;
  // The proxy for GitHub calls of sets without spec.proxy (the manager's
  // environment, http/proxy.hpp); none: libcurl reads the environment.
  std::optional<http::proxy_options> github_proxy;
  // Settings for the Runner actors (their ns/name/kube/github are filled in).
  runner::runner_actor_config runner_defaults;
  // The manager's metrics (runners created and deleted, failed actions,
  // listener sessions, GitHub requests); none: nothing is recorded.
  std::shared_ptr<metrics::recorder> metrics;
};

caf::actor spawn_runnerset(caf::local_actor* parent, runnerset_actor_config cfg);
caf::actor spawn_runnerset(caf::actor_system& sys, runnerset_actor_config cfg);

}  // namespace octorun::runnerset
