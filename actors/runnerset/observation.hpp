// What the RunnerSet actor observes and plan() decides on (plan.hpp): its
// set, its Runners, the job demand, its scale sets, its credentials, what is
// in flight, the clock. The actor's handlers (set_state.hpp) write it; the
// decisions read it. The kinds of action are here because what is in flight
// is keyed by the action that sent it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/flight_registry.hpp"
#include "actors/runnerset/create_pacing.hpp"
#include "actors/runnerset/github_access.hpp"
#include "actors/runnerset/github_budget.hpp"
#include "actors/runnerset/pod_resources.hpp"
#include "actors/runnerset/runner_versions.hpp"
#include "actors/runnerset/scaling.hpp"
#include "actors/runnerset/stabilization.hpp"
#include "actors/runnerset/startup_deadline.hpp"
#include "actors/runnerset/warm_nodes.hpp"
#include "messages/scale_sets.hpp"
#include "model/children.hpp"
#include "model/class_rules.hpp"
#include "model/start_time.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

using time_point = std::chrono::steady_clock::time_point;

enum class action_kind {
  read_credentials,             // GET the credentials Secret (loads the GitHub clients)
  patch_finalizer,              // `on`: add ours, else remove it
  patch_credentials_finalizer,  // `on`: hold the set's finalizer on the Secret `subject`, else release it
  create_runners,               // `count` Runners of `variant`
  delete_runner,                // DELETE the Runner `subject` (finished, or removed from GitHub)
  remove_idle_runner,           // GitHub first (runner `id`; 0: never registered), then DELETE; busy: keep it
  remove_deferred,              // remove GitHub runner `id`, whose removal waited for the budget
  resolve_runner_group,         // look up spec.runnerGroup's id on GitHub
  register_scale_set,           // find `scale_set_name`, then create or update it with `labels`
  delete_scale_set,             // DELETE scale set `id` of variant `subject` on GitHub
  start_listener,               // for variant `subject`
  stop_listener,                // for variant `subject`
  confirm_no_runners,           // a LIST of the set's Runners, before its scale sets and finalizer go
  publish_status,               // merge-patch status with `text`
  wake,                         // plan again at `at` (key `subject`)
  apply_object,   // server-side apply `text`, the per-set object `subject` ("Kind/name", pod_resources.hpp)
  delete_object,  // DELETE the per-set object `subject`
  // Warm nodes (warm_nodes.hpp): server-side apply `text`, the object
  // `subject` ("PodTemplate/name" or "CapacityBuffer/name"), or DELETE it.
  apply_warm_nodes,
  delete_warm_nodes,
  check_reference,       // GET the object `ref` names and judge it (reference_problem)
  confirm_create,        // GET the Runner `subject`, whose create had no clear answer
  fetch_runner_release,  // GET GitHub's latest runner release (runner_versions.hpp)
  // As remove_idle_runner, for a runner not online `count` s after the set
  // first saw it (`on`: a derived deadline): stuck_start.hpp. Its Event and
  // count are recorded once per runner.
  remove_stuck_start,
  // Ask the API server whether the manager may read the set's namespace
  // (a SelfSubjectAccessReview) once its reads binding is applied.
  confirm_reads,
};

// What is in flight, keyed by the action that sent it (and its subject):
// nothing is sent twice while a reply is awaited. A create stays in flight
// (its note: the variant) until the watch shows its Runner. The actor inserts a key
// when it sends a request and erases it when the reply, an error or a
// timeout arrives (actors/runnerset/set_state.hpp, request_in_flight).
struct flight_key {
  action_kind kind;
  std::string subject;
  auto operator<=>(const flight_key&) const = default;
};

// The shared registry (actors/flight_registry.hpp) keyed so: what is in
// flight of one kind (the note of each subject).
class in_flight_registry : public flight_registry<flight_key> {
 public:
  using flight_registry::contains;
  bool contains(action_kind kind, const std::string& subject = {}) const { return contains({kind, subject}); }
  // Subject -> note of every entry of `kind`.
  std::map<std::string, std::string> of(action_kind kind) const {
    std::map<std::string, std::string> out;
    for (const auto& [key, e] : entries())
      if (key.kind == kind) out.emplace(key.subject, e.note);
    return out;
  }
};

