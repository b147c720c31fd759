#include "actors/controller/owned_routing.hpp"

namespace octorun::controller {

owned_route route_of_owned(const std::map<std::string, std::shared_ptr<const model::runnerset>>& sets,
                           const std::optional<std::string>& set_key) {
  if (!set_key) return owned_route::no_set;
  return sets.count(*set_key) > 0 ? owned_route::to_set : owned_route::unknown_set;
}

}  // namespace octorun::controller
