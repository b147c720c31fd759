// The RunnerSet's status as the set publishes it: counts in total and per
// variant, the scale set ids, the conditions. Pure: plan()
// computes it and compares it with what was last written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runnerset/plan.hpp"

namespace octorun::runnerset {

// The status object as JSON. `per_variant` null: the counts are unknown
// (credentials not loaded) and only the conditions are written (a merge
// patch leaves the rest as it was). `declared`: the set declares variants.
// `pending`: the GitHub runners whose removal waits for the budget
// (pendingRemovals; none: the field is dropped); null: left as it is.
// `conditions`: set_conditions().
std::string status_json(const model::runnerset& set, const variant_counts* per_variant, bool declared,
                        const std::vector<model::condition>& conditions,
                        const std::map<std::int64_t, deferred_removal>* pending = nullptr);

// The counts while nothing scales (no credentials, or a refused class): the
// runners as watched; what only a scaling plan knows (desired, outdated,
// assigned, scale set ids) as the status says, so a fresh set shows zeros
// rather than empty columns and a broken one its last decision.
variant_counts counts_without_credentials(const set_observation& o);

// The set's conditions as metav1.Condition: `current` (CredentialsReady,
// IntakeReady, PodConfigReady, as far as they apply), each with the
// lastTransitionTime its type has in `previous` while its status is
// unchanged, else `now` (model::set_condition), and observedGeneration
// `generation`. `previous`: what the set last wrote, else the watched status.
std::vector<model::condition> set_conditions(const std::vector<model::condition>& previous,
                                             std::vector<model::condition> current, std::string_view now,
                                             std::int64_t generation);

// What CredentialsReady is judged from (github_access.hpp), so that the
// status and the Events (set_events.hpp) judge alike.
credentials_facts credentials_facts_of(const set_observation& o);

// The ids in the pendingRemovals of a status status_json() wrote.
std::set<std::int64_t> pending_removal_ids(const std::string& status_text);

// When the status plan() computed is written. The status is a level: each
// plan computes it whole from the set's state, so a write carries every
// change made before it. One write is in flight at a time (what changes
// meanwhile is planned again on its answer), and after the apiserver accepted
// one the next waits `hold`: the changes of a burst (a count per Runner
// event) go out together, in one write of the latest status, instead of one
// write each. A status the server already has (the last accepted write) is
// not written; a failed write holds nothing back (the next plan writes again).
struct status_write {
  enum when_kind {
    never,        // the server has it
    now,          //
    after_write,  // one is in flight: plan again on its answer
    later,        // the hold: plan again `at`
  };
  when_kind when = never;
  time_point at{};
};
// `written_at`: when the last write was accepted (none yet: no hold).
// `urgent`: the text records what a successor needs and the server lacks
// (records_new_scale_set): written without the hold.
status_write status_write_due(const std::string& text, const std::string& published, bool in_flight,
                              std::optional<time_point> written_at, std::chrono::steady_clock::duration hold,
                              time_point now, bool urgent = false);

// Whether `counted` carries a scale set id the stored `status` does not
// record: a manager that stops before writing it leaves its successor, if
// the set is deleted meanwhile, no way to know the scale set to delete.
bool records_new_scale_set(const model::runnerset_status& status, const variant_counts& counted);

}  // namespace octorun::runnerset
