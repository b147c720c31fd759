// Why no RunnerSet takes a queued job the webhook intake delivered: bad input
// for the manager (logged once, counted in octorun_rejected_input_total),
// nothing else changes. Pure.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "messages/jobs.hpp"
#include "model/types.hpp"

namespace octorun::controller {

enum class unrouted {
  unserved_repository,  // no RunnerSet's scope covers the job's repository
  no_matching_variant,  // some do, but no variant of theirs carries every label the job asks for
};

// `sets`: the RunnerSets known, by "namespace/name" (the ones being deleted take no demand).
unrouted why_unrouted(const std::map<std::string, std::shared_ptr<const model::runnerset>>& sets,
                      const messages::job_info& job);

// The metric's reason label and a sentence for the log.
const char* reason_label(unrouted why);
std::string describe(unrouted why, const messages::job_info& job);

}  // namespace octorun::controller
