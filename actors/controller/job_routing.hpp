// Where the controller sends a job message: the webhook intake (and each
// set's sweep of GitHub's queue) hands every job message to the controller,
// and these rules say which RunnerSet actors get it. Pure. (A scale-set
// listener's session belongs to one set: it sends to that set straight.)
//
//   - A session message (job messages and statistics, whole) sent to the
//     controller goes to the set it names, if it is known. The rules below
//     are for the webhook's job messages.
//   - Demand (job_available, job_assigned) goes to the first set, by
//     namespace/name, that serves the job (set_serves: its RunnerClass
//     admits it, it is on the job's GitHub server, its scope serves the
//     job's repository and, when the delivery names a GitHub App
//     installation, its credentials are that installation) and one of whose
//     variants takes its labels. A set that does not serve the job never
//     gets it, however broad the scope it claims.
//   - A start goes to the set that owns the named runner: its Runner's
//     label, or before the watches caught up, our runner-name prefix.
//     Never across namespaces: when sets in several namespaces could own
//     the name, only the one whose scope serves the job's repository on
//     its server gets it (GitHub's runner names are unique within a
//     scope), and none when that still leaves more than one (the sweep
//     follows the job up).
//   - A completion goes to every set: each drops the job from its demand,
//     the owner also ends the runner.
//   - A delivery taken on a RunnerClass's own intake path (signed with the
//     class's webhook secret, job_info::runner_class) goes only to sets of
//     that class, by the rules above: whoever holds a class's secret (every
//     team that configured a hook with it) steers demand, starts and
//     completions within the class and nowhere else.
//
// The set dedups (a completed job's late or repeated messages are ignored)
// and hands a start or completion to the Runner's actor; before that, the
// webhook intake turns away a replayed body (github::job_replays).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
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
  // The sets their RunnerClass admits (model::judge_set, nothing refused and
  // within its limits), as the controller judged them: no demand goes to
  // any other.
  std::set<std::string> admitted;
  // What each set's actor said its credentials are (messages::set_credentials):
  // "namespace/name" -> its App installation's id, 0 for a personal access
  // token. A set not listed has not loaded them yet.
  std::map<std::string, std::int64_t> installations;
  // The RunnerClass each set was last judged by ("namespace/name" -> class
  // name; "" or not listed: none), whatever the verdict: a set its class
  // refuses now still owns its runners.
  std::map<std::string, std::string> classes;
};

// Is the set `key` of the class a job's delivery was signed for? Every set
// is, for a job that names no class (the manager's own path and secret).
bool of_jobs_class(const job_routes& r, const std::string& key, const messages::job_info& job);

// The keys ("namespace/name") of the sets to send the message to.
std::vector<std::string> destinations(const job_routes& r, const messages::job_available& m);
std::vector<std::string> destinations(const job_routes& r, const messages::job_assigned& m);
std::vector<std::string> destinations(const job_routes& r, const messages::job_started& m);
std::vector<std::string> destinations(const job_routes& r, const messages::job_completed& m);
std::vector<std::string> destinations(const job_routes& r, const messages::session_message& m);

// Does a RunnerSet whose scope URL is `scope_url` serve jobs of `repository`
// ("owner/repo") on `server` (model::server_identity)? Only a scope on that
// server does; there, organisation scopes serve their repositories,
// repository scopes themselves, enterprise scopes every repository.
bool scope_serves(const std::optional<model::github_scope>& scope, const std::string& server,
                  const std::string& repository);

// Does the set `key` serve `job`: not being deleted, admitted by its class,
// its scope serving the job's repository on the job's server, and, when the
// job names a GitHub App installation, its credentials that installation's?
// A delivery names an installation only when it is the App's own (GitHub
// adds installation to an App's deliveries, never to a repository's or an
// organisation's hook), so it is for the sets that act as that
// installation: a personal access token's set, or another installation's,
// serves none. A delivery that names none may go to a set of any
// credentials its class admits for that scope. A delivery taken on a
// class's path goes to none of another class.
bool set_serves(const job_routes& r, const std::string& key, const messages::job_info& job);

}  // namespace octorun::controller
