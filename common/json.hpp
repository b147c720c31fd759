// RapidJSON helpers shared by every adapter and builder.
// Reading untrusted JSON: lookups return a member or nullptr (never
// operator[]), typed reads fall back instead of asserting.
// Writing: strings are always copied into the document's allocator.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace octorun::json {

// ---- reading ---------------------------------------------------------------

// The member `key` of `obj`, or nullptr when `obj` is not an object or has no such member.
inline const rapidjson::Value* member(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// Like member, but an explicit null counts as absent too.
inline const rapidjson::Value* find_value(const rapidjson::Value& obj, const char* key) {
  const rapidjson::Value* v = member(obj, key);
  return v == nullptr || v->IsNull() ? nullptr : v;
}

inline std::string str(const rapidjson::Value& obj, const char* key, std::string fallback = {}) {
  const auto* v = member(obj, key);
  return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : fallback;
}

// Integers, also written as unsigned or (by some APIs) as a float. A number
// outside the int64 range reads as `fallback` (converting such a double is
// undefined behaviour; the fuzzers found 1e21 in a webhook's run_id).
inline std::int64_t i64(const rapidjson::Value& obj, const char* key, std::int64_t fallback = 0) {
  const auto* v = member(obj, key);
  if (v == nullptr) return fallback;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsDouble()) {
    // [-2^63, 2^63): both bounds are exact doubles; NaN fails both tests.
    double d = v->GetDouble();
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<std::int64_t>(d);
  }
  return fallback;  // not a number, or a uint64 above INT64_MAX
}

inline bool boolean(const rapidjson::Value& obj, const char* key, bool fallback = false) {
  const auto* v = member(obj, key);
  return v != nullptr && v->IsBool() ? v->GetBool() : fallback;
}

// Strings of an array member; for arrays of objects, the given field of each.
inline std::vector<std::string> strings(const rapidjson::Value& obj, const char* key,
                                        const char* field = nullptr) {
  std::vector<std::string> out;
  const auto* m = member(obj, key);
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

// ---- writing ---------------------------------------------------------------

using allocator = rapidjson::Document::AllocatorType;

inline rapidjson::Value string_value(std::string_view s, allocator& a) {
  // An empty view may have no data (e.g. the resourceVersion of an object not
  // read yet); RapidJSON asserts on a null pointer even for length 0.
  return rapidjson::Value(s.empty() ? "" : s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// Sets obj[key] = value, replacing an existing member (AddMember would add a second one).
inline void set_member(rapidjson::Value& obj, std::string_view key, rapidjson::Value value, allocator& a) {
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == key) {
      it->value = std::move(value);
      return;
    }
  }
  obj.AddMember(string_value(key, a), std::move(value), a);
}

// A string as a JSON string literal, quotes included.
inline std::string quote(std::string_view s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(sb.GetString(), sb.GetSize());
}

// Compact serialisation, members in insertion order.
inline std::string write(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return {sb.GetString(), sb.GetSize()};
}

// Compact serialisation with every object's members sorted by name (arrays
// keep their order): equal documents give equal text whatever order their
// members arrived in, so the text can be compared or hashed.
inline void write_canonical(const rapidjson::Value& v, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (v.IsObject()) {
    std::vector<const rapidjson::Value::Member*> members;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) members.push_back(&*it);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (const auto* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      write_canonical(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& e : v.GetArray()) write_canonical(e, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}
inline std::string canonical(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  write_canonical(v, w);
  return {sb.GetString(), sb.GetSize()};
}

// [{"apiVersion","kind","name","uid","controller":true,"blockOwnerDeletion":true}]
inline rapidjson::Value controller_reference(std::string_view api_version, std::string_view kind,
                                             std::string_view name, std::string_view uid, allocator& a) {
  rapidjson::Value ref(rapidjson::kObjectType);
  ref.AddMember("apiVersion", string_value(api_version, a), a);
  ref.AddMember("kind", string_value(kind, a), a);
  ref.AddMember("name", string_value(name, a), a);
  ref.AddMember("uid", string_value(uid, a), a);
  ref.AddMember("controller", true, a);
  ref.AddMember("blockOwnerDeletion", true, a);
  rapidjson::Value refs(rapidjson::kArrayType);
  refs.PushBack(ref, a);
  return refs;
}

}  // namespace octorun::json
