// A reader for the YAML subset kubeconfigs use, producing a RapidJSON DOM so
// the rest of the adapter reads one representation. Supported: block maps,
// block sequences (including `- key: value` items), plain / 'single' /
// "double" quoted scalars, literal (|) and folded (>) block scalars,
// single-line flow collections ([a, b], {k: v}), comments and `---`.
// Anchors, aliases, tags and multi-document streams are not. JSON input is
// accepted as well (it is parsed by RapidJSON directly).
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "adapters/common/expected.hpp"

namespace octorun::kube {

// Parses `text` into `out` (which owns the values). The error names the line.
expected<ok_t, std::string> parse_yaml(std::string_view text, rapidjson::Document& out);

}  // namespace octorun::kube
