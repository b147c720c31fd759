// The controller: what the leading manager replica runs. It watches
// RunnerSets, Runners and the Runners' Pods and Secrets, and feeds each
// RunnerSet's actor (spawned on first sight, supervised, restarted with
// backoff) the events of the set and of everything it owns, holding each
// set's actor handle. It is also the job router: the webhook intake (and
// each set's sweep of GitHub's queue) sends it job messages, and it routes
// each to the RunnerSet actors job_routing.hpp picks. A scale-set listener
// sends to its own set, not here.
#pragma once

#include <caf/all.hpp>
#include <string>
#include <vector>

#include "actors/protocols.hpp"
#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"

namespace octorun::controller {

struct controller_config {
  kube::config kube;
  kube::client_options kube_options;
  // Watched namespaces, each with its own informers (namespaced list and
  // watch calls, so namespaced RBAC suffices); empty: every namespace.
  std::vector<std::string> namespaces;
  std::size_t kube_workers = 16;  // the manager always sets it from --kube-workers
  // Settings for each RunnerSet actor (ns, name and kube pool are filled in).
  runnerset::runnerset_actor_config runnerset_defaults;
  // Also receives every RunnerSet and Runner informer event (the state
  // metrics' feed, actors/metrics/metrics_feed.hpp). None: nobody.
  watched::observer observer;
  // Runner actors record Events as (reporting controller, this instance).
  std::string reporting_controller = "octorun.io/manager";
  std::string reporting_instance = "octorun";
  bool record_events = true;
};

// The controller's interface: the job router's (both intakes send it their
// job messages; each set's actor what its credentials are) and its typed
// watches' events.
using controller_actor = protocols::job_router::extend<
    caf::reacts_to<watched::runnerset_event>, caf::reacts_to<watched::runner_event>,
    caf::reacts_to<watched::pod_event>, caf::reacts_to<watched::runner_class_event>,
    caf::reacts_to<watched::namespace_event>, caf::reacts_to<kube::informer_synced>,
    caf::reacts_to<messages::set_credentials>>;

controller_actor spawn_controller(caf::actor_system& sys, controller_config cfg);

}  // namespace octorun::controller
