// A supervisor owns one child actor per key (a RunnerSet, a Runner, a
// listener session), spawned on first sight and retired on deletion. It
// monitors its children and restarts a failed one after a capped, jittered
// backoff; siblings are never touched (children are monitored, not linked).
//
// Messages for a child travel through the supervisor (route). While a child
// is down and waiting to restart, its messages are kept and delivered to the
// new incarnation, so an event that is delivered once (a job start) is not
// lost to a crash.
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
using route_atom = caf::atom_constant<caf::atom("route")>;      // (route, key, message)
using restart_atom = caf::atom_constant<caf::atom("restart")>;  // internal timer
using status_atom = caf::atom_constant<caf::atom("status")>;    // -> supervisor_status

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
  // Messages kept for one child while it waits to restart; past this the
  // oldest are dropped (and logged) rather than growing without bound.
  std::size_t max_pending_messages = 4096;
  std::uint64_t seed = 0;  // for jitter; 0: random
};

caf::actor spawn_supervisor(caf::actor_system& sys, std::string name, child_factory make,
                            supervisor_options options = {});

// Sends `xs...` to the child `key` of `supervisor`, whose children implement
// the typed interface `Child`: a message the child does not accept is a
// compile error. The supervisor itself stays a dynamically typed actor: it
// forwards whatever its children take (a different interface per
// supervisor), which a CAF 0.17 typed_actor cannot express; this check at
// the sender is what typing it would give.
// (Sent anonymously: a typed actor may not send() to a dynamic one in CAF
// 0.17, and the mailbox keeps the order of what one actor enqueues.)
template <class Child, class... Ts>
void route_to(const caf::actor& supervisor, const std::string& key, Ts&&... xs) {
  using token = caf::detail::type_list<caf::detail::strip_and_convert_t<Ts>...>;
  static_assert(caf::response_type_unbox<typename Child::signatures, token>::valid,
                "the supervisor's children do not accept this message");
  caf::anon_send(supervisor, route_atom::value, key, caf::make_message(std::forward<Ts>(xs)...));
}

}  // namespace octorun::supervision

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::supervision::supervisor_status)
