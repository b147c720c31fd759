// Queries on what a RunnerSet observed (observation.hpp; plan.hpp: the
// status counts), shared by plan() and the actor that executes it; the
// decisions themselves are in plan.cpp.
#include "actors/runnerset/observation.hpp"

#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/scale_sets.hpp"

namespace octorun::runnerset {

void counts::add(const runner_view& v) {
  if (v.deleting && !v.busy()) return;
  if (v.phase == model::runner_phase::failed) {
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

void note_jit_registration(observed_runner& runner, const std::string& requested_for,
                           std::int64_t github_runner_id) {
  if (github_runner_id != 0 && (requested_for.empty() || requested_for == runner.uid))
    runner.jit_runner_id = github_runner_id;
}

bool github_unreachable_for_deletion(const set_observation& o) {
  // A set its class refuses sends nothing anywhere, also while it goes.
  const bool refused = o.class_verdict && !o.class_verdict->refused.empty();
  return o.set && o.set->metadata.deleting && (o.credentials_gone || refused) && !o.credentials_loaded &&
         !o.scale_set_client;
}

std::string retry_wake(const std::string& variant) { return "retry " + variant; }

std::string scale_down_wake(const std::string& variant) { return "scale-down " + variant; }

std::int64_t scale_set_id(const set_observation& o, const std::string& variant) {
  auto it = o.scale_sets.find(variant);
  return it == o.scale_sets.end() ? 0 : it->second.id;
}

std::int64_t known_scale_set_id(const set_observation& o, const std::string& variant) {
  if (const auto id = scale_set_id(o, variant); id != 0 || !o.set) return id;
  const auto recorded = recorded_scale_sets(o.set->status);
  const auto it = recorded.find(variant);
  return it == recorded.end() ? 0 : it->second;
}

std::string session_id(const set_observation& o, const std::string& variant) {
  if (auto it = o.scale_sets.find(variant); it != o.scale_sets.end() && !it->second.session_id.empty())
    return it->second.session_id;
  return o.set ? recorded_session(o.set->status, variant) : std::string();
}

std::string variant_of(const set_observation& o, const std::string& runner) {
  if (auto r = o.runners.find(runner); r != o.runners.end()) return r->second.variant;
  auto creating = o.in_flight.of(action_kind::create_runners);
  if (auto c = creating.find(runner); c != creating.end()) return c->second;
  return {};
}

}  // namespace octorun::runnerset