// A Runner create that had no clear answer (a transport error, a timeout, a
// 5xx): the apiserver may have made it. It holds its variant's capacity, as a
// create in flight does, until the watch shows the Runner or a GET finds none
// (maxRunners is a bound at every instant, not only once the watch caught up).
struct unconfirmed_create {
  std::string variant;
  time_point since{};  // the failure, or the last GET that did not settle it
};
// How long the watch gets to show an unconfirmed create before a GET asks.
inline constexpr std::chrono::seconds confirm_create_after{5};
// How long after a runner finished its job's completion may still be on its
// way from GitHub (set_observation::unheard_completions).
inline constexpr std::chrono::seconds unheard_completion_grace{30};

// A job whose runner finished before GitHub's completion of it came
// (set_observation::unheard_completions).
struct unheard_completion {
  std::string variant;  // its runner's
  time_point since{};   // when the set saw the runner finish
};

// What the set knows of one of its Runners.
struct observed_runner {
  runner_view view;  // as watched; deleting also once our DELETE was answered
  std::string uid;   // metadata.uid: which Secret of its name is its own (model::owned_by)
  std::string variant;
  std::int64_t status_runner_id = 0;  // status.runnerId
  // The GitHub runner id of the JIT configuration the set obtained for it
  // (its actor's request passes through the set), or read from its JIT
  // Secret before a scale-down (execute.cpp remove_idle): known before the
  // Runner's status publishes it.
  std::int64_t jit_runner_id = 0;
  time_point busy_until{};  // GitHub called it busy when it was being removed: keep it until then
  // GitHub said (webhook) its job completed, until the Runner is gone: it
  // holds no capacity even before its actor writes Succeeded.
  bool job_completed = false;
  // model::pod_fingerprint of its template and pod configuration: it is
  // outdated when its variant's differs. 0: unknown (never outdated).
  std::uint64_t pod_fingerprint = 0;
  bool kubernetes_mode = false;  // its pod runs the container hooks (needs the set's RoleBinding)
  // The version its runner said it runs (a deprecated exit's termination message).
  std::optional<model::runner_version> reported_version;
  // Stuck starts (stuck_start.hpp): when this actor first saw it (unset:
  // never stuck), and what tells it started before its status says so.
  time_point seen_at{};
  bool came_online = false;          // its Pod was ready once (the Pod's watch)
  bool job_start_heard = false;      // a job start named it
  bool startup_sampled = false;      // its start-up time is in the variant's samples
  bool whole_start_sampled = false;  // so is the wait of a job queued before it was made
  std::int64_t pod_ready_at = 0;     // when its pod was first ready (the cluster's clock; 0: not yet)
  // Its sample in online_startups from its pod ready (pod ready plus the
  // process start), and when it was noted: a whole start heard later
  // replaces it, so that each runner counts once.
  std::optional<std::int64_t> online_estimate;
  time_point online_estimate_heard{};
  bool stuck_start_noted = false;  // its stuck start was counted and told (once)
  bool node_wait_sampled = false;  // its pod's wait for scheduling was noted (warm nodes)
  // Of its start-up, the seconds its pod waited for a node (0: it found room,
  // or not known yet).
  std::int64_t node_wait = 0;
};

// Takes the GitHub runner id of a JIT configuration obtained for the
// Runner of uid `requested_for` (its uid when the request passed through the
// set; empty: not known then) when that is still this Runner: an answer for
// an earlier Runner of the name registers that one, and removing this one
// from GitHub by it would remove the other.
void note_jit_registration(observed_runner& runner, const std::string& requested_for,
                           std::int64_t github_runner_id);

// One variant's scale set (Listener intake).
struct observed_scale_set {
  std::int64_t id = 0;  // 0: not registered this run
  bool listening = false;
  bool reported = false;            // its session reported statistics since this manager started
  std::vector<std::string> labels;  // as registered
  int failures = 0;                 // consecutive failed registrations
  std::string error;                // why the last one failed; empty after a success
  time_point retry_at{};            // not before, after a failure
  std::int64_t assigned_jobs = 0;   // its statistics' total assigned jobs
  std::int64_t running_jobs = 0;    // its statistics' total running jobs
  std::string session_id;           // the message session opened on it this run; empty: none yet
};

