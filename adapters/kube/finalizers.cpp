#include "adapters/kube/finalizers.hpp"

#include <rapidjson/document.h>

#include <algorithm>

#include "common/json.hpp"
#include "common/json_writer.hpp"

namespace octorun::kube {
namespace {

const rapidjson::Value* finalizers(const object& o) {
  const auto* meta = o.member("metadata");
  const auto* list = meta ? json::find_value(*meta, "finalizers") : nullptr;
  return list && list->IsArray() ? list : nullptr;
}

bool is(const rapidjson::Value& f, std::string_view name) {
  return f.IsString() && std::string_view(f.GetString(), f.GetStringLength()) == name;
}

}  // namespace

bool has_finalizer(const object& o, std::string_view name) {
  const auto* list = finalizers(o);
  return list &&
         std::any_of(list->Begin(), list->End(), [&](const rapidjson::Value& f) { return is(f, name); });
}

std::string finalizer_patch(const object& o, std::string_view name, bool present) {
  std::vector<std::string> list;
  if (const auto* existing = finalizers(o))
    for (const auto& f : existing->GetArray())
      if (f.IsString()) list.emplace_back(f.GetString(), f.GetStringLength());
  return finalizer_patch(list, o.resource_version, name, present);
}

std::string finalizer_patch(const std::vector<std::string>& finalizers, std::string_view resource_version,
                            std::string_view name, bool present) {
  json::writer w;
  w.open().open("metadata").field("resourceVersion", resource_version).open_array("finalizers");
  for (const auto& f : finalizers)
    if (f != name) w.value(f);
  if (present) w.value(name);
  return w.close_array().close().close().str();
}

std::optional<std::string> finalizer_removal_patch(const std::vector<std::string>& finalizers,
                                                   std::string_view name) {
  auto at = std::find(finalizers.begin(), finalizers.end(), name);
  if (at == finalizers.end()) return std::nullopt;
  const auto path = "/metadata/finalizers/" + std::to_string(at - finalizers.begin());
  json::writer w;
  w.open_array().open().field("op", "test").field("path", path).field("value", name).close();
  w.open().field("op", "remove").field("path", path).close();
  return w.close_array().str();
}

}  // namespace octorun::kube
