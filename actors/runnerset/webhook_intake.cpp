// The RunnerSet actor's side of the Webhook intake: the sweep of GitHub's
// queued and running jobs (webhook_sweep.hpp, docs/intakes.md) when the
// credentials load (on a new leader: at once) and every cfg.webhook_sweep.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "actors/runnerset/routing.hpp"
#include "actors/runnerset/set_state.hpp"
#include "actors/runnerset/webhook_sweep.hpp"

namespace octorun::runnerset::detail {
namespace {

// A set its class refuses sweeps nothing: one that drains holds its
// credentials only to remove its idle runners.
bool webhook_set(const set_state& st) {
  const auto& verdict = st.world.class_verdict;
  return st.world.set && st.world.set->spec.intake == model::intake_mode::webhook && st.github &&
         st.cfg.webhook_intake_enabled && (!verdict || verdict->refused.empty());
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
void remember_listed_runs(self_ptr self, const messages::sweep_request& ask,
                          const messages::active_work& listed, time_point at) {
  auto& runs = self->state.listed_runs;
  std::erase_if(runs, [&](const auto& kv) { return !listed.runs.contains(kv.first); });
  for (auto run : listed.runs)
    if (!ask.followed_runs.contains(run) && !ask.listed_runs.contains(run)) runs.emplace(run, at);
}

void apply_sweep(self_ptr self, const std::map<std::int64_t, followed_job>& followed,
                 const messages::active_work& listed) {
  auto& st = self->state;
  std::set<std::int64_t> counted, completed;
  for (const auto& [job, variant] : st.world.active_jobs) counted.insert(job);
  for (const auto& [job, at] : st.completed_jobs) completed.insert(job);
  auto changes = reconcile_demand(followed, counted, completed, listed);
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
  // On the set's server, and named by the installation its credentials are
  // (whose token listed them), as that App's delivery would name it.
  const auto& scope = st.world.set->spec.scope;
  const auto server = scope ? model::server_identity(*scope) : std::string();
  auto route = [&](const messages::workflow_job& job) {
    auto message = job_message_of(job);
    std::visit(
        [&](auto& m) {
          m.job.server = server;
          m.job.installation_id = st.app_installation_id;
        },
        message);
    if (st.cfg.job_router)
      messages::send_job_message(st.cfg.job_router, std::move(message));
    else
      std::visit([&](auto& m) { self->send(self, std::move(m)); }, message);
  };
  std::for_each(changes.finished.begin(), changes.finished.end(), route);
  std::for_each(changes.found.begin(), changes.found.end(), route);
  if (!changes.ended.empty() || !changes.found.empty() || !changes.finished.empty()) {
    spdlog::info(
        "runnerset {}: GitHub's queue ({} runs queued or running) has {} jobs no delivery brought; {} jobs "
        "followed have ended unseen ({} with their runner)",
        id(self), listed.runs.size(), changes.found.size(), changes.ended.size() + changes.finished.size(),
        changes.finished.size());
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
  // Followed: the jobs counted as demand and the jobs its Runners run.
  std::map<std::int64_t, followed_job> followed;
  for (const auto& [job, where] : st.job_runs)
    if (st.world.active_jobs.contains(job)) followed.emplace(job, where);
  for (const auto& [runner, job] : st.runner_jobs) followed.emplace(job.first, job.second);
  const auto now = self->clock().now();
  std::erase_if(st.listed_runs, [&](const auto& kv) { return kv.second + relist_after < now; });
  std::set<std::int64_t> listed_runs;
  for (const auto& [run, at] : st.listed_runs) listed_runs.insert(run);
  auto ask = sweep_request_for(followed, listed_runs);
  self->request(st.github, st.cfg.request_timeout, github::active_work_atom::value, ask)
      .then(
          [=](github::active_work_reply& reply) {
            note_github_answer(self, reply ? nullptr : &reply.error(), github_call_target::scope);
            if (reply) {
              remember_listed_runs(self, ask, *reply, now);
              apply_sweep(self, followed, *reply);
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
