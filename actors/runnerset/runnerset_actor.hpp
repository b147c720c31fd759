// The RunnerSet actor: one per RunnerSet. It reads the set's GitHub
// credentials and owns the REST worker pool that uses them; it keeps the job
// demand of each variant; it creates Runners up to the desired count,
// replaces finished ones, and scales down idle ones — removing each from
// GitHub first and keeping any that GitHub reports busy; it publishes the
// set's status. Its Runners' actors live under a supervisor it owns, and
// reach GitHub through it (so a credential rotation reaches them all).
//
// Its interface, runnerset_actor below: the watch events of the RunnerSet,
// its Runners and their Pods, and the job messages (from the controller,
// which holds the set's handle: child_handles::send checks them); its
// listeners' session messages (straight from them) and setup requests; its
// Runner actors' GitHub requests (runner_github_api).
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/listener/listener_actor.hpp"
#include "actors/metrics/recorder.hpp"
#include "actors/protocols.hpp"
#include "actors/runner/runner_actor.hpp"
#include "actors/runnerset/pod_resources.hpp"
#include "actors/wall_clock.hpp"
#include "actors/watched.hpp"
#include "adapters/http/http_client.hpp"
#include "messages/platform.hpp"
#include "messages/scale_sets.hpp"
#include "model/class_rules.hpp"
#include "model/scope.hpp"

namespace octorun::runnerset {

struct runnerset_actor_config {
  std::string ns;
  std::string name;
  caf::actor kube;  // kube::spawn_request_pool
  // Where its webhook sweep sends the job messages it finds: the
  // controller's job router, which routes them as it routes deliveries
  // (actors/controller/job_routing.hpp). None: straight to the set (a set
  // run on its own, as in tests). Its listeners send to the set itself.
  protocols::job_router job_router;
  // Told what the set's credentials are each time they load (the job
  // router: a delivery naming an App installation goes only to that
  // installation's sets). None: nobody (a set run on its own).
  caf::typed_actor<caf::reacts_to<messages::set_credentials>> credentials_told;
  // Answers the set's GitHub calls instead of the clients it builds from its
  // credentials (REST and scale-set pools); none: those. For tests.
  caf::actor github;
  // Spawns a variant's listener (Listener intake); none: listener::spawn_listener.
  // For tests that play the listener's messages themselves (a listener's
  // worker runs on a thread of its own, which CAF's deterministic scheduler
  // cannot drive).
  std::function<caf::actor(caf::local_actor*, listener::listener_config)> spawn_listener;
  std::string user_agent = "octorun";
  std::size_t github_workers = 2;
  std::chrono::milliseconds resync{30'000};        // re-read credentials, reconcile from scratch
  std::chrono::milliseconds busy_recheck{30'000};  // a busy runner chosen for scale-down
  // Idle runners are removed only down to the highest desired count of this
  // window (actors/runnerset/stabilization.hpp); scale-up is immediate.
  std::chrono::milliseconds scale_down_window{10'000};
  // The jobs a start-time target sizes warm runners from: those of this
  // window (model::start_time_rule, whose default the manager uses).
  std::chrono::milliseconds start_time_window{std::chrono::minutes(10)};
  std::chrono::milliseconds request_timeout{90'000};
  // After the apiserver accepted a status write, the next waits this long
  // (status_write_due, set_status.hpp); zero: written as soon as the one
  // before it returns. The manager uses default_status_hold.
  std::chrono::milliseconds status_hold{0};
  // Off (--webhook-intake=false): no deliveries come, a Webhook set says so
  // in its IntakeReady condition (intake_condition.hpp).
  bool webhook_intake_enabled = true;
  // The ClusterRole a kubernetes-mode set's ServiceAccount is bound to
  // (--runner-kubernetes-mode-cluster-role; pod_resources.hpp); empty: none.
  std::string hooks_cluster_role;
  // The manager's own reads in the set's namespace (--tenant-reads-cluster-
  // role; pod_resources.hpp); none: its RBAC reads wherever it watches.
  manager_reads reads;
  // Webhook intake: how often demand is reconciled from GitHub's queued and
  // running jobs (webhook_sweep.hpp; also once when the actor starts). Zero:
  // only at the start.
  std::chrono::milliseconds webhook_sweep{60'000};
  // TLS for GitHub calls (--github-ca-file: the system CAs plus a private one).
  http::tls_options github_tls;
  // The proxy for GitHub calls of sets without spec.proxy (the manager's
  // environment, http/proxy.hpp); none: libcurl reads the environment.
  std::optional<http::proxy_options> github_proxy;
  // The GitHub hosts the platform lets a scope reach over plain http or by
  // address (--github-http-hosts): checked again before credentials go out.
  model::scope_rules scopes;
  // What the platform decides beyond its RunnerClasses (--allow-sets-without-class):
  // the set is judged against its class (model::judge_set) on every
  // platform_update and spec change. A set run on its own (tests) that names
  // no class is served before any platform_update comes where this allows it.
  model::class_policy classes{.allow_sets_without_class = true, .scopes = {}};
  // Where a RunnerClass's credentials Secret lives (--platform-namespace).
  std::string platform_namespace = "octorun-system";
  // kube::spawn_event_recorder: the set's Events (actors/runnerset/set_events.hpp);
  // none: no Events.
  caf::actor events;
  // Settings for the Runner actors (their ns/name/kube/github are filled in).
  runner::runner_actor_config runner_defaults;
  // The wall clock, in seconds since the epoch: the times the set writes
  // (conditions' lastTransitionTime), a job's start time, and where GitHub's
  // rate-limit reset (an epoch second) falls on the actor's own clock, on
  // which every wait runs. A test can fix both.
  octorun::wall_clock wall_clock = &epoch_seconds_now;
  // The manager's metrics (runners created and deleted, failed actions,
  // listener sessions, GitHub requests); none: nothing is recorded.
  std::shared_ptr<metrics::recorder> metrics;
};

// The manager's status hold: a busy set writes its status at most every 2 s
// (as often as the leader renews its Lease), and a reader sees counts at
// most ~2 s old: well inside the HPA's 15 s sync of the scale subresource
// (status.replicas) and any Prometheus scrape interval. A burst's status
// writes become one per hold instead of one per Runner event.
inline constexpr std::chrono::milliseconds default_status_hold{2'000};

using runnerset_actor =
    protocols::runner_github_api::extend_with<protocols::listener_setup_api, protocols::job_router>::extend<
        caf::reacts_to<watched::runnerset_event>, caf::reacts_to<watched::runner_event>,
        caf::reacts_to<watched::pod_event>, caf::reacts_to<messages::platform_update>,
        caf::reacts_to<messages::scale_set_names_taken>>;

runnerset_actor spawn_runnerset(caf::local_actor* parent, runnerset_actor_config cfg);
runnerset_actor spawn_runnerset(caf::actor_system& sys, runnerset_actor_config cfg);

}  // namespace octorun::runnerset
