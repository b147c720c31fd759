// The workflow_job webhook as pure functions: payload -> job message, and a
// TTL-bounded set of delivery ids for deduplication (GitHub redelivers with the
// same X-GitHub-Delivery).
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
// usable workflow_job -> an error message (the intake answers 400).
expected<std::optional<messages::job_message>, std::string> parse_workflow_job(std::string_view body);

// Remembers delivery ids for `ttl`, at most `capacity` of them (oldest dropped first).
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

}  // namespace octorun::github
