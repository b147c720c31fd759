#include "actors/controller/owned_routing.hpp"

#include <mutex>

namespace octorun::controller {

owned_route route_of_owned(const std::map<std::string, std::shared_ptr<const model::runnerset>>& sets,
                           const std::optional<std::string>& set_key) {
  if (!set_key) return owned_route::no_set;
  return sets.count(*set_key) > 0 ? owned_route::to_set : owned_route::unknown_set;
}

void known_sets::insert(const std::string& key) {
  std::unique_lock lock(mu_);
  keys_.insert(key);
}

void known_sets::erase(const std::string& key) {
  std::unique_lock lock(mu_);
  keys_.erase(key);
}

bool known_sets::contains(const std::string& key) const {
  std::shared_lock lock(mu_);
  return keys_.count(key) > 0;
}

pod_intake intake_of_pod(const model::owned_object_meta& pod, const known_sets& sets) {
  auto key = owning_set(pod);
  if (!key) return pod_intake::no_set;
  if (!sets.contains(*key)) return pod_intake::unknown_set;
  return pod.owner_is_runner ? pod_intake::keep : pod_intake::not_a_runners_pod;
}

}  // namespace octorun::controller
