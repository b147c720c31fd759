// Which variant of a RunnerSet a job belongs to, by its runs-on labels.
// GitHub hands a job to a runner that carries every label the job asks for
// (case-insensitively). Every self-hosted runner carries "self-hosted"; the
// OS and architecture labels depend on the image, so a variant lists them in
// runnerLabels when its jobs ask for them (e.g. linux, x64 or arm64). Among
// variants that fit, the one with the fewest labels wins (the most general
// fit), then the first declared.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/types.hpp"

namespace octorun::runnerset {

// Labels every runner has without declaring them.
inline const std::vector<std::string> implicit_runner_labels{"self-hosted"};

// Whether `labels` carry `label`, as GitHub compares labels
// (case-insensitively). An empty `label` is carried by none.
bool carries_label(const std::vector<std::string>& labels, std::string_view label);

std::optional<std::size_t> variant_for_job(const std::vector<model::effective_variant>& variants,
                                           const std::vector<std::string>& job_labels);

// A RunnerSet heeds the job messages of its own intake only. A Listener
// set's demand is its scale set's statistics, and a JobCompleted comes in
// the same message as statistics that no longer count the job; a webhook
// delivery about the same job arrives out of step with them (sooner or
// later), and a completion heeded before the statistics drop frees a runner
// while its job is still counted: a surplus runner, created for nothing.
bool heeds_job_message(model::intake_mode set_intake, bool from_listener);

// A queued job that brings no news for demand: the job completed already,
// or is counted already (a duplicate delivery with a new id, or a queued that
// came after the job's start). The reason is a metric label
// (octorun_rejected_input_total).
struct stale_job {
  const char* reason;
  const char* why;
};
std::optional<stale_job> stale_demand(bool completed, bool counted);

// Whether a set remembers a job's end, so that a late or duplicate delivery
// of it changes nothing. Every set of the job's class hears of every
// webhook end; only one that counted the job, ran it on a runner of its
// own, or has a variant that would run it could be told of the job again
// (or one that has not read its spec yet). The others forget it at once:
// what a set keeps grows with its own jobs, not with its class's.
bool remembers_end(bool counted, bool ran, bool spec_known, bool a_variant_runs_it);

}  // namespace octorun::runnerset
