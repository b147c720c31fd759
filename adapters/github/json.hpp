// Reads of untrusted GitHub JSON on top of adapters/common/json.hpp (missing or
// mistyped members yield the fallback), plus what GitHub payloads need besides:
// arrays of strings (or of objects with a name) and JSON string quoting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/common/json.hpp"

namespace octorun::github::json {

inline const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  return octorun::json::find_member(v, name);
}
inline std::string str(const rapidjson::Value& v, const char* name, std::string fallback = {}) {
  return octorun::json::string_or(v, name, std::move(fallback));
}
inline std::int64_t i64(const rapidjson::Value& v, const char* name, std::int64_t fallback = 0) {
  return octorun::json::int64_or(v, name, fallback);
}
inline bool boolean(const rapidjson::Value& v, const char* name, bool fallback = false) {
  return octorun::json::bool_or(v, name, fallback);
}

// Strings of an array member; for arrays of objects, the given field of each.
inline std::vector<std::string> strings(const rapidjson::Value& v, const char* name,
                                        const char* field = nullptr) {
  std::vector<std::string> out;
  const auto* m = member(v, name);
  if (m == nullptr || !m->IsArray()) return out;
  for (const auto& e : m->GetArray()) {
    if (e.IsString()) {
      out.emplace_back(e.GetString(), e.GetStringLength());
    } else if (field != nullptr && e.IsObject()) {
      auto s = str(e, field);
      if (!s.empty()) out.push_back(std::move(s));
    }
  }
  return out;
}

// A string as a JSON string literal, quotes included.
inline std::string quote(std::string_view s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace octorun::github::json
