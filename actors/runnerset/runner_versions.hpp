// The runner version each of a RunnerSet's variants runs, judged against
// GitHub's latest release and its update window (model/runner_version.hpp),
// and what the set does about it: the RunnerVersionCurrent condition, and no
// new runners for a variant whose runner exited as deprecated until its
// template changes (docs/monitoring.md, "Runner version"). Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/runner_version.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

struct set_observation;

// A runner of the variant exited as deprecated (its phase Outdated: exit
// code 7, or its termination message says so): made from the template of
// `pod_fingerprint`. The set remembers the last one per variant, beside the
// Outdated Runner it keeps (deprecation_record). New runners of that template would exit the same way,
// so none are made while the variant's template is that one; a template
// change (a newer image) makes them again.
struct deprecated_exit {
  std::uint64_t pod_fingerprint = 0;
  std::optional<model::runner_version> reported;  // what the runner said it runs, if it did
  bool operator==(const deprecated_exit&) const = default;
};

// How often the set asks for GitHub's latest release (the REST adapter
// answers from its cache for hours, latest_release_ttl), and how soon it
// asks again after a failure.
inline constexpr std::chrono::minutes runner_release_period{60};
inline constexpr std::chrono::minutes runner_release_retry{15};

using variant_verdicts = std::vector<std::pair<std::string, model::version_verdict>>;

// Each declared variant's verdict: its version from what its runners
// reported (a deprecated exit's message), else its runner container's image
// tag; GitHub's latest release as last fetched; a deprecated exit of its
// current template; the wall clock (o.wall_time).
variant_verdicts variant_versions(const set_observation& o);

// The set's RunnerVersionCurrent condition (no time: set_condition adds it).
model::condition runner_version_condition(const variant_verdicts& verdicts);

// No new runners for `variant` (a runner of its current template exited as deprecated).
bool blocks_new_runners(const variant_verdicts& verdicts, const std::string& variant);

// The Runner kept as the record of a deprecated exit of `variant`'s
// template `pod_fingerprint` (the newest Outdated one of it; "" for none):
// it holds no capacity, shows the set's owner which runner exited and why,
// and carries the exit across a manager restart. It goes with the template.
std::string deprecation_record(const set_observation& o, const std::string& variant,
                               std::uint64_t pod_fingerprint);

}  // namespace octorun::runnerset
