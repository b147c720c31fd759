#include "actors/runnerset/plan.hpp"

#include <algorithm>

#include "actors/runnerset/class_condition.hpp"
#include "actors/runnerset/demand.hpp"
#include "actors/runnerset/intake_condition.hpp"
#include "actors/runnerset/rollout.hpp"
#include "actors/runnerset/scale_sets.hpp"
#include "actors/runnerset/set_status.hpp"
#include "actors/runnerset/start_time.hpp"
#include "actors/runnerset/stuck_start.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset {

namespace {

action act(action_kind kind) {
  action a;
  a.kind = kind;
  return a;
}

class planner {
 public:
  explicit planner(const set_observation& o) : o_(o) {}

  set_plan run() {
    if (!o_.set) return std::move(p_);
    const auto& set = *o_.set;
    if (set.metadata.deleting) {
      if (!refused()) read_credentials_for_deletion();
      drain_for_deletion();
      return std::move(p_);
    }
    if (!o_.has_finalizer) {
      patch_finalizer(true);
      return std::move(p_);
    }
    const bool declared = !set.spec.variants.empty();
    p_.versions = variant_versions(o_);
    if (!o_.class_verdict) return std::move(p_);  // judged once the platform's classes are read
    if (refused()) {
      // No new jobs, nothing to GitHub but (where it drains) idle runners'
      // removal, nothing written in a namespace the platform has not given
      // the manager (docs/security.md, "The manager's own rights").
      for (const auto& [variant, entry] : o_.scale_sets) stop_listener(variant);
      if (o_.class_verdict->drains) drain_refused();
      auto counted = counts_without_credentials(o_);
      publish_status(&counted, declared);
      return std::move(p_);
    }
    pod_resources();  // needs no credentials
    if (!o_.credentials_loaded) {
      read_credentials_once_readable();
      if (!o_.credentials_error.empty() || !reads_problem(o_).empty()) {
        auto counted = counts_without_credentials(o_);
        publish_status(&counted, declared);
      }
      return std::move(p_);
    }
    auto variants = model::variants_under(set.spec, *o_.class_verdict);
    std::vector<demand> demands;
    // A set over its class's limits starts no new runner; its idle ones go.
    const bool within_class = o_.class_verdict->limits.empty();
    std::vector<std::optional<model::start_time_sizing>> warm;  // start_time.hpp
    for (const auto& v : variants) {
      demands.push_back({within_class ? v.min_runners : 0, within_class ? v.max_runners : 0, 0,
                         within_class ? assigned_jobs(v.name) : 0});
      warm.push_back(within_class ? start_time_of(o_, v, demands.back()) : std::nullopt);
      if (warm.back()) demands.back().warm = warm.back()->idle_buffer;
      if (warm.back() && warm.back()->next_change) wake(start_time_wake(v.name), *warm.back()->next_change);
    }
    const auto floors = replica_floors(set.spec.replicas.value_or(0), demands);
    variant_counts per_variant;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      demands[i].floor = floors[i];
      per_variant.emplace_back(variants[i].name, scale(variants[i], demands[i]));
      per_variant.back().second.start_time = warm[i];
    }
    warm_nodes_condition_ = plan_warm_nodes(o_, variants, per_variant, p_.actions);
    p_.warm_nodes = warm_nodes_condition_;
    drain_retired_variants(variants, per_variant);
    fetch_runner_release();
    hold_credentials(!o_.credentials_secret || !o_.credentials_secret->deleting || github_may_hold_any());
    remove_deferred();
    // Planned again when a pause ends (it is logged, and what waited goes).
    if (paused(o_.budget, o_.now)) wake(std::string(budget_wake), o_.budget.paused_until);
    publish_status(&per_variant, declared);
    p_.counts = std::move(per_variant);
    return std::move(p_);
  }

