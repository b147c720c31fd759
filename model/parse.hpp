// RapidJSON -> typed resources. Untrusted input: every member is looked up
// with FindMember and type-checked; problems come back as field errors.
#pragma once

#include <rapidjson/document.h>

#include <string_view>

#include "common/expected.hpp"
#include "model/children.hpp"
#include "model/types.hpp"

namespace octorun::model {

expected<runnerset, field_errors> parse_runnerset(const rapidjson::Value& object);
expected<runnerset, field_errors> parse_runnerset(std::string_view json);
expected<runner, field_errors> parse_runner(const rapidjson::Value& object);
expected<runner, field_errors> parse_runner(std::string_view json);

// A JIT Secret's data, read back; nullopt when it is not one of ours or is
// damaged (no jitConfig, a runnerId that is not a positive integer).
std::optional<jit_config> read_jit_secret(const rapidjson::Value& secret);

// The lean views the informers keep. Lenient: a field of the wrong type
// reads as absent (the apiserver validated these objects).
runner_pod read_runner_pod(const rapidjson::Value& pod);
jit_secret read_jit_secret_view(const rapidjson::Value& secret);
// An object's metadata alone (a field of the wrong type reads as absent).
object_meta read_object_meta(const rapidjson::Value& object);

}  // namespace octorun::model
