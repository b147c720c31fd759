#include "adapters/kube/events.hpp"

#include <algorithm>
#include <cstdio>

#include "adapters/kube/client.hpp"
#include "common/hash.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"
#include "common/rfc3339.hpp"

namespace octorun::kube {
namespace {

std::string string_at(const object& o, const char* name) {
  return o.doc ? json::str(*o.doc, name) : std::string{};
}

void write_ref(json::writer& w, const char* key, const object_ref& r) {
  w.open(key)
      .optional("apiVersion", r.api_version)
      .optional("kind", r.kind)
      .optional("namespace", r.namespace_)
      .optional("name", r.name)
      .optional("uid", r.uid)
      .close();
}

std::string cut(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 sequence
  return s.substr(0, n);
}

}  // namespace

object_ref reference_to(const object& o) {
  return {string_at(o, "apiVersion"), string_at(o, "kind"), std::string(o.namespace_), std::string(o.name),
          std::string(o.uid)};
}

event_spam_filter::event_spam_filter(int burst, std::chrono::seconds refill,
                                     std::chrono::seconds series_interval, std::chrono::seconds series_expiry,
                                     size_t max_series)
    : burst_(std::max(burst, 1)),
      refill_(refill),
      series_interval_(series_interval),
      series_expiry_(series_expiry),
      max_series_(std::max<size_t>(max_series, 1)) {}

std::uint64_t event_spam_filter::spam_key(const event_spec& e) {
  const auto& r = e.regarding;
  return fnv1a(r.namespace_ + '\x1f' + r.name + '\x1f' + r.uid + '\x1f' + e.type);
}

std::uint64_t event_spam_filter::series_key(const event_spec& e) {
  const auto& r = e.regarding;
  return fnv1a(r.namespace_ + '\x1f' + r.name + '\x1f' + r.uid + '\x1f' + e.reason + '\x1f' + e.action +
               '\x1f' + e.type + '\x1f' + e.note);
}

bool event_spam_filter::take(std::uint64_t key, time_point now) {
  auto [it, fresh] = buckets_.try_emplace(key);
  auto& b = it->second;
  if (fresh) {
    b.tokens = burst_;
    b.last = now;
  } else if (now > b.last) {
    double elapsed = std::chrono::duration<double>(now - b.last).count();
    b.tokens = std::min<double>(burst_, b.tokens + elapsed / static_cast<double>(refill_.count()));
    b.last = now;
  }
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

event_spam_filter::decision event_spam_filter::observe(const event_spec& e, time_point now) {
  decision d;
  auto key = series_key(e);
  auto it = series_.find(key);
  if (it != series_.end() && now - it->second.last_seen > series_expiry_) {
    series_.erase(it);  // a quiet series ends; the next occurrence starts a new Event
    it = series_.end();
  }
  const auto bucket_key = spam_key(e);
  if (it == series_.end() || it->second.name.empty()) {
    // New series, or its Event was never written: create one.
    if (!take(bucket_key, now)) return d;
    d.what = action::create;
    d.count = it == series_.end() ? 1 : ++it->second.count;
    if (it != series_.end()) it->second.last_seen = now;
    return d;
  }
  auto& s = it->second;
  ++s.count;
  s.last_seen = now;
  d.count = s.count;
  if (now - s.last_write < series_interval_) return d;  // counted, written later
  if (!take(bucket_key, now)) return d;
  s.last_write = now;
  d.what = action::update_series;
  d.event_name = s.name;
  return d;
}

void event_spam_filter::created(const event_spec& e, std::string name, time_point now) {
  if (series_.size() >= max_series_) {
    // Bounded memory: forget the series seen longest ago.
    auto oldest = std::min_element(series_.begin(), series_.end(), [](const auto& a, const auto& b) {
      return a.second.last_seen < b.second.last_seen;
    });
    series_.erase(oldest);
  }
  auto& s = series_[series_key(e)];
  s.name = std::move(name);
  if (s.count == 0) s.count = 1;
  s.last_seen = now;
  s.last_write = now;
  if (buckets_.size() > max_series_ * 4) buckets_.clear();  // idle buckets are full anyway
}

std::string event_name(const object_ref& regarding, std::chrono::system_clock::time_point now) {
  char hex[24];
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(ns));
  auto base = regarding.name.empty() ? std::string("octorun") : regarding.name;
  return cut(base, 253 - 17) + "." + hex;
}

std::string event_body(const event_spec& e, const std::string& name, const std::string& reporting_controller,
                       const std::string& reporting_instance, std::chrono::system_clock::time_point now) {
  json::writer w;
  w.open().field("apiVersion", "events.k8s.io/v1").field("kind", "Event");
  w.open("metadata")
      .field("name", name)
      .field("namespace", e.regarding.namespace_.empty() ? std::string("default") : e.regarding.namespace_)
      .close();
  w.field("eventTime", format_rfc3339_micros(now))
      .field("type", e.type)
      .field("reason", cut(e.reason, 128))
      .field("action", cut(e.action, 128))
      .field("note", cut(e.note, 1024));
  write_ref(w, "regarding", e.regarding);
  w.field("reportingController", reporting_controller)
      .field("reportingInstance", cut(reporting_instance, 128));
  return w.close().str();
}

std::string event_series_patch(int32_t count, std::chrono::system_clock::time_point now) {
  json::writer w;
  w.open().open("series").field("count", std::max<int32_t>(count, 2));
  return w.field("lastObservedTime", format_rfc3339_micros(now)).close().close().str();
}

event_recorder::event_recorder(client& api, std::string reporting_controller, std::string reporting_instance,
                               event_spam_filter filter)
    : api_(api),
      controller_(std::move(reporting_controller)),
      instance_(std::move(reporting_instance)),
      filter_(std::move(filter)) {}

expected<event_spam_filter::action, api_error> event_recorder::record(const event_spec& e) {
  auto steady = std::chrono::steady_clock::now();
  auto wall = std::chrono::system_clock::now();
  auto d = filter_.observe(e, steady);
  auto ns = e.regarding.namespace_.empty() ? std::string("default") : e.regarding.namespace_;
  if (d.what == event_spam_filter::action::create) {
    auto name = event_name(e.regarding, wall);
    auto created = api_.create(events_v1(), ns, event_body(e, name, controller_, instance_, wall));
    if (!created) return unexpected{created.error()};
    filter_.created(e, name, steady);
  } else if (d.what == event_spam_filter::action::update_series) {
    auto patched =
        api_.patch(events_v1(), ns, d.event_name, patch_type::merge, event_series_patch(d.count, wall));
    if (!patched) return unexpected{patched.error()};
  }
  return d.what;
}

}  // namespace octorun::kube
