#include "actors/runnerset/github_budget.hpp"

#include <algorithm>

namespace octorun::runnerset {

bool paused(const github_budget& b, budget_clock::time_point now) { return now < b.paused_until; }

std::int64_t cleanup_reserve(std::int64_t limit) {
  return limit > 0 ? std::max<std::int64_t>(1, limit / 10) : 0;
}

budget_clock::time_point github_call_not_before(github_call call, const github_budget& b,
                                                budget_clock::time_point now) {
  if (paused(b, now)) return b.paused_until;
  const bool before_reset = now < b.reset_at;
  // Spent: the next call would only be refused.
  if (b.remaining == 0 && before_reset) return b.reset_at;
  if (call == github_call::cleanup && b.remaining >= 0 && b.remaining <= cleanup_reserve(b.limit) &&
      before_reset)
    return b.reset_at;
  return now;
}

bool record_rate_limit(github_budget& b, budget_clock::time_point now, budget_clock::duration retry_after) {
  const bool begins = !paused(b, now);
  // A rate limit without a usable wait still pauses a little: never a busy loop.
  b.paused_until =
      std::max(b.paused_until, now + std::max<budget_clock::duration>(retry_after, std::chrono::seconds(1)));
  return begins;
}

}  // namespace octorun::runnerset
