#include "adapters/kube/api.hpp"

#include <rapidjson/document.h>

#include <cstdio>
#include <ctime>

#include "adapters/http/http_client.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "common/strings.hpp"

namespace octorun::kube {
namespace {

std::string_view reason_for(long code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return code >= 500 ? "InternalError" : "Unknown";
  }
}

}  // namespace

std::string to_string(const api_error& e) {
  if (e.transport) return "transport error: " + e.message;
  std::string out = std::to_string(e.code) + " " + e.reason;
  if (!e.message.empty()) out += ": " + e.message;
  return out;
}

api_error parse_status(long code, std::string_view body, std::string_view retry_after_header,
                       std::int64_t now_epoch) {
  api_error e;
  e.code = code;
  auto parsed = json::parse(body, json::sources::kube_object);
  const rapidjson::Value null_value;
  const rapidjson::Value& d = parsed ? static_cast<const rapidjson::Value&>(*parsed) : null_value;
  if (d.IsObject() && json::str(d, "kind") == "Status") {
    e.reason = json::str(d, "reason");
    e.message = json::str(d, "message");
    if (e.code == 0) e.code = static_cast<long>(json::i64(d, "code"));
    if (const auto* details = json::member(d, "details")) {
      auto seconds = json::i64(*details, "retryAfterSeconds");
      if (seconds > 0) e.retry_after = std::chrono::seconds(seconds);
      if (const auto* causes = json::member(*details, "causes"); causes && causes->IsArray())
        for (const auto& cause : causes->GetArray())
          if (cause.IsObject() && json::str(cause, "reason") == "NamespaceTerminating")
            e.namespace_terminating = true;
    }
  } else {
    // Plain text (APF 429s) or a proxy's HTML: keep a bounded excerpt.
    e.message = printable_excerpt(body, 512);
    while (!e.message.empty() && (e.message.back() == '\n' || e.message.back() == ' ')) e.message.pop_back();
  }
  if (e.reason.empty()) e.reason = std::string(reason_for(e.code));
  if (auto seconds = http::retry_after_seconds(retry_after_header, now_epoch); seconds && *seconds > 0)
    e.retry_after = std::chrono::seconds(*seconds);
  return e;
}

std::string resource::api_prefix() const {
  return group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
}

std::string resource::collection_path(std::string_view ns) const {
  std::string out = api_prefix();
  if (namespaced && !ns.empty()) out += "/namespaces/" + http::url_encode(ns);
  return out + "/" + plural;
}

std::string resource::object_path(std::string_view ns, std::string_view name,
                                  std::string_view subresource) const {
  std::string out = collection_path(ns) + "/" + http::url_encode(name);
  if (!subresource.empty()) out += "/" + std::string(subresource);
  return out;
}

std::string resource::id() const { return group.empty() ? plural : plural + "." + group; }

resource configmaps() { return {"", "v1", "configmaps", true}; }
resource namespaces() { return {"", "v1", "namespaces", false}; }
resource events_v1() { return {"events.k8s.io", "v1", "events", true}; }
resource leases() { return {"coordination.k8s.io", "v1", "leases", true}; }

std::string query_string(const list_options& o) {
  std::string q;
  auto add = [&](std::string_view key, std::string_view value) {
    q += q.empty() ? '?' : '&';
    q += key;
    q += '=';
    q += http::url_encode(value);
  };
  if (!o.label_selector.empty()) add("labelSelector", o.label_selector);
  if (!o.field_selector.empty()) add("fieldSelector", o.field_selector);
  if (!o.resource_version.empty()) add("resourceVersion", o.resource_version);
  if (!o.resource_version_match.empty()) add("resourceVersionMatch", o.resource_version_match);
  if (!o.continue_token.empty()) add("continue", o.continue_token);
  if (o.limit > 0) add("limit", std::to_string(o.limit));
  if (o.watch) add("watch", "1");
  if (o.allow_watch_bookmarks) add("allowWatchBookmarks", "true");
  if (o.timeout_seconds > 0) add("timeoutSeconds", std::to_string(o.timeout_seconds));
  return q;
}

std::string_view content_type(patch_type t) {
  switch (t) {
    case patch_type::merge:
      return "application/merge-patch+json";
    case patch_type::json:
      return "application/json-patch+json";
    case patch_type::strategic:
      return "application/strategic-merge-patch+json";
    case patch_type::apply:
      return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

std::string to_json(const delete_options& o) {
  json::writer w;
  w.open()
      .field("kind", "DeleteOptions")
      .field("apiVersion", "v1")
      .optional("propagationPolicy", o.propagation_policy);
  if (o.grace_period_seconds >= 0) w.field("gracePeriodSeconds", o.grace_period_seconds);
  if (o.dry_run) {
    w.open_array("dryRun").value("All").close_array();
  }
  if (!o.precondition_uid.empty() || !o.precondition_resource_version.empty()) {
    w.open("preconditions")
        .optional("uid", o.precondition_uid)
        .optional("resourceVersion", o.precondition_resource_version)
        .close();
  }
  return w.close().str();
}

}  // namespace octorun::kube
