// The controller: what the leading manager replica runs. It watches
// RunnerSets, Runners and the Runners' Pods and Secrets, and feeds each
// RunnerSet's actor (spawned on first sight, supervised, restarted with
// backoff) the events of the set and of everything it owns. Job messages
// from the intakes are routed too: demand (queued) to the RunnerSet whose
// scope and labels fit the job, a job's start and end to the set that owns
// the named runner (an end to every set, so demand never leaks).
#pragma once

#include <caf/all.hpp>
#include <string>
#include <vector>

#include "actors/runnerset/runnerset_actor.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"

namespace octorun::controller {

struct controller_config {
  kube::config kube;
  kube::client_options kube_options;
  // Watched namespaces, each with its own informers (namespaced list and
  // watch calls, so namespaced RBAC suffices); empty: every namespace.
  std::vector<std::string> namespaces;
  std::size_t kube_workers = 4;
  // Settings for each RunnerSet actor (ns, name and kube pool are filled in).
  runnerset::runnerset_actor_config runnerset_defaults;
  // Also receives every RunnerSet and Runner informer event (the state
  // metrics' feed, actors/metrics/metrics_feed.hpp). None: nobody.
  caf::actor observer;
  // Runner actors record Events as (reporting controller, this instance).
  std::string reporting_controller = "octorun.io/manager";
  std::string reporting_instance = "octorun";
  bool record_events = true;
};

caf::actor spawn_controller(caf::actor_system& sys, controller_config cfg);

// Does a RunnerSet whose scope URL is `scope_url` serve jobs of `repository`
// ("owner/repo")? Organisation scopes serve their repositories, repository
// scopes themselves, enterprise scopes every repository. Pure.
bool scope_serves(const std::string& scope_url, const std::string& repository);

}  // namespace octorun::controller
