// Which GitHub runners are a RunnerSet's own registrations where only a
// name points at one: the runner a lookup by a Runner's name finds at its
// deletion (a registration nothing recorded: a JIT answer lost in transit,
// or a Runner an earlier leader made), and the holder of a name a JIT
// request conflicted on. A name proves nothing: sets of one name in two
// namespaces draw equal runner names in one GitHub scope. Under the
// Listener intake the runner's scale set says whose it is (no other set
// registers in it: actors/controller/scale_set_claims.hpp); under the
// Webhook intake REST runners have no scale set, so the set registers each
// with one more label, its own (model::registering_set_label), and a runner
// without it is never the set's. Pure; runner_github_answers.cpp acts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runnerset/routing.hpp"  // carries_label

namespace octorun::runnerset {

// The labels a REST JIT request registers a Runner with: its own, then the
// set's label (once). A job's runs-on still matches: a runner is eligible
// when its labels include every label the job asks for.
std::vector<std::string> labels_to_register(std::vector<std::string> runner_labels,
                                            std::string_view set_label);

enum class found_runner_verdict {
  the_sets,                // the set's registration: removed (when idle), as the Runner's
  in_another_scale_set,    // Listener: registered in another scale set than the Runner's variant's
  without_the_sets_label,  // Webhook: a REST runner without the set's label: another set's, one
                           // registered outside Octorun, or one registered before the label was
};

// A runner GitHub holds under a Runner's name, found by name. `listening`:
// the set's intake is the Listener, whose scale set for the Runner's variant
// is `own_scale_set` (0: not known: the lookup keeps what it found, as it
// always did); the runner found is registered in `found_scale_set` (0: a
// REST runner) with `found_labels`; the set's label is `set_label`.
found_runner_verdict judge_found_runner(bool listening, std::int64_t own_scale_set,
                                        std::int64_t found_scale_set,
                                        const std::vector<std::string>& found_labels,
                                        std::string_view set_label);

// What a verdict other than the_sets says in the log.
const char* found_runner_left_because(found_runner_verdict v);

}  // namespace octorun::runnerset
