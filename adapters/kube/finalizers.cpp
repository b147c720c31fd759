#include "adapters/kube/finalizers.hpp"

#include <rapidjson/document.h>

#include <algorithm>

#include "common/json.hpp"

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
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value list(rapidjson::kArrayType);
  for (const auto& f : finalizers)
    if (f != name) list.PushBack(json::string_value(f, a), a);
  if (present) list.PushBack(json::string_value(name, a), a);
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("resourceVersion", json::string_value(resource_version, a), a);
  meta.AddMember("finalizers", list, a);
  d.AddMember("metadata", meta, a);
  return json::write(d);
}

std::optional<std::string> finalizer_removal_patch(const std::vector<std::string>& finalizers,
                                                   std::string_view name) {
  auto at = std::find(finalizers.begin(), finalizers.end(), name);
  if (at == finalizers.end()) return std::nullopt;
  const auto path = "/metadata/finalizers/" + std::to_string(at - finalizers.begin());
  rapidjson::Document d(rapidjson::kArrayType);
  auto& a = d.GetAllocator();
  rapidjson::Value test(rapidjson::kObjectType);
  test.AddMember("op", "test", a);
  test.AddMember("path", json::string_value(path, a), a);
  test.AddMember("value", json::string_value(name, a), a);
  rapidjson::Value remove(rapidjson::kObjectType);
  remove.AddMember("op", "remove", a);
  remove.AddMember("path", json::string_value(path, a), a);
  d.PushBack(test, a);
  d.PushBack(remove, a);
  return json::write(d);
}

}  // namespace octorun::kube
