// What the Kubernetes client tells whoever counts its requests (the
// manager's metrics, actors/metrics/manager_metrics.hpp): each HTTP request
// it sent, as the apiserver would name it. The classification is pure; the
// observer is optional (client_options::observer).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace octorun::kube {

// A request as the apiserver's own metrics name it: the verb (get, list,
// watch, create, update, patch, delete, deletecollection; the lower-case
// method for a path that names no resource) and the resource (plural,
// ".group" for a named API group, "/subresource" appended; empty for a path
// such as /version). Bounded by the resources the caller uses, never by
// object names or namespaces.
struct request_kind {
  std::string verb;
  std::string resource;
  bool operator==(const request_kind&) const = default;
};
request_kind classify_request(std::string_view method, std::string_view path_and_query);

class request_observer {
 public:
  virtual ~request_observer() = default;
  // One HTTP request and its answer: `code` is the HTTP status, 0 when no
  // response arrived (transport failure); `elapsed` runs to the end of the
  // body (of a watch: the whole stream). Called on the client's thread.
  virtual void observe(const request_kind& kind, long code, std::chrono::duration<double> elapsed) = 0;
};

}  // namespace octorun::kube
