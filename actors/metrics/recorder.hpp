// What the actors tell the manager's own metrics, one call per event. The
// manager implements it with Prometheus families (manager_metrics.hpp); the
// actors hold it as an optional std::shared_ptr in their configs (none in
// unit tests: nothing is recorded). Every label is bounded: namespaces,
// RunnerSets, variants and fixed words, never a job, a runner or a pod.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "adapters/github/request_metrics.hpp"
#include "messages/jobs.hpp"
#include "model/children.hpp"
#include "model/runner_version.hpp"
#include "model/timeline.hpp"

namespace octorun::metrics {

// Why the manager deleted a Runner.
enum class deletion_reason {
  finished,     // its phase was terminal (Succeeded, Failed, Outdated)
  scaled_down,  // idle, and not wanted any more (removed from GitHub first)
  drained,      // its variant was removed, or its RunnerSet is being deleted
  stuck_start,  // not online by its variant's start-up deadline: replaced
};

// A Runner at its end: its timeline (status.timeline, with the points its
// actor saw of its last pod and `gone`), the repository of the job it ran
// ("" when none) and what its pod requested.
struct runner_end {
  model::job_timeline timeline;
  std::string repository;
  model::pod_requests requests;
};

class recorder {
 public:
  virtual ~recorder() = default;

  // The RunnerSet's Runners, as its actor creates and deletes them.
  virtual void runner_created(std::string_view ns, std::string_view set, std::string_view variant) = 0;
  virtual void runner_deleted(std::string_view ns, std::string_view set, std::string_view variant,
                              deletion_reason why) = 0;

  // A runner of the set did not come online by its variant's start-up
  // deadline: it is removed (unless it took a job) and replaced. Once per runner.
  virtual void stuck_start_replaced(std::string_view ns, std::string_view set, std::string_view variant) = 0;

  // A request an actor made for one of its actions failed (an API error or
  // a timeout); `action` names the action (plan.hpp's action_kind).
  virtual void reconcile_error(std::string_view controller, std::string_view action) = 0;

  // A listener's message session opened or ended; an incarnation that ended
  // with an error (its supervisor starts another); a listener stopped for
  // good (its variant or set is gone: its session series goes).
  virtual void listener_session(std::string_view ns, std::string_view set, std::string_view variant,
                                bool open) = 0;
  virtual void listener_failed(std::string_view ns, std::string_view set, std::string_view variant) = 0;
  virtual void listener_stopped(std::string_view ns, std::string_view set, std::string_view variant) = 0;

  // A job started on one of the set's runners, and a job that ended on one
  // (`result`: GitHub's conclusion). Queue time (queued -> started) and run
  // time (started -> completed) come from GitHub's timestamps in `job`,
  // when the message has them and they can be trusted (model::measure); a
  // start later than the start target counts as a breach.
  virtual void job_started(std::string_view ns, std::string_view set, std::string_view variant,
                           const messages::job_info& job) = 0;
  virtual void job_completed(std::string_view ns, std::string_view set, std::string_view variant,
                             std::string_view result, const messages::job_info& job) = 0;

  // A Runner is gone: the phases of its way up and down
  // (model::phases_at_runner_end) and the runner-seconds and requested
  // core- and byte-seconds it spent busy and idle (model::usage_of).
  virtual void runner_gone(std::string_view ns, std::string_view set, std::string_view variant,
                           const runner_end& end) = 0;

  // A variant's runner version as its set last judged it
  // (actors/runnerset/runner_versions.hpp); null: the variant, or its set,
  // is no longer served here, and its series go.
  virtual void runner_version(std::string_view ns, std::string_view set, std::string_view variant,
                              const model::version_verdict* verdict) = 0;

  // The observer for the GitHub calls made on one RunnerSet's credentials:
  // requests by endpoint, and that credential's rate-limit budget (its series
  // go when the last holder drops it).
  virtual std::shared_ptr<github::request_observer> github_observer(std::string_view ns,
                                                                    std::string_view set) = 0;
};

}  // namespace octorun::metrics
