// The workflow_job webhook as pure functions: payload -> job message, a
// TTL-bounded set of delivery ids for deduplication (GitHub redelivers with the
// same X-GitHub-Delivery), and the rule that turns away a replayed body (the
// signature covers the body only, not the delivery id).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/expected.hpp"
#include "common/hash.hpp"
#include "messages/jobs.hpp"

namespace octorun::github {

// queued -> job_available, in_progress -> job_started, completed -> job_completed;
// waiting (approval pending) -> nullopt. Malformed JSON or a payload without a
// usable workflow_job, or without the repository's full_name and html_url
// (which say the job's repository and server), or with an installation that
// is not an object with a positive id -> an error message (the intake
// answers 400).
expected<std::optional<messages::job_message>, std::string> parse_workflow_job(std::string_view body);

// Which secret a delivery to `path` is verified with, and where its demand
// may go: the intake's own path (`base`, the manager's secret, every set),
// a RunnerClass's (`base`/classes/NAME, that class's secret, that class's
// sets), or neither (404, before the body is read).
struct intake_path {
  enum class kind { platform, runner_class, unknown };
  kind which = kind::unknown;
  std::string class_name;  // runner_class only: a name a RunnerClass may have
  bool operator==(const intake_path&) const = default;
};
intake_path intake_path_of(std::string_view path, std::string_view base);
inline constexpr std::string_view class_paths = "/classes/";  // after the intake's path

// Remembers ids for `ttl`, at most `capacity` of them (oldest dropped
// first): delivery ids, and the job actions of job_replays.
class delivery_dedupe {
 public:
  using clock = std::chrono::steady_clock;
  delivery_dedupe(std::chrono::seconds ttl, std::size_t capacity) : ttl_(ttl), capacity_(capacity) {}

  // True the first time `id` is seen within the TTL; false for a duplicate.
  bool first_seen(const std::string& id, clock::time_point now);
  std::size_t size() const { return expiry_.size(); }

 private:
  void expire(clock::time_point now);
  std::chrono::seconds ttl_;
  std::size_t capacity_;
  // By the id's 128-bit digest: a delivery id (a GUID) costs 16 bytes, not
  // two strings — the set holds up to `capacity` of them for a day.
  std::unordered_map<digest128, clock::time_point, digest128_hash> expiry_;
  std::deque<std::pair<clock::time_point, digest128>> order_;
};

// A replayed delivery: the same signed body sent again under a new
// X-GitHub-Delivery id. A job's webhook actions only move forward, so each
// (job, action) is taken once within the window; a queued after the job's
// in_progress or completed was taken is not taken; and a queued whose job
// was queued longer ago than the window is refused outright (a self-hosted
// runner's job waits at most 24 hours on GitHub's queue, so such a body is a
// capture, and the window outlives what the dedupe could have forgotten).
class job_replays {
 public:
  using clock = delivery_dedupe::clock;
  job_replays(std::chrono::seconds window, std::size_t capacity) : window_(window), seen_(window, capacity) {}

  // Why `m` is a replay, for the log; nullopt when it is taken (and
  // remembered). `wall_now`: seconds since the epoch (GitHub's created_at).
  std::optional<std::string> replayed(const messages::job_message& m, clock::time_point now,
                                      std::int64_t wall_now);
  std::size_t size() const { return seen_.size(); }

 private:
  std::chrono::seconds window_;
  delivery_dedupe seen_;  // "<job id> <action>"
};

}  // namespace octorun::github
