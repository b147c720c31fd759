// Internal to the RunnerSet actor (runnerset_actor.cpp, execute.cpp,
// listener_intake.cpp): its state and the steps these files share.
#pragma once

#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "actors/reconcile_turn.hpp"
#include "actors/runnerset/observation.hpp"
#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/runnerset/set_events.hpp"
#include "actors/runnerset/webhook_sweep.hpp"
#include "actors/supervisor/child_handles.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "actors/watched.hpp"
#include "adapters/github/github_workers.hpp"
#include "adapters/github/scaleset_client.hpp"
#include "adapters/kube/protocol.hpp"
#include "messages/jobs.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset::detail {

struct set_state {
  runnerset_actor_config cfg;
  // Everything plan() decides on; the actor's handlers update it.
  set_observation world;
  watched::runnerset_ptr set_object;      // the RunnerSet as watched (its finalizers, resourceVersion)
  model::spec_fingerprints fingerprints;  // of its Runners' specs
  // Completed jobs, so late or duplicate deliveries are ignored.
  std::map<std::int64_t, time_point> completed_jobs;
  std::vector<messages::job_info> early_demand;  // jobs that arrived before the RunnerSet was read
  // Webhook intake: the run of each job counted, and the job each Runner
  // runs (status.job): the sweep follows them to their end.
  std::map<std::int64_t, followed_job> job_runs;
  std::map<std::string, std::pair<std::int64_t, followed_job>> runner_jobs;
  // Runs whose jobs a sweep listed (most are other runners' work, e.g.
  // GitHub-hosted): not listed again until they end or turn stale.
  std::map<std::int64_t, time_point> listed_runs;
  bool sweeping = false;
  // The Pod event of a Runner not seen yet (a new leader's informers list in
  // any order), the latest: handed to it once its Runner is.
  std::map<std::string, watched::pod_event> early_pods;
  // Runner events that came before the RunnerSet was read, the latest per
  // Runner: whose a Runner is (its owner's uid) is known only then.
  std::map<std::string, watched::runner_event> early_runners;
  // Runners labelled for this set that it did not make
  // (model::runner_made_by), name -> uid: said once each, in an Event on the
  // Runner, and never served.
  std::map<std::string, std::string> foreign_runners;
  // Job starts naming a Runner the set has not judged yet (not seen, or
  // seen before the set was read), the latest per Runner: handed to its
  // actor once the Runner is judged the set's own, dropped if it is not.
  std::map<std::string, messages::job_started> unjudged_starts;
  std::vector<messages::job_started> early_starts;  // before the RunnerSet was read
  caf::actor github;                                // REST pool on the current credentials
  // The platform's classes and namespaces (messages::platform_update); null
  // until the controller sends them.
  model::platform_classes_ptr platform;
  // Where the credentials now loaded, or being read, are (model::credentials_of);
  // none: nowhere (the class refuses the set, or it is not judged yet).
  std::optional<model::credentials_location> credentials_at;
  // How the manager connects to GitHub for the set (model::manager_connection_of):
  // read with the credentials; none: not at all.
  std::optional<model::manager_connection> connection;
  std::string credentials_version;
  // The App installation the loaded credentials are (0: a personal access
  // token): the jobs the sweep finds are routed as its deliveries would be.
  std::int64_t app_installation_id = 0;
  // The credentials Secret as last read: what a change of the set's
  // finalizer on it is locked on.
  kube::object credentials_object;
  bool github_abandoned = false;  // github_unreachable_for_deletion() was logged
  // Its Runners' actors, held here and sent to straight; their supervisor
  // only restarts them.
  supervision::child_handles<runner::runner_actor> runners;
  // Whether the manager may read the set's namespace (reads_granted), for
  // its Runners' actors, which read their JIT Secrets only once it may
  // (runner_actor_config::namespace_readable); updated before every plan.
  std::shared_ptr<std::atomic<bool>> namespace_readable = std::make_shared<std::atomic<bool>>(true);
  // What this actor spawned and must stop however it ends (an attached
  // functor reads it at exit, when the state may be gone).
  struct owned_actors {
    caf::actor runners, rest, scale_sets, listeners;
  };
  std::shared_ptr<owned_actors> owned = std::make_shared<owned_actors>();
  // Listener intake: the scale-set workers for registration, JIT and
  // removal, and the supervisor of the listeners (one per registered variant).
  caf::actor scaleset_admin;
  std::optional<github::scaleset_options> scaleset_options;
  caf::actor listeners;
  // The rate-limit budget its GitHub clients record into (github_pause.cpp
  // reads it into world.budget), and what it promised about a pause.
  std::shared_ptr<github::rate_limit_budget> budget = std::make_shared<github::rate_limit_budget>();
  bool pause_logged = false;  // this pause was logged (once) and exported
  // What its GitHub clients learn about TLS and the proxy (github_pause.cpp
  // reads it into world.github_connection_problem).
  std::shared_ptr<github::connection_health> health = std::make_shared<github::connection_health>();
  // Deferred GitHub removals: the ids the published status lists, and the
  // Runners waiting for theirs to be listed.
  std::set<std::int64_t> durable_removals;
  std::multimap<std::int64_t, caf::response_promise> awaiting_durable;
  bool removals_loaded = false;  // read back from the status after a (re)start
  bool status_stale = false;     // a changed status waits for the write in flight
  reconcile_turn dirty;          // a plan is due (one reconcile message is queued)
  // What the last plan knew, for the Events of the next one's changes
  // (set_events.hpp); read from the published status on the first plan.
  std::optional<set_summary> summary;
  // The runner version verdict of each variant the metrics were last told
  // (runner_release.cpp); shared with the exit handler, which removes them.
  std::shared_ptr<std::map<std::string, model::version_verdict>> reported_versions =
      std::make_shared<std::map<std::string, model::version_verdict>>();
  std::mt19937 rng{std::random_device{}()};
  static constexpr const char* name = "runnerset";
};

