// Per-request timings of the process's Kubernetes requests, for benchmarks
// (bench/manager, bench/floor): where a request's time went before the
// apiserver answered. Off unless the environment variable OCTORUN_KUBE_TRACE
// names a file; then every request appends one line to it:
//
//   <unix ms at send> <method> <kind> <name> <status> <queue us> <limiter us> <wire us>
//
// kind: the resource and subresource ("runners/status", "pods", "leases");
// name: the object's name ("-" for a collection);
// status: the HTTP status (0: no response); queue: the time the request
// waited in the request pool's mailbox before a worker took it (-1: not sent
// through the pool); limiter: the wait for the client's token bucket;
// wire: the HTTP exchange (TLS, the apiserver's work, the reply), retries
// included. Watches are not traced (they last minutes by design).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace octorun::kube::request_trace {

// True when OCTORUN_KUBE_TRACE named a file that could be opened (read once).
bool enabled();

struct timing {
  std::string_view method, path;  // path: as sent, with its query
  long status = 0;
  std::chrono::microseconds queue{-1}, limiter{0}, wire{0};
  std::chrono::system_clock::time_point sent;
};

// Appends one line (thread-safe, flushed: a killed process loses nothing).
void record(const timing& t);

// "runners/status" for /apis/octorun.io/v1alpha1/namespaces/ns/runners/x/status?...
std::string kind_of(std::string_view path);
// "x" for the same path; "-" for a collection.
std::string name_of(std::string_view path);

}  // namespace octorun::kube::request_trace
