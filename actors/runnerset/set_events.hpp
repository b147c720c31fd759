// Which Kubernetes Events the RunnerSet actor records (pure, no I/O).
//
// Events mark transitions, never levels: after each plan the actor folds what
// it observed and decided into a set_summary, and set_events() compares it
// with the summary of the plan before. A set stuck with a missing Secret thus
// records one Warning, not one per reconcile (and the recorder,
// adapters/kube/events.hpp, counts any repeat of the same series instead of
// writing a new Event).
//
// The first summary after the actor starts is read from the set's published
// status (summary_from_status), so a manager restart or a leader change
// records nothing the previous leader already said.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/runnerset/plan.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

struct set_summary {
  // CredentialsReady: unknown (not read yet), ready, or the problem: its
  // reason (the Secret's, GitHub unreachable, credentials refused, scope
  // not found: github_access.hpp) and message.
  enum class credentials_state { unknown, ready, problem };
  credentials_state credentials = credentials_state::unknown;
  std::string credentials_reason;
  std::string credentials_problem;
  // By variant ("" for a set without variants); a variant missing from a
  // map is unknown (e.g. desired counts while the credentials are not loaded).
  std::map<std::string, std::int32_t> desired;
  std::map<std::string, std::int32_t> outdated;            // runners made from an older template
  std::map<std::string, std::int64_t> scale_sets;          // registered scale set id (Listener intake)
  std::map<std::string, std::string> registration_errors;  // why the last registration failed
  std::string runner_registration_error;                   // why GitHub refused the last JIT configuration
  std::set<std::string> draining;                          // variants no longer declared, with runners left
  // ClassAdmitted: its reason and message while False (empty: True or not judged).
  std::string class_reason;
  std::string class_problem;
  // The IntakeReady condition's message while an older set holds one of
  // the set's scale-set names (reason ScaleSetNameTaken); empty: none is.
  std::string scale_set_name_taken;
  // The RunnerVersionCurrent condition's reason and message ("": not judged).
  std::string version_reason;
  std::string version_message;
  // The StartTimeTargetMet condition ("": no target). Its Events follow
  // its status and reason, not its message, whose counts change with every job.
  std::string start_time_status;
  std::string start_time_reason;
  std::string start_time_message;
  // The WarmNodesReady condition's status and reason ("": no warm nodes);
  // its Events follow those, as the start-time target's do.
  std::string warm_nodes_status;
  std::string warm_nodes_reason;
  std::string warm_nodes_message;
  bool operator==(const set_summary&) const = default;
};

struct set_event {
  bool warning = false;  // type Warning, else Normal
  std::string reason;    // CamelCase, e.g. ScaledUp, CredentialsInvalid
  std::string action;    // what the manager did or tried: Scale, LoadCredentials, RegisterScaleSet, ...
  std::string note;      // for people
  bool operator==(const set_event&) const = default;
};

// What the status a previous run published says (the starting point).
set_summary summary_from_status(const model::runnerset& set);

// What the set knows after `p` was planned on `o`; what is unknown now is
// kept from `previous`.
set_summary summarize(const set_summary& previous, const set_observation& o, const set_plan& p);

// The Events for the change from `before` to `after` (none when equal).
// `secret`: the credentials Secret's name, for the notes.
std::vector<set_event> set_events(const set_summary& before, const set_summary& after,
                                  const std::string& secret);

}  // namespace octorun::runnerset
