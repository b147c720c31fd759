#include "adapters/kube/watch.hpp"

#include <rapidjson/document.h>

#include "common/json.hpp"
#include "common/json_parse.hpp"

namespace octorun::kube {

std::string_view to_string(event_type t) {
  switch (t) {
    case event_type::added:
      return "ADDED";
    case event_type::modified:
      return "MODIFIED";
    case event_type::deleted:
      return "DELETED";
    case event_type::bookmark:
      return "BOOKMARK";
    case event_type::error:
      return "ERROR";
  }
  return "UNKNOWN";
}

bool watch_decoder::feed(std::string_view chunk, std::vector<watch_event>& out) {
  if (!error_.empty()) return false;
  while (!chunk.empty()) {
    auto nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      buffer_.append(chunk);
      if (buffer_.size() > max_line_) {
        error_ = "watch event larger than " + std::to_string(max_line_) + " bytes";
        return false;
      }
      return true;
    }
    bool ok;
    if (buffer_.empty()) {
      ok = decode_line(chunk.substr(0, nl), out);
    } else {
      buffer_.append(chunk.substr(0, nl));
      ok = decode_line(buffer_, out);
      buffer_.clear();
    }
    if (!ok) return false;
    chunk.remove_prefix(nl + 1);
  }
  return true;
}

bool watch_decoder::decode_line(std::string_view line, std::vector<watch_event>& out) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty()) return true;
  auto parsed = json::parse(line, json::sources::kube_watch_event);
  if (!parsed || !parsed->IsObject()) {
    error_ = "malformed watch event: " + (parsed ? std::string("not an object") : parsed.error());
    return false;
  }
  auto& d = *parsed;
  const auto* type = json::member(d, "type");
  const auto* obj = json::member(d, "object");
  if (type == nullptr || !type->IsString() || obj == nullptr || !obj->IsObject()) {
    error_ = "watch event without type or object";
    return false;
  }
  std::string_view t(type->GetString(), type->GetStringLength());
  watch_event ev;
  if (t == "ADDED")
    ev.type = event_type::added;
  else if (t == "MODIFIED")
    ev.type = event_type::modified;
  else if (t == "DELETED")
    ev.type = event_type::deleted;
  else if (t == "BOOKMARK")
    ev.type = event_type::bookmark;
  else if (t == "ERROR")
    ev.type = event_type::error;
  else
    return true;  // an unknown type from a newer server: skip it
  if (ev.type == event_type::error) {
    ev.error = parse_status(static_cast<long>(json::i64(*obj, "code")), json::write(*obj));
  } else {
    ev.obj = make_object(*obj, drop_managed_fields_);
  }
  out.push_back(std::move(ev));
  return true;
}

bool newer_resource_version(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() > b.size();
  return a > b;
}

}  // namespace octorun::kube
