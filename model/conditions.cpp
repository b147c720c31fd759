#include "model/conditions.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/json_parse.hpp"

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

void write_condition(json::writer& w, const condition& c) {
  w.open().field("type", c.type).field("status", c.status);
  if (c.observed_generation != 0) w.field("observedGeneration", c.observed_generation);
  w.optional("lastTransitionTime", c.last_transition_time);
  w.field("reason", c.reason).field("message", c.message).close();
}

void write_conditions(json::writer& w, const char* key, const std::vector<condition>& conditions) {
  w.open_array(key);
  for (const auto& c : conditions) write_condition(w, c);
  w.close_array();
}

namespace {

// What the writer wrote, as a value of `a` (the text is ours: it parses).
rapidjson::Value document_of(const json::writer& w, json::allocator& a) {
  auto d = json::parse(w.str(), json::sources::stored_json);
  if (!d) std::abort();
  return rapidjson::Value(*d, a);
}

}  // namespace

rapidjson::Value condition_json(const condition& c, json::allocator& a) {
  json::writer w;
  write_condition(w, c);
  return document_of(w, a);
}

rapidjson::Value conditions_json(const std::vector<condition>& conditions, json::allocator& a) {
  json::writer w;
  write_conditions(w, nullptr, conditions);
  return document_of(w, a);
}

}  // namespace octorun::model