// The set's credentials Secret as it was read. The set holds a finalizer
// on it (model::credentials_finalizer) while GitHub may hold the set's
// runners or scale sets: deleting the Secret, e.g. with its namespace,
// waits until they are removed, which needs the credentials (a leader that
// starts meanwhile has nothing else to remove them with).
struct credentials_secret_view {
  std::string name;
  bool deleting = false;  // no finalizer may be added any more
  bool held = false;      // it lists the set's finalizer
};

struct set_observation {
  time_point now{};
  std::chrono::steady_clock::duration scale_down_period{};  // the stabilization window
  std::optional<model::runnerset> set;
  bool has_finalizer = false;
  // The set judged against its RunnerClass (model::judge_set); none: not
  // judged yet (the platform's classes not read): nothing is sent for it
  // until it is. While the verdict refuses the set, its credentials are not
  // loaded (nothing goes to GitHub for it); while it breaks a limit, no new
  // runner starts and idle ones go.
  std::optional<model::class_verdict> class_verdict;
  // Credentials: loaded (the REST pool on them exists), the last error, and
  // whether the Secret does not exist (deleted, e.g. with its namespace).
  bool credentials_loaded = false;
  std::string credentials_error;
  bool credentials_gone = false;
  // The credentials Secret as last read (none: not read, or not found), and
  // Secrets the set named before that may still hold its finalizer
  // (credentials_finalizer): released first.
  std::optional<credentials_secret_view> credentials_secret;
  std::set<std::string> former_credentials;
  // The TLS or proxy problem of its GitHub clients' last call (a certificate
  // not trusted, a proxy's 407); empty once a call gets a response.
  std::string github_connection_problem;
  // What GitHub's answers to the set's calls say of its credentials and
  // scope since they loaded (github_access.hpp): CredentialsReady says it.
  github_access access;
  // The wall-clock time as RFC 3339, for the lastTransitionTime of a
  // condition whose status changes (empty: none written).
  std::string wall_time;
  // Why GitHub refused the last runner registration (JIT configuration);
  // empty once one succeeds. For the set's Events only.
  std::string runner_registration_error;
  // The manager serves the GitHub webhook intake (--webhook-intake).
  bool webhook_intake_enabled = true;
  // The ClusterRole a kubernetes-mode set's ServiceAccount is bound to
  // (--runner-kubernetes-mode-cluster-role); empty: none (such a set says so).
  std::string hooks_cluster_role;
  bool scale_set_client = false;  // the scale-set client can be made (credentials loaded once)
  std::optional<std::int64_t> runner_group_id;
  std::map<std::string, observed_runner> runners;
  std::map<std::string, unconfirmed_create> unconfirmed_creates;  // by Runner name
  std::map<std::int64_t, std::string> active_jobs;                // webhook demand: job id -> variant
  std::map<std::string, observed_scale_set> scale_sets;           // by variant
  // The scale-set names an older set in the same GitHub scope holds, by
  // variant (the controller's messages::scale_set_names_taken): such a
  // variant registers, updates and deletes no scale set, listens to none
  // and starts no runner; its idle runners go, busy ones finish their job.
  std::map<std::string, messages::scale_set_taken> taken_scale_sets;
  std::set<std::int64_t> deleted_scale_sets;  // until the status stops recording them
  bool no_runners_confirmed = false;          // a LIST found none since a Runner was last seen
  std::string published_status;               // the status text last written
  // The conditions of that write (none yet: the watched status has them).
  std::optional<std::vector<model::condition>> published_conditions;
  // Jobs whose runner finished (its phase turned terminal: the runner
  // exited, so the job is over) before their completion was heard, by job
  // id. The scale set's statistics (Listener) and active_jobs (webhook) may
  // count them until the JobCompleted or `completed` delivery comes, and a
  // plan that took them as demand would make a runner for a job that is
  // over. They are not demand for unheard_completion_grace; after it they
  // are again (a completion that never comes must not hold a queued job
  // back).
  std::map<std::int64_t, unheard_completion> unheard_completions;
  // When the apiserver accepted the last status write, and how long the
  // next one waits after it (status_write_due in set_status.hpp): the
  // changes of that time go out together, in one write of the latest status.
  std::optional<time_point> status_written_at;
  std::chrono::steady_clock::duration status_hold{};
  std::map<std::string, scale_down_window> scale_down;  // by variant
  // Recent start-up times (creation to pod ready) by variant: what a derived
  // start-up deadline follows (startup_deadline.hpp).
  std::map<std::string, startup_samples> startups;
  // What a start-time target sizes from (start_time.hpp), by variant: start-ups
  // to the runner online, which a pod's readiness precedes by the runner
  // process's own start. A job queued before its runner was made shows the
  // whole of it; a runner no job waited for shows only its pod ready, so its
  // sample adds the p95 of the variant's recent runner-process starts (such
  // a job's start less its runner's pod ready).
  std::map<std::string, startup_samples> online_startups;
  std::map<std::string, startup_samples> runner_process_starts;
  // Start-time targets (start_time.hpp): by variant, the jobs that arrived
  // and started in the rule's window, as noted since `observing_since`.
  std::map<std::string, model::start_time_observations> job_arrivals;
  time_point observing_since{};
  model::start_time_rule start_time_rule;
  // Warm nodes (warm_nodes.hpp): by variant, its runner pods' recent waits
  // for a node; and the objects that ask the node autoscaler for them.
  std::map<std::string, model::node_startup_samples> node_startups;
  // By variant: the wait of the runner pod scheduled last (creation to
  // scheduled): whether a pod made now finds room on a node.
  std::map<std::string, std::int64_t> newest_scheduling_wait;
  model::node_startup_rule node_startup_rule;
  warm_nodes_state warm_nodes;
  in_flight_registry in_flight;
  create_pacing creates;  // the slow-start window of Runner creates (create_pacing.hpp)
  github_budget budget;   // of its credentials (github_budget.hpp)
  // GitHub runners whose removal waits for the budget, by id (their Runners
  // are gone); the status lists them (pendingRemovals).
  std::map<std::int64_t, deferred_removal> deferred_removals;
  // The per-set objects of the runner pods (pod_resources.hpp), by key: the
  // body applied this run, the keys deleted (or found gone) this run, and
  // why the last apply or delete of one failed.
  std::map<std::string, std::string> applied_objects;
  std::set<std::string> deleted_objects;
  std::map<std::string, std::string> object_errors;
  time_point objects_retry_at{};  // a failed apply or delete is tried again from then
  // The manager's own reads in the set's namespace (pod_resources.hpp,
  // manager_reads): nothing there is read until the API server, asked after
  // the binding was applied, says it grants them. Each refusal is counted;
  // the next question waits for a backoff after the last (plan_pod_resources).
  manager_reads reads;
  bool reads_granted = false;
  bool tenant_credentials = false;  // the set's credentials are in its own namespace (not its class's)
  int reads_refusals = 0;
  time_point reads_refused_at{};
  bool kubernetes_runners_seen = false;  // a Runner in containerMode kubernetes was watched this run
  // Set when the apiserver stored a created Runner without fields of its
  // spec (an old Runner CRD): no rollouts then, and PodConfigReady says why.
  std::string runner_crd_problem;
  // The objects the pod configuration refers to (pod_references), by key:
  // "" when it fits, else the problem; checked again every reference_recheck
  // while one has a problem, ten times as seldom while they all fit.
  std::map<std::string, std::string> reference_problems;
  time_point references_checked_at{};
  std::chrono::steady_clock::duration reference_recheck{std::chrono::seconds(30)};
  // GitHub's latest runner release as last fetched (none yet, or GitHub has
  // none: a GHES), when it is asked for next, and each variant's last
  // deprecated exit (runner_versions.hpp).
  std::optional<model::runner_release> latest_runner_release;
  time_point runner_release_due{};
  std::map<std::string, deprecated_exit> deprecated_exits;

  // A create of Runner `name` is out: sent and unanswered, or answered
  // unclearly and not seen yet.
  bool being_created(const std::string& name) const {
    return in_flight.contains(action_kind::create_runners, name) || unconfirmed_creates.count(name) > 0;
  }
};

}  // namespace octorun::runnerset
