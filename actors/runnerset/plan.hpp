// The RunnerSet actor's reconcile, as a pure function: from what the actor
// has observed (observation.hpp: its RunnerSet, its Runners, the job demand, its scale sets,
// its credentials, what is in flight, the clock), the actions to take now.
// The actor executes each one, records what goes in flight, and plans again
// when something changes. Planning twice on the same observation yields the
// same actions, so a restarted actor picks up where the world is.
//
// Busy runners are never removed: a runner with a job and one GitHub just
// called busy hold capacity and are no candidates for scale-down. One whose
// removal is in flight keeps its place until answered and is no candidate
// again either, but it counts among the runners going away, so a plan made
// meanwhile removes no other idle runner in its stead.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/runnerset/observation.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

struct action {
  action_kind kind = action_kind::wake;
  std::string subject;     // runner name, variant, or wake key
  std::int64_t id = 0;     // GitHub runner id, scale set id, or runner group id (register_scale_set)
  std::int32_t count = 0;  // create_runners
  bool on = false;         // patch_finalizer
  time_point at{};         // wake
  std::string text;        // publish_status: the status object as JSON
  std::vector<model::condition> conditions;  // publish_status: the conditions `text` holds
  std::string scale_set_name;                // register_scale_set
  std::vector<std::string> labels;           // register_scale_set
  // create_runners: the variant (its template points into the observed
  // spec, which outlives the plan's execution).
  std::optional<model::effective_variant> variant;
  std::optional<reference> ref;  // check_reference
};

// What the status says of a variant's runners (and of the set, summed).
struct counts {
  std::int32_t desired = 0, replicas = 0, pending = 0, idle = 0, running = 0, failed = 0;
  std::int32_t outdated = 0;  // not finished, made from an older template or pod configuration
  std::int64_t assigned = 0;
  std::int64_t scale_set_id = 0;  // Listener intake; not a count
  std::string session_id;         // the session last opened on it; not a count
  // What its start-time target sized (start_time.hpp); none: no target.
  std::optional<model::start_time_sizing> start_time;
  // The warm node chunks it asks for (plan_warm_nodes); none: warm nodes off.
  std::optional<model::warm_node_sizing> warm_nodes;
  void add(const runner_view& v);
};
using variant_counts = std::vector<std::pair<std::string, counts>>;

struct set_plan {
  std::vector<action> actions;
  // The desired count of each declared variant, for its scale-down window
  // (the actor records it once the plan is made).
  std::vector<std::pair<std::string, std::int32_t>> desired;
  // What the status counts (retired variants that still have runners
  // included); empty while the credentials are not loaded.
  variant_counts counts;
  // A changed status waits for the write in flight: the actor plans again
  // on its answer.
  bool status_after_write = false;
  // Each declared variant's runner version verdict (runner_versions.hpp),
  // for the Events and the metrics.
  variant_verdicts versions;
  // WarmNodesReady as planned (plan_warm_nodes; none: no variant keeps
  // warm nodes, or the counts are not known), for the Events.
  std::optional<model::condition> warm_nodes;
};

set_plan plan(const set_observation& o);

// Part of plan(): plan again at `at` (a wake keyed `key`), unless that wake
// is in flight or planned already.
void add_wake(const set_observation& o, std::vector<action>& out, std::string key, time_point at);

// Part of plan(): an apply or delete of a per-set object, unless one is in
// flight; one that failed waits for objects_retry_at (a refusal, e.g. RBAC,
// is not retried on every event).
void add_object_action(const set_observation& o, std::vector<action>& out, action_kind kind,
                       const std::string& key, std::string body = {});

// Part of plan(): the per-set objects of the runner pods (pod_resources.hpp)
// and the references of their configuration, added to `out`, and whether
// runners may be created.
struct pod_resources_verdict {
  bool pods_ready = false;                    // the pod configuration is valid and its objects are applied
  bool awaiting_apply = false;                // objects are being applied for the first time, none failed
  std::optional<model::condition> condition;  // PodConfigReady
};
pod_resources_verdict plan_pod_resources(const set_observation& o, std::vector<action>& out);

// The manager may read the set's namespace: it was given no reads binding
// to make (its RBAC reads everywhere it watches), or the API server said it
// grants the one it made (observation.hpp, reads_granted).
bool reads_granted(const set_observation& o);
// Part of plan() for a set being deleted: the manager's reads binding
// applied without an owner (pod_resources.hpp) and asked about (a new
// leader's first plan of it), so that the deletion reads a tenant's
// credentials to the end; never again once the deletion removed it.
void plan_reads_for_deletion(const set_observation& o, std::vector<action>& out);
// Part of plan() for a refused set that drains on a tenant's credentials:
// whether the reads binding it made while admitted still grants them is
// asked (nothing is written where no class admits the set).
void plan_reads_for_drain(const set_observation& o, std::vector<action>& out);
// After this many refusals the set says why in PodConfigReady.
inline constexpr int reads_refusals_reported = 5;
// Why the manager still may not read the set's namespace; empty while the
// refusals are few (RBAC has not seen the binding yet) or it may.
std::string reads_problem(const set_observation& o);

// Part of plan(): the warm-node objects (warm_nodes.hpp) of each variant of
// `variants` whose start-time target sized it (in `per_variant`) and one of
// whose runner pods waited for a node: applied when their body changes,
// deleted when no longer wanted; each such variant's counts get the chunks.
// The condition WarmNodesReady (none: no variant keeps warm nodes).
std::optional<model::condition> plan_warm_nodes(const set_observation& o,
                                                const std::vector<model::effective_variant>& variants,
                                                variant_counts& per_variant, std::vector<action>& out);
// Part of plan() for a set being deleted: its warm-node objects go first.
void remove_warm_nodes(const set_observation& o, std::vector<action>& out);
// Notes how long a runner's pod waited to be scheduled (its Runner's
// creation to PodScheduled), once per runner: a wait for a node is a
// sample of its variant's node start-up.
void note_runner_scheduled(set_observation& w, const std::string& runner, const model::runner_pod& pod);

// The set is being deleted and its credentials Secret is gone with nothing
// loaded from it: GitHub cannot be reached on its behalf any more, so its
// runners' registrations and its scale sets are left to GitHub (it drops
// offline ephemeral runners itself) rather than blocking the deletion (and a
// namespace's) for ever.
bool github_unreachable_for_deletion(const set_observation& o);

// The id of the scale set registered for `variant` this run (0: none).
std::int64_t scale_set_id(const set_observation& o, const std::string& variant);
// The id of a variant's scale set: this run's, else the one the status
// recorded (0: neither).
std::int64_t known_scale_set_id(const set_observation& o, const std::string& variant);
// The message session last opened on a variant's scale set: this run's, else
// the one the status recorded (a predecessor's); empty when neither is known.
std::string session_id(const set_observation& o, const std::string& variant);

// The variant of a runner the set created or is creating ("" if unknown).
std::string variant_of(const set_observation& o, const std::string& runner);

// Wake keys.
std::string scale_down_wake(const std::string& variant);            // one per variant: each has its window
inline constexpr std::string_view budget_wake = "github-budget";    // a pause ends, cleanup may go
inline constexpr std::string_view status_wake = "status";           // a status write's hold ends
inline constexpr std::string_view release_wake = "runner-release";  // GitHub's latest release is due
inline constexpr std::string_view reads_wake = "manager-reads";     // the reads are asked about again
std::string retry_wake(const std::string& variant);
std::string stuck_start_wake(const std::string& variant);  // the next start-up deadline of the variant

}  // namespace octorun::runnerset
