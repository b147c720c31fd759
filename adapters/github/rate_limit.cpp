#include "adapters/github/rate_limit.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>

#include "common/backoff.hpp"

namespace octorun::github {
namespace {

std::optional<std::int64_t> to_int(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

rate_limit_info parse_rate_limit(const http::response& r) {
  rate_limit_info info;
  auto get = [&](std::string_view name, std::int64_t& out) {
    if (auto v = to_int(r.header_value(name))) {
      out = *v;
      info.present = true;
    }
  };
  get("x-ratelimit-limit", info.limit);
  get("x-ratelimit-remaining", info.remaining);
  get("x-ratelimit-used", info.used);
  get("x-ratelimit-reset", info.reset_epoch);
  info.resource = std::string(r.header_value("x-ratelimit-resource"));
  return info;
}

bool is_rate_limit_response(const http::response& r) {
  if (r.status == 429) return true;
  if (r.status != 403) return false;
  if (!r.header_value("retry-after").empty()) return true;
  if (r.header_value("x-ratelimit-remaining") == "0") return true;
  return r.body.find("rate limit") != std::string::npos;  // "You have exceeded a secondary rate limit"
}

retry_decision decide_retry(const retry_policy& p, int attempt, const http::response* r,
                            std::int64_t now_epoch, double jitter) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  http::attempt_outcome outcome;
  outcome.transport_error = r == nullptr;
  if (r != nullptr) {
    outcome.status = r->status;
    if (is_rate_limit_response(*r)) {
      auto info = parse_rate_limit(*r);
      if (auto after = http::retry_after_seconds(r->header_value("retry-after"), now_epoch))
        outcome.advised_wait = std::chrono::duration_cast<milliseconds>(seconds(*after));
      else if (info.remaining == 0 && info.reset_epoch > 0)
        outcome.advised_wait = std::chrono::duration_cast<milliseconds>(
            seconds(std::max<std::int64_t>(0, info.reset_epoch - now_epoch)));
      else  // a secondary limit without headers: at least secondary_min, doubling, jittered upwards
        outcome.advised_wait =
            exponential_backoff<milliseconds>{p.secondary_min, p.secondary_min * 16}.delay(attempt) +
            http::backoff_delay(p, 0, jitter);
    }
  }
  return http::decide_retry(p, attempt, outcome, jitter);
}

void rate_limit_budget::record(const rate_limit_info& info) {
  if (!info.present) return;
  if (info.limit >= 0) limit.store(info.limit, std::memory_order_relaxed);
  if (info.remaining >= 0) remaining.store(info.remaining, std::memory_order_relaxed);
  if (info.reset_epoch > 0) reset_epoch.store(info.reset_epoch, std::memory_order_relaxed);
}

}  // namespace octorun::github
