#include "adapters/kube/politeness.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "common/backoff.hpp"

namespace octorun::kube {

token_bucket::token_bucket(double qps, int burst, clock_fn now)
    : qps_(qps), burst_(std::max(burst, 1)), now_(std::move(now)), tokens_(burst_), last_(now_()) {}

void token_bucket::refill(steady_clock::time_point now) {
  if (now <= last_) return;
  double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

std::chrono::nanoseconds token_bucket::reserve() {
  if (qps_ <= 0) return std::chrono::nanoseconds(0);
  std::lock_guard lock(mu_);
  refill(now_());
  tokens_ -= 1.0;  // may go negative: a debt later callers queue behind
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(static_cast<int64_t>(std::ceil(-tokens_ / qps_ * 1e9)));
}

bool token_bucket::try_take() {
  if (qps_ <= 0) return true;
  std::lock_guard lock(mu_);
  refill(now_());
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

void sleep_unless(const std::atomic<bool>* stop, std::chrono::milliseconds d) {
  auto until = steady_clock::now() + d;
  while (stop == nullptr || !stop->load()) {
    auto left = until - steady_clock::now();
    if (left <= steady_clock::duration::zero()) return;
    std::this_thread::sleep_for(std::min<steady_clock::duration>(left, std::chrono::milliseconds(20)));
  }
}

void token_bucket::acquire() {
  auto wait = reserve();
  if (wait.count() > 0) std::this_thread::sleep_for(wait);
}

backoff::backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, double factor,
                 double jitter, uint64_t seed)
    : initial_(initial), max_(max), factor_(factor), jitter_(std::clamp(jitter, 0.0, 1.0)), rng_(seed) {}

std::chrono::milliseconds backoff::next() {
  using std::chrono::milliseconds;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto wait = exponential_backoff<milliseconds>{initial_, max_, factor_, jitter_below(jitter_)}.delay(
      attempt_, u(rng_));
  // Stop counting once the cap is reached (reset() starts over).
  if (exponential_backoff<milliseconds>{initial_, max_, factor_}.delay(attempt_) < max_) ++attempt_;
  return wait;
}

}  // namespace octorun::kube