 private:
  bool listener() const { return o_.set->spec.intake == model::intake_mode::listener; }
  bool refused() const { return o_.class_verdict && !o_.class_verdict->refused.empty(); }
  // Its removal is planned and not answered yet (the actor records it as
  // the DELETE it leads to).
  bool removing(const std::string& runner) const {
    return o_.in_flight.contains(action_kind::delete_runner, runner) ||
           o_.in_flight.contains(action_kind::remove_idle_runner, runner) ||
           o_.in_flight.contains(action_kind::remove_stuck_start, runner);
  }
  bool held_busy(const observed_runner& r) const { return r.busy_until > o_.now; }
  // A GitHub call of this kind may go now; if not, the set plans again when it may.
  bool github_allows(github_call call) {
    const auto at = github_call_not_before(call, o_.budget, o_.now);
    if (at <= o_.now) return true;
    wake(std::string(budget_wake), at);
    return false;
  }

  void add(action a) { p_.actions.push_back(std::move(a)); }
  // Adds `a` unless an action of its kind and subject is already planned.
  void add_once(action a) {
    for (const auto& b : p_.actions)
      if (b.kind == a.kind && b.subject == a.subject) return;
    add(std::move(a));
  }

  // GitHub may hold a runner or a scale set of this set: removing them
  // needs the credentials.
  bool github_may_hold_any() const {
    return !o_.runners.empty() || !o_.in_flight.of(action_kind::create_runners).empty() ||
           !o_.unconfirmed_creates.empty() || !o_.deferred_removals.empty() || !known_scale_sets().empty();
  }

  // The set's finalizer on its credentials Secret (credentials_secret_view):
  // held while `needed`, released on Secrets the set named before. True
  // once nothing holds it any more.
  bool hold_credentials(bool needed) {
    for (const auto& former : o_.former_credentials) patch_credentials_finalizer(former, false);
    const auto& secret = o_.credentials_secret;
    if (secret && needed && !secret->held && !secret->deleting)
      patch_credentials_finalizer(secret->name, true);
    if (secret && !needed && secret->held) patch_credentials_finalizer(secret->name, false);
    return o_.former_credentials.empty() && !(secret && secret->held);
  }

  void patch_credentials_finalizer(const std::string& secret, bool on) {
    if (o_.in_flight.contains(action_kind::patch_credentials_finalizer, secret)) return;
    auto a = act(action_kind::patch_credentials_finalizer);
    a.subject = secret;
    a.on = on;
    add(std::move(a));
  }

  void patch_finalizer(bool on) {
    if (o_.in_flight.contains(action_kind::patch_finalizer)) return;
    auto a = act(action_kind::patch_finalizer);
    a.on = on;
    add(std::move(a));
  }

  void delete_runner(const std::string& name) {
    auto a = act(action_kind::delete_runner);
    a.subject = name;
    add(std::move(a));
  }

  // Scale-down of an idle runner: GitHub first, by the id its status or,
  // before the status publishes it, its JIT configuration holds. A runner can come
  // online (and take a job) before its status says so: only one registered
  // in neither is deleted without asking GitHub (its finalizer still checks).
  // While the budget is kept for new runners, a registered idle runner stays
  // (it can still take a job; removing it is cleanup).
  // A stuck start (its `deadline` passed) goes the same way.
  void remove_idle(const std::string& name, const observed_runner& r,
                   const startup_deadline* deadline = nullptr) {
    auto a = act(deadline ? action_kind::remove_stuck_start : action_kind::remove_idle_runner);
    a.subject = name;
    a.id = registered_runner_id(r.status_runner_id, r.jit_runner_id);
    if (deadline) {
      a.count = static_cast<std::int32_t>(deadline->value.count());
      a.on = deadline->derived;
    }
    if (a.id != 0 && !github_allows(github_call::cleanup)) return;
    add(std::move(a));
  }

