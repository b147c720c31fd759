// What a Runner actor asks its RunnerSet about GitHub: a JIT configuration
// for the runner, the runner GitHub holds under its name (a registration
// whose answer was lost), and its removal (now, or deferred past a spent
// budget). The set answers from its current
// credentials (the REST pool, or the scale set under the Listener intake),
// so a credential rotation reaches every runner. Declared as a typed
// interface: the Runner actor holds this handle, and a message the set does
// not answer is a compile error rather than a silent drop.
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <string>

#include "adapters/github/github_workers.hpp"

namespace octorun::runnerset {

// (defer_removal, GitHub runner id, runner name) -> true once the set has
// recorded (in its status) that it will remove that runner from GitHub when
// the budget allows: the Runner, which can run no job any more, may go now.
using defer_removal_atom = caf::atom_constant<caf::atom("rsdefer")>;

using runner_github_api = caf::typed_actor<
    caf::replies_to<github::jit_config_atom, github::jit_request>::with<github::jit_reply>,
    caf::replies_to<github::find_runner_atom, std::string>::with<github::maybe_reference_reply>,
    caf::replies_to<github::delete_runner_atom, std::int64_t>::with<github::delete_reply>,
    caf::replies_to<defer_removal_atom, std::int64_t, std::string>::with<bool>>;

}  // namespace octorun::runnerset
