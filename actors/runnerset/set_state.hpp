// Internal to the RunnerSet actor (runnerset_actor.cpp and
// listener_intake.cpp): its state and the steps both files use.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/runnerset/scaling.hpp"
#include "actors/runnerset/stabilization.hpp"
#include "adapters/github/github_workers.hpp"
#include "adapters/github/scaleset_client.hpp"
#include "adapters/kube/protocol.hpp"
#include "adapters/resources/types.hpp"
#include "messages/jobs.hpp"

namespace octorun::runnerset::detail {

using clock = std::chrono::steady_clock;

// What the set knows of one of its Runners (from the watch).
struct tracked_runner {
  runner_view view;
  std::string variant;
  std::int64_t github_runner_id = 0;
};

struct set_state {
  runnerset_actor_config cfg;
  kube::object set_object;
  std::optional<resources::runnerset> set;
  std::map<std::string, tracked_runner> runners;
  std::map<std::string, std::string> creating;  // name -> variant: create sent, not seen yet
  std::set<std::string> removing;               // scale-down in flight
  std::map<std::string, clock::time_point> busy_until;
  std::map<std::string, scale_down_window> scale_down;  // by variant
  bool scale_down_pending = false;                      // a reconcile is due when a window ends
  // Runners GitHub said finished their job, until their Runner is gone: they
  // hold no capacity even before their actor writes Succeeded.
  std::set<std::string> job_completed;
  // The GitHub runner id in each Runner's JIT Secret, as the Secret watch
  // shows it: known before the Runner's status publishes it.
  std::map<std::string, std::int64_t> jit_runner_ids;
  std::map<std::int64_t, std::string> active_jobs;           // job id -> variant
  std::map<std::int64_t, clock::time_point> completed_jobs;  // late or duplicate deliveries are ignored
  std::vector<messages::job_info> early_demand;  // jobs that arrived before the RunnerSet was read
  caf::actor github;                             // REST pool on the current credentials
  std::string credentials_version;
  std::string credentials_error;
  bool credentials_gone = false;
  bool github_abandoned = false;  // github_unreachable_for_deletion() said so (logged)  // the Secret does
                                  // not exist (deleted, e.g. with its namespace)
  bool credentials_in_flight = false;
  caf::actor runners_supervisor;
  // What this actor spawned and must stop however it ends (an attached
  // functor reads it at exit, when the state may be gone).
  struct owned_actors {
    caf::actor runners, rest, scale_sets, listeners;
  };
  std::shared_ptr<owned_actors> owned = std::make_shared<owned_actors>();
  // Listener intake: the scale-set worker for registration/JIT/removal, the
  // supervisor of the listeners (one per registered variant) and the scale
  // sets by variant, with the statistics their sessions last reported.
  struct scale_set_entry {
    std::int64_t id = 0;
    bool in_flight = false;
    bool listening = false;
    bool reported = false;            // its session reported statistics since this manager started
    std::vector<std::string> labels;  // as registered
    int failures = 0;                 // consecutive failed registrations
    clock::time_point retry_at{};     // not before, after a failure
    messages::job_statistics statistics;
  };
  caf::actor scaleset_admin;
  std::optional<github::scaleset_options> scaleset_options;
  std::optional<std::int64_t> runner_group_id;
  bool runner_group_in_flight = false;
  caf::actor listeners;
  std::map<std::string, scale_set_entry> scale_sets;
  std::set<std::int64_t> scale_set_deletions;  // in flight
  std::set<std::int64_t> deleted_scale_sets;   // until the status stops recording them
  std::string published_status;
  bool status_in_flight = false;
  bool status_stale = false;  // a newer status was computed while one was in flight
  bool finalizer_in_flight = false;
  bool confirming_no_runners = false;  // a LIST in flight before the finalizer goes
  bool no_runners_confirmed = false;   // that LIST found none (reset when one is seen)
  std::mt19937 rng{std::random_device{}()};
  static constexpr const char* name = "runnerset";
};

using self_ptr = caf::stateful_actor<set_state>*;

// What the status says of a variant's runners (and of the set, summed).
struct counts {
  std::int32_t desired = 0, replicas = 0, pending = 0, idle = 0, running = 0, failed = 0;
  std::int64_t assigned = 0;
  std::int64_t scale_set_id = 0;  // Listener intake; not a count
  void add(const runner_view& v) {
    if (v.deleting && !v.busy()) return;
    if (v.phase == runner::phase::failed) {
      ++failed;
      return;
    }
    if (v.finished()) return;
    ++replicas;
    if (v.busy())
      ++running;
    else if (v.pod_ready)
      ++idle;
    else
      ++pending;
  }
};
using variant_counts = std::vector<std::pair<std::string, counts>>;

// The set's one reconcile: level-triggered, safe to run at any time.
void reconcile(self_ptr self);
std::string id(self_ptr self);
void route_to_runner(self_ptr self, const std::string& runner, caf::message msg);
void delete_runner(self_ptr self, const std::string& name);
// Scale-down of an idle runner: GitHub first; busy means keep it.
void remove_idle(self_ptr self, const tracked_runner& t);
// The actor GitHub calls about this set's runners go to: the scale-set
// worker under the Listener intake, the REST pool otherwise.
caf::actor runner_github(self_ptr self);
// The set is being deleted and its credentials Secret is gone with nothing
// loaded from it: GitHub cannot be reached on its behalf any more, so its
// runners' registrations and its scale sets are left to GitHub (it drops
// offline ephemeral runners itself) rather than blocking the deletion (and a
// namespace's) for ever. Logged once.
bool github_unreachable_for_deletion(self_ptr self);

// Asks for a reconcile later (after a backoff).
using reconcile_atom = caf::atom_constant<caf::atom("rsrecon")>;

// ---- status (set_status.cpp) ----
// `per_variant` null: the counts are unknown (credentials not loaded) and
// only the conditions are written.
void publish_status(self_ptr self, const variant_counts* per_variant, bool declared);

// ---- draining (set_draining.cpp) ----
bool has_set_finalizer(const kube::object& set);
void patch_set_finalizer(self_ptr self, bool ours);
// The set is being deleted: every runner goes (busy ones after their job),
// then every scale set, then the finalizer.
void drain_for_deletion(self_ptr self);
// Variants no longer declared: drained, then their scale sets deleted;
// appends their counts to `per_variant` while anything is left.
void drain_retired_variants(self_ptr self, const std::vector<resources::effective_variant>& current,
                            variant_counts& per_variant);

// ---- Listener intake (listener_intake.cpp) ----
bool listening(const set_state& st);
// The scale-set worker pool, (re)spawned on first use after the credentials
// load; null while they are not loaded.
caf::actor scale_set_admin(self_ptr self);
// After the credentials load: the scale-set client for registration, JIT
// configurations and runner removal.
void start_scale_set_admin(self_ptr self, github::scaleset_options options);
// Registers the variants' scale sets and keeps one listener per registered
// one; true when `variant` is registered (its runners can get JIT configs).
bool ensure_scale_set(self_ptr self, const std::string& variant, const std::vector<std::string>& labels);
// Deletes a retired variant's scale set once it has no runners; true when gone.
bool delete_scale_set(self_ptr self, const std::string& variant, std::int64_t id);
std::int64_t scale_set_id(const set_state& st, const std::string& variant);
std::int64_t assigned_by_statistics(const set_state& st, const std::string& variant);
bool statistics_reported(const set_state& st, const std::string& variant);
void on_statistics(self_ptr self, const messages::job_statistics& stats);
void stop_listeners(self_ptr self);
void stop_listener(self_ptr self, const std::string& variant);
caf::result<github::jit_reply> scale_set_jit(self_ptr self, const github::jit_request& req);
caf::message_handler listener_handlers(self_ptr self);
void spawn_listener_supervisor(self_ptr self);

}  // namespace octorun::runnerset::detail
