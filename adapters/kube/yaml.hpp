// Kubeconfig YAML (and JSON) into a RapidJSON DOM, so the rest of the adapter
// reads one representation. YAML goes through yaml-cpp; plain scalars are
// typed by the YAML core schema (null, true/false, integers, floats), quoted
// or tagged ones stay strings. JSON input is parsed by RapidJSON directly.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace octorun::kube {

// Parses `text` into `out` (which owns the values). The error names the line.
expected<ok_t, std::string> parse_yaml(std::string_view text, rapidjson::Document& out);

}  // namespace octorun::kube
