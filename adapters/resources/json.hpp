// Lookups on untrusted JSON (RapidJSON): a member or nullptr, never operator[].
#pragma once

#include <rapidjson/document.h>

namespace octorun::resources {

// The member `key` of `obj`, or nullptr when `obj` is not an object or has no such member.
inline const rapidjson::Value* find_member(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// Like find_member, but an explicit null counts as absent too.
inline const rapidjson::Value* find_value(const rapidjson::Value& obj, const char* key) {
  const rapidjson::Value* v = find_member(obj, key);
  return v == nullptr || v->IsNull() ? nullptr : v;
}

}  // namespace octorun::resources
