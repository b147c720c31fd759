// The RunnerSet actor's side of the runner version (runner_versions.hpp):
// GitHub's latest release fetched through the set's REST pool, and each
// variant's verdict told to the manager's metrics.
#include <spdlog/spdlog.h>

#include "actors/runnerset/set_state.hpp"

namespace octorun::runnerset::detail {

// Asked for again every runner_release_period, sooner after a failure. A
// GitHub without one (a GHES: 404) leaves the version health Unknown, and
// says nothing of the set's credentials.
void fetch_runner_release(self_ptr self) {
  auto again = [=](std::chrono::steady_clock::duration after) {
    self->state.world.runner_release_due = self->clock().now() + after;
  };
  // Nothing changed: the next plan (any event, or the resync) schedules the retry.
  auto failed = [=](const std::string& why) {
    spdlog::debug("runnerset {}: GitHub's latest runner release: {}", id(self), why);
    again(runner_release_retry);
  };
  request_in_flight<github::release_reply>(
      self, {action_kind::fetch_runner_release, ""}, self->state.github,
      [=](github::release_reply& r) {
        if (!r) {
          if (r.error().kind == github::error_kind::rate_limited) note_github_error(self, r.error());
          return failed(r.error().describe());
        }
        self->state.world.latest_runner_release = *r;
        again(runner_release_period);
        mark_dirty(self);  // the variants' verdicts may change
      },
      failed, github::latest_release_atom::value);
}

void report_runner_versions(self_ptr self, const set_plan& p) {
  auto& st = self->state;
  if (!st.cfg.metrics || p.versions.empty()) return;
  auto& reported = *st.reported_versions;
  std::map<std::string, model::version_verdict> now(p.versions.begin(), p.versions.end());
  for (const auto& [variant, verdict] : reported)
    if (now.count(variant) == 0) st.cfg.metrics->runner_version(st.cfg.ns, st.cfg.name, variant, nullptr);
  for (const auto& [variant, verdict] : now) {
    auto was = reported.find(variant);
    if (was == reported.end() || !(was->second == verdict))
      st.cfg.metrics->runner_version(st.cfg.ns, st.cfg.name, variant, &verdict);
  }
  reported = std::move(now);
}

}  // namespace octorun::runnerset::detail