  // GitHub runners whose removal waited for the budget, a few at a time,
  // once cleanup may go again.
  void remove_deferred() {
    constexpr std::size_t at_once = 4;
    std::size_t in_flight = o_.in_flight.of(action_kind::remove_deferred).size();
    for (const auto& [id, d] : o_.deferred_removals) {
      if (in_flight >= at_once) return;
      const auto key = std::to_string(id);
      if (o_.in_flight.contains(action_kind::remove_deferred, key)) continue;
      if (o_.now < d.not_before) {
        wake(std::string(budget_wake), d.not_before);
        continue;
      }
      if (!github_allows(github_call::cleanup)) return;
      auto a = act(action_kind::remove_deferred);
      a.subject = key;
      a.id = id;
      add(std::move(a));
      ++in_flight;
    }
  }

  void object_action(action_kind kind, const std::string& key) {
    add_object_action(o_, p_.actions, kind, key);
  }

  void pod_resources() {
    auto v = plan_pod_resources(o_, p_.actions);
    pods_ready_ = v.pods_ready;
    awaiting_apply_ = v.awaiting_apply;
    pod_condition_ = std::move(v.condition);
  }

  // An unconfirmed create: the watch gets confirm_create_after to show it,
  // then a GET settles it (none: its capacity is free again).
  void confirm_create(const std::string& name, const unconfirmed_create& c) {
    if (o_.in_flight.contains(action_kind::confirm_create, name)) return;
    const auto due = c.since + confirm_create_after;
    if (o_.now < due) return wake("confirm-" + name, due);
    auto a = act(action_kind::confirm_create);
    a.subject = name;
    add(std::move(a));
  }

  // GitHub's latest runner release, every runner_release_period (sooner
  // after a failure); a cheap call (the REST adapter's cache answers most),
  // so it waits for no budget.
  void fetch_runner_release() {
    if (o_.in_flight.contains(action_kind::fetch_runner_release)) return;
    if (o_.now < o_.runner_release_due) return wake(std::string(release_wake), o_.runner_release_due);
    add(act(action_kind::fetch_runner_release));
  }

  void stop_listener(const std::string& variant) {
    auto it = o_.scale_sets.find(variant);
    if (it == o_.scale_sets.end() || !it->second.listening) return;
    auto a = act(action_kind::stop_listener);
    a.subject = variant;
    add_once(std::move(a));
  }

  void wake(std::string key, time_point at) { add_wake(o_, p_.actions, std::move(key), at); }

  // Under the Listener intake: registers the variant's scale set (or updates
  // its labels) and keeps a listener on it; true when it is registered (its
  // runners can get JIT configurations).
  bool ensure_scale_set(const model::effective_variant& v) {
    auto found = o_.scale_sets.find(v.name);
    const observed_scale_set entry = found == o_.scale_sets.end() ? observed_scale_set{} : found->second;
    const bool registered = entry.id != 0;
    if (registered && !entry.listening) {
      auto a = act(action_kind::start_listener);
      a.subject = v.name;
      add(std::move(a));
    }
    if (o_.in_flight.contains(action_kind::register_scale_set, v.name) || !o_.scale_set_client)
      return registered;
    if (o_.now < entry.retry_at) {  // backoff after a failed registration
      wake(retry_wake(v.name), entry.retry_at);
      return registered;
    }
    if (!o_.runner_group_id) {
      if (!o_.in_flight.contains(action_kind::resolve_runner_group))
        add_once(act(action_kind::resolve_runner_group));
      return registered;
    }
    auto a = act(action_kind::register_scale_set);
    a.subject = v.name;
    a.id = *o_.runner_group_id;
    a.scale_set_name = scale_set_name(o_.set->metadata.name, v.name);
    a.labels = scale_set_labels(v.runner_labels, a.scale_set_name, o_.set->metadata.uid);
    // A registered scale set is looked at again only when the variant's
    // labels changed (it is then updated in place: same id, same session).
    if (registered && same_labels(entry.labels, a.labels)) return true;
    add(std::move(a));
    return registered;
  }

