// The Runner actor's job path: JobStarted / workflow_job in_progress writes
// Running, JobCompleted / completed writes Succeeded, each decided by
// runner/phase.hpp on the Runner as the actor holds it and locked on its
// resourceVersion (a conflict reads it from the server and decides again).
#include <spdlog/spdlog.h>

#include "actors/kinds.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "actors/runner/phase.hpp"
#include "actors/runner/runner_state.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/json_writer.hpp"
#include "common/rfc3339.hpp"
#include "model/parse.hpp"

namespace octorun::runner::detail {
namespace {

void job_done(self_ptr self) {
  land(self, flight::job);
  self->state.job_read_fresh = false;
  auto& jobs = self->state.jobs;
  jobs.erase(jobs.begin());
  if (jobs.empty()) jobs.shrink_to_fit();  // most Runners run one job: keep nothing after it
  process_jobs(self);
}

// Decides again on the Runner as the server has it (a conflict, or a verdict
// the held copy cannot be trusted with).
void retry_job(self_ptr self, std::chrono::milliseconds after) {
  land(self, flight::job);
  self->state.job_read_fresh = true;
  if (after.count() == 0) return process_jobs(self);  // a conflict: read again at once
  self->delayed_send(self, after, wake_atom::value, std::uint64_t{0});
}

// Writes the job path's decision: Running with the job (started) or
// Succeeded (completed), locked to the resourceVersion that was read.
void write_job_phase(self_ptr self, const model::runner& read, const messages::job_info& job,
                     model::runner_phase from, model::runner_phase target, const std::string& detail) {
  auto& st = self->state;
  std::string rv = read.metadata.resource_version;
  json::writer w;
  open_status_patch(w, rv);
  w.field("phase", to_string(target));
  w.open("job").field("id", job.job_id).field("repository", job.repository);
  w.field("workflowRef", job.workflow_ref).field("runId", job.run_id).field("displayName", job.display_name);
  w.close();
  // GitHub's times of the job join the timeline in the same patch.
  if (target == model::runner_phase::succeeded) {
    w.field("reason", "JobCompleted").field("message", detail);
    write_timeline(w, {{"completed", job.completed_at}});
  } else {
    // Its readiness (as the actor saw the pod: status.podReady also says
    // the pod existed, observe.cpp), conditions and registration ride along,
    // so no patch of their own.
    write_readiness(self, w, read, st.pod && st.pod->ready,
                    {{"queued", job.queued_at}, {"started", job.started_at}});
  }
  const auto body = w.close().close().str();
  const auto ticket = st.in_flight.ticket_of(flight::job);
  ask_kube(self, kube::patch_request{kinds::runners(), st.cfg.ns, st.cfg.name, kube::patch_type::merge, body,
                                     "status"})
      .then(
          [=](kube::object_result& r) {
            if (!awaited(self, flight::job, ticket)) return;
            if (r) {
              spdlog::info("runner {}: {} job {} ({})", id(self), to_string(target), job.job_id,
                           job.repository);
              transition_detail td{job.job_id, job.repository, job.display_name, detail, -1};
              auto written = watched::read_runner(*r);
              if (auto e = event_for_transition(from, target, td); e && written)
                record_event(self, *e, *written);
              // Keep it unless a newer watch event already arrived.
              if (self->state.runner && self->state.runner->metadata.resource_version == rv)
                set_runner(self, std::move(written));
              job_done(self);
              return mark_dirty(self);
            }
            if (r.error().not_found()) return job_done(self);  // the Runner is gone
            // Conflict: the Runner changed after our read; read and decide again.
            retry_job(self, r.error().conflict() ? std::chrono::milliseconds(0) : backoff(self));
          },
          [=](caf::error&) {
            if (awaited(self, flight::job, ticket)) retry_job(self, backoff(self));
          });
}

// A job message that changes nothing here (a late or reordered delivery):
// counted (octorun_rejected_input_total); the caller logs it, once.
void stale(const messages::job_info& job) {
  metrics::reject_input(messages::to_string(job.source), "stale_delivery", std::to_string(job.job_id));
}

// Decides one job event against the Runner as just read.
void decide_job(self_ptr self, const model::runner& fresh, const job_event& event) {
  job_view view{fresh.status.phase, fresh.metadata.deleting,
                fresh.status.job ? std::optional<std::int64_t>(fresh.status.job->id) : std::nullopt};
  if (const auto* started = std::get_if<messages::job_started>(&event)) {
    switch (on_job_started(view, started->job.job_id)) {
      case job_started_verdict::promote:
        return write_job_phase(self, fresh, started->job, view.current, model::runner_phase::running, {});
      case job_started_verdict::already_running:
        return job_done(self);
      // Said by the verdict, not by the deletion mark: a finished runner is
      // being deleted too once its set removes it, and a late start that
      // finds it so is not a start on a runner deleted before its job ended.
      case job_started_verdict::skip_terminal:
        stale(started->job);
        spdlog::info("runner {}: job {} started on a runner that has finished; not promoting", id(self),
                     started->job.job_id);
        return job_done(self);
      case job_started_verdict::skip_deleting:
        stale(started->job);
        spdlog::info("runner {}: job {} started on a runner that is being deleted; not promoting", id(self),
                     started->job.job_id);
        return job_done(self);
    }
  }
  const auto& completed = std::get<messages::job_completed>(event);
  const auto verdict = on_job_completed(view, completed.job.job_id);
  // Which job a runner recorded can change (a second start), so a held copy
  // naming another job is checked against the server before the completion is dropped.
  if (verdict == job_completed_verdict::skip_other_job && !self->state.job_read_fresh)
    return retry_job(self, std::chrono::milliseconds(0));
  switch (verdict) {
    case job_completed_verdict::finish:
      return write_job_phase(
          self, fresh, completed.job, view.current, model::runner_phase::succeeded,
          "job " + std::to_string(completed.job.job_id) + " completed: " + completed.result);
    case job_completed_verdict::already_finished:
    case job_completed_verdict::skip_deleting:
      return job_done(self);
    case job_completed_verdict::skip_other_job:
      stale(completed.job);
      spdlog::info("runner {}: job {} completed, but the runner ran another job; ignored", id(self),
                   completed.job.job_id);
      return job_done(self);
  }
}

}  // namespace

void process_jobs(self_ptr self) {
  auto& st = self->state;
  // One Runner write at a time: a job write beside a step's status write
  // would only make one of them conflict.
  if (!st.in_flight.empty() || st.jobs.empty()) return;
  const auto ticket = send_off(self, flight::job, "the job path's write");
  auto job = st.jobs.front();
  // Decided on the Runner as this actor holds it (the watch's or its own
  // last write's): the write is locked on its resourceVersion, so a stale
  // copy costs a conflict and a read, never a wrong phase; and what it
  // declines on a held copy (terminal, being deleted, already running this
  // job) stays so. Read from the server only when it holds none or after a conflict.
  if (st.runner && !st.job_read_fresh) return decide_job(self, *st.runner, job);
  ask_kube(self, kube::get_request{kinds::runners(), st.cfg.ns, st.cfg.name, ""})
      .then(
          [=](kube::object_result& r) {
            if (!awaited(self, flight::job, ticket)) return;
            if (!r) {
              if (!r.error().not_found()) return retry_job(self, backoff(self));
              job_done(self);
              // Spawned for a job on a Runner that does not exist: nothing to keep alive for.
              if (!self->state.runner) self->quit();
              return;
            }
            auto fresh = watched::read_runner(*r);
            if (!fresh) return job_done(self);
            decide_job(self, *fresh, job);
          },
          [=](caf::error&) {
            if (awaited(self, flight::job, ticket)) retry_job(self, backoff(self));
          });
}

}  // namespace octorun::runner::detail
