// A start-time target (spec.startTimeTarget, docs/scaling.md "Start-time
// targets"): how many idle runners a variant keeps warm so that 95 % of its
// jobs start within the target, sized from the jobs that arrived recently and
// from how long its runners took to come online. Pure: the caller passes the
// time (the manager's steady clock) and what it observed.
//
// The rule. A job that finds an idle runner starts at once; one that finds
// none waits for the runner its arrival creates. With k warm runners and
// every job replaced as it takes one (the set's demand creates a runner per
// assigned job), job n gets the runner created for job n - k, online S after
// that job arrived (S: the start-up time). It waits longer than the target T
// exactly when the k jobs before it all arrived within the S - T seconds
// before it. For Poisson arrivals at rate λ that count is Poisson(λ·(S - T)),
// so P(wait > T) <= 5 % takes k = (the 95th percentile of Poisson(λ·(S - T)))
// + 1, and no warm runner at all when S <= T (a cold start is fast enough) or
// when no job came in the window (demand stopped: the pool drains to
// minRunners). Start-ups vary (a cached image or not, a node with room or
// not), and a job's runner takes any of them: P(wait > T) is the average of
// P(Poisson(λ·(S_i - T)) >= k) over the start-ups S_i observed, and k the
// smallest count that keeps the average within 5 %. Sizing every job for the
// slowest start-ups instead (the p95 of S) keeps runners warm for waits that
// nineteen jobs in twenty do not have. Arrivals need not be Poisson: once the
// window holds enough of them, the same count replayed on them (how many
// arrivals had k others within S - T before them) keeps the lower count when
// they come more evenly (warm_runners_replayed). When the variant has no recent start-ups to size from (a new
// set, a new manager, a morning after the night's nodes went), a runner that
// has been starting for A seconds shows S >= A: the rule sizes from that
// lower bound, growing as the wait does, rather than from nothing or from
// start-ups that no longer hold. λ is the higher of two sliding windows' rates (10 and 2
// minutes): a peak is met within a minute or two, and the pool shrinks only
// once it has left the long window.
//
// The 5 % is a budget over the window, not a share at each moment: when
// the jobs that started in the window already waited past the target (a
// cold morning's first jobs, before any node), the jobs still to come get a
// smaller share, so that those of the last window and the next one together
// stay within 5 % (remaining_wait_allowance). Bounded, as an operator would
// want it: never below a fifth of the 5 % (the count of the 99th percentile,
// not of the waits observed), so one bad minute never asks for a panic
// count; the waits it repays were mostly start-ups no warm pool could have
// covered then (no node, no image), and each leaves the window after it.
// Never above the 5 % either: an unspent budget is not spent, because the
// waits counted are of jobs that started, not of those waiting now (a surge
// shows late), and the next cold start would find the budget gone. The
// total stays within maxRunners as always.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace octorun::model {

// The nearest-rank 95th percentile: the smallest sample at least 95 % of the
// samples do not exceed (nullopt: none). The one percentile of the manager's
// decisions (start-up deadlines, start-time targets).
std::optional<std::int64_t> p95(const std::deque<std::int64_t>& seconds);

// The smallest n with P(N <= n) >= p for N ~ Poisson(mean); 0 for a mean <= 0.
// Exact (summed from the mode outwards, so large means do not underflow).
std::int64_t poisson_quantile(double mean, double p);

// P(N >= k) for N ~ Poisson(mean): 1 for k <= 0, 0 for a mean <= 0. Summed
// from k in the direction the terms shrink, so neither tail underflows.
double poisson_tail(double mean, std::int64_t k);

// The smallest k with the average over `startups` of P(Poisson(rate·(S -
// target)) >= k) at most 1 - quantile, a start-up S within the target
// counting 0 (a cold start is fast enough); 0 for no start-ups.
std::int64_t warm_runners_for(const std::vector<std::int64_t>& startups, double rate, std::int64_t target,
                              double quantile);

// The same count replayed on the arrivals observed rather than assumed
// Poisson: for each start-up S over the target, the share of `arrivals`
// (seconds, ascending) that had at least k arrivals before them within the
// last (S - target) * scale seconds, counted only for arrivals with that much
// observed before them (from `observed_from` on), and taken one wait higher
// than observed (the share of waits among n replayed arrivals as (w + 1) /
// (n + 1)), so that a few arrivals never show a tail thinner than they can
// judge. The smallest k up to `at_most` whose average over `startups` is
// within 1 - quantile (at_most when none is); nullopt when some start-up
// over the target has fewer than `min_replayed` arrivals to replay.
std::optional<std::int64_t> warm_runners_replayed(const std::vector<double>& arrivals, double observed_from,
                                                  const std::vector<std::int64_t>& startups, double scale,
                                                  std::int64_t target, double quantile, std::int64_t at_most,
                                                  std::size_t min_replayed);

