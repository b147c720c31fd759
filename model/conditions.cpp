#include "model/conditions.hpp"

#include <algorithm>
#include <string>

namespace octorun::model {

void set_condition(std::vector<condition>& list, condition c, std::string_view now) {
  auto it = std::find_if(list.begin(), list.end(), [&](const condition& x) { return x.type == c.type; });
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

rapidjson::Value condition_json(const condition& c, json::allocator& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("type", json::string_value(c.type, a), a);
  v.AddMember("status", json::string_value(c.status, a), a);
  if (c.observed_generation != 0) v.AddMember("observedGeneration", c.observed_generation, a);
  if (!c.last_transition_time.empty())
    v.AddMember("lastTransitionTime", json::string_value(c.last_transition_time, a), a);
  v.AddMember("reason", json::string_value(c.reason, a), a);
  v.AddMember("message", json::string_value(c.message, a), a);
  return v;
}

rapidjson::Value conditions_json(const std::vector<condition>& conditions, json::allocator& a) {
  rapidjson::Value list(rapidjson::kArrayType);
  for (const auto& c : conditions) list.PushBack(condition_json(c, a), a);
  return list;
}

}  // namespace octorun::model
