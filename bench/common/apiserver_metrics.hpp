// What the apiserver itself says about a run, from its /metrics:
//
// - one user's requests, counted exactly: API Priority and Fairness
//   FlowSchemas that match only that user, one per (resource, write verb),
//   one for its other writes and one for its reads, all on one priority level;
//   apiserver_flowcontrol_dispatched_requests_total counts each. Writes by
//   kube-scheduler, kwok, kubelets or the controller-manager are not in them.
// - the apiserver's own request latency (apiserver_request_duration_seconds),
//   by verb and resource.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "adapters/kube/client.hpp"
#include "common/expected.hpp"

namespace octorun::bench {

inline const kube::resource flow_schemas_resource{"flowcontrol.apiserver.k8s.io", "v1", "flowschemas", false};

struct flow_counters {
  std::string prefix;  // FlowSchema names start with it ("octorun-bench-")
  std::string user;    // the user whose requests are counted
  // The priority level they go to: "exempt" (never queued) in the benchmarks'
  // own clusters; the level the user's requests use anyway on a shared cluster
  // (e.g. "workload-low" for ServiceAccounts), so counting changes nothing.
  std::string priority_level = "exempt";
};

// Creates the FlowSchemas (an existing one of the same name is left as it is).
expected<ok_t, std::string> install_flow_counters(kube::client& api, const flow_counters& f);
// Requests counted so far, by "resource verb" ("runners/status patch",
// "other-writes", "reads"). Error: /metrics unreadable.
expected<std::map<std::string, std::int64_t>, std::string> read_flow_counters(kube::client& api,
                                                                              const std::string& prefix);
// Deletes every FlowSchema whose name starts with `prefix`.
void remove_flow_counters(kube::client& api, const std::string& prefix);
// Writes in a reading of read_flow_counters (everything but "reads").
std::int64_t writes_in(const std::map<std::string, std::int64_t>& counts);

// A cumulative histogram: (upper bound in seconds, count) pairs, +Inf last.
struct histogram {
  std::vector<std::pair<double, double>> buckets;
  double sum = 0, count = 0;
  double mean_ms() const { return count > 0 ? 1000 * sum / count : 0; }
  // The q-quantile in ms, interpolated within its bucket (as PromQL's histogram_quantile).
  double quantile_ms(double q) const;
};
histogram operator-(const histogram& after, const histogram& before);

// apiserver_request_duration_seconds by "VERB resource[/subresource]" (every
// group, scope and component summed). Empty when /metrics is unreadable.
std::map<std::string, histogram> read_request_latencies(kube::client& api);

}  // namespace octorun::bench
