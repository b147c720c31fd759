// A small helper over RapidJSON's Writer for the request bodies this adapter
// builds (DeleteOptions, Events, Leases): copies strings, skips empty
// optional fields.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace octorun::kube {

class json_writer {
 public:
  json_writer() : w_(sb_) {}
  // Opens an object: the top level when `key` is null, else a member.
  json_writer& open(const char* key = nullptr) {
    if (key != nullptr) w_.Key(key);
    w_.StartObject();
    return *this;
  }
  json_writer& close() {
    w_.EndObject();
    return *this;
  }
  json_writer& field(const char* key, std::string_view value) {
    w_.Key(key);
    w_.String(value.data(), static_cast<rapidjson::SizeType>(value.size()), true);
    return *this;
  }
  json_writer& field(const char* key, int64_t value) {
    w_.Key(key);
    w_.Int64(value);
    return *this;
  }
  // Only when `value` is not empty.
  json_writer& optional(const char* key, std::string_view value) {
    return value.empty() ? *this : field(key, value);
  }
  rapidjson::Writer<rapidjson::StringBuffer>& raw() { return w_; }
  std::string str() const { return {sb_.GetString(), sb_.GetSize()}; }

 private:
  rapidjson::StringBuffer sb_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
};

}  // namespace octorun::kube
