// One Kubernetes object as actors see it: the parsed JSON, immutable and
// shared, plus views of the metadata fields controllers read on every event.
// Each object's JSON lives in a memory pool sized exactly to it, so a cache
// of many small objects holds no per-object slack (see bench/kube).
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/expected.hpp"

namespace octorun::kube {

struct object {
  std::shared_ptr<const rapidjson::Document> doc;  // null for an empty object
  // Views into *doc (valid as long as any copy of this object lives).
  std::string_view namespace_;
  std::string_view name;
  std::string_view uid;
  std::string_view resource_version;
  std::string_view deletion_timestamp;  // empty unless being deleted
  int64_t generation = 0;

  explicit operator bool() const { return doc != nullptr; }
  // "namespace/name", or "name" for cluster-scoped objects.
  std::string key() const;
  // metadata.labels (an object) or nullptr.
  const rapidjson::Value* labels() const;
  // One label's value; empty when absent.
  std::string_view label(std::string_view key) const;
  // A member of the top-level object (e.g. "spec", "status"), or nullptr.
  const rapidjson::Value* member(const char* name) const;
  // The object serialized back to JSON.
  std::string json() const;
};

// A compact, immutable copy of `v` (a JSON object). `drop_managed_fields`
// leaves out metadata.managedFields (server-side apply bookkeeping that
// controllers do not read; often the largest part of a small object).
object make_object(const rapidjson::Value& v, bool drop_managed_fields = false);
// Parses JSON text into an object; the error says why it is not one.
expected<object, std::string> parse_object(std::string_view json);

using object_cache = std::unordered_map<std::string, object>;

}  // namespace octorun::kube