// The share of the jobs still to come that may wait past the target, so
// that the `started` jobs of the window (`waited` of them past the target)
// and the `expected` arrivals of the next window together keep within
// `allowance`: (allowance·(started + expected) − waited) / expected, within
// min_share·allowance .. allowance (the allowance itself when no arrival is
// expected).
double remaining_wait_allowance(std::int64_t started, std::int64_t waited, double expected, double allowance,
                                double min_share);

// spec.startTimeTarget.p95Seconds: within these bounds (schema and webhook).
inline constexpr std::int32_t min_start_time_target_seconds = 1;
inline constexpr std::int32_t max_start_time_target_seconds = 3600;

using steady_time = std::chrono::steady_clock::time_point;

struct start_time_rule {
  // The arrivals the rate is taken from, and the job starts the observed p95
  // is taken from: the last `window`. Long enough that a few jobs an hour
  // still count; short enough that the pool drains soon after demand stops.
  std::chrono::steady_clock::duration window = std::chrono::minutes(10);
  // Rising demand is caught sooner: the rate is the higher of the window's
  // and this shorter one's, so a peak is met within a few minutes of its
  // start and forgotten only once it has left the whole window.
  std::chrono::steady_clock::duration short_window = std::chrono::minutes(2);
  // A set observed for less than the window (a new leader, a new set) takes
  // its rate over what it observed, but over no less than this: two jobs in
  // its first second are not a rate of two a second.
  std::chrono::steady_clock::duration min_span = std::chrono::minutes(1);
  // The share of jobs that must start within the target.
  double quantile = 0.95;
  // Of the allowance (1 - quantile), the share the jobs still to come keep
  // however many waits the window's jobs spent (remaining_wait_allowance):
  // the budget tightens the pool to the 99th percentile at most. 1: no
  // budget, each moment within the allowance.
  double min_allowance_share = 0.2;
  // Per variant: the memory a burst can take is bounded.
  std::size_t max_kept = 10'000;
  // Arrivals more regular than Poisson (jobs spread over the hour rather
  // than clustered) need fewer warm runners for the same share: the count
  // replayed on the window's arrivals (warm_runners_replayed) is kept when
  // it is lower, once this many arrivals can be replayed. Never higher: a
  // burst is no rate to size from (its count would hold the burst's size
  // warm for the whole window).
  std::size_t min_replayed = 50;
  // While a start-up bound from a starting runner sizes the pool, the set
  // plans again this often: the bound grows as the runner keeps starting.
  std::chrono::steady_clock::duration starting_recheck = std::chrono::seconds(5);
};

// What a set observed of one variant's jobs, the newest within the window.
class start_time_observations {
 public:
  // A job seen for the first time (JobAvailable, JobAssigned, a queued
  // delivery, or a start of a job never seen queued): false when `job` was
  // noted already (the same job through several messages counts once).
  bool add_arrival(std::int64_t job, steady_time at, const start_time_rule& rule = {});
  // A job's queued -> started time, heard `at`; once per job.
  bool add_job_start(std::int64_t job, std::int64_t seconds, steady_time at,
                     const start_time_rule& rule = {});
  // Forgets what was noted at or before `horizon` (now less the window).
  void forget_before(steady_time horizon);

  const std::deque<std::pair<steady_time, std::int64_t>>& arrivals() const { return arrivals_; }
  // (heard at, seconds), oldest first.
  const std::deque<std::pair<steady_time, std::int64_t>>& job_starts() const { return starts_; }
  bool empty() const { return arrivals_.empty() && starts_.empty(); }

 private:
  std::deque<std::pair<steady_time, std::int64_t>> arrivals_;  // (at, job id)
  std::set<std::int64_t> arrived_;
  std::deque<std::pair<steady_time, std::int64_t>> starts_;  // (at, seconds)
  std::deque<std::int64_t> started_ids_;
  std::set<std::int64_t> started_;
};

struct start_time_facts {
  std::int32_t target_p95_seconds = 0;
  steady_time now{};
  steady_time observing_since{};                      // when the set started observing jobs
  const start_time_observations* observed = nullptr;  // null: nothing observed
  // The p95 of the variant's recent start-ups (creation to online), as the
  // start-up deadline takes it (runnerset/startup_deadline.hpp); none: none seen.
  std::optional<std::int64_t> startup_p95;
  // The start-ups that p95 was taken from, which the pool is sized over
  // (empty: sized from startup_p95 alone).
  std::vector<std::int64_t> startups;
  // While the variant's start-ups are too few or too old to size from: how long its
  // longest-starting runner (not yet online, not a stuck start) has been
  // starting. A start-up is at least that; none: no runner is starting.
  std::optional<std::int64_t> starting_for;
  std::int32_t min_runners = 0;
  std::int32_t max_runners = 0;
  std::int64_t assigned_jobs = 0;  // the demand now: the warm runners come on top of it
};

