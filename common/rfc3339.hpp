// RFC 3339 / ISO 8601 times in UTC: the one parser and formatter (GitHub's
// expires_at, Kubernetes timestamps and MicroTime fields, Runner status times).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace octorun {

// "2026-01-02T03:04:05Z" -> seconds since the epoch; fractional seconds are
// dropped, offsets ("+01:00") applied. Nothing for anything else.
std::optional<std::int64_t> parse_rfc3339(std::string_view text);

// Seconds since the epoch -> "2026-01-02T03:04:05Z".
std::string format_rfc3339(std::int64_t epoch);

// With microseconds ("2026-03-01T10:00:00.123456Z"), for Kubernetes MicroTime fields.
std::string format_rfc3339_micros(std::chrono::system_clock::time_point t);

}  // namespace octorun
