// The RunnerSet actor's side of the Webhook intake: the sweep of GitHub's
// queued and running jobs (webhook_sweep.hpp, docs/intakes.md) when the
// credentials load (on a new leader: at once) and every cfg.webhook_sweep.
#include <spdlog/spdlog.h>

#include "actors/runnerset/routing.hpp"
#include "actors/runnerset/set_state.hpp"
#include "actors/runnerset/webhook_sweep.hpp"

namespace octorun::runnerset::detail {
namespace {

bool webhook_set(const set_state& st) {
  return st.world.set && st.world.set->spec.intake == model::intake_mode::webhook && st.github &&
         st.cfg.webhook_intake_enabled;
}

void schedule_sweep(self_ptr self) {
  auto& st = self->state;
  if (st.cfg.webhook_sweep.count() <= 0) {
    st.sweeping = false;
    return;
  }
  self->delayed_send(self, st.cfg.webhook_sweep, sweep_atom::value);
}

// A run's jobs are listed again after this (a job a run adds later, e.g.
// one that `needs` another, is found then if its delivery was lost).
constexpr auto relist_after = std::chrono::minutes(10);

// The runs whose jobs this sweep listed are remembered; runs that ended are forgotten.
void remember_listed_runs(self_ptr self, const std::vector<std::int64_t>& known,
                          const messages::active_work& listed, time_point at) {
  auto& runs = self->state.listed_runs;
  std::erase_if(runs, [&](const auto& kv) { return !listed.runs.contains(kv.first); });
  const std::set<std::int64_t> skipped(known.begin(), known.end());
  for (auto run : listed.runs)
    if (!skipped.contains(run)) runs.emplace(run, at);
}

void apply_sweep(self_ptr self, const std::map<std::int64_t, std::int64_t>& counted_at_start,
                 const messages::active_work& listed) {
  auto& st = self->state;
  std::set<std::int64_t> counted_now, completed;
  for (const auto& [job, variant] : st.world.active_jobs) counted_now.insert(job);
  for (const auto& [job, at] : st.completed_jobs) completed.insert(job);
  auto changes = reconcile_demand(counted_at_start, counted_now, completed, listed);
  for (auto job : changes.ended) {
    st.world.active_jobs.erase(job);
    st.job_runs.erase(job);
    st.completed_jobs[job] = self->clock().now();  // a late delivery of it changes nothing
  }
  // What no delivery brought takes a delivery's route: the router picks the
  // set. Only jobs one of this set's variants would run: the others are not
  // this set's to report (no sweep counts a job as bad input again and again).
  const auto variants = model::effective_variants(st.world.set->spec);
  std::erase_if(changes.found, [&](const auto& job) { return !variant_for_job(variants, job.labels); });
  for (const auto& job : changes.found) {
    auto message = job_message_of(job);
    if (st.cfg.job_router)
      messages::send_job_message(st.cfg.job_router, std::move(message));
    else
      std::visit([&](auto& m) { self->send(self, std::move(m)); }, message);
  }
  if (!changes.ended.empty() || !changes.found.empty()) {
    spdlog::info(
        "runnerset {}: GitHub's queue ({} runs queued or running) has {} jobs no delivery brought; {} jobs "
        "counted have ended unseen",
        id(self), listed.runs.size(), changes.found.size(), changes.ended.size());
    mark_dirty(self);
  }
}

void sweep(self_ptr self) {
  auto& st = self->state;
  if (!webhook_set(st)) {
    st.sweeping = false;  // the next credentials load starts them again
    return;
  }
  if (held_back(self, github_call::cleanup)) return schedule_sweep(self);  // the budget is for new runners
  auto counted_at_start = st.job_runs;
  std::erase_if(counted_at_start, [&](const auto& kv) { return !st.world.active_jobs.contains(kv.first); });
  const auto now = self->clock().now();
  std::erase_if(st.listed_runs, [&](const auto& kv) { return kv.second + relist_after < now; });
  auto known = known_runs(counted_at_start);
  for (const auto& [run, at] : st.listed_runs) known.push_back(run);
  self->request(st.github, st.cfg.request_timeout, github::active_work_atom::value, known)
      .then(
          [=](github::active_work_reply& reply) {
            if (reply) {
              remember_listed_runs(self, known, *reply, now);
              apply_sweep(self, counted_at_start, *reply);
            } else {
              spdlog::warn("runnerset {}: sweeping GitHub's queue: {}", id(self), reply.error().describe());
              note_github_error(self, reply.error());
            }
            schedule_sweep(self);
          },
          [=](caf::error& e) {
            spdlog::warn("runnerset {}: sweeping GitHub's queue: {}", id(self), self->system().render(e));
            schedule_sweep(self);
          });
}

}  // namespace

void start_sweeps(self_ptr self) {
  auto& st = self->state;
  if (st.sweeping || !webhook_set(st)) return;
  st.sweeping = true;
  self->send(self, sweep_atom::value);
}

caf::typed_behavior<caf::reacts_to<sweep_atom>> sweep_handlers(self_ptr self) {
  return {[=](sweep_atom) { sweep(self); }};
}

}  // namespace octorun::runnerset::detail