// Plans and executes once the messages already queued are handled: every
// change marks the set dirty, and one plan covers them all.
using reconcile_atom = caf::atom_constant<caf::atom("rsrecon")>;
using tick_atom = caf::atom_constant<caf::atom("rstick")>;    // the resync timer
using wake_atom = caf::atom_constant<caf::atom("rswake")>;    // plan()'s wake-ups, by key
using sweep_atom = caf::atom_constant<caf::atom("rssweep")>;  // the webhook intake's sweep

// The interface plus the actor's own timers and what the supervisor of its
// Runners tells it.
using runnerset_impl =
    runnerset_actor::extend<caf::reacts_to<reconcile_atom>, caf::reacts_to<tick_atom>,
                            caf::reacts_to<wake_atom, std::string>,
                            caf::reacts_to<sweep_atom>>::extend_with<supervision::child_notices>;
using self_ptr = runnerset_impl::stateful_pointer<set_state>;
void mark_dirty(self_ptr self);
// Observes the clock, plans and executes every action.
void reconcile(self_ptr self);
void execute(self_ptr self, const action& a);
// Warm nodes (warm_nodes.hpp; execute_warm_nodes.cpp): server-side apply or
// delete one PodTemplate or CapacityBuffer, and record how it ended.
void apply_warm_nodes(self_ptr self, const std::string& key, const std::string& body);
// The manager's reads in the set's namespace (execute_manager_reads.cpp): a
// SelfSubjectAccessReview; its answer is recorded in the observation.
void confirm_reads(self_ptr self);
// A read in the set's namespace was refused (its reads binding deleted, or
// its ClusterRole changed): the binding is applied and asked about again.
void reads_lost(self_ptr self);
void delete_warm_nodes(self_ptr self, const std::string& key);
// The wake-ups plan() schedules (action_kind::wake).
caf::typed_behavior<caf::reacts_to<wake_atom, std::string>> wake_handler(self_ptr self);

std::string id(self_ptr self);
bool listening(const set_state& st);
// The uid of the set's Runner `runner` ("" when the set has not seen it).
std::string runner_uid(self_ptr self, const std::string& runner);
// GitHub registered the Runner (a JIT configuration its actor asked the set
// for, when the Runner had uid `uid`): scale-down removes it from GitHub by
// that id before its status publishes one (note_jit_registration).
void note_registration(self_ptr self, const std::string& runner, const std::string& uid,
                       std::int64_t github_runner_id);
