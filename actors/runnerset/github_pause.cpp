// The RunnerSet actor when GitHub's budget runs out (github_budget.hpp
// decides): the pause a rate-limit answer starts (logged once, exported as
// a metric), the calls held back meanwhile, and the GitHub removals its
// Runners hand over because they cannot wait for the reset — recorded in
// the set's status before the Runner may go, done once the budget allows.
#include <spdlog/spdlog.h>

#include "actors/metrics/event_metrics.hpp"
#include "actors/runnerset/set_state.hpp"
#include "actors/runnerset/set_status.hpp"

namespace octorun::runnerset::detail {
namespace {

// More than this many removals waiting: the rest are left to GitHub, which
// drops offline ephemeral runners on its own (the status stays small).
constexpr std::size_t max_deferred_removals = 1000;

std::chrono::seconds seconds_until(budget_clock::time_point at, budget_clock::time_point now) {
  return std::chrono::ceil<std::chrono::seconds>(std::max(at - now, budget_clock::duration::zero()));
}

}  // namespace

void observe_github_budget(self_ptr self) {
  auto& st = self->state;
  auto& b = st.world.budget;
  const auto now = st.world.now;
  if (st.budget) {
    b.limit = st.budget->limit.load();
    b.remaining = st.budget->remaining.load();
    const auto reset_epoch = st.budget->reset_epoch.load();
    b.reset_at = reset_epoch > 0 ? now + std::chrono::seconds(reset_epoch - st.cfg.wall_clock())
                                 : budget_clock::time_point{};
  }
  st.world.github_connection_problem = st.health->problem();
  if (st.pause_logged && !paused(b, now)) {
    st.pause_logged = false;
    spdlog::info("runnerset {}: GitHub calls resume after the rate-limit pause ({} removal(s) waiting)",
                 id(self), st.world.deferred_removals.size());
    metrics::record_github_pause(st.cfg.ns, st.cfg.name, false);
  }
  metrics::set_deferred_removals(st.cfg.ns, st.cfg.name,
                                 static_cast<std::int64_t>(st.world.deferred_removals.size()));
}

void note_github_error(self_ptr self, const github::error& e) {
  // A TLS or proxy problem (connection_health has it): the condition says so.
  if (e.kind == github::error_kind::transport) return mark_dirty(self);
  if (e.kind != github::error_kind::rate_limited) return;
  auto& st = self->state;
  const auto now = self->clock().now();
  if (!record_rate_limit(st.world.budget, now, e.retry_after) || st.pause_logged) return;
  st.pause_logged = true;
  spdlog::warn(
      "runnerset {}: GitHub's rate limit is spent ({}); no GitHub calls for {} s, then new runners first and "
      "removals after",
      id(self), e.describe(), seconds_until(st.world.budget.paused_until, now).count());
  metrics::record_github_pause(st.cfg.ns, st.cfg.name, true);
  mark_dirty(self);  // plans the wake-up at the pause's end
}

void note_github_answer(self_ptr self, const github::error* failed, github_call_target target) {
  auto& access = self->state.world.access;
  auto after = after_github_answer(access, failed, target);
  if (after == access) return;
  if (after.state != github_access::verdict::accepted)
    spdlog::warn("runnerset {}: GitHub access: {}", id(self), after.detail);
  access = std::move(after);
  mark_dirty(self);  // CredentialsReady and its Event say so
}

std::optional<github::error> held_back(self_ptr self, github_call call) {
  auto& st = self->state;
  const auto now = self->clock().now();
  const auto at = github_call_not_before(call, st.world.budget, now);
  if (at <= now) return std::nullopt;
  const auto wait = seconds_until(at, now);
  const std::string why = call == github_call::new_runner || paused(st.world.budget, now)
                              ? "GitHub's rate limit is spent"
                              : "what is left of GitHub's rate limit is kept for new runners";
  return github::error{github::error_kind::rate_limited, 0,
                       why + "; not before " + std::to_string(wait.count()) + " s from now", wait, 0};
}

caf::result<bool> defer_removal(self_ptr self, std::int64_t runner_id, const std::string& runner) {
  auto& st = self->state;
  auto& w = st.world;
  if (runner_id == 0 || st.durable_removals.count(runner_id) > 0) return true;
  if (w.deferred_removals.count(runner_id) == 0 && w.deferred_removals.size() >= max_deferred_removals) {
    spdlog::warn(
        "runnerset {}: {} GitHub removals wait already; GitHub runner {} ({}) is left to GitHub, "
        "which drops offline ephemeral runners itself",
        id(self), w.deferred_removals.size(), runner_id, runner);
    return true;
  }
  w.deferred_removals.try_emplace(runner_id, deferred_removal{runner, {}});
  auto rp = self->make_response_promise<bool>();
  st.awaiting_durable.emplace(runner_id, rp);
  mark_dirty(self);  // the status that records it answers the Runner (status_published)
  return rp;
}

void status_published(self_ptr self, const std::string& text) {
  auto& st = self->state;
  st.durable_removals = pending_removal_ids(text);
  for (auto it = st.awaiting_durable.begin(); it != st.awaiting_durable.end();) {
    if (st.durable_removals.count(it->first) == 0) {
      ++it;
      continue;
    }
    it->second.deliver(true);
    it = st.awaiting_durable.erase(it);
  }
}

void load_deferred_removals(self_ptr self) {
  auto& st = self->state;
  if (std::exchange(st.removals_loaded, true) || !st.world.set) return;
  for (const auto& p : st.world.set->status.pending_removals) {
    if (p.runner_id == 0) continue;
    st.world.deferred_removals.try_emplace(p.runner_id, deferred_removal{p.name, {}});
    st.durable_removals.insert(p.runner_id);
  }
}

void remove_deferred(self_ptr self, std::int64_t runner_id) {
  auto retry_at = [=](budget_clock::duration after) {
    auto& w = self->state.world;
    if (auto it = w.deferred_removals.find(runner_id); it != w.deferred_removals.end())
      it->second.not_before = self->clock().now() + after;
    mark_dirty(self);
  };
  auto failed = [=](const std::string& why) {
    spdlog::warn("runnerset {}: removing GitHub runner {} (deferred): {}", id(self), runner_id, why);
    retry_at(std::chrono::seconds(30));
  };
  request_in_flight<github::delete_reply>(
      self, {action_kind::remove_deferred, std::to_string(runner_id)}, runner_github(self),
      [=](github::delete_reply& r) {
        auto& st = self->state;
        if (!r) {
          note_github_error(self, r.error());
          if (r.error().kind == github::error_kind::rate_limited) return retry_at(r.error().retry_after);
          return failed(r.error().describe());
        }
        if (*r == github::delete_outcome::busy) return retry_at(st.cfg.busy_recheck);
        auto it = st.world.deferred_removals.find(runner_id);
        if (it == st.world.deferred_removals.end()) return;
        spdlog::info("runnerset {}: removed GitHub runner {} ({}), whose removal waited for the budget",
                     id(self), runner_id, it->second.runner);
        st.world.deferred_removals.erase(it);
        mark_dirty(self);  // the status drops it
      },
      failed, github::delete_runner_atom::value, runner_id);
}

}  // namespace octorun::runnerset::detail