enum class start_time_verdict {
  met,                  // True: the observed p95 is within the target and the warm runners fit
  no_recent_jobs,       // True: no job came in the window: nothing to keep warm
  startup_unobserved,   // Unknown: jobs come, but no runner came online yet to size from
  missed,               // False: the observed p95 is over the target though the warm runners fit
  max_runners_too_low,  // False: the warm runners it needs do not fit under maxRunners beside demand
};
std::string_view reason_of(start_time_verdict v);  // the condition's reason
std::string_view status_of(start_time_verdict v);  // True, False or Unknown
int severity(start_time_verdict v);                // worse is higher

struct start_time_sizing {
  std::int32_t target_p95_seconds = 0;  // as given
  // The idle runners to keep on top of demand: max(minRunners, wanted),
  // within minRunners..maxRunners (the set's count clamps the total).
  std::int32_t idle_buffer = 0;
  std::int32_t wanted = 0;                   // the warm runners the rule asks for (0: none)
  std::int64_t arrivals = 0;                 // jobs that came in the window
  std::int64_t recent_arrivals = 0;          // of them, in the short window
  double arrivals_per_minute = 0;            // the rate the rule used
  std::optional<std::int64_t> observed_p95;  // queued -> started of the jobs started in the window
  std::int64_t started = 0;                  // jobs started in the window
  std::int64_t waited = 0;                   // of them, past the target
  // The share of the coming jobs the pool was sized to let wait past the
  // target: 1 - quantile, less what the window's waits spent.
  double wait_allowance = 0;
  std::optional<std::int64_t> startup_p95;  // as given
  // The start-up the rule sized from: startup_p95, or the starting runner's
  // wait when that is longer (none: neither).
  std::optional<std::int64_t> sized_startup;
  start_time_verdict verdict = start_time_verdict::no_recent_jobs;
  // When the oldest arrival leaves the window (the count changes then), or,
  // while a starting runner's wait sizes the pool, when to look again.
  std::optional<steady_time> next_change;
  bool operator==(const start_time_sizing&) const = default;
};

start_time_sizing size_warm_runners(const start_time_facts& f, const start_time_rule& rule = {});

// ---- warm nodes (docs/scaling.md "Warm nodes") ----
// Runner-shaped chunks of spare node capacity asked of the node autoscaler
// (a CapacityBuffer), sized from the same target and arrival rate. Each job
// makes the set create a runner, which takes a free chunk; the autoscaler
// replaces a taken chunk with a node ready N later (N: the node start-up).
// With c chunks the runner made for a job waits for a node exactly when the
// c runners before it were all made within the last N seconds: Poisson(λ·N)
// for Poisson arrivals, so c = (its 95th percentile) + 1. None when no job
// came in the window, when no pod waited for a node yet (nothing shows that
// nodes are added), or when a cold start already meets the target.

struct node_startup_rule {
  // A pod that finds room on a node is scheduled within seconds; a longer
  // wait was a wait for a node (the autoscaler's batching, an instance, its
  // registration). Only those are samples: once warm nodes work nearly every
  // pod finds room, and counting those would switch warm nodes off again.
  std::int64_t min_wait_seconds = 5;
  // The newest waits kept per variant.
  std::size_t window = 50;
};

// A variant's recent waits for a node (its Runner created -> its pod
// scheduled), oldest first. The node autoscalers report no node start-up;
// the set observes it from its own runner pods.
struct node_startup_samples {
  std::deque<std::int64_t> seconds;
  // Adds the wait when it was a wait for a node (false: the pod found room).
  bool add(std::int64_t wait_seconds, const node_startup_rule& rule = {});
};

struct warm_node_facts {
  const start_time_sizing* runners = nullptr;    // the warm-runner sizing of the same target
  std::optional<std::int64_t> node_startup_p95;  // of node_startup_samples; none: no pod waited
  std::int32_t max_runners = 0;
  std::int64_t runners_now = 0;  // the variant's runners, with those it is about to create
};

struct warm_node_sizing {
  std::int32_t chunks = 0;  // asked of the node autoscaler
  std::int32_t wanted = 0;  // the rule's count before maxRunners bounds it
  std::optional<std::int64_t> node_startup_p95;
  bool operator==(const warm_node_sizing&) const = default;
};

// Bounded by maxRunners less the runners: a chunk no runner may take is cost.
warm_node_sizing size_warm_nodes(const warm_node_facts& f, const start_time_rule& rule = {});

// For people: what the sizing saw and decided (the condition's message).
// Counts, not rates, so that it changes only when what it counts does.
std::string describe(const start_time_sizing& s, const start_time_rule& rule = {});

}  // namespace octorun::model