// GitHub refused the Runner's name (a JIT conflict, asked when the Runner
// had uid `uid`): marks the holder as that Runner's own when the set knows
// it so (runner::holder_is_own: the id it recorded for that uid, or
// `registered_as_the_sets`: in the set's own scale set, or carrying the
// set's label: set_registrations.hpp), so the Runner may free the name; any
// other holder is left alone.
void note_name_holder(self_ptr self, const std::string& runner, const std::string& uid, github::error& e,
                      bool registered_as_the_sets);
// Records one Event regarding the RunnerSet (none without a recorder), and
// the Events of what changed since the last plan (set_event_recording.cpp).
void send_set_event(self_ptr self, set_event e);
void record_events(self_ptr self, const set_plan& p);
// Judges the set against its RunnerClass again (set_class.cpp): on a new
// platform snapshot and on a changed spec.
void judge_class(self_ptr self);
// Why a runner's registration is refused for the set's class (refused, or
// not judged yet); none when the class admits it.
std::optional<github::error> class_refuses(self_ptr self);
// Logs, once, that GitHub is left alone for the set's deletion; true then.
bool github_unreachable(self_ptr self);

// A request made for an action failed: counted by the manager's metrics
// (octorun_reconcile_errors_total). Outcomes that mean "already done" (a
// create whose object exists, a delete whose object is gone) are no failure.
void count_failure(self_ptr self, action_kind kind);
// A create answered so that the object may exist: no answer (transport), a
// server error (it may have been stored before the failure), or "already
// exists" (a retried create whose first attempt was stored).
inline bool create_may_have_happened(const kube::api_error& e) {
  return e.transport || e.code == 0 || e.code >= 500 || e.already_exists();
}
inline bool failed_reply(const kube::object_result& r) {
  return !r && !r.error().not_found() && !r.error().already_exists();
}
template <class Reply>
bool failed_reply(const Reply& r) {
  return !r;
}

// When a request's key leaves the in-flight registry.
enum class in_flight_until {
  answered,  // its reply or error
  seen,      // its error, else the watch event that shows what it made (a create)
};

// A Kubernetes request (one with a `set`: adapters/kube/protocol.hpp) made
// for this set waits for the set's own turn in the request pool; anything
// else is sent as it is.
template <class T>
T&& in_set_turn(self_ptr self, T&& x) {
  if constexpr (requires { x.set = self->state.cfg.name; }) x.set = self->state.cfg.name;
  return std::forward<T>(x);
}

// Sends `xs...` to `dest` with `key` recorded in flight (a Kubernetes
// request in the set's turn, in_set_turn): `done(reply)` on a
// reply, `failed(rendered error)` on a caf::error (a timeout included). The
// key is cleared before either runs (a successful create's only once the
// watch shows the Runner), so no error path leaves it stuck. A null `dest`
// fails at once.
template <class Reply, class Handle, class Done, class Failed, class... Ts>
void request_in_flight_until(self_ptr self, flight_key key, std::string note, in_flight_until until,
                             const Handle& dest, Done done, Failed failed, Ts&&... xs) {
  if (!dest) return failed(std::string("no actor to ask"));
  self->state.world.in_flight.insert(key, std::move(note));
  self->request(dest, self->state.cfg.request_timeout, in_set_turn(self, std::forward<Ts>(xs))...)
      .then(
          [=](Reply& r) mutable {
            if (until == in_flight_until::answered || !r) self->state.world.in_flight.erase(key);
            if (failed_reply(r)) count_failure(self, key.kind);
            done(r);
          },
          [=](caf::error& e) mutable {
            self->state.world.in_flight.erase(key);
            count_failure(self, key.kind);
            failed(self->system().render(e));
          });
}

// The usual case: in flight until answered.
template <class Reply, class Handle, class Done, class Failed, class... Ts>
void request_in_flight(self_ptr self, flight_key key, const Handle& dest, Done done, Failed failed,
                       Ts&&... xs) {
  request_in_flight_until<Reply>(self, std::move(key), {}, in_flight_until::answered, dest, std::move(done),
                                 std::move(failed), std::forward<Ts>(xs)...);
}