  // The scale set of `variant` is deleted on GitHub, or its deletion is
  // planned; true once it is gone (or left to GitHub).
  bool scale_set_gone(const std::string& variant, std::int64_t ss) {
    if (o_.deleted_scale_sets.count(ss) > 0) return true;
    stop_listener(variant);
    if (github_unreachable_for_deletion(o_)) return true;
    if (o_.in_flight.contains(action_kind::delete_scale_set, std::to_string(ss)) || !o_.scale_set_client)
      return false;
    auto a = act(action_kind::delete_scale_set);
    a.subject = variant;
    a.id = ss;
    add(std::move(a));
    return false;
  }

  // The scale sets of this set that GitHub may still hold, by variant: those
  // the status records and those registered since.
  std::map<std::string, std::int64_t> known_scale_sets() const {
    auto known = recorded_scale_sets(o_.set->status);
    for (const auto& [variant, entry] : o_.scale_sets)
      if (entry.id != 0) known[variant] = entry.id;
    // One recorded under a name another set holds is that set's (shared
    // before the names were judged): never deleted from here.
    for (const auto& [variant, taken] : o_.taken_scale_sets) known.erase(variant);
    return known;
  }

  // The variant's demand (demand.hpp); planned again when a finished
  // runner's job stops being taken off.
  std::int64_t assigned_jobs(const std::string& variant) {
    const auto over = jobs_over_but_counted(o_, variant);
    if (over.first_grace_end) wake("completion-grace " + variant, *over.first_grace_end);
    return std::max<std::int64_t>(0, counted_jobs(o_, variant) - over.jobs);
  }

