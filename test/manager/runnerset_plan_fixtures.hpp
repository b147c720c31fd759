// What the tests of the RunnerSet's plan() share (runnerset_plan_test.cpp,
// runnerset_plan_lifecycle_test.cpp): observations to plan over, and readers
// of the actions a plan holds.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "actors/runnerset/plan.hpp"

namespace octorun::runnerset::plan_fixtures {

using namespace std::chrono_literals;

inline const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

// A webhook set (min 0, max 10), its finalizer on, its credentials loaded.
inline set_observation ready_set() {
  set_observation o;
  o.now = t0;
  o.scale_down_period = 10s;
  model::runnerset set;
  set.metadata.name = "linux";
  set.spec.min_runners = 0;
  set.spec.max_runners = 10;
  o.set = set;
  o.has_finalizer = true;
  o.class_verdict = model::class_verdict{
      .class_name = "", .classless = true, .refused = {}, .limits = {}, .pod_security = {}};
  o.credentials_loaded = true;
  o.scale_set_client = true;
  // Its ServiceAccount and PodDisruptionBudget applied (pod_resources.hpp).
  for (const auto& obj : desired_pod_resources(set)) o.applied_objects[obj.key] = obj.body;
  return o;
}

// The same under the Listener intake, its runner group known.
inline set_observation listener_set() {
  auto o = ready_set();
  o.set->spec.intake = model::intake_mode::listener;
  o.runner_group_id = 1;
  return o;
}

// Its default variant's scale set registered, listening, reporting `assigned` jobs.
inline void registered(set_observation& o, std::int64_t assigned, const std::string& variant = "") {
  auto& e = o.scale_sets[variant];
  e.id = 7;
  e.listening = true;
  e.reported = true;
  e.labels = {o.set->metadata.name + (variant.empty() ? "" : "-" + variant)};
  e.assigned_jobs = assigned;
}

inline observed_runner& add_runner(set_observation& o, const std::string& name, model::runner_phase phase,
                                   bool ready, const std::string& variant = "") {
  auto& r = o.runners[name];
  r.view.name = name;
  r.view.phase = phase;
  r.view.pod_ready = ready;
  r.view.has_job = phase == model::runner_phase::running;
  r.variant = variant;
  return r;
}

inline void demand(set_observation& o, int jobs, const std::string& variant = "") {
  for (int i = 0; i < jobs; ++i)
    o.active_jobs[1000 + static_cast<std::int64_t>(o.active_jobs.size())] = variant;
}

inline std::vector<action> of(const set_plan& p, action_kind kind) {
  std::vector<action> out;
  std::copy_if(p.actions.begin(), p.actions.end(), std::back_inserter(out),
               [&](const action& a) { return a.kind == kind; });
  return out;
}
inline std::vector<std::string> subjects(const set_plan& p, action_kind kind) {
  std::vector<std::string> out;
  for (const auto& a : of(p, kind)) out.push_back(a.subject);
  return out;
}
inline std::int32_t creates(const set_plan& p) {
  std::int32_t n = 0;
  for (const auto& a : of(p, action_kind::create_runners)) n += a.count;
  return n;
}
inline bool has(const set_plan& p, action_kind kind) { return !of(p, kind).empty(); }
// The condition of `type` in the plan's status write (none: no write, or not in it).
inline std::optional<model::condition> published_condition(const set_plan& p, const std::string& type) {
  for (const auto& a : of(p, action_kind::publish_status))
    for (const auto& c : a.conditions)
      if (c.type == type) return c;
  return std::nullopt;
}
// The status the plan writes ("" when it writes none).
inline std::string published_status(const set_plan& p) {
  auto status = of(p, action_kind::publish_status);
  return status.empty() ? std::string() : status.front().text;
}
using names = std::vector<std::string>;

}  // namespace octorun::runnerset::plan_fixtures
