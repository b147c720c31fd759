// Which Kubernetes Event the Runner actor records for what it just wrote
// (pure, no I/O). A write that changes the phase gets one Event regarding
// the Runner (Normal for Pending, Running and Succeeded; Warning for Failed
// and Outdated), except Running → Succeeded: a job costs one Normal Event
// naming it. Every pod failure that is retried gets a Warning.
// The actor sends the result to the event recorder (adapters/kube/events.hpp),
// which spam-limits repeats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "actors/runner/phase.hpp"

namespace octorun::runner {

struct runner_event {
  bool warning = false;  // type Warning, else Normal
  std::string reason;    // CamelCase: Pending, Running, Succeeded, Failed, Outdated, PodFailed
  std::string action;    // what the manager did: UpdatePhase, RecreatePod
  std::string note;      // for people
  bool operator==(const runner_event&) const = default;
};

// What the written status says about the transition, for the note.
struct transition_detail {
  std::int64_t job_id = 0;  // the assigned (Running) or completed (Succeeded) job; 0: none
  std::string repository;   // of the job
  std::string job_name;     // its display name
  std::string message;      // status.message written with the phase (why it failed / how it ended)
  int exit_code = -1;       // the runner container's exit code, when it exited; -1: unknown
};

// The Event for a write that moved the Runner from `from` to `to`; nullopt
// when the phase did not change (or went to unset, which no write does), and
// for Running → Succeeded.
std::optional<runner_event> event_for_transition(model::runner_phase from, model::runner_phase to,
                                                 const transition_detail& detail);

// The Warning for a Runner whose registration (JIT configuration) GitHub
// refused, `why`: recorded once per reason, with the Registered condition
// that says it.
runner_event event_for_registration_failure(const std::string& why);

// The Warning for a pod whose runner container exited non-zero and that will
// be recreated after `retry_in_seconds`; `failure` counts this one (1 = first).
runner_event event_for_pod_retry(int exit_code, int failure, int max_failures, std::int64_t retry_in_seconds);

}  // namespace octorun::runner
