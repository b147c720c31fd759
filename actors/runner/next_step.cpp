#include "actors/runner/next_step.hpp"

#include <algorithm>

namespace octorun::runner {
namespace {

step make(step_kind k) { return step{k, std::nullopt, false, {}}; }

step wait(std::chrono::steady_clock::time_point at) {
  return step{step_kind::wait_until, std::nullopt, false, at};
}

step on_deletion(const observation& o) {
  if (!o.has_finalizer) return make(step_kind::none);  // not ours to hold any more
  // Registered: a published id, a JIT Secret, or a JIT configuration GitHub
  // generated that never reached its Secret (deleted while it was in flight).
  const bool registered = o.github_runner_id != 0 || o.secret_exists || o.jit_unstored;
  const bool gone_from_github = o.removal == github_removal::removed || o.removal == github_removal::deferred;
  if (registered && !gone_from_github && !github_removed_it(o)) {
    if (o.removal == github_removal::busy && o.now < o.retry_not_before) return wait(o.retry_not_before);
    if (o.removal == github_removal::rate_limited) {
      // A runner that can still take a job keeps its pod until GitHub
      // confirms; one that cannot (its process ended) is left to the set.
      if (!may_run_a_job(o)) return make(step_kind::defer_removal);
      if (o.now < o.retry_not_before) return wait(o.retry_not_before);
    }
    return make(step_kind::remove_from_github);
  }
  if (!registered && o.registration_unknown && !gone_from_github) {
    // Nothing records a registration, yet GitHub may hold one: asked once
    // (a spent budget: after its reset), so no GitHub runner outlives its Runner.
    if (o.removal == github_removal::rate_limited && o.now < o.retry_not_before)
      return wait(o.retry_not_before);
    return make(step_kind::find_on_github);
  }
  // GitHub no longer knows the runner: no job can be lost by stopping it.
  // Its Pod and Secret go with the Runner (their ownerReferences name it:
  // the garbage collector deletes them), so releasing the finalizer is the
  // one write left.
  return make(step_kind::remove_finalizer);
}

bool pod_failed(const pod_observation& pod) {
  return pod.exists && pod.runner_exited && pod.exit_code != 0 && pod.exit_code != outdated_exit_code;
}

}  // namespace

bool github_removed_it(const observation& o) {
  return o.current == model::runner_phase::succeeded && o.has_job;
}

bool may_run_a_job(const observation& o) {
  return !is_terminal(o.current) && o.pod.exists && !o.pod.runner_exited;
}

step next_step(const observation& o, const limits& l) {
  if (o.deleting) return on_deletion(o);
  // Its job done, GitHub removed the runner: nothing is left for the
  // finalizer to guard, so it goes now, beside the set's DELETE, rather
  // than after it (completed -> gone: two writes in a row, not three).
  if (github_removed_it(o)) return make(o.has_finalizer ? step_kind::remove_finalizer : step_kind::none);
  if (!o.has_finalizer) return make(step_kind::add_finalizer);
  if (is_terminal(o.current)) return make(step_kind::none);  // the RunnerSet deletes finished runners

  // A registration GitHub already made is stored, not made again: a second
  // JIT call for the name would leave the first registration behind.
  if (!o.secret_exists) {
    if (o.jit_unstored) return make(step_kind::store_secret);
    if (o.name_taken) return make(step_kind::mark_failed);
    if (!o.registration_failure.empty()) {
      // GitHub refused it: the Runner says why, once (Pending over an
      // empty phase: it exists and has no job), then asks again later.
      if (!o.registration_failure_published) {
        step s = make(step_kind::publish_status);
        if (o.current == model::runner_phase::unset) s.phase_to_publish = model::runner_phase::pending;
        s.registration_failed = true;
        return s;
      }
      if (o.now < o.registration_retry_at) return wait(o.registration_retry_at);
    }
    return make(step_kind::provision);
  }

  // A pod on its way out: wait for it to go before judging anything.
  if (o.pod.exists && o.pod.deleting) return make(step_kind::none);
  if (pod_failed(o.pod)) {
    // Judge this failure against the ones before it, recorded or not yet.
    const int earlier = o.failures - (o.pod_failure_recorded ? 1 : 0);
    if (on_pod_failure(o.has_job, earlier, l.max_pod_failures) == pod_failure_action::mark_failed)
      return make(step_kind::mark_failed);
    return make(o.pod_failure_recorded ? step_kind::delete_pod : step_kind::record_pod_failure);
  }
  if (!o.pod.exists) {
    // The pod of a runner that took a job vanished (evicted, deleted by
    // hand): the job went with it and the JIT configuration is spent.
    if (o.has_job && o.pod_seen) return make(step_kind::mark_failed);
    if (o.now < o.retry_not_before) return wait(o.retry_not_before);
    return make(step_kind::create_pod);
  }

  // A job is running on it: first of all, protect its pod from drains.
  if (o.has_job && !o.pod.marked_busy && !o.pod.runner_exited) return make(step_kind::mark_pod_busy);

  auto publish = controller_phase({o.current, o.deleting, o.has_job}, o.pod);
  // The runner container exited: said at once.
  if (publish && *publish != model::runner_phase::pending)
    return step{step_kind::publish_status, publish, o.pod.ready, {}};
  // Running says the runner is up: the job path wrote its readiness (and
  // registration) with the phase; only what it could not know yet is left
  // (a pod seen ready after the job came, a registration). A busy pod
  // going unready is not news: its exit is.
  if (o.current == model::runner_phase::running)
    return o.status_registration_stale || (o.pod.ready && !o.status_pod_ready)
               ? step{step_kind::publish_status, std::nullopt, o.pod.ready, {}}
               : make(step_kind::none);
  if (!publish && !o.status_registration_stale && o.pod.ready == o.status_pod_ready)
    return make(step_kind::none);
  // A runner without a job: Pending and its readiness wait until its pod
  // has been there (and ready, when it is) for the settle window. A runner
  // handed a job by then says all of it in its Running write: one status
  // patch instead of two or three.
  auto settled = o.pod_seen_since + l.status_settle;
  if (o.pod.ready) settled = std::max(settled, o.pod_ready_since + l.status_settle);
  if (o.now < settled) return wait(settled);
  return step{step_kind::publish_status, publish, o.pod.ready, {}};
}

}  // namespace octorun::runner
