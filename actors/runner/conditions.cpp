#include "actors/runner/conditions.hpp"

#include <algorithm>
#include <string>

namespace octorun::runner {
namespace {

model::condition make(const char* type, bool status, const char* reason, const char* message) {
  model::condition c;
  c.type = type;
  c.status = status ? "True" : "False";
  c.reason = reason;
  c.message = message;
  return c;
}

// Sets `c` in `list` (meta.SetStatusCondition): the transition time moves
// only with the status.
void set(std::vector<model::condition>& list, model::condition c, std::string_view now) {
  auto it =
      std::find_if(list.begin(), list.end(), [&](const model::condition& x) { return x.type == c.type; });
  if (it == list.end()) {
    c.last_transition_time = std::string(now);
    list.push_back(std::move(c));
    return;
  }
  c.last_transition_time = it->status == c.status && !it->last_transition_time.empty()
                               ? it->last_transition_time
                               : std::string(now);
  *it = std::move(c);
}

}  // namespace

std::vector<model::condition> runner_conditions(const std::vector<model::condition>& current,
                                                const runner_condition_facts& facts, std::string_view now,
                                                std::int64_t generation) {
  auto out = current;
  auto registered = facts.registered
                        ? make(condition_registered, true, "JitConfigStored",
                               "GitHub registered the runner; its JIT configuration is in its Secret")
                        : make(condition_registered, false, "NotRegistered", "not registered on GitHub yet");
  registered.observed_generation = generation;
  set(out, std::move(registered), now);
  auto ready =
      facts.pod_ready ? make(condition_pod_ready, true, "PodReady", "the runner's pod is ready")
      : facts.pod_failed
          ? make(condition_pod_ready, false, "PodFailed", "the runner container exited with an error")
          : make(condition_pod_ready, false, "PodNotReady", "the runner's pod is not ready");
  ready.observed_generation = generation;
  set(out, std::move(ready), now);
  return out;
}

rapidjson::Value conditions_json(const std::vector<model::condition>& conditions, json::allocator& a) {
  rapidjson::Value list(rapidjson::kArrayType);
  for (const auto& c : conditions) {
    rapidjson::Value v(rapidjson::kObjectType);
    v.AddMember("type", json::string_value(c.type, a), a);
    v.AddMember("status", json::string_value(c.status, a), a);
    if (c.observed_generation != 0) v.AddMember("observedGeneration", c.observed_generation, a);
    if (!c.last_transition_time.empty())
      v.AddMember("lastTransitionTime", json::string_value(c.last_transition_time, a), a);
    v.AddMember("reason", json::string_value(c.reason, a), a);
    v.AddMember("message", json::string_value(c.message, a), a);
    list.PushBack(v, a);
  }
  return list;
}

}  // namespace octorun::runner
