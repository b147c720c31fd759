// GitHub calls for actors. The blocking clients run in detached actors (their
// own threads): a small round-robin pool for REST, and one scale-set worker per
// listener (its long poll blocks that worker only). Callers never block:
//
//   self->request(rest_pool, 30s, jit_config_atom::value, jit_request{...})
//     .then([=](jit_reply& r) { if (r) ... else ... r.error().kind ... },
//           [=](caf::error& e) { /* timeout, pool gone */ });
//
// Every reply is a github::result<T> (the error is a value); the caf::error
// handler only sees actor-level failures.
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <optional>
#include <vector>

#include "adapters/github/rest_client.hpp"
#include "adapters/github/scaleset_client.hpp"

namespace octorun::github {

// REST pool requests (reply type after ->).
using registration_token_atom = caf::atom_constant<caf::atom("gh_regtok")>;  // () -> token_reply
using remove_token_atom = caf::atom_constant<caf::atom("gh_rmtok")>;         // () -> token_reply
using jit_config_atom =
    caf::atom_constant<caf::atom("gh_jit")>;  // (jit_request) -> jit_reply
                                              // (int64 scale set, string name) -> scaleset_jit_reply
using list_runners_atom =
    caf::atom_constant<caf::atom("gh_list")>;  // (string name, "" = all) -> runners_reply
using get_runner_atom =
    caf::atom_constant<caf::atom("gh_get")>;  // (int64 id) -> runner_reply / reference_reply
using delete_runner_atom = caf::atom_constant<caf::atom("gh_delete")>;  // (int64 id) -> delete_reply
using find_runner_atom = caf::atom_constant<caf::atom("gh_find")>;  // (string name) -> maybe_reference_reply
using runner_group_atom = caf::atom_constant<caf::atom("gh_group")>;  // (string name) -> group_reply
using active_work_atom = caf::atom_constant<caf::atom("gh_active")>;  // (sweep_request) -> active_work_reply
using rate_budget_atom = caf::atom_constant<caf::atom("gh_budget")>;  // () -> rate_limit_snapshot
using latest_release_atom = caf::atom_constant<caf::atom("gh_release")>;  // () -> release_reply

// Scale-set worker requests.
using find_scale_set_atom =
    caf::atom_constant<caf::atom("ss_find")>;  // (int64 group, string name) -> maybe_scale_set_reply
using create_scale_set_atom = caf::atom_constant<caf::atom("ss_create")>;  // (scale_set) -> scale_set_reply
using update_scale_set_atom =
    caf::atom_constant<caf::atom("ss_update")>;  // (int64 id, scale_set) -> scale_set_reply
using delete_scale_set_atom = caf::atom_constant<caf::atom("ss_delete")>;  // (int64 id) -> ok_reply
// (int64 id, string owner, string previous session id or "") -> session_reply
using open_session_atom = caf::atom_constant<caf::atom("ss_open")>;
using close_session_atom = caf::atom_constant<caf::atom("ss_close")>;  // () -> ok_reply
using poll_atom =
    caf::atom_constant<caf::atom("ss_poll")>;              // (int64 last id, int32 capacity) -> message_reply
using ack_atom = caf::atom_constant<caf::atom("ss_ack")>;  // (int64 message id) -> ok_reply
using acquire_jobs_atom =
    caf::atom_constant<caf::atom("ss_acquire")>;  // (int64 id, vector<int64>) -> ids_reply

using token_reply = result<auth_token>;
using jit_reply = result<jit_config>;
using runners_reply = result<std::vector<runner>>;
using runner_reply = result<runner>;
using delete_reply = result<delete_outcome>;
using active_work_reply = result<active_work>;
using group_reply = result<runner_group>;
using maybe_scale_set_reply = result<std::optional<scale_set>>;
using scale_set_reply = result<scale_set>;
using ok_reply = result<ok_t>;
using session_reply = result<scaleset_session>;
using message_reply = result<std::optional<queue_message>>;
using ids_reply = result<std::vector<std::int64_t>>;
using scaleset_jit_reply = result<scaleset_jit>;
using reference_reply = result<runner_reference>;
using maybe_reference_reply = result<std::optional<runner_reference>>;
using release_reply = result<model::runner_release>;

struct rate_limit_snapshot {
  std::int64_t limit = -1;
  std::int64_t remaining = -1;
  std::int64_t reset_epoch = 0;
  std::int64_t rate_limited_responses = 0;
};

// `workers` detached REST workers behind one round-robin actor_pool; they share
// the credentials (one installation token) and the rate-limit budget.
caf::actor spawn_rest_pool(caf::actor_system& sys, rest_options options, std::size_t workers = 2);

// One detached scale-set worker: it owns one scaleset_client and its session.
// The error string is for an unparseable config URL.
expected<caf::actor, std::string> spawn_scaleset_worker(caf::actor_system& sys, scaleset_options options);

// `workers` scale-set workers behind one round-robin actor_pool, for the
// calls that need no session (scale sets, JIT configurations, runner
// removal), so one slow call does not hold the others up. They share the
// rate-limit budget; each fetches its own admin token.
expected<caf::actor, std::string> spawn_scaleset_pool(caf::actor_system& sys, scaleset_options options,
                                                      std::size_t workers);

}  // namespace octorun::github

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::jit_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::scale_set)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::rate_limit_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::token_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::jit_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::runners_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::runner_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::delete_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::active_work_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::messages::sweep_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::group_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::maybe_scale_set_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::scale_set_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::ok_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::session_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::message_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::ids_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::scaleset_jit_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::reference_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::maybe_reference_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::github::release_reply)
