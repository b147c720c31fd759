// Finalizers: whether an object holds one, and the patches that add or
// remove it. The one implementation the Runner and RunnerSet actors share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kube/object.hpp"

namespace octorun::kube {

// Whether o's metadata.finalizers lists `name`.
bool has_finalizer(const object& o, std::string_view name);

// The merge-patch body that leaves o's other finalizers as they are and adds
// (`present`) or removes `name`, locked on o's resourceVersion (a conflict
// means someone else changed the list meanwhile: re-read and decide again):
//   {"metadata":{"resourceVersion":"<rv>","finalizers":[...others, name]}}
std::string finalizer_patch(const object& o, std::string_view name, bool present);
// The same for an object already decoded: its finalizers and resourceVersion.
std::string finalizer_patch(const std::vector<std::string>& finalizers, std::string_view resource_version,
                            std::string_view name, bool present);

// The JSON patch that removes `name` where `finalizers` lists it, guarded by a
// `test` of that entry instead of a resourceVersion lock:
//   [{"op":"test","path":"/metadata/finalizers/i","value":name},
//    {"op":"remove","path":"/metadata/finalizers/i"}]
// so a write that leaves the list alone (a DELETE setting deletionTimestamp,
// a status patch) does not make it fail; one that moved the entry does (422).
// Nullopt when `finalizers` does not list `name`.
std::optional<std::string> finalizer_removal_patch(const std::vector<std::string>& finalizers,
                                                   std::string_view name);

}  // namespace octorun::kube
