// AdmissionReview v1 (admission.k8s.io/v1): what kube-apiserver sends a
// webhook and what it expects back. Pure codec, no I/O.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "model/types.hpp"

namespace octorun::admission {

struct admission_request {
  std::string uid;
  std::string group;  // request.kind
  std::string version;
  std::string kind;
  std::string resource;  // request.resource.resource (plural)
  std::string sub_resource;
  std::string name;
  std::string namespace_;
  std::string operation;  // CREATE | UPDATE | DELETE | CONNECT
  std::string username;   // request.userInfo.username: who asks
  bool dry_run = false;
  rapidjson::Document object;      // Null when absent (DELETE)
  rapidjson::Document old_object;  // Null when absent (CREATE)
};

// One RFC 6902 operation; value_json is the JSON text of the value ("" for remove).
struct json_patch_op {
  std::string op;
  std::string path;
  std::string value_json;
  bool operator==(const json_patch_op&) const = default;
};

struct admission_response {
  std::string uid;
  bool allowed = true;
  int code = 200;       // with allowed=false: the HTTP status the user sees
  std::string reason;   // e.g. Invalid
  std::string message;  // shown to the user when denied
  model::field_errors causes;
  std::vector<json_patch_op> patch;  // mutating webhooks only
  std::vector<std::string> warnings;
};

// Parses the body the apiserver POSTs. Errors describe what is malformed.
expected<admission_request, std::string> parse_admission_review(std::string_view body);

// The AdmissionReview reply (HTTP 200 body).
std::string encode_admission_review(const admission_response& response);

// A JSON Patch document (the array) for `ops`.
std::string encode_json_patch(const std::vector<json_patch_op>& ops);

// JSON Pointer escaping of one reference token (~ -> ~0, / -> ~1).
std::string escape_pointer_token(std::string_view token);

}  // namespace octorun::admission
