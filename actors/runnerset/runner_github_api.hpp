// What a Runner actor asks its RunnerSet about GitHub: a JIT configuration
// for the runner, and its removal. The set answers from its current
// credentials (the REST pool, or the scale set under the Listener intake),
// so a credential rotation reaches every runner. Declared as a typed
// interface: the Runner actor holds this handle, and a message the set does
// not answer is a compile error rather than a silent drop.
#pragma once

#include <caf/all.hpp>
#include <cstdint>

#include "adapters/github/github_workers.hpp"

namespace octorun::runnerset {

using runner_github_api =
    caf::typed_actor<caf::replies_to<github::jit_config_atom, github::jit_request>::with<github::jit_reply>,
                     caf::replies_to<github::delete_runner_atom, std::int64_t>::with<github::delete_reply>>;

}  // namespace octorun::runnerset
