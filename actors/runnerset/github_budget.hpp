// A RunnerSet's GitHub budget, as pure decisions. GitHub counts requests per
// credential (5,000 an hour for a PAT); once they are spent it answers 403
// until the hour resets. The set then spends what is left on new work and
// leaves cleanup for later:
// - a rate-limit answer pauses every call of the set until its retry time
//   (logged once, exported as octorun_github_rate_limited): no call is sent
//   while paused, so a thousand waiting runners make no request and no log
//   line each;
// - with the budget nearly spent (at most cleanup_reserve() left), JIT
//   configurations still go and removals wait for the reset;
// - a runner that can run no job does not wait for the reset to go: its
//   GitHub removal is deferred (deferred_removal), recorded in the set's
//   status, and done once the budget allows.
// Times are the actor's clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace octorun::runnerset {

using budget_clock = std::chrono::steady_clock;

struct github_budget {
  budget_clock::time_point paused_until{};  // a rate-limit answer said: nothing before then
  std::int64_t remaining = -1;              // x-ratelimit-remaining last seen; -1: unknown (or unlimited)
  std::int64_t limit = -1;                  // x-ratelimit-limit
  budget_clock::time_point reset_at{};      // when `remaining` refills
};

enum class github_call {
  new_runner,  // a JIT configuration: new work, first in line
  cleanup,     // removing a runner from GitHub
};

bool paused(const github_budget& b, budget_clock::time_point now);

// The part of the budget kept for new runners: a tenth of the limit.
std::int64_t cleanup_reserve(std::int64_t limit);

// When a call of this kind may go: `now` (or earlier) for at once.
budget_clock::time_point github_call_not_before(github_call call, const github_budget& b,
                                                budget_clock::time_point now);

// A rate-limit answer that says to wait `retry_after`: the pause it starts
// or extends. True when it starts a new pause (the set logs it, once).
bool record_rate_limit(github_budget& b, budget_clock::time_point now, budget_clock::duration retry_after);

// A GitHub runner whose removal waits for the budget (the set's status
// lists them as pendingRemovals).
struct deferred_removal {
  std::string runner;                     // the Runner's name, for people
  budget_clock::time_point not_before{};  // after a failed attempt
};

}  // namespace octorun::runnerset
