// The protocols actors share: what one actor asks of another that does not
// own it, declared once as CAF typed interfaces that the sender and the
// receiver both include (so neither includes the other's folder, and a
// message the receiver does not take is a compile error at the sender).
//
//   - job_router: the job messages both intakes send: the webhook intake to
//     the controller, which implements it and picks the sets; each
//     scale-set listener straight to its RunnerSet actor, which takes the
//     same messages.
//   - runner_github_api: what a Runner actor asks its RunnerSet about GitHub.
//   - listener_setup_api: what a listener asks its RunnerSet.
//
// Each actor's own inbound interface (runner_actor, runnerset_actor,
// controller_actor) stays next to it: only its parent sends to it.
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <string>

#include "adapters/github/github_workers.hpp"
#include "adapters/github/scaleset_client.hpp"
#include "common/expected.hpp"
#include "messages/jobs.hpp"

namespace octorun::protocols {

// ---- job_router ---------------------------------------------------------------

// The job router's interface (the controller implements it, by the rules of
// actors/controller/job_routing.hpp): what both intakes send. A RunnerSet
// actor takes the same messages: a listener sends to its set, and a set run
// on its own can stand in for the controller.
using job_router =
    caf::typed_actor<caf::reacts_to<messages::job_available>, caf::reacts_to<messages::job_assigned>,
                     caf::reacts_to<messages::job_started>, caf::reacts_to<messages::job_completed>,
                     caf::reacts_to<messages::session_message>>;

// ---- runner_github_api --------------------------------------------------------

// What a Runner actor asks its RunnerSet about GitHub: a JIT configuration
// for the runner, the runner GitHub holds under its name (a registration
// whose answer was lost), and its removal (now, or deferred past a spent
// budget). The set answers from its current credentials (the REST pool, or
// the scale set under the Listener intake), so a credential rotation
// reaches every runner.

// (defer_removal, GitHub runner id, runner name) -> true once the set has
// recorded (in its status) that it will remove that runner from GitHub when
// the budget allows: the Runner, which can run no job any more, may go now.
using defer_removal_atom = caf::atom_constant<caf::atom("rsdefer")>;

using runner_github_api = caf::typed_actor<
    caf::replies_to<github::jit_config_atom, github::jit_request>::with<github::jit_reply>,
    caf::replies_to<github::find_runner_atom, std::string>::with<github::maybe_reference_reply>,
    caf::replies_to<github::delete_runner_atom, std::int64_t>::with<github::delete_reply>,
    caf::replies_to<defer_removal_atom, std::int64_t, std::string>::with<bool>>;

// ---- listener_setup_api -------------------------------------------------------

// (listener_setup_atom, variant) -> listener_setup_reply, asked of the RunnerSet actor.
using listener_setup_atom = caf::atom_constant<caf::atom("lsetup")>;
// (listener_session_atom, variant, session id): told to the RunnerSet actor
// when a session opens, so its status records the id for a successor.
using listener_session_atom = caf::atom_constant<caf::atom("lsession")>;

struct listener_setup {
  std::int64_t scale_set_id = 0;
  std::string owner;  // the session's owner name (shown by GitHub)
  github::scaleset_options options;
  std::int32_t max_capacity = 0;  // jobs it may still take: max runners of the variant
  // The session the set's status records as last opened on this scale set
  // (e.g. by a replica that crashed): deleted if the service still holds it.
  std::string previous_session_id;
};
// Unexpected: why the set cannot run this listener now (credentials not
// loaded, scale set not registered yet, variant gone).
using listener_setup_reply = expected<listener_setup, std::string>;

// What a listener asks its RunnerSet (the set's actor implements it).
using listener_setup_api =
    caf::typed_actor<caf::replies_to<listener_setup_atom, std::string>::with<listener_setup_reply>,
                     caf::reacts_to<listener_session_atom, std::string, std::string>>;

}  // namespace octorun::protocols

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::protocols::listener_setup_reply)
