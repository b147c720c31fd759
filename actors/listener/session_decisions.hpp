// What the listener decides about a queue message, without I/O.
#pragma once

#include <cstdint>
#include <vector>

#include "adapters/github/scaleset_client.hpp"

namespace octorun::listener {

// The runner request ids to acquire: every JobAvailable in the message, once
// each, in order. (A failed acquisition ends the session before the message
// is acknowledged, so the service delivers it again to the next session.)
std::vector<std::int64_t> jobs_to_acquire(const github::queue_message& m);

}  // namespace octorun::listener
