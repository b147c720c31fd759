// RapidJSON -> typed resources. Untrusted input: every member is looked up
// with FindMember and type-checked; problems come back as field errors.
#pragma once

#include <rapidjson/document.h>

#include <string_view>

#include "adapters/common/expected.hpp"
#include "model/types.hpp"

namespace octorun::model {

expected<runnerset, field_errors> parse_runnerset(const rapidjson::Value& object);
expected<runnerset, field_errors> parse_runnerset(std::string_view json);
expected<runner, field_errors> parse_runner(const rapidjson::Value& object);
expected<runner, field_errors> parse_runner(std::string_view json);

}  // namespace octorun::model
