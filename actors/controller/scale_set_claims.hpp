// Who holds a GitHub scale-set name when several RunnerSets would register
// it (issue 32). A Listener set's scale sets are named after the set
// (runnerset::scale_set_name), and workflows name them in `runs-on`, so
// they are never renamed; two sets in one GitHub scope whose names collide
// (in two namespaces, or "a" with variant "b" beside a set "a-b") would
// otherwise share one scale set, its jobs and its runners. The oldest set
// (creationTimestamp, then namespace and name) holds the name; the others
// register no scale set under it and start no listener on it until the
// holder is gone (its RunnerSet deleted: one being deleted still holds it
// while it drains). Pure: the controller applies it to every set it watches.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "messages/scale_sets.hpp"
#include "model/types.hpp"

namespace octorun::controller {

// The place a scale set is registered on GitHub: the scope's identity
// (model::scope_identity) and the name in lower case, as GitHub compares
// scale-set names. Empty when the scope URL is not one.
std::string scale_set_place(const std::optional<model::github_scope>& scope,
                            const std::string& scale_set_name);

// Whether the sets claim the same scale sets in the same order (intake,
// scope, variants, creation): a change that keeps them (a status write,
// most spec edits) leaves every set's claims as they were.
bool same_claims(const model::runnerset& a, const model::runnerset& b);

// For each set ("namespace/name") that may not register one or more of its
// scale sets, the names it may not register and who holds them. Sets with
// no name taken are not listed. Only Listener sets claim scale sets.
std::map<std::string, std::map<std::string, messages::scale_set_taken>> scale_set_names_taken(
    const std::map<std::string, std::shared_ptr<const model::runnerset>>& sets);

}  // namespace octorun::controller
