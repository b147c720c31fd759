// The one way request and response bodies are written: a small chained helper
// over RapidJSON's Writer (strings are escaped and copied, members stay in
// the order written). Build a DOM (json.hpp) only when a document is edited;
// never concatenate JSON by hand.
//
//   json::writer w;
//   w.open().field("name", name).open_array("labels");
//   for (const auto& l : labels) w.value(l);
//   std::string body = w.close_array().close().str();
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace octorun::json {

class writer {
 public:
  writer() : w_(sb_) {}
  // Opens an object: a value (top level, array element) when `key` is null, else a member.
  writer& open(const char* key = nullptr) {
    if (key != nullptr) w_.Key(key);
    w_.StartObject();
    return *this;
  }
  writer& close() {
    w_.EndObject();
    return *this;
  }
  // Opens an array, as open() does an object.
  writer& open_array(const char* key = nullptr) {
    if (key != nullptr) w_.Key(key);
    w_.StartArray();
    return *this;
  }
  writer& close_array() {
    w_.EndArray();
    return *this;
  }
  writer& field(const char* key, std::string_view value) { return key_(key).value(value); }
  writer& field(const char* key, const char* value) { return key_(key).value(std::string_view(value)); }
  writer& field(const char* key, const std::string& value) {
    return key_(key).value(std::string_view(value));
  }
  writer& field(const char* key, int value) { return key_(key).value(static_cast<std::int64_t>(value)); }
  writer& field(const char* key, std::int64_t value) { return key_(key).value(value); }
  writer& field(const char* key, bool value) {
    key_(key);
    w_.Bool(value);
    return *this;
  }
  writer& null_field(const char* key) {
    key_(key);
    w_.Null();
    return *this;
  }
  // Only when `value` is not empty.
  writer& optional(const char* key, std::string_view value) {
    return value.empty() ? *this : field(key, value);
  }
  // A member whose value is already serialised JSON (copied as is).
  writer& raw_field(std::string_view key, std::string_view json) {
    key_(key);
    w_.RawValue(json.data(), json.size(), rapidjson::kObjectType);
    return *this;
  }
  // Array elements.
  writer& value(std::string_view v) {
    w_.String(v.data(), static_cast<rapidjson::SizeType>(v.size()), true);
    return *this;
  }
  writer& value(const char* v) { return value(std::string_view(v)); }
  writer& value(const std::string& v) { return value(std::string_view(v)); }
  writer& value(std::int64_t v) {
    w_.Int64(v);
    return *this;
  }
  // A value already serialised as JSON (copied as is).
  writer& raw_value(std::string_view json) {
    w_.RawValue(json.data(), json.size(), rapidjson::kObjectType);
    return *this;
  }
  std::string str() const { return {sb_.GetString(), sb_.GetSize()}; }

 private:
  writer& key_(std::string_view key) {
    w_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), true);
    return *this;
  }
  rapidjson::StringBuffer sb_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
};

// The member "ownerReferences" of an object's metadata: its one controller,
// [{"apiVersion","kind","name","uid","controller":true,"blockOwnerDeletion":true}].
inline void write_controller_reference(writer& w, std::string_view api_version, std::string_view kind,
                                       std::string_view name, std::string_view uid) {
  w.open_array("ownerReferences").open().field("apiVersion", api_version).field("kind", kind);
  w.field("name", name).field("uid", uid).field("controller", true).field("blockOwnerDeletion", true);
  w.close().close_array();
}

}  // namespace octorun::json
