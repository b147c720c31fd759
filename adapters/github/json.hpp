// Type-checked reads of untrusted JSON (RapidJSON): a missing or mistyped
// member yields the fallback, never an assertion.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace octorun::github::json {

inline const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

inline std::string str(const rapidjson::Value& v, const char* name, std::string fallback = {}) {
  auto* m = member(v, name);
  return m != nullptr && m->IsString() ? std::string(m->GetString(), m->GetStringLength()) : fallback;
}

inline std::int64_t i64(const rapidjson::Value& v, const char* name, std::int64_t fallback = 0) {
  auto* m = member(v, name);
  if (m == nullptr) return fallback;
  if (m->IsInt64()) return m->GetInt64();
  if (m->IsUint64()) return static_cast<std::int64_t>(m->GetUint64());
  if (m->IsDouble()) return static_cast<std::int64_t>(m->GetDouble());
  return fallback;
}

inline bool boolean(const rapidjson::Value& v, const char* name, bool fallback = false) {
  auto* m = member(v, name);
  return m != nullptr && m->IsBool() ? m->GetBool() : fallback;
}

// Strings of an array member; for arrays of objects, the given field of each.
inline std::vector<std::string> strings(const rapidjson::Value& v, const char* name,
                                        const char* field = nullptr) {
  std::vector<std::string> out;
  auto* m = member(v, name);
  if (m == nullptr || !m->IsArray()) return out;
  for (const auto& e : m->GetArray()) {
    if (e.IsString())
      out.emplace_back(e.GetString(), e.GetStringLength());
    else if (field != nullptr && e.IsObject()) {
      auto s = str(e, field);
      if (!s.empty()) out.push_back(std::move(s));
    }
  }
  return out;
}

inline std::string write(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return std::string(sb.GetString(), sb.GetSize());
}

inline rapidjson::Value text(std::string_view s, rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// Escapes a string as a JSON string literal, quotes included.
inline std::string quote(std::string_view s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace octorun::github::json
