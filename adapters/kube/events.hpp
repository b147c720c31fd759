// Kubernetes Events (events.k8s.io/v1) with spam limiting. The decision of
// what to write (create, update the series count, or nothing) is pure and
// clock-injected; event_recorder applies it with a blocking client.
//
// Policy (after client-go tools/record and tools/events):
//  - a series is (regarding object, reason, action, type, note), as
//    client-go's record.EventCorrelator keys on the message: the first
//    occurrence creates an Event; repeats only count, and the count is
//    written to the Event's `series` at most once per `series_interval`.
//    A different note is a different decision ("Scaled up from 0 to 5",
//    later "from 0 to 7") and gets its own Event, never folded into the
//    first one's series under the first one's note;
//  - every write per (regarding object, type) takes a token from a bucket of
//    `burst` refilled one per `refill`: beyond that, writes are dropped.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>

#include "adapters/kube/api.hpp"
#include "adapters/kube/object.hpp"
#include "common/expected.hpp"

namespace octorun::kube {

class client;

struct object_ref {
  std::string api_version, kind, namespace_, name, uid;
};
// apiVersion/kind/namespace/name/uid of an object.
object_ref reference_to(const object& o);

struct event_spec {
  object_ref regarding;
  std::string type = "Normal";  // Normal | Warning
  std::string reason;           // CamelCase why, <= 128
  std::string action;           // machine-readable what, <= 128
  std::string note;             // human text, cut to 1 KiB
};

class event_spam_filter {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  enum class action { create, update_series, drop };
  struct decision {
    action what = action::drop;
    int32_t count = 1;       // occurrences in the series so far
    std::string event_name;  // update_series: the Event to patch
  };

  explicit event_spam_filter(int burst = 25, std::chrono::seconds refill = std::chrono::seconds(300),
                             std::chrono::seconds series_interval = std::chrono::seconds(30),
                             std::chrono::seconds series_expiry = std::chrono::seconds(360),
                             size_t max_series = 4096);

  decision observe(const event_spec& e, time_point now);
  // After a successful create: later repeats of the series update `name`.
  void created(const event_spec& e, std::string name, time_point now);

 private:
  struct series {
    std::string name;
    int32_t count = 0;
    time_point last_seen{};
    time_point last_write{};
  };
  struct bucket {
    double tokens = 0;
    time_point last{};
  };
  // Keys are 64-bit digests of the strings that name a series (the object,
  // reason, action, type, note) and a spam bucket (the object, type): tens of
  // thousands of Runners each have both, and a digest is 8 bytes where the
  // strings were ~100. Two series sharing a digest (about 2^-64 a pair) would
  // only merge their counts.
  bool take(std::uint64_t key, time_point now);
  static std::uint64_t series_key(const event_spec& e);
  static std::uint64_t spam_key(const event_spec& e);

  int burst_;
  std::chrono::seconds refill_, series_interval_, series_expiry_;
  size_t max_series_;
  std::unordered_map<std::uint64_t, series> series_;
  std::unordered_map<std::uint64_t, bucket> buckets_;
};

// The Event body. `name` is `<regarding.name>.<hex nanoseconds>` by default.
std::string event_body(const event_spec& e, const std::string& name, const std::string& reporting_controller,
                       const std::string& reporting_instance, std::chrono::system_clock::time_point now);
// The merge patch recording a series of `count` occurrences.
std::string event_series_patch(int32_t count, std::chrono::system_clock::time_point now);
std::string event_name(const object_ref& regarding, std::chrono::system_clock::time_point now);

// Blocking recorder (detached workers only). Drops are not errors.
class event_recorder {
 public:
  event_recorder(client& api, std::string reporting_controller, std::string reporting_instance,
                 event_spam_filter filter = event_spam_filter{});
  expected<event_spam_filter::action, api_error> record(const event_spec& e);

 private:
  client& api_;
  std::string controller_, instance_;
  event_spam_filter filter_;
};

}  // namespace octorun::kube
