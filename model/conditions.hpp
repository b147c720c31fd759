// Status conditions as metav1.Condition has them (type, status,
// observedGeneration, lastTransitionTime, reason, message), for every kind
// the manager writes: the Runner's (actors/runner/conditions.hpp) and the
// RunnerSet's (actors/runnerset/set_status.cpp). Pure.
#pragma once

#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/json_writer.hpp"
#include "model/types.hpp"

namespace octorun::model {

// Sets `c` in `list` as meta.SetStatusCondition does: a condition of a new
// type is added; one of an existing type replaces it, and its
// lastTransitionTime moves (to `now`, RFC 3339) only when its status changes.
void set_condition(std::vector<condition>& list, condition c, std::string_view now);

// One condition as JSON, in metav1.Condition's field order; an empty
// lastTransitionTime and a zero observedGeneration are left out. Written
// as a value (an array's element).
void write_condition(json::writer& w, const condition& c);

// The list as the member `key` (status.conditions: a merge patch writes
// the whole list).
void write_conditions(json::writer& w, const char* key, const std::vector<condition>& conditions);

// The same as documents, for code that reads them back.
rapidjson::Value condition_json(const condition& c, json::allocator& a);
rapidjson::Value conditions_json(const std::vector<condition>& conditions, json::allocator& a);

}  // namespace octorun::model
