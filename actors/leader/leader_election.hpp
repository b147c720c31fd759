// Leader election for manager replicas: a detached actor (it makes blocking
// Kubernetes calls) that tries to acquire or renew a Lease every retry
// period, and tells its subscriber when leadership is gained or lost. Only
// the leader reconciles; followers serve health and metrics and wait.
//
// Leadership is lost when a renewal has not succeeded within the renew
// deadline (an API outage, a network partition), before the lease can expire
// for the others: renew_deadline < lease duration. On a clean stop the lease
// is released so a follower takes over at once.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <string>

#include "adapters/kube/client.hpp"
#include "adapters/kube/lease.hpp"

namespace octorun::leader {

// Sent to the subscriber on every change: (leadership_atom, bool leading).
using leadership_atom = caf::atom_constant<caf::atom("leadership")>;

struct election_options {
  kube::lease_config lease;  // namespace, name, identity, duration
  std::chrono::milliseconds retry_period{2000};
  std::chrono::milliseconds renew_deadline{10000};
};

// Stop it with anon_send_exit(..., user_shutdown): it releases the lease.
caf::actor spawn_leader_election(caf::actor_system& sys, kube::config cfg, kube::client_options copts,
                                 election_options options, caf::actor subscriber);

// The pure part: are we still leading, given when the last renewal succeeded?
bool still_leading(bool leading_now, std::chrono::steady_clock::time_point last_renewal,
                   std::chrono::steady_clock::time_point now, std::chrono::milliseconds renew_deadline);

}  // namespace octorun::leader
