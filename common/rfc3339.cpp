#include "common/rfc3339.hpp"

#include <cstdio>
#include <ctime>

namespace octorun {

std::optional<std::int64_t> parse_rfc3339(std::string_view text) {
  int y, mo, d, h, mi, s;
  std::string buf(text.substr(0, 64));
  char rest[64] = {0};
  if (std::sscanf(buf.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%63s", &y, &mo, &d, &h, &mi, &s, rest) < 6)
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  std::int64_t epoch = static_cast<std::int64_t>(timegm(&tm));
  std::string_view r(rest);
  if (!r.empty() && r.front() == '.') {
    r.remove_prefix(1);
    while (!r.empty() && r.front() >= '0' && r.front() <= '9') r.remove_prefix(1);
  }
  if (r.empty() || r == "Z" || r == "z") return epoch;
  if ((r.front() == '+' || r.front() == '-') && r.size() >= 6) {
    int oh = 0, om = 0;
    if (std::sscanf(std::string(r.substr(1)).c_str(), "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    std::int64_t off = (oh * 60 + om) * 60;
    return r.front() == '+' ? epoch - off : epoch + off;
  }
  return std::nullopt;
}

std::string format_rfc3339(std::int64_t epoch) {
  std::time_t t = static_cast<std::time_t>(epoch);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string format_rfc3339_micros(std::chrono::system_clock::time_point t) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(micros / 1'000'000);
  long frac = static_cast<long>(micros % 1'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

}  // namespace octorun
