// The reader every parser of an octorun.io object uses: typed members of
// untrusted JSON, each looked up with FindMember and type-checked, a field
// error for each one of the wrong type. Missing members are not errors here:
// required fields are validation's job.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "model/types.hpp"

namespace octorun::model::detail {

using rapidjson::Value;

inline std::string join(const std::string& path, const char* key) {
  return path.empty() ? key : path + "." + key;
}
inline std::string index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

class reader {
 public:
  field_errors errors;

  const Value* find(const Value& obj, const char* key) { return json::find_value(obj, key); }
  const Value* object(const Value& obj, const char* key, const std::string& path) {
    const Value* v = find(obj, key);
    if (v != nullptr && !v->IsObject()) return wrong(path, "an object");
    return v;
  }
  const Value* array(const Value& obj, const char* key, const std::string& path) {
    const Value* v = find(obj, key);
    if (v != nullptr && !v->IsArray()) return wrong(path, "a list");
    return v;
  }
  void string(const Value& obj, const char* key, const std::string& path, std::string& out) {
    const Value* v = find(obj, key);
    if (v == nullptr) return;
    if (!v->IsString()) {
      wrong(path, "a string");
      return;
    }
    out.assign(v->GetString(), v->GetStringLength());
  }
  void int32(const Value& obj, const char* key, const std::string& path, std::optional<std::int32_t>& out) {
    const Value* v = find(obj, key);
    if (v == nullptr) return;
    if (!v->IsInt()) {
      wrong(path, "a whole number between -2147483648 and 2147483647");
      return;
    }
    out = v->GetInt();
  }
  void int32(const Value& obj, const char* key, const std::string& path, std::int32_t& out) {
    std::optional<std::int32_t> v;
    int32(obj, key, path, v);
    if (v) out = *v;
  }
  void int64(const Value& obj, const char* key, const std::string& path, std::int64_t& out) {
    const Value* v = find(obj, key);
    if (v == nullptr) return;
    if (!v->IsInt64()) {
      wrong(path, "a whole number");
      return;
    }
    out = v->GetInt64();
  }
  void boolean(const Value& obj, const char* key, const std::string& path, bool& out) {
    const Value* v = find(obj, key);
    if (v == nullptr) return;
    if (!v->IsBool()) {
      wrong(path, "true or false");
      return;
    }
    out = v->GetBool();
  }
  void string_list(const Value& obj, const char* key, const std::string& path,
                   std::vector<std::string>& out) {
    const Value* v = array(obj, key, path);
    if (v == nullptr) return;
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      const Value& item = (*v)[i];
      if (!item.IsString()) {
        wrong(index(path, i), "a string");
        continue;
      }
      out.emplace_back(item.GetString(), item.GetStringLength());
    }
  }
  void string_map(const Value& obj, const char* key, const std::string& path,
                  std::map<std::string, std::string>& out) {
    const Value* v = object(obj, key, path);
    if (v == nullptr) return;
    for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
      std::string k(it->name.GetString(), it->name.GetStringLength());
      if (!it->value.IsString()) {
        wrong(path + "." + k, "a string");
        continue;
      }
      out[k] = std::string(it->value.GetString(), it->value.GetStringLength());
    }
  }
  // Each object of the list at `key`, read by read_one(item, item_path, out_item).
  template <class T, class Fn>
  void objects(const Value& parent, const char* key, const std::string& path, std::vector<T>& out,
               Fn&& read_one) {
    const Value* list = array(parent, key, path);
    if (list == nullptr) return;
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& item = (*list)[i];
      auto at = index(path, i);
      if (!item.IsObject()) {
        wrong(at, "an object");
        continue;
      }
      T value;
      read_one(item, at, value);
      out.push_back(std::move(value));
    }
  }
  const Value* wrong(const std::string& path, const char* what) {
    errors.push_back({path, std::string("must be ") + what});
    return nullptr;
  }
};

}  // namespace octorun::model::detail