// ---- GitHub's budget (github_pause.cpp) ----
// Reads the budget its clients recorded; logs the end of a pause.
void observe_github_budget(self_ptr self);
// A GitHub error: a rate limit starts (or extends) the pause, logged once.
void note_github_error(self_ptr self, const github::error& e);
// What an answer of a call about `target` says of the set's credentials and
// scope (github_access.hpp; `failed` null: a success).
void note_github_answer(self_ptr self, const github::error* failed, github_call_target target);
// The error to answer instead of calling GitHub, while calls of this kind wait.
std::optional<github::error> held_back(self_ptr self, github_call call);
// A Runner hands over its GitHub removal; answered once the status lists it.
caf::result<bool> defer_removal(self_ptr self, std::int64_t runner_id, const std::string& runner);
void remove_deferred(self_ptr self, std::int64_t runner_id);
// A status write succeeded: the removals it lists are recorded.
void status_published(self_ptr self, const std::string& text);
// After a (re)start: the removals the status lists are still to do.
void load_deferred_removals(self_ptr self);

// A JIT configuration GitHub gave (null) or refused (why): the set's runner
// registrations work or fail (set_events.hpp records the change).
void note_runner_registration(self_ptr self, const github::error* failed);

// ---- runner_github_answers.cpp ----
// The set's runner-facing API (runner_github_api), checked against its
// declaration at compile time.
protocols::runner_github_api::behavior_type runner_github_behavior(self_ptr self);

// ---- runner_release.cpp ----
// GETs GitHub's latest runner release (action fetch_runner_release).
void fetch_runner_release(self_ptr self);
// Tells the metrics each variant's runner version verdict that changed since
// the last plan, and forgets the variants no longer planned.
void report_runner_versions(self_ptr self, const set_plan& p);

// ---- execute.cpp ----
bool has_set_finalizer(const model::runnerset& set);
// The API resource of a per-set object's or reference's key ("Kind/name").
kube::resource resource_of(std::string_view key);

// ---- credentials_secret.cpp ----
// GETs the credentials Secret (and what the pod configuration refers to) and
// loads the GitHub clients on it.
void read_credentials(self_ptr self);
// Adds (`hold`) or removes the set's finalizer on the Secret `secret`.
void patch_credentials_finalizer(self_ptr self, const std::string& secret, bool hold);

// ---- Listener intake (listener_intake.cpp) ----
// The scale-set worker pool, (re)spawned on first use after the credentials
// load; null while they are not loaded.
caf::actor scale_set_admin(self_ptr self);
// After the credentials load: the scale-set client for registration, JIT
// configurations and runner removal.
void start_scale_set_admin(self_ptr self, github::scaleset_options options);
// The actor GitHub calls about this set's runners go to: the scale-set
// worker under the Listener intake, the REST pool otherwise.
caf::actor runner_github(self_ptr self);
void resolve_runner_group(self_ptr self);
void register_scale_set(self_ptr self, const action& a);
void delete_scale_set(self_ptr self, const std::string& variant, std::int64_t id);
void start_listener(self_ptr self, const std::string& variant);
void stop_listener(self_ptr self, const std::string& variant);
caf::result<github::jit_reply> scale_set_jit(self_ptr self, const github::jit_request& req);
// The controller's word on which of the set's scale-set names an older set
// holds (actors/controller/scale_set_claims.hpp): the set stops listening
// on those and forgets their scale sets, which are the holder's.
void on_scale_set_names_taken(self_ptr self, std::map<std::string, messages::scale_set_taken> taken);
// The scale set's statistics: its assigned jobs are the variant's demand.
void on_statistics(self_ptr self, const messages::job_statistics& stats);
protocols::listener_setup_api::behavior_type listener_handlers(self_ptr self);
void spawn_listener_supervisor(self_ptr self);

// ---- Webhook intake (webhook_intake.cpp) ----
// After the credentials load: sweeps GitHub's queue now and then every
// cfg.webhook_sweep (webhook_sweep.hpp), while the set uses the Webhook intake.
void start_sweeps(self_ptr self);
caf::typed_behavior<caf::reacts_to<sweep_atom>> sweep_handlers(self_ptr self);

}  // namespace octorun::runnerset::detail
