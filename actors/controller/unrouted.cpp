#include "actors/controller/unrouted.hpp"

#include "actors/controller/job_routing.hpp"

namespace octorun::controller {

unrouted why_unrouted(const std::map<std::string, std::shared_ptr<const model::runnerset>>& sets,
                      const messages::job_info& job) {
  for (const auto& [key, set] : sets)
    if (!set->metadata.deleting && scope_serves(set->spec.scope_url, job.repository))
      return unrouted::no_matching_variant;
  return unrouted::unserved_repository;
}

const char* reason_label(unrouted why) {
  return why == unrouted::unserved_repository ? "unserved_repository" : "no_matching_variant";
}

std::string describe(unrouted why, const messages::job_info& job) {
  if (why == unrouted::unserved_repository) return "no RunnerSet serves the repository " + job.repository;
  std::string labels;
  for (const auto& l : job.labels) labels += (labels.empty() ? "" : ", ") + l;
  return "no variant of the RunnerSets serving " + job.repository + " carries every label of [" + labels +
         "]";
}

}  // namespace octorun::controller
