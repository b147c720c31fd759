#include "actors/runnerset/plan.hpp"

#include <algorithm>

#include "actors/runnerset/scale_sets.hpp"
#include "actors/runnerset/set_status.hpp"

namespace octorun::runnerset {

void counts::add(const runner_view& v) {
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

bool github_unreachable_for_deletion(const set_observation& o) {
  return o.set && o.set->metadata.deleting && o.credentials_gone && !o.credentials_loaded &&
         !o.scale_set_client;
}

std::string retry_wake(const std::string& variant) { return "retry " + variant; }

std::int64_t scale_set_id(const set_observation& o, const std::string& variant) {
  auto it = o.scale_sets.find(variant);
  return it == o.scale_sets.end() ? 0 : it->second.id;
}

std::string variant_of(const set_observation& o, const std::string& runner) {
  if (auto r = o.runners.find(runner); r != o.runners.end()) return r->second.variant;
  auto creating = o.in_flight.of(action_kind::create_runners);
  if (auto c = creating.find(runner); c != creating.end()) return c->second;
  return {};
}

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
      drain_for_deletion();
      return std::move(p_);
    }
    if (!o_.has_finalizer) {
      patch_finalizer(true);
      return std::move(p_);
    }
    const bool declared = !set.spec.variants.empty();
    if (!o_.credentials_loaded) {
      if (!o_.in_flight.contains(action_kind::read_credentials)) add(act(action_kind::read_credentials));
      if (!o_.credentials_error.empty()) publish_status(nullptr, declared);
      return std::move(p_);
    }
    auto variants = model::effective_variants(set.spec);
    std::vector<demand> demands;
    for (const auto& v : variants)
      demands.push_back({v.min_runners, v.max_runners, 0, assigned_jobs(v.name)});
    const auto floors = replica_floors(set.spec.replicas.value_or(0), demands);
    variant_counts per_variant;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      demands[i].floor = floors[i];
      per_variant.emplace_back(variants[i].name, scale(variants[i], demands[i]));
    }
    drain_retired_variants(variants, per_variant);
    publish_status(&per_variant, declared);
    return std::move(p_);
  }

 private:
  bool listener() const { return o_.set->spec.intake == model::intake_mode::listener; }
  bool removing(const std::string& runner) const {
    return o_.in_flight.contains(action_kind::delete_runner, runner);
  }
  bool held_busy(const observed_runner& r) const { return r.busy_until > o_.now; }

  void add(action a) { p_.actions.push_back(std::move(a)); }
  // Adds `a` unless an action of its kind and subject is already planned.
  void add_once(action a) {
    for (const auto& b : p_.actions)
      if (b.kind == a.kind && b.subject == a.subject) return;
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
  // before the status publishes it, its JIT Secret holds. A runner can come
  // online (and take a job) before its status says so: only one registered
  // in neither is deleted without asking GitHub (its finalizer still checks).
  void remove_idle(const std::string& name, const observed_runner& r) {
    auto a = act(action_kind::remove_idle_runner);
    a.subject = name;
    a.id = registered_runner_id(r.status_runner_id, r.secret_runner_id);
    add(std::move(a));
  }

  void stop_listener(const std::string& variant) {
    auto it = o_.scale_sets.find(variant);
    if (it == o_.scale_sets.end() || !it->second.listening) return;
    auto a = act(action_kind::stop_listener);
    a.subject = variant;
    add_once(std::move(a));
  }

  void wake(std::string key, time_point at) {
    if (o_.in_flight.contains(action_kind::wake, key)) return;
    auto a = act(action_kind::wake);
    a.subject = std::move(key);
    a.at = at;
    add_once(std::move(a));
  }

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
    a.labels = v.runner_labels;
    if (std::find(a.labels.begin(), a.labels.end(), a.scale_set_name) == a.labels.end())
      a.labels.push_back(a.scale_set_name);  // runs-on: <scale set name> works too
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
    return known;
  }

  std::int64_t assigned_jobs(const std::string& variant) const {
    if (listener()) {
      auto it = o_.scale_sets.find(variant);
      return it == o_.scale_sets.end() ? 0 : it->second.assigned_jobs;
    }
    std::int64_t n = 0;
    for (const auto& [job, v] : o_.active_jobs) n += v == variant ? 1 : 0;
    return n;
  }

  // One declared variant: creates up to its desired count, replaces finished
  // runners, removes idle ones down to the stabilization floor.
  counts scale(const model::effective_variant& v, const demand& d) {
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
    c.assigned = d.assigned_jobs;
    c.scale_set_id = scale_set_id(o_, v.name);
    if (c.scale_set_id == 0 && listener()) {  // not registered yet this run: keep the recorded id
      auto recorded = recorded_scale_sets(o_.set->status);
      if (auto it = recorded.find(v.name); it != recorded.end()) c.scale_set_id = it->second;
    }
    std::vector<runner_view> views;
    for (const auto& [name, r] : o_.runners) {
      if (r.variant != v.name) continue;
      c.add(r.view);
      auto view = r.view;
      // In-flight removals and runners GitHub just called busy are not
      // candidates again (a busy runner still holds capacity).
      if (removing(name) || held_busy(r)) view.has_job = true;
      view.job_completed = r.job_completed;
      views.push_back(std::move(view));
    }
    // Runners created and not watched yet: occupied, not removable.
    for (const auto& [name, variant] : o_.in_flight.of(action_kind::create_runners))
      if (variant == v.name && o_.runners.count(name) == 0)
        views.push_back({name, runner::phase::unset, true, false, false, 0});
    auto scaled = plan_scale(desired, views);
    if (!registered) {
      scaled.create = 0;
      scaled.remove_idle.clear();
    }
    auto window = o_.scale_down.find(v.name);
    const auto floor = window == o_.scale_down.end() ? desired : window->second.peek(o_.now, desired);
    if (registered && floor > desired) {
      scaled.remove_idle = plan_scale(floor, views).remove_idle;
      wake(std::string(scale_down_wake), o_.now + o_.scale_down_period);
    }
    if (scaled.create > 0) {
      auto a = act(action_kind::create_runners);
      a.subject = v.name;
      a.count = scaled.create;
      a.variant = v;
      add(std::move(a));
    }
    for (const auto& name : scaled.remove_finished)
      if (!removing(name)) delete_runner(name);
    for (const auto& name : scaled.remove_idle) remove_idle(name, o_.runners.at(name));
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
      for (const auto& [name, r] : o_.runners) {
        if (r.variant != retired.name) continue;
        c.add(r.view);
        if (r.view.deleting || removing(name) || held_busy(r)) continue;
        if (r.view.finished() || r.view.phase == runner::phase::failed)
          delete_runner(name);
        else if (!r.view.busy())
          remove_idle(name, r);
      }
      bool gone = !retired.has_runners;
      if (gone && retired.scale_set_id != 0) gone = scale_set_gone(retired.name, retired.scale_set_id);
      if (!gone) per_variant.emplace_back(retired.name, c);
    }
  }

  // The set is being deleted (behind its finalizer, so that it and its
  // credentials, which its Runners' finalizers need, outlive its Runners):
  // every runner goes (busy ones after their job), then every scale set,
  // then the finalizer.
  void drain_for_deletion() {
    for (const auto& [variant, entry] : o_.scale_sets) stop_listener(variant);  // no new jobs
    for (const auto& [name, r] : o_.runners)
      if (!r.view.deleting && !removing(name)) delete_runner(name);
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
    if (scale_sets_gone && o_.has_finalizer) patch_finalizer(false);
  }

  void publish_status(const variant_counts* per_variant, bool declared) {
    const bool loaded = o_.credentials_error.empty() && o_.credentials_loaded;
    auto text =
        status_json(*o_.set, per_variant, declared, loaded, o_.credentials_error, o_.webhook_intake_enabled);
    // (One write at a time: the actor writes one that comes while another
    // is in flight once that one returns.)
    if (text == o_.published_status) return;
    auto a = act(action_kind::publish_status);
    a.text = std::move(text);
    add(std::move(a));
  }

  const set_observation& o_;
  set_plan p_;
};

}  // namespace

set_plan plan(const set_observation& o) { return planner(o).run(); }

}  // namespace octorun::runnerset
