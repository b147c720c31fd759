// The pure parts of list-then-watch: decoding the watch stream, applying
// events to a cache without duplicates, and the relist diff after 410 Gone.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kube/api.hpp"
#include "adapters/kube/object.hpp"

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
  explicit watch_decoder(bool drop_managed_fields = false, size_t max_line = 64 * 1024 * 1024)
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

// A change as subscribers see it.
struct cache_event {
  event_type type = event_type::added;  // added, modified or deleted
  object obj;
};

// Applies a watch event (ADDED / MODIFIED / DELETED) to `cache`. Returns the
// change to emit, or nothing when the event changes nothing (a replay of a
// version already held, the deletion of an unknown object). ADDED of a known
// object is emitted as MODIFIED and MODIFIED of an unknown one as ADDED, so
// subscribers see a consistent sequence whatever the server replays.
std::optional<cache_event> apply_event(object_cache& cache, event_type type, const object& obj);

// Replaces `cache` by a fresh list and returns the difference: ADDED for new
// keys, MODIFIED for changed resourceVersions, DELETED (with the last known
// state) for keys that are gone; a key whose uid changed is DELETED then ADDED.
std::vector<cache_event> replace_all(object_cache& cache, std::vector<object> fresh);

// Resource versions are decimal integers from 1.35 on (KEP-5504): compare by
// length, then lexically. True when a is strictly newer than b.
bool newer_resource_version(std::string_view a, std::string_view b);

}  // namespace octorun::kube
