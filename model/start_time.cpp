#include "model/start_time.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

namespace octorun::model {

std::optional<std::int64_t> p95(const std::deque<std::int64_t>& seconds) {
  if (seconds.empty()) return std::nullopt;
  // Nearest rank: the smallest value at least 95 % of the samples do not
  // exceed. Selected, not sorted: a set with a target asks on every plan,
  // over up to a window's worth of samples.
  std::vector<std::int64_t> samples(seconds.begin(), seconds.end());
  const std::size_t rank = (samples.size() * 95 + 99) / 100;
  const auto at = samples.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
  std::nth_element(samples.begin(), at, samples.end());
  return *at;
}

std::int64_t poisson_quantile(double mean, double p) {
  if (!(mean > 0)) return 0;
  // (Bounded: no variant holds more runners than this, and each tail below
  // stays a few thousand terms.)
  mean = std::min(mean, 1e6);
  const double over = 1.0 - std::clamp(p, 0.0, 1.0 - 1e-9);
  // The smallest n with P(N <= n) >= p, that is P(N >= n + 1) <= 1 - p: the
  // tail falls as n grows, so double past it, then halve down to it.
  std::int64_t lo = 0, hi = 1;
  while (poisson_tail(mean, hi + 1) > over) hi *= 2;
  while (lo < hi) {
    const auto mid = lo + (hi - lo) / 2;
    if (poisson_tail(mean, mid + 1) <= over)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

double poisson_tail(double mean, std::int64_t k) {
  if (k <= 0) return 1;
  if (!(mean > 0)) return 0;
  mean = std::min(mean, 1e6);  // as poisson_quantile bounds it
  const auto log_pmf = [&](std::int64_t n) {
    return -mean + static_cast<double>(n) * std::log(mean) - std::lgamma(static_cast<double>(n) + 1);
  };
  if (static_cast<double>(k) > mean) {
    // The upper tail, upwards from k: each term smaller than the one before.
    double term = std::exp(log_pmf(k)), sum = 0;
    for (std::int64_t n = k; term > 0 && term >= sum * 1e-17; ++n) {
      sum += term;
      term *= mean / static_cast<double>(n + 1);
    }
    return std::min(1.0, sum);
  }
  // The lower part, P(N < k), downwards from k - 1 (k <= mean: each term
  // smaller than the one above it).
  double term = std::exp(log_pmf(k - 1)), below = 0;
  for (std::int64_t n = k - 1; n >= 0 && term > 0 && term >= below * 1e-17; --n) {
    below += term;
    term *= static_cast<double>(n) / mean;
  }
  return std::clamp(1.0 - below, 0.0, 1.0);
}

std::int64_t warm_runners_for(const std::vector<std::int64_t>& startups, double rate, std::int64_t target,
                              double quantile) {
  if (startups.empty()) return 0;
  const double allowed = 1.0 - std::clamp(quantile, 0.0, 1.0);
  const auto over_target = [&](std::int64_t k) {  // the average P(wait > target) with k warm
    double sum = 0;
    for (auto s : startups)
      if (s > target) sum += poisson_tail(rate * static_cast<double>(s - target), k);
    return sum / static_cast<double>(startups.size());
  };
  // The count the slowest start-up alone asks for keeps every term within
  // the allowance, so the average too: search below it. The average falls
  // as k grows.
  const auto slowest = *std::max_element(startups.begin(), startups.end());
  std::int64_t lo = 0;
  std::int64_t hi =
      slowest > target ? poisson_quantile(rate * static_cast<double>(slowest - target), quantile) + 1 : 0;
  while (lo < hi) {
    const auto mid = lo + (hi - lo) / 2;
    if (over_target(mid) <= allowed + 1e-12)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

std::optional<std::int64_t> warm_runners_replayed(const std::vector<double>& arrivals, double observed_from,
                                                  const std::vector<std::int64_t>& startups, double scale,
                                                  std::int64_t target, double quantile, std::int64_t at_most,
                                                  std::size_t min_replayed) {
  at_most = std::max<std::int64_t>(0, at_most);
  if (startups.empty() || at_most == 0) return at_most;
  const double allowed = 1.0 - std::clamp(quantile, 0.0, 1.0);
  std::map<std::int64_t, std::size_t> over;  // start-ups over the target, by value
  for (auto s : startups)
    if (s > target) ++over[s];
  if (over.empty()) return 0;
  // For each start-up, how many replayed arrivals had at least k before them
  // in its span (k up to at_most: more counts as at_most).
  std::vector<std::pair<double, std::vector<double>>> tails;  // (weight, share waiting with k warm)
  for (const auto& [s, weight] : over) {
    const double span = static_cast<double>(s - target) * std::max(scale, 0.0);
    std::vector<std::size_t> with(static_cast<std::size_t>(at_most) + 1, 0);
    std::size_t replayed = 0, first = 0;
    for (std::size_t n = 0; n < arrivals.size(); ++n) {
      if (arrivals[n] - span < observed_from) continue;  // what came before it was not observed
      while (first < n && arrivals[first] <= arrivals[n] - span) ++first;
      ++with[std::min<std::size_t>(n - first, static_cast<std::size_t>(at_most))];
      ++replayed;
    }
    if (replayed < std::max<std::size_t>(1, min_replayed)) return std::nullopt;
    std::vector<double> tail(with.size());
    std::size_t at_least = 0;  // replayed arrivals with at least k before them
    for (auto k = with.size(); k-- > 0;) {
      at_least += with[k];
      tail[k] = k == 0 ? 1.0 : static_cast<double>(at_least + 1) / static_cast<double>(replayed + 1);
    }
    tails.emplace_back(static_cast<double>(weight), std::move(tail));
  }
  for (std::int64_t k = 0; k < at_most; ++k) {
    double sum = 0;
    for (const auto& [weight, tail] : tails) sum += weight * tail[static_cast<std::size_t>(k)];
    if (sum / static_cast<double>(startups.size()) <= allowed + 1e-12) return k;
  }
  return at_most;
}

double remaining_wait_allowance(std::int64_t started, std::int64_t waited, double expected, double allowance,
                                double min_share) {
  allowance = std::clamp(allowance, 0.0, 1.0);
  if (!(expected > 0)) return allowance;
  const double floor = allowance * std::clamp(min_share, 0.0, 1.0);
  const double left = allowance * (static_cast<double>(std::max<std::int64_t>(0, started)) + expected) -
                      static_cast<double>(std::max<std::int64_t>(0, waited));
  return std::clamp(left / expected, floor, allowance);
}

bool start_time_observations::add_arrival(std::int64_t job, steady_time at, const start_time_rule& rule) {
  if (!arrived_.insert(job).second) return false;
  arrivals_.emplace_back(at, job);
  while (arrivals_.size() > std::max<std::size_t>(1, rule.max_kept)) {
    arrived_.erase(arrivals_.front().second);
    arrivals_.pop_front();
  }
  return true;
}

bool start_time_observations::add_job_start(std::int64_t job, std::int64_t seconds, steady_time at,
                                            const start_time_rule& rule) {
  if (!started_.insert(job).second) return false;
  starts_.emplace_back(at, std::max<std::int64_t>(0, seconds));
  started_ids_.push_back(job);
  while (starts_.size() > std::max<std::size_t>(1, rule.max_kept)) {
    started_.erase(started_ids_.front());
    started_ids_.pop_front();
    starts_.pop_front();
  }
  return true;
}

void start_time_observations::forget_before(steady_time horizon) {
  while (!arrivals_.empty() && arrivals_.front().first <= horizon) {
    arrived_.erase(arrivals_.front().second);
    arrivals_.pop_front();
  }
  while (!starts_.empty() && starts_.front().first <= horizon) {
    started_.erase(started_ids_.front());
    started_ids_.pop_front();
    starts_.pop_front();
  }
}

std::string_view reason_of(start_time_verdict v) {
  switch (v) {
    case start_time_verdict::met:
      return "TargetMet";
    case start_time_verdict::no_recent_jobs:
      return "NoRecentJobs";
    case start_time_verdict::startup_unobserved:
      return "StartUpUnobserved";
    case start_time_verdict::missed:
      return "TargetMissed";
    case start_time_verdict::max_runners_too_low:
      return "MaxRunnersTooLow";
  }
  return "TargetMet";
}

std::string_view status_of(start_time_verdict v) {
  switch (v) {
    case start_time_verdict::met:
    case start_time_verdict::no_recent_jobs:
      return "True";
    case start_time_verdict::startup_unobserved:
      return "Unknown";
    case start_time_verdict::missed:
    case start_time_verdict::max_runners_too_low:
      return "False";
  }
  return "Unknown";
}

int severity(start_time_verdict v) { return static_cast<int>(v); }

start_time_sizing size_warm_runners(const start_time_facts& f, const start_time_rule& rule) {
  start_time_sizing s;
  s.target_p95_seconds = f.target_p95_seconds;
  s.startup_p95 = f.startup_p95;
  const auto horizon = f.now - rule.window;
  std::deque<std::int64_t> starts;
  auto first_in_window = [&](steady_time at) {
    if (!s.next_change || at + rule.window < *s.next_change) s.next_change = at + rule.window;
  };
  const auto short_window = std::min(rule.short_window, rule.window);
  std::int64_t recent = 0;  // in the short window
  if (f.observed != nullptr) {
    for (const auto& [at, job] : f.observed->arrivals())
      if (at > horizon && at <= f.now) {
        if (s.arrivals == 0) first_in_window(at);
        ++s.arrivals;
        if (at > f.now - short_window) ++recent;
      }
    for (const auto& [at, seconds] : f.observed->job_starts())
      if (at > horizon && at <= f.now) {
        if (starts.empty()) first_in_window(at);
        starts.push_back(seconds);
      }
  }
  s.observed_p95 = p95(starts);
  s.recent_arrivals = recent;
  const std::int64_t target = std::max<std::int32_t>(0, f.target_p95_seconds);
  s.started = static_cast<std::int64_t>(starts.size());
  s.waited = std::count_if(starts.begin(), starts.end(), [&](std::int64_t w) { return w > target; });

  // The rate over each window, or over what was observed of it (no less
  // than min_span); the higher one counts.
  const auto observed_for = f.now - f.observing_since;
  auto rate_over = [&](std::chrono::steady_clock::duration window, std::int64_t arrivals) {
    const auto min_span = std::min(rule.min_span, window);
    const auto span = std::clamp(observed_for, min_span, window);
    return static_cast<double>(arrivals) / std::max(1e-3, std::chrono::duration<double>(span).count());
  };
  const double rate = std::max(rate_over(rule.window, s.arrivals), rate_over(short_window, recent));
  s.arrivals_per_minute = rate * 60;
  // What the window's waits left of the budget for the jobs of the next
  // window, at the rate the pool is sized for.
  s.wait_allowance =
      remaining_wait_allowance(s.started, s.waited, rate * std::chrono::duration<double>(rule.window).count(),
                               1.0 - std::clamp(rule.quantile, 0.0, 1.0), rule.min_allowance_share);
  const double quantile = 1.0 - s.wait_allowance;

  const std::int64_t lo = std::max<std::int32_t>(0, f.min_runners);
  const std::int64_t hi = std::max<std::int64_t>(lo, f.max_runners);
  std::int64_t wanted = 0;
  s.sized_startup = f.startup_p95;
  const bool bound_from_starting = f.starting_for && (!f.startup_p95 || *f.starting_for > *f.startup_p95);
  if (bound_from_starting) s.sized_startup = f.starting_for;
  if (s.arrivals > 0 && s.sized_startup) {
    // A starting runner's bound is one start-up, known only from below;
    // else the observed start-ups each count.
    const std::vector<std::int64_t> bound{*s.sized_startup};
    const auto& startups = bound_from_starting || f.startups.empty() ? bound : f.startups;
    wanted = warm_runners_for(startups, rate, target, quantile);
    // The same count on the arrivals themselves, when there are enough to
    // replay: fewer when they come more evenly than Poisson. Replayed at
    // the rate the count uses (a rising rate stretches the spans).
    const double window_rate = rate_over(rule.window, s.arrivals);
    if (!bound_from_starting && wanted > 0 && window_rate > 0 &&
        s.arrivals >= static_cast<std::int64_t>(rule.min_replayed)) {
      std::vector<double> times;
      for (const auto& [at, job] : f.observed->arrivals())
        if (at > horizon && at <= f.now) times.push_back(std::chrono::duration<double>(at - f.now).count());
      std::sort(times.begin(), times.end());
      const auto from = std::chrono::duration<double>(std::max(horizon, f.observing_since) - f.now).count();
      if (const auto replayed = warm_runners_replayed(times, from, startups, rate / window_rate, target,
                                                      quantile, wanted, rule.min_replayed))
        wanted = *replayed;
    }
  }
  // The bound grows while the runner keeps starting: look again soon.
  if (bound_from_starting && s.arrivals > 0 && wanted < hi) {
    const auto recheck =
        f.now + std::max<std::chrono::steady_clock::duration>(rule.starting_recheck, std::chrono::seconds(1));
    if (!s.next_change || recheck < *s.next_change) s.next_change = recheck;
  }
  s.wanted =
      static_cast<std::int32_t>(std::min<std::int64_t>(wanted, std::numeric_limits<std::int32_t>::max()));
  s.idle_buffer = static_cast<std::int32_t>(std::clamp<std::int64_t>(std::max(lo, wanted), lo, hi));

  const bool fits = wanted == 0 || wanted + std::max<std::int64_t>(0, f.assigned_jobs) <= hi;
  if (s.arrivals == 0 && starts.empty())
    s.verdict = start_time_verdict::no_recent_jobs;
  else if (!fits)
    s.verdict = start_time_verdict::max_runners_too_low;
  else if (s.observed_p95 && *s.observed_p95 > target)
    s.verdict = start_time_verdict::missed;
  else if (!s.observed_p95 && !f.startup_p95)
    s.verdict = start_time_verdict::startup_unobserved;
  else
    s.verdict = start_time_verdict::met;
  return s;
}

bool node_startup_samples::add(std::int64_t wait_seconds, const node_startup_rule& rule) {
  if (wait_seconds <= rule.min_wait_seconds) return false;
  seconds.push_back(wait_seconds);
  while (seconds.size() > std::max<std::size_t>(1, rule.window)) seconds.pop_front();
  return true;
}

warm_node_sizing size_warm_nodes(const warm_node_facts& f, const start_time_rule& rule) {
  warm_node_sizing w;
  w.node_startup_p95 = f.node_startup_p95;
  const auto* s = f.runners;
  if (s == nullptr || s->arrivals == 0 || !f.node_startup_p95 || *f.node_startup_p95 <= 0) return w;
  if (s->sized_startup && *s->sized_startup <= s->target_p95_seconds)
    return w;                                       // a cold start is fast enough
  const double rate = s->arrivals_per_minute / 60;  // the rate the warm runners were sized from
  const auto wanted = poisson_quantile(rate * static_cast<double>(*f.node_startup_p95), rule.quantile) + 1;
  const auto room =
      std::max<std::int64_t>(0, std::int64_t{f.max_runners} - std::max<std::int64_t>(0, f.runners_now));
  w.wanted =
      static_cast<std::int32_t>(std::min<std::int64_t>(wanted, std::numeric_limits<std::int32_t>::max()));
  w.chunks = static_cast<std::int32_t>(std::min<std::int64_t>(wanted, room));
  return w;
}

namespace {

std::string duration_text(std::chrono::steady_clock::duration d) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds >= 60 && seconds % 60 == 0) return std::to_string(seconds / 60) + " min";
  return std::to_string(seconds) + " s";
}

std::string runners(std::int64_t n) { return std::to_string(n) + (n == 1 ? " runner" : " runners"); }

}  // namespace

std::string describe(const start_time_sizing& s, const start_time_rule& rule) {
  const auto window = duration_text(rule.window);
  const auto target = std::to_string(s.target_p95_seconds) + " s";
  std::string out;
  if (s.observed_p95)
    out = "Jobs started within " + std::to_string(*s.observed_p95) +
          " s of being queued at the 95th percentile " + "over the last " + window + " (target " + target +
          ").";
  else
    out = "No job started in the last " + window + " (target " + target + ").";
  if (s.arrivals == 0)
    return out + " No job came in the last " + window + ": no runner is kept warm beyond minRunners.";
  const auto came = " " + std::to_string(s.arrivals) + (s.arrivals == 1 ? " job" : " jobs") +
                    " came in the last " + window + " (" + std::to_string(s.recent_arrivals) +
                    " in the last " + duration_text(std::min(rule.short_window, rule.window)) + ")";
  if (!s.sized_startup)
    return out + came +
           ", but no runner of the variant came online yet: warm runners are sized once one does.";
  const auto startup = std::to_string(*s.sized_startup) + " s";
  const bool from_starting = s.sized_startup != s.startup_p95;
  if (s.wanted == 0)
    return out + came +
           (from_starting
                ? "; a runner has been starting for " + startup + ", within the target so far"
                : "; runners come online within " + startup + " at the 95th percentile, within the target") +
           ": none is kept warm beyond minRunners.";
  out +=
      came +
      (from_starting
           ? "; the start-ups it knows are too few or too old to size from, and one has been starting for " +
                 startup + " (a start-up takes at least that): "
           : "; runners take " + startup + " to come online at the 95th percentile: ") +
      runners(s.wanted) + " kept warm";
  if (s.verdict == start_time_verdict::max_runners_too_low)
    return out +
           " are needed, but maxRunners leaves no room for them beside the jobs assigned now: raise "
           "maxRunners, or the target.";
  if (s.waited > 0 && s.wait_allowance < 1.0 - rule.quantile - 1e-12)
    out += " (" + std::to_string(s.waited) + " of the " + std::to_string(s.started) +
           " jobs started in the last " + window + " waited past the target: fewer of the next ones may)";
  return out + ".";
}

}  // namespace octorun::model