  // One declared variant: creates up to its desired count, replaces finished
  // runners, removes idle ones down to the stabilization floor.
  counts scale(const model::effective_variant& v, const demand& d) {
    if (listener() && o_.taken_scale_sets.count(v.name) > 0) return without_scale_set(v.name);
    // Under the Listener intake a variant scales once its scale set is
    // registered (its runners need it for their JIT configuration) and its
    // session has reported statistics (until then demand is unknown, not
    // zero: after a restart nothing is created or removed on a guess).
    bool registered = true;
    if (listener()) {
      registered = ensure_scale_set(v);
      auto entry = o_.scale_sets.find(v.name);
      registered = registered && entry != o_.scale_sets.end() && entry->second.reported;
    }
    const auto desired = registered ? desired_runners(d) : 0;
    p_.desired.emplace_back(v.name, desired);
    counts c;
    c.desired = desired;
    c.assigned = counted_jobs(o_, v.name);  // GitHub's count (status.assignedJobs)
    if (listener()) {                       // not registered yet this run: the recorded id is kept
      c.scale_set_id = known_scale_set_id(o_, v.name);
      c.session_id = session_id(o_, v.name);
    }
    const auto fingerprint = model::pod_fingerprint(*v.template_, v.pod);
    // New laggards only while a new runner could start where they did not.
    const auto deadline = startup_deadline_of(o_, v);
    const auto starts =
        check_starts(o_, v.name, deadline.value, registered && pods_ready_ && replaces_stuck_starts(o_));
    std::vector<runner_view> views;
    std::vector<rollout_view> rollout;
    for (const auto& [name, r] : o_.runners) {
      if (r.variant != v.name) continue;
      c.add(r.view);
      auto view = r.view;
      view.outdated = r.pod_fingerprint != 0 && r.pod_fingerprint != fingerprint;
      const bool stuck = starts.stuck.count(name) > 0;
      const bool leaving = removing(name) || (r.view.deleting && !r.view.busy()) || stuck;
      if (view.outdated && !leaving && !r.view.finished() && r.view.phase != model::runner_phase::failed)
        ++c.outdated;
      rollout.push_back({name, view.outdated,
                         !r.view.busy() && !r.view.finished() && !r.view.deleting && !removing(name) &&
                             !held_busy(r) && !r.job_completed,
                         leaving, r.view.pod_ready, r.view.created});
      // A runner GitHub just called busy holds capacity; one whose removal
      // is in flight keeps its place until answered and counts as going
      // away, never as a candidate again (scaling.hpp).
      if (held_busy(r))
        view.has_job = true;
      else
        view.removal_in_flight = removing(name);
      // A stuck start is leaving: it holds its slot, and its replacement
      // serves its demand (stuck_start.hpp).
      if (stuck) view = as_leaving(std::move(view));
      view.job_completed = r.job_completed;
      views.push_back(std::move(view));
    }
    // Runners created and not watched yet, or whose create had no clear
    // answer: occupied, not removable.
    for (const auto& [name, variant] : o_.in_flight.of(action_kind::create_runners))
      if (variant == v.name && o_.runners.count(name) == 0)
        views.push_back({name, model::runner_phase::unset, true, false, false, 0});
    for (const auto& [name, c] : o_.unconfirmed_creates)
      if (c.variant == v.name && o_.runners.count(name) == 0 &&
          !o_.in_flight.contains(action_kind::create_runners, name)) {
        views.push_back({name, model::runner_phase::unset, true, false, false, 0});
        confirm_create(name, c);
      }
    auto scaled = plan_scale(desired, v.max_runners, views);
    if (!registered) {
      scaled.create = 0;
      scaled.remove_idle.clear();
    }
    auto window = o_.scale_down.find(v.name);
    const auto floor = window == o_.scale_down.end() ? desired : window->second.peek(o_.now, desired);
    if (registered && floor > desired) {
      scaled.remove_idle = plan_scale(floor, v.max_runners, views).remove_idle;
      // Again the moment the highest count of the window leaves it.
      if (auto drop = window->second.next_drop(o_.now, desired)) wake(scale_down_wake(v.name), *drop);
    }
    // A runner of this template exited as deprecated: another would too
    // (RunnerVersionCurrent says which version to move to).
    // The creates beyond the slow-start window wait for answers
    // (create_pacing.hpp); the ones out hold their places above.
    const auto creates = std::min(scaled.create, create_room_);
    if (creates > 0 && pods_ready_ && !blocks_new_runners(p_.versions, v.name)) {
      auto a = act(action_kind::create_runners);
      a.subject = v.name;
      a.count = creates;
      a.variant = v;
      add(std::move(a));
      create_room_ -= creates;
    }
    const auto record = deprecation_record(o_, v.name, fingerprint);
    for (const auto& name : scaled.remove_finished)
      if (!removing(name) && name != record) delete_runner(name);
    for (const auto& name : scaled.remove_idle) remove_idle(name, o_.runners.at(name));
    // A rollout replaces outdated idle runners a few at a time (scale-down
    // took outdated ones first, and they count as leaving). Each keeps its
    // place until its removal is answered; then the next plan creates a
    // current one (busy ones finish their job on the old template).
    for (auto& r : rollout)
      if (std::find(scaled.remove_idle.begin(), scaled.remove_idle.end(), r.name) != scaled.remove_idle.end())
        r.leaving = true;
    if (registered && pods_ready_ && o_.runner_crd_problem.empty())
      for (const auto& name : runners_to_replace(desired, std::move(rollout)))
        remove_idle(name, o_.runners.at(name));
    for (const auto& name : starts.stuck)
      if (!removing(name) && !o_.runners.at(name).view.deleting)
        remove_idle(name, o_.runners.at(name), &deadline);
    if (starts.next_deadline) wake(stuck_start_wake(v.name), *starts.next_deadline);
    return c;
  }

