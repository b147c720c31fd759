// Decisions about a RunnerSet's GitHub scale sets (Listener intake) and its
// retired variants, without I/O.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/types.hpp"

namespace octorun::runnerset {

// The scale set a variant registers: the set's name, or "<set>-<variant>"
// (what workflows put in runs-on when they target a scale set by name).
std::string scale_set_name(std::string_view set, std::string_view variant);

// The labels a variant's scale set registers with: the variant's, the
// scale set's name (runs-on: <scale set name> works too) and the set's
// label (registered_by_the_set; none without a uid).
std::vector<std::string> scale_set_labels(std::vector<std::string> runner_labels,
                                          const std::string& scale_set_name, std::string_view set_uid);

// Whether the scale set found under a variant's name (its `found_id` and
// `found_labels`) is the set's own: the id it recorded or registered
// (`known_id`, 0: none), or carrying the set's label
// (model::registering_set_label, which every scale set it registers
// carries: registered by it, its status not written before the manager
// stopped). Any other is another controller's or another manager's (an
// actions-runner-controller install, a second cluster) and is never taken
// over: listening to it would take that controller's jobs, and deleting
// the set would delete it.
bool registered_by_the_set(std::int64_t found_id, const std::vector<std::string>& found_labels,
                           std::int64_t known_id, std::string_view set_uid);

// Whether two label lists hold the same labels (in any order).
bool same_labels(std::vector<std::string> a, std::vector<std::string> b);

// The scale set ids the status records, by variant ("" for a set without
// variants): what survives a manager restart, so a scale set of a variant
// removed while no manager ran is still found and deleted.
std::map<std::string, std::int64_t> recorded_scale_sets(const model::runnerset_status& status);

// The message session the status records for a variant's scale set ("" for
// a set without variants): the one a successor may delete when GitHub still
// holds it after a crash. Empty when none is recorded.
std::string recorded_session(const model::runnerset_status& status, const std::string& variant);

// A variant no longer in the spec that still has something to clean up:
// runners (drained: idle first, busy after their job) and/or a scale set
// (deleted once its runners are gone).
struct retired_variant {
  std::string name;
  std::int64_t scale_set_id = 0;  // 0: none known
  bool has_runners = false;
};

// Variants that runners (by their variant label) or known scale sets still
// reference but the effective variants no longer declare, sorted by name.
std::vector<retired_variant> retired_variants(const std::vector<model::effective_variant>& current,
                                              const std::vector<std::string>& runner_variants,
                                              const std::map<std::string, std::int64_t>& scale_sets);

}  // namespace octorun::runnerset
