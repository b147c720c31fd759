// Why no RunnerSet takes a queued job the webhook intake delivered: bad input
// for the manager (logged once, counted in octorun_rejected_input_total),
// nothing else changes. Pure.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "actors/controller/job_routing.hpp"
#include "messages/jobs.hpp"
#include "model/types.hpp"

namespace octorun::controller {

enum class unrouted {
  // No RunnerSet serves the job (set_serves): none whose class admits it has
  // a scope covering the job's repository on its server, with the
  // credentials of the App installation the delivery names (if any).
  unserved_repository,
  no_matching_variant,  // some do, but no variant of theirs carries every label the job asks for
};

unrouted why_unrouted(const job_routes& routes, const messages::job_info& job);

// The metric's reason label and a sentence for the log.
const char* reason_label(unrouted why);
std::string describe(unrouted why, const messages::job_info& job);

}  // namespace octorun::controller
