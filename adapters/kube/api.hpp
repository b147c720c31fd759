// Pure vocabulary of the Kubernetes adapter: which resource, which path and
// query, and what an API failure looks like. No I/O here.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace octorun::kube {

// A failure as a value: an API Status (code, reason, message), a plain-text
// or HTML error body (code only), or a transport failure (code 0).
struct api_error {
  long code = 0;                        // HTTP status; 0 when no response arrived
  std::string reason;                   // Status.reason: NotFound, Conflict, AlreadyExists, Expired, ...
  std::string message;                  // Status.message, the body, or the transport error
  std::chrono::seconds retry_after{0};  // Retry-After header or details.retryAfterSeconds
  bool transport = false;               // connect, TLS, timeout, cancelled
  // A create refused because its namespace is being deleted (403 with the
  // cause NamespaceTerminating): expected while a namespace goes, and
  // everything in it goes too.
  bool namespace_terminating = false;

  bool not_found() const { return code == 404; }
  bool conflict() const { return code == 409 && reason != "AlreadyExists"; }
  bool already_exists() const { return code == 409 && reason == "AlreadyExists"; }
  bool gone() const { return code == 410; }  // Expired (or Gone on old servers)
  bool forbidden() const { return code == 403; }
  bool unauthorized() const { return code == 401; }
  bool invalid() const { return code == 422; }  // also a failed JSON-patch `test`
  bool too_many_requests() const { return code == 429; }
  // Worth retrying with backoff: transport failures, 429, 5xx.
  bool retryable() const { return transport || code == 429 || code >= 500; }
};

// "403 Forbidden: configmaps is forbidden: User ..." — for logs and test output.
std::string to_string(const api_error& e);

// Builds an api_error from an HTTP status, a body (a Status or anything) and
// the Retry-After header value (http::retry_after_seconds: an HTTP-date
// counts from `now_epoch`, and is not read without it).
api_error parse_status(long code, std::string_view body, std::string_view retry_after_header = {},
                       std::int64_t now_epoch = 0);

// group/version/plural; core group when `group` is empty.
struct resource {
  std::string group;
  std::string version;
  std::string plural;
  bool namespaced = true;

  // "/api/v1" or "/apis/G/V".
  std::string api_prefix() const;
  // Collection: all namespaces when `ns` is empty (or the resource is cluster-scoped).
  std::string collection_path(std::string_view ns) const;
  std::string object_path(std::string_view ns, std::string_view name,
                          std::string_view subresource = {}) const;
  // "configmaps" or "runners.tests.octorun.io", for logs and informer names.
  std::string id() const;
};

// Well-known resources.
resource configmaps();
resource namespaces();
resource events_v1();
resource leases();

struct list_options {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  std::string resource_version_match;  // NotOlderThan | Exact
  std::string continue_token;
  int64_t limit = 0;            // page size; 0 = server default (all)
  int64_t timeout_seconds = 0;  // watch: server-side end of the stream
  bool allow_watch_bookmarks = false;
  bool watch = false;
};

// "?labelSelector=...&limit=..." (empty when no option is set).
std::string query_string(const list_options& o);

enum class patch_type { merge, json, strategic, apply };
std::string_view content_type(patch_type t);

struct delete_options {
  std::string propagation_policy;  // Background | Foreground | Orphan; empty = server default
  std::string precondition_uid;
  std::string precondition_resource_version;
  int64_t grace_period_seconds = -1;  // -1 = unset
  bool dry_run = false;
};
// The DeleteOptions body.
std::string to_json(const delete_options& o);

}  // namespace octorun::kube
