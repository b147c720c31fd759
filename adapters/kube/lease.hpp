// Leader election on a coordination.k8s.io/v1 Lease (client-go's
// leaderelection, one attempt per call). Expiry is judged on the local clock
// from when this process last saw the record change, never by comparing
// remote timestamps. Every write is conditioned on the resourceVersion read,
// so one candidate wins per record version.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "adapters/kube/api.hpp"
#include "adapters/kube/object.hpp"
#include "common/expected.hpp"

namespace octorun::kube {

class client;

struct lease_record {
  std::string holder;
  int64_t duration_seconds = 0;
  std::string acquire_time, renew_time;
  int64_t transitions = 0;
  std::string resource_version;
};

// The spec of a Lease object; nullopt when it is not one.
std::optional<lease_record> parse_lease(const object& o);

// The record we would write to hold the lease: keeps acquireTime and
// transitions when `identity` already holds it, else starts a new term.
lease_record next_lease(const std::optional<lease_record>& current, const std::string& identity,
                        std::chrono::seconds duration, std::chrono::system_clock::time_point now);

// May `identity` take the lease? Free, ours, or not renewed within its
// duration since `observed_at` (when we saw the current record appear).
bool lease_available(const lease_record& current, const std::string& identity,
                     std::chrono::steady_clock::time_point observed_at,
                     std::chrono::steady_clock::time_point now);

// The Lease object body for a record (with its resourceVersion when set).
std::string lease_body(const std::string& ns, const std::string& name, const lease_record& r);

struct lease_config {
  std::string ns, name, identity;  // identity unique per process: hostname + "_" + random
  std::chrono::seconds duration{15};
};

// Blocking; call try_acquire_or_renew every retry period (2 s) from a
// detached worker. Stop leading if it has not returned true within the
// renew deadline (10 s).
class leader_elector {
 public:
  leader_elector(client& api, lease_config cfg);
  // True: we hold the lease now. False: someone else does (or won a race).
  expected<bool, api_error> try_acquire_or_renew();
  // Orderly shutdown: hand the lease over at once (holder "", duration 1 s).
  expected<ok_t, api_error> release();
  bool leading() const { return leading_; }

 private:
  client& api_;
  lease_config cfg_;
  std::optional<lease_record> observed_;
  std::chrono::steady_clock::time_point observed_at_{};
  bool leading_ = false;
};

}  // namespace octorun::kube
