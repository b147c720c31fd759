#include "actors/runnerset/routing.hpp"

#include <algorithm>

#include "common/strings.hpp"

namespace octorun::runnerset {

bool carries_label(const std::vector<std::string>& labels, std::string_view label) {
  if (label.empty()) return false;
  auto same = [&](const std::string& l) { return ascii_iequals(l, label); };
  return std::any_of(labels.begin(), labels.end(), same);
}

namespace {

bool carries(const model::effective_variant& v, const std::string& label) {
  return carries_label(v.runner_labels, label) || carries_label(implicit_runner_labels, label);
}

}  // namespace

std::optional<std::size_t> variant_for_job(const std::vector<model::effective_variant>& variants,
                                           const std::vector<std::string>& job_labels) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const auto& v = variants[i];
    if (!std::all_of(job_labels.begin(), job_labels.end(),
                     [&](const std::string& l) { return carries(v, l); }))
      continue;
    if (!best || v.runner_labels.size() < variants[*best].runner_labels.size()) best = i;
  }
  return best;
}

bool heeds_job_message(model::intake_mode set_intake, bool from_listener) {
  return (set_intake == model::intake_mode::listener) == from_listener;
}

}  // namespace octorun::runnerset

namespace octorun::runnerset {

std::optional<stale_job> stale_demand(bool completed, bool counted) {
  if (completed) return stale_job{"stale_delivery", "it completed already (a late or reordered delivery)"};
  if (counted)
    return stale_job{"stale_delivery", "it is counted already (a duplicate, or it started already)"};
  return std::nullopt;
}

bool remembers_end(bool counted, bool ran, bool spec_known, bool a_variant_runs_it) {
  return counted || ran || !spec_known || a_variant_runs_it;
}

}  // namespace octorun::runnerset
