// The one route of job messages: both intakes (the webhook intake and each
// scale-set listener) hand every job message to the controller, and these
// rules say which RunnerSet actors get it. Pure.
//
//   - A listener's session message (its job messages and statistics, whole)
//     goes to the set it names (a listener's session belongs to one set), if
//     it is known. The rules below are for the webhook's job messages.
//   - Demand (job_available, job_assigned) goes to the first set, by
//     namespace/name, whose scope serves the job's repository and one of
//     whose variants takes its labels.
//   - A start goes to the set that owns the named runner: its Runner's
//     label, or before the watches caught up, our runner-name prefix.
//     Never across namespaces: when sets in several namespaces could own
//     the name, only the one whose scope serves the job's repository gets
//     it (GitHub's runner names are unique within a scope), and none when
//     that still leaves more than one (the sweep follows the job up).
//   - A completion goes to every set: each drops the job from its demand,
//     the owner also ends the runner.
//
// The set dedups (a completed job's late or repeated messages are ignored)
// and hands a start or completion to the Runner's actor.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "messages/jobs.hpp"
#include "model/types.hpp"

namespace octorun::controller {

// What the router knows, kept by the controller from its watches.
struct job_routes {
  std::map<std::string, std::shared_ptr<const model::runnerset>> sets;  // "namespace/name" -> as watched
  // runner name -> namespace -> "namespace/set": two namespaces may each
  // hold a Runner of the same name (equal set names, the same suffix).
  std::map<std::string, std::map<std::string, std::string>> runner_sets;
};

// The keys ("namespace/name") of the sets to send the message to.
std::vector<std::string> destinations(const job_routes& r, const messages::job_available& m);
std::vector<std::string> destinations(const job_routes& r, const messages::job_assigned& m);
std::vector<std::string> destinations(const job_routes& r, const messages::job_started& m);
std::vector<std::string> destinations(const job_routes& r, const messages::job_completed& m);
std::vector<std::string> destinations(const job_routes& r, const messages::session_message& m);

// Does a RunnerSet whose scope URL is `scope_url` serve jobs of `repository`
// ("owner/repo")? Organisation scopes serve their repositories, repository
// scopes themselves, enterprise scopes every repository.
bool scope_serves(const std::string& scope_url, const std::string& repository);

}  // namespace octorun::controller