  // A variant that may run no runner any more: its idle runners go now,
  // busy ones after their job, finished ones are deleted; all are counted.
  void drain_variant(const std::string& variant, counts& c) {
    for (const auto& [name, r] : o_.runners)
      if (r.variant == variant) drain_runner(name, r, c);
  }
  void drain_runner(const std::string& name, const observed_runner& r, counts& c) {
    c.add(r.view);
    if (r.view.deleting || removing(name) || held_busy(r)) return;
    if (r.view.finished() || r.view.phase == model::runner_phase::failed)
      delete_runner(name);
    else if (!r.view.busy())
      remove_idle(name, r);
  }

  // An older set in the same GitHub scope holds the variant's scale-set
  // name (o_.taken_scale_sets): the scale set is that set's, so nothing
  // registers, updates, deletes or listens to it from here and no runner
  // starts; runners made before (registered in that scale set, where they
  // could take the holder's jobs) drain.
  counts without_scale_set(const std::string& variant) {
    stop_listener(variant);
    p_.desired.emplace_back(variant, 0);
    counts c;
    drain_variant(variant, c);
    return c;
  }

  // Variants removed from the spec: their runners go (idle ones now, busy
  // ones after their job), then their scale set; they stay in the status
  // until then, so a restarted manager still finds what is left to delete.
  void drain_retired_variants(const std::vector<model::effective_variant>& current,
                              variant_counts& per_variant) {
    std::vector<std::string> runner_variants;
    for (const auto& [name, r] : o_.runners) runner_variants.push_back(r.variant);
    for (const auto& retired : retired_variants(current, runner_variants, known_scale_sets())) {
      stop_listener(retired.name);  // no new jobs; busy runners end with their pods
      counts c;
      c.scale_set_id = retired.scale_set_id;
      drain_variant(retired.name, c);
      bool gone = !retired.has_runners;
      if (gone && retired.scale_set_id != 0) gone = scale_set_gone(retired.name, retired.scale_set_id);
      if (!gone) per_variant.emplace_back(retired.name, c);
    }
  }

  // Refused, its class still allowing its server and credentials
  // (class_verdict::drains): idle runners go, busy ones finish.
  void drain_refused() {
    plan_reads_for_drain(o_, p_.actions);
    if (!o_.credentials_loaded) return read_credentials_once_readable();
    counts drained;  // the status counts them as any refused set's
    for (const auto& [name, r] : o_.runners) drain_runner(name, r, drained);
    remove_deferred();
  }

  // Its runners and scale sets are removed from GitHub with its credentials:
  // after a restart they are read once the manager may read there.
  void read_credentials_for_deletion() {
    plan_reads_for_deletion(o_, p_.actions);
    if (!o_.credentials_loaded) read_credentials_once_readable();
  }

  // A tenant's credentials wait for the manager's reads in its namespace.
  void read_credentials_once_readable() {
    if ((!o_.tenant_credentials || reads_granted(o_)) &&
        !o_.in_flight.contains(action_kind::read_credentials))
      add(act(action_kind::read_credentials));
  }

