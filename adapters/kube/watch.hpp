// The pure parts of list-then-watch: decoding the watch stream, applying
// events to a cache without duplicates, and the relist diff after 410 Gone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "adapters/kube/api.hpp"
#include "adapters/kube/object.hpp"
#include "common/json_parse.hpp"

namespace octorun::kube {

enum class event_type { added, modified, deleted, bookmark, error };
std::string_view to_string(event_type t);

struct watch_event {
  event_type type = event_type::added;
  object obj;       // the object; for BOOKMARK only its resourceVersion is set
  api_error error;  // for ERROR: the Status the server sent before closing
};

// Splits a watch response body into events. The apiserver writes one JSON
// object per line; chunks may cut anywhere.
class watch_decoder {
 public:
  explicit watch_decoder(bool drop_managed_fields = false,
                         size_t max_line = json::sources::kube_watch_event.max_bytes)
      : max_line_(max_line), drop_managed_fields_(drop_managed_fields) {}
  // Appends the events completed by `chunk`. False (with error()) on a
  // malformed line or an oversized one; the stream should then be dropped.
  bool feed(std::string_view chunk, std::vector<watch_event>& out);
  const std::string& error() const { return error_; }
  // Bytes of an incomplete event still buffered.
  size_t pending() const { return buffer_.size(); }

 private:
  bool decode_line(std::string_view line, std::vector<watch_event>& out);
  std::string buffer_;
  std::string error_;
  size_t max_line_;
  bool drop_managed_fields_;
};

// A cache: "namespace/name" -> what is kept of each object, its handle: a
// kube::object, or a decoded value as std::shared_ptr<const V> (V has a
// model-style `metadata` with namespace_, name, uid and resource_version).
template <class Handle>
using cache_of = std::unordered_map<std::string, Handle>;

// The identity a cache compares, for either kind of handle.
inline std::string cache_key(const object& o) { return o.key(); }
inline std::string_view cache_uid(const object& o) { return o.uid; }
inline std::string_view cache_version(const object& o) { return o.resource_version; }
template <class V>
std::string cache_key(const std::shared_ptr<const V>& v) {
  const auto& m = v->metadata;
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}
template <class V>
std::string_view cache_uid(const std::shared_ptr<const V>& v) {
  return v->metadata.uid;
}
template <class V>
std::string_view cache_version(const std::shared_ptr<const V>& v) {
  return v->metadata.resource_version;
}

// A change as subscribers see it.
template <class Handle>
struct cache_change {
  event_type type = event_type::added;  // added, modified or deleted
  Handle obj;
};
using cache_event = cache_change<object>;

// Applies a watch event (ADDED / MODIFIED / DELETED) to `cache`. Returns the
// change to emit, or nothing when the event changes nothing (a replay of a
// version already held, the deletion of an unknown object). ADDED of a known
// object is emitted as MODIFIED and MODIFIED of an unknown one as ADDED, so
// subscribers see a consistent sequence whatever the server replays.
template <class Handle>
std::optional<cache_change<Handle>> apply_event(cache_of<Handle>& cache, event_type type, const Handle& obj) {
  if (type != event_type::added && type != event_type::modified && type != event_type::deleted)
    return std::nullopt;
  auto key = cache_key(obj);
  auto it = cache.find(key);
  if (type == event_type::deleted) {
    if (it == cache.end()) return std::nullopt;
    cache.erase(it);
    return cache_change<Handle>{event_type::deleted, obj};
  }
  if (it == cache.end()) {
    cache.emplace(std::move(key), obj);
    return cache_change<Handle>{event_type::added, obj};
  }
  if (cache_version(it->second) == cache_version(obj) && cache_uid(it->second) == cache_uid(obj))
    return std::nullopt;
  it->second = obj;
  return cache_change<Handle>{event_type::modified, obj};
}

// What a typed informer made of a watched object: its decoded handle
// (kept), nothing because it could not read it (unreadable), or nothing
// because it read it and its keep-filter refused it (refused).
enum class decoded { kept, unreadable, refused };

// Applies a watch event to a cache of decoded handles: a kept object as
// apply_event does. An unreadable one keeps what was cached (a change we
// cannot read is no reason to forget what we knew) unless it is deleted. A
// refused one is no longer to be kept: what was cached under `key` leaves,
// emitted as DELETED with its last kept state, as a relist would (the list
// leaves it out).
template <class Handle>
std::optional<cache_change<Handle>> apply_decoded_event(cache_of<Handle>& cache, event_type type,
                                                        const std::string& key, decoded what,
                                                        const Handle& obj) {
  if (what == decoded::kept) return apply_event(cache, type, obj);
  if (type != event_type::added && type != event_type::modified && type != event_type::deleted)
    return std::nullopt;
  if (what == decoded::unreadable && type != event_type::deleted) return std::nullopt;
  auto it = cache.find(key);
  if (it == cache.end()) return std::nullopt;
  auto last = std::move(it->second);
  cache.erase(it);
  return cache_change<Handle>{event_type::deleted, std::move(last)};
}

// Replaces `cache` by a fresh list and returns the difference: ADDED for new
// keys, MODIFIED for changed resourceVersions, DELETED (with the last known
// state) for keys that are gone; a key whose uid changed is DELETED then ADDED.
template <class Handle>
std::vector<cache_change<Handle>> replace_all(cache_of<Handle>& cache, std::vector<Handle> fresh) {
  std::vector<cache_change<Handle>> diff;
  cache_of<Handle> next;
  next.reserve(fresh.size());
  for (auto& o : fresh) {
    auto key = cache_key(o);
    auto old = cache.find(key);
    if (old == cache.end()) {
      diff.push_back({event_type::added, o});
    } else if (cache_uid(old->second) != cache_uid(o)) {
      diff.push_back({event_type::deleted, old->second});
      diff.push_back({event_type::added, o});
    } else if (cache_version(old->second) != cache_version(o)) {
      diff.push_back({event_type::modified, o});
    }
    if (old != cache.end()) cache.erase(old);
    next.insert_or_assign(std::move(key), std::move(o));
  }
  for (auto& [key, gone] : cache) diff.push_back({event_type::deleted, gone});
  cache.swap(next);
  return diff;
}

// Resource versions are decimal integers from 1.35 on (KEP-5504): compare by
// length, then lexically. True when a is strictly newer than b.
bool newer_resource_version(std::string_view a, std::string_view b);

}  // namespace octorun::kube
