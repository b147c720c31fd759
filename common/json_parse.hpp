// The one way bytes from outside become a JSON document: the admission
// webhook's and the GitHub intake's request bodies, GitHub's and the
// Kubernetes API's responses, watch events, kubeconfig, JWT payloads, and the
// templates the manager re-reads from objects it was given.
//
// RapidJSON's default Parse recurses once per nesting level, so a body that
// is nothing but nested '[' overflows a worker thread's stack. json::parse runs
// the iterative parser (no recursion) and refuses a document nested deeper
// than max_depth or larger than its source's limit, with a message that says
// which. Every recursive walk over a parsed tree (json::canonical, write,
// CopyFrom, Accept) is therefore bounded by max_depth.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace octorun::json {

// Nesting levels (objects and arrays) a parsed document may have: well
// above what Kubernetes objects, pod templates and CRD OpenAPI schemas (two
// levels per field) use, while it bounds the stack a recursive walk needs.
inline constexpr unsigned max_depth = 128;

// Where the bytes came from and how many of them may be parsed.
struct source {
  std::string_view name;  // for the message: "an admission review body"
  std::size_t max_bytes;
};

// The limit of each source, in one place so they can be read side by side
// (docs/security.md, "Hostile input"). The HTTP client and servers cap the
// bodies they read with the same constants.
namespace sources {
// The apiserver sends at most 3 MiB (its own request limit).
inline constexpr source admission_review{"an admission review body", 3u << 20};
// GitHub caps webhook payloads at 25 MB.
inline constexpr source github_webhook{"a GitHub webhook delivery", 25u << 20};
// A REST page holds at most 100 items (GitHub's per_page bound; runs with
// their repository objects are the largest); the installation-token,
// registration and error answers are far smaller.
inline constexpr source github_response{"a GitHub API response", 16u << 20};
// The Actions service: scale sets, sessions, JIT configurations, the
// registration answer, and a message with its serialized job list.
inline constexpr source actions_service_response{"an Actions service response", 16u << 20};
// One Kubernetes object: etcd stores at most 1.5 MiB per object.
inline constexpr source kube_object{"a Kubernetes object", 16u << 20};
// A list page (the informers ask for a few hundred items a page).
inline constexpr source kube_list{"a Kubernetes list page", 256u << 20};
// One line of a watch stream: an event with its object.
inline constexpr source kube_watch_event{"a Kubernetes watch event", 64u << 20};
// The kubeconfig file.
inline constexpr source kubeconfig{"a kubeconfig", 16u << 20};
// The payload of a JWT (a few claims).
inline constexpr source jwt_payload{"a JWT payload", 64u << 10};
// JSON text the manager wrote itself from a document it had parsed with
// these limits (a pod template kept as text, a status it published).
inline constexpr source stored_json{"stored JSON", 64u << 20};
}  // namespace sources

// Whether `text` is within its source's size limit, with the message of parse.
expected<ok_t, std::string> within_limit(std::string_view text, const source& from);

// Parses `text` (a UTF-8 BOM is skipped). Errors:
//   "<source> of N bytes is over its M-byte limit"
//   "JSON nested deeper than 128 levels (at offset K)"
//   "invalid JSON at offset K: <RapidJSON's reason>"
expected<rapidjson::Document, std::string> parse(std::string_view text, const source& from);

// The same, into an existing document (its allocator keeps its strings);
// on an error `out` is left null.
expected<ok_t, std::string> parse_into(rapidjson::Document& out, std::string_view text, const source& from);

}  // namespace octorun::json