  // The set is being deleted (behind its finalizer, so that it and its
  // credentials, which its Runners' finalizers need, outlive its Runners):
  // every runner goes (busy ones after their job), then every scale set,
  // then the finalizer.
  void drain_for_deletion() {
    remove_warm_nodes(o_, p_.actions);  // no spare nodes for a set that goes
    for (const auto& [variant, entry] : o_.scale_sets) stop_listener(variant);  // no new jobs
    for (const auto& [name, r] : o_.runners)
      if (!r.view.deleting && !removing(name)) delete_runner(name);
    if (!github_unreachable_for_deletion(o_)) {
      remove_deferred();
      // Recorded (status) while runners defer their removal; GitHub keeps them otherwise.
      if (!o_.deferred_removals.empty() || !pending_removal_ids(o_.published_status).empty())
        publish_status(nullptr, !o_.set->spec.variants.empty());
      if (!o_.deferred_removals.empty()) return;
    }
    if (!o_.runners.empty() || !o_.in_flight.of(action_kind::create_runners).empty()) return;
    // The watch shows none; the apiserver must agree before anything is
    // released (after a restart the Runners' watch may not have caught up).
    if (!o_.no_runners_confirmed) {
      if (!o_.in_flight.contains(action_kind::confirm_no_runners)) add(act(action_kind::confirm_no_runners));
      return;
    }
    // Every runner is gone: the scale sets go next (GitHub keeps them otherwise).
    bool scale_sets_gone = true;
    for (const auto& [variant, ss] : known_scale_sets()) scale_sets_gone &= scale_set_gone(variant, ss);
    // Then the per-set objects (their owner references would have the
    // garbage collector take them once the set is gone; one that cannot be
    // deleted here is left to it).
    // A refused set's are left to it too: nothing is written where no
    // class admits the set.
    bool objects_gone = true;
    for (const auto& key :
         refused() ? std::vector<std::string>{} : pod_resource_keys(o_.set->metadata.name)) {
      if (o_.deleted_objects.count(key) > 0 || o_.object_errors.count(key) > 0) continue;
      objects_gone = false;
      object_action(action_kind::delete_object, key);
    }
    if (!scale_sets_gone || !objects_gone) return;
    // GitHub holds nothing of the set's any more: its credentials Secret
    // may go, then the manager's reads binding (no owner of its own by now:
    // pod_resources.hpp), and then the set.
    if (!hold_credentials(false) || !reads_binding_gone()) return;
    if (o_.has_finalizer) patch_finalizer(false);
  }

  bool reads_binding_gone() {
    const auto key = manager_reads_key(o_.set->metadata.name);
    if (!o_.reads.wanted() || refused() || o_.deleted_objects.count(key) > 0 ||
        o_.object_errors.count(key) > 0)
      return true;
    object_action(action_kind::delete_object, key);
    return false;
  }

  void publish_status(const variant_counts* per_variant, bool declared) {
    if (awaiting_apply_) return;
    const auto& set = *o_.set;
    std::vector<model::condition> current{credentials_condition(credentials_facts_of(o_))};
    if (o_.class_verdict) current.push_back(class_condition(*o_.class_verdict));
    if (auto intake = intake_condition(set.spec.intake, o_.webhook_intake_enabled, o_.taken_scale_sets))
      current.push_back(*intake);
    if (pod_condition_) current.push_back(*pod_condition_);
    if (!p_.versions.empty()) current.push_back(runner_version_condition(p_.versions));
    if (auto start_time = start_time_condition(per_variant, o_.start_time_rule))
      current.push_back(*start_time);
    if (warm_nodes_condition_) current.push_back(*warm_nodes_condition_);
    auto conditions = set_conditions(o_.published_conditions.value_or(set.status.conditions),
                                     std::move(current), o_.wall_time, set.metadata.generation);
    auto text = status_json(set, per_variant, declared, conditions, &o_.deferred_removals);
    const auto due = status_write_due(
        text, o_.published_status, o_.in_flight.contains(action_kind::publish_status), o_.status_written_at,
        o_.status_hold, o_.now, per_variant != nullptr && records_new_scale_set(set.status, *per_variant));
    if (due.when == status_write::later) wake(std::string(status_wake), due.at);
    p_.status_after_write = due.when == status_write::after_write;
    if (due.when != status_write::now) return;
    auto a = act(action_kind::publish_status);
    a.text = std::move(text);
    a.conditions = std::move(conditions);
    add(std::move(a));
  }

  const set_observation& o_;
  set_plan p_;
  bool pods_ready_ = false;  // the pod configuration is valid and its objects are applied
  std::int32_t create_room_ = creates_allowed(o_.creates);  // what the variants' creates may still take
  bool awaiting_apply_ = false;  // objects are being applied for the first time, none failed
  std::optional<model::condition> pod_condition_;
  std::optional<model::condition> warm_nodes_condition_;  // WarmNodesReady (plan_warm_nodes)
};

}  // namespace

set_plan plan(const set_observation& o) { return planner(o).run(); }

}  // namespace octorun::runnerset
