// Process-wide logging: spdlog to stderr, one JSON object per line (for log
// pipelines) or plain text (for people at a terminal). Code logs through
// spdlog's default logger; this only decides the format and the level.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace octorun::logging {

enum class format { json, text };

struct options {
  format fmt = format::json;
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  std::string logger = "octorun";
};

// Installs the default logger. Fails (and changes nothing) on an unknown level.
expected<ok_t, std::string> setup(const options& o);

// `s` escaped for the inside of a JSON string (quotes, backslashes, control
// characters); what the json format does to every message.
std::string json_escape(std::string_view s);

}  // namespace octorun::logging
