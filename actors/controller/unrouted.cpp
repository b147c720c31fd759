#include "actors/controller/unrouted.hpp"

#include "actors/controller/job_routing.hpp"

namespace octorun::controller {

unrouted why_unrouted(const job_routes& routes, const messages::job_info& job) {
  for (const auto& [key, set] : routes.sets)
    if (set_serves(routes, key, job)) return unrouted::no_matching_variant;
  return unrouted::unserved_repository;
}

const char* reason_label(unrouted why) {
  return why == unrouted::unserved_repository ? "unserved_repository" : "no_matching_variant";
}

std::string describe(unrouted why, const messages::job_info& job) {
  if (why == unrouted::unserved_repository)
    return "no RunnerSet serves the repository " + job.repository + " on " +
           (job.server.empty() ? std::string("its server") : job.server) +
           (job.installation_id == 0
                ? std::string()
                : " with the credentials of App installation " + std::to_string(job.installation_id)) +
           (job.runner_class.empty() ? std::string()
                                     : " among the sets of RunnerClass " + job.runner_class +
                                           ", whose webhook path the delivery came on") +
           " (sets serve only what their RunnerClass admits)";
  std::string labels;
  for (const auto& l : job.labels) labels += (labels.empty() ? "" : ", ") + l;
  return "no variant of the RunnerSets serving " + job.repository + " carries every label of [" + labels +
         "]";
}

}  // namespace octorun::controller
