#include "adapters/admission/review.hpp"

#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"

namespace octorun::admission {
namespace {

using rapidjson::Value;

using json::member;

// A string member, or "" when absent; an error when present with another type.
bool read_string(const Value& obj, const char* key, std::string& out, std::string& error) {
  const Value* v = member(obj, key);
  if (v == nullptr || v->IsNull()) return true;
  if (!v->IsString()) {
    error = std::string("request.") + key + " must be a string";
    return false;
  }
  out.assign(v->GetString(), v->GetStringLength());
  return true;
}

}  // namespace

expected<admission_request, std::string> parse_admission_review(std::string_view body) {
  auto parsed = json::parse(body, json::sources::admission_review);
  if (!parsed) return unexpected<std::string>{"body: " + parsed.error()};
  auto& d = *parsed;
  if (!d.IsObject()) return unexpected<std::string>{std::string("body is not a JSON object")};
  const Value* api_version = member(d, "apiVersion");
  const Value* kind = member(d, "kind");
  if (api_version == nullptr || !api_version->IsString() ||
      std::string_view(api_version->GetString(), api_version->GetStringLength()) != "admission.k8s.io/v1")
    return unexpected<std::string>{std::string("apiVersion must be admission.k8s.io/v1")};
  if (kind == nullptr || !kind->IsString() ||
      std::string_view(kind->GetString(), kind->GetStringLength()) != "AdmissionReview")
    return unexpected<std::string>{std::string("kind must be AdmissionReview")};
  const Value* req = member(d, "request");
  if (req == nullptr || !req->IsObject()) return unexpected<std::string>{std::string("request is missing")};

  admission_request out;
  std::string error;
  if (!read_string(*req, "uid", out.uid, error) ||
      !read_string(*req, "subResource", out.sub_resource, error) ||
      !read_string(*req, "name", out.name, error) || !read_string(*req, "namespace", out.namespace_, error) ||
      !read_string(*req, "operation", out.operation, error))
    return unexpected<std::string>{error};
  if (out.uid.empty()) return unexpected<std::string>{std::string("request.uid is missing")};
  if (out.operation.empty()) return unexpected<std::string>{std::string("request.operation is missing")};
  if (const Value* k = member(*req, "kind"); k != nullptr && k->IsObject()) {
    if (!read_string(*k, "group", out.group, error) || !read_string(*k, "version", out.version, error) ||
        !read_string(*k, "kind", out.kind, error))
      return unexpected<std::string>{"request.kind: " + error};
  }
  if (const Value* u = member(*req, "userInfo"); u != nullptr && u->IsObject()) {
    if (!read_string(*u, "username", out.username, error))
      return unexpected<std::string>{"request.userInfo: " + error};
  }
  if (const Value* r = member(*req, "resource"); r != nullptr && r->IsObject()) {
    if (!read_string(*r, "resource", out.resource, error))
      return unexpected<std::string>{"request.resource: " + error};
  }
  if (const Value* dry = member(*req, "dryRun"); dry != nullptr && dry->IsBool())
    out.dry_run = dry->GetBool();
  if (const Value* obj = member(*req, "object"); obj != nullptr && !obj->IsNull()) {
    if (!obj->IsObject()) return unexpected<std::string>{std::string("request.object must be an object")};
    out.object.CopyFrom(*obj, out.object.GetAllocator());
  }
  if (const Value* old = member(*req, "oldObject"); old != nullptr && !old->IsNull()) {
    if (!old->IsObject()) return unexpected<std::string>{std::string("request.oldObject must be an object")};
    out.old_object.CopyFrom(*old, out.old_object.GetAllocator());
  }
  return out;
}

std::string encode_json_patch(const std::vector<json_patch_op>& ops) {
  json::writer w;
  w.open_array();
  for (const auto& op : ops) {
    w.open().field("op", op.op).field("path", op.path);
    if (!op.value_json.empty()) w.raw_field("value", op.value_json);
    w.close();
  }
  return w.close_array().str();
}

std::string encode_admission_review(const admission_response& r) {
  json::writer w;
  w.open().field("apiVersion", "admission.k8s.io/v1").field("kind", "AdmissionReview");
  w.open("response").field("uid", r.uid).field("allowed", r.allowed);
  if (!r.allowed) {
    w.open("status").field("status", "Failure").field("code", r.code).optional("reason", r.reason);
    w.field("message", r.message);
    if (!r.causes.empty()) {
      w.open("details").open_array("causes");
      for (const auto& c : r.causes)
        w.open()
            .field("type", "FieldValueInvalid")
            .field("field", c.field)
            .field("message", c.message)
            .close();
      w.close_array().close();
    }
    w.close();
  }
  if (r.allowed && !r.patch.empty())
    w.field("patchType", "JSONPatch").field("patch", base64_encode(encode_json_patch(r.patch)));
  if (!r.warnings.empty()) {
    w.open_array("warnings");
    for (const auto& s : r.warnings) w.value(s);
    w.close_array();
  }
  return w.close().close().str();
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

}  // namespace octorun::admission
