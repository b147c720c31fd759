// The RunnerSet actor draining runners and scale sets: when the set is
// deleted (behind its finalizer) and when a variant is removed from it.
#include <spdlog/spdlog.h>

#include "actors/kinds.hpp"
#include "actors/runnerset/scale_sets.hpp"
#include "actors/runnerset/set_state.hpp"
#include "adapters/common/json.hpp"
#include "adapters/resources/naming.hpp"

namespace octorun::runnerset::detail {

// The scale sets of this set that GitHub may still hold, by variant: those
// the status records and those registered since.
std::map<std::string, std::int64_t> known_scale_sets(const set_state& st) {
  auto known = recorded_scale_sets(st.set->status);
  for (const auto& [variant, entry] : st.scale_sets)
    if (entry.id != 0) known[variant] = entry.id;
  return known;
}

// ---- deletion ------------------------------------------------------------------
// The set holds a finalizer so that it (and its credentials, which its
// Runners' finalizers need to deregister them from GitHub) outlives its
// Runners: deleting a RunnerSet deletes every Runner, waits until they are
// gone (busy ones after their job), then lets the set go.

constexpr const char* set_finalizer = "octorun.io/runnerset";

bool has_set_finalizer(const kube::object& set) {
  const auto* meta = set.member("metadata");
  const auto* list = meta ? json::find_value(*meta, "finalizers") : nullptr;
  if (list == nullptr || !list->IsArray()) return false;
  for (const auto& f : list->GetArray())
    if (f.IsString() && std::string_view(f.GetString()) == set_finalizer) return true;
  return false;
}

void patch_set_finalizer(self_ptr self, bool ours) {
  auto& st = self->state;
  if (st.finalizer_in_flight) return;
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("resourceVersion", json::string_value(st.set_object.resource_version, a), a);
  rapidjson::Value list(rapidjson::kArrayType);
  const auto* m = st.set_object.member("metadata");
  if (const auto* existing = m ? json::find_value(*m, "finalizers") : nullptr;
      existing && existing->IsArray())
    for (const auto& f : existing->GetArray())
      if (f.IsString() && std::string_view(f.GetString()) != set_finalizer)
        list.PushBack(rapidjson::Value(f, a), a);
  if (ours) list.PushBack(rapidjson::StringRef(set_finalizer), a);
  meta.AddMember("finalizers", list, a);
  d.AddMember("metadata", meta, a);
  st.finalizer_in_flight = true;
  self->request(st.cfg.kube, st.cfg.request_timeout,
                kube::patch_request{kinds::runnersets(), st.cfg.ns, st.cfg.name, kube::patch_type::merge,
                                    json::write(d), ""})
      .then(
          [=](kube::object_result& r) {
            self->state.finalizer_in_flight = false;
            // A conflict or any failure: the next event or tick decides again.
            if (!r && !r.error().not_found() && !r.error().conflict())
              spdlog::warn("runnerset {}: {} the finalizer: {}", id(self), ours ? "adding" : "removing",
                           kube::to_string(r.error()));
          },
          [=](caf::error&) { self->state.finalizer_in_flight = false; });
}

// A consistent LIST of the set's Runners; when it is empty, draining goes on.
void confirm_no_runners(self_ptr self) {
  auto& st = self->state;
  if (st.confirming_no_runners) return;
  st.confirming_no_runners = true;
  kube::list_options only_ours;
  only_ours.label_selector = std::string(resources::label_runnerset) + "=" + st.cfg.name;
  self->request(st.cfg.kube, st.cfg.request_timeout,
                kube::list_request{kinds::runners(), st.cfg.ns, only_ours})
      .then(
          [=](kube::list_result& r) {
            auto& s = self->state;
            s.confirming_no_runners = false;
            if (!r) {
              spdlog::warn("runnerset {}: listing its Runners: {}", id(self), kube::to_string(r.error()));
              return;  // the next event or tick asks again
            }
            // Runners the watch has not shown yet arrive through it and are drained then.
            s.no_runners_confirmed = r->items.empty();
            if (s.no_runners_confirmed) reconcile(self);
          },
          [=](caf::error& e) {
            self->state.confirming_no_runners = false;
            spdlog::warn("runnerset {}: listing its Runners: {}", id(self), self->system().render(e));
          });
}

void drain_for_deletion(self_ptr self) {
  auto& st = self->state;
  stop_listeners(self);  // no new jobs; busy runners finish theirs
  for (const auto& [name, t] : st.runners)
    if (!t.view.deleting && st.removing.count(name) == 0) delete_runner(self, name);
  if (!st.runners.empty() || !st.creating.empty()) {
    st.no_runners_confirmed = false;
    return;
  }
  // The watch shows none; the apiserver must agree before anything is
  // released (after a restart the Runners' watch may not have caught up).
  if (!st.no_runners_confirmed) return confirm_no_runners(self);
  // Every runner is gone: the scale sets go next (GitHub keeps them otherwise).
  bool scale_sets_gone = true;
  auto known = known_scale_sets(st);
  for (const auto& [variant, ss] : known) scale_sets_gone &= delete_scale_set(self, variant, ss);
  if (scale_sets_gone && has_set_finalizer(st.set_object)) {
    spdlog::info("runnerset {}: every runner is gone; releasing the RunnerSet", id(self));
    patch_set_finalizer(self, false);
  }
}

// Variants removed from the spec: their runners go (idle ones now, busy ones
// after their job), then their scale set; they stay in the status until
// then, so a restarted manager still finds what is left to delete.
void drain_retired_variants(self_ptr self, const std::vector<resources::effective_variant>& current,
                            variant_counts& per_variant) {
  auto& st = self->state;
  std::vector<std::string> runner_variants;
  for (const auto& [name, t] : st.runners) runner_variants.push_back(t.variant);
  auto known = known_scale_sets(st);
  for (const auto& retired : retired_variants(current, runner_variants, known)) {
    stop_listener(self, retired.name);  // no new jobs; busy runners end with their pods
    counts c;
    c.scale_set_id = retired.scale_set_id;
    for (const auto& [name, t] : st.runners) {
      if (t.variant != retired.name) continue;
      c.add(t.view);
      if (t.view.deleting || st.removing.count(name) > 0) continue;
      auto busy = st.busy_until.find(name);
      if (busy != st.busy_until.end() && busy->second > clock::now()) continue;
      if (t.view.finished() || t.view.phase == runner::phase::failed)
        delete_runner(self, name);
      else if (!t.view.busy())
        remove_idle(self, t);
    }
    bool gone = !retired.has_runners;
    if (gone && retired.scale_set_id != 0) gone = delete_scale_set(self, retired.name, retired.scale_set_id);
    if (!gone) per_variant.emplace_back(retired.name, c);
  }
}

}  // namespace octorun::runnerset::detail
