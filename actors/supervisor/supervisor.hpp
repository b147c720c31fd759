// A supervisor owns one child actor per key (a RunnerSet, a Runner, a
// listener session), spawned when asked (ensure) and retired on deletion. It
// only monitors and restarts: a failed child comes back after a capped,
// jittered backoff; siblings are never touched (children are monitored, not
// linked).
//
// Messages for a child do not travel through it. It tells the actor that
// sends to its children (supervisor_options::tell, their parent) each
// incarnation's handle and when one is down or gone; the parent holds the
// typed handles and keeps what it sends to a child that is down until the
// next incarnation starts (child_handles.hpp), so an event delivered once
// (a job start) is not lost to a crash, and costs no extra mailbox.
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/supervisor/restart_policy.hpp"

namespace octorun::supervision {

using ensure_atom = caf::atom_constant<caf::atom("ensure")>;    // (ensure, key): spawn if absent
using retire_atom = caf::atom_constant<caf::atom("retire")>;    // (retire, key): stop for good
using restart_atom = caf::atom_constant<caf::atom("restart")>;  // internal timer
using status_atom = caf::atom_constant<caf::atom("status")>;    // -> supervisor_status

// What a supervisor tells the parent that holds its children's handles:
// (child_started, key, handle) for each incarnation; (child_down, key,
// address) when that child failed and waits to restart; (child_gone, key,
// address) when it ended for good (retired, or it stopped cleanly).
using child_started_atom = caf::atom_constant<caf::atom("chstarted")>;
using child_down_atom = caf::atom_constant<caf::atom("chdown")>;
using child_gone_atom = caf::atom_constant<caf::atom("chgone")>;
using child_notices = caf::typed_actor<caf::reacts_to<child_started_atom, std::string, caf::actor>,
                                       caf::reacts_to<child_down_atom, std::string, caf::actor_addr>,
                                       caf::reacts_to<child_gone_atom, std::string, caf::actor_addr>>;

// Spawns the child for `key`. The supervisor monitors it; the factory must
// not link it to the supervisor.
using child_factory = std::function<caf::actor(caf::local_actor* supervisor, const std::string& key)>;

struct child_status {
  std::string key;
  bool running = false;  // false while waiting to restart
  int restarts = 0;
};
using supervisor_status = std::vector<child_status>;

struct supervisor_options {
  restart_policy policy;
  // Told each child's incarnations (child_notices); none: nobody (children
  // that take no messages, as the listeners).
  caf::actor tell;
  std::uint64_t seed = 0;  // for jitter; 0: random
};

caf::actor spawn_supervisor(caf::actor_system& sys, std::string name, child_factory make,
                            supervisor_options options = {});

}  // namespace octorun::supervision

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::supervision::supervisor_status)
