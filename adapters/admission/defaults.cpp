#include "adapters/admission/defaults.hpp"

#include <algorithm>
#include <string>

#include "common/json.hpp"
#include "model/types.hpp"

namespace octorun::admission {
namespace {

using rapidjson::Value;

using json::member;
bool absent(const Value& obj, const char* key) { return json::find_value(obj, key) == nullptr; }

// add, or replace an explicit null (JSON Patch "add" replaces existing members too).
void add_if_absent(const Value& obj, const std::string& path, const char* key, std::string value_json,
                   std::vector<json_patch_op>& out) {
  if (absent(obj, key)) out.push_back({"add", path + "/" + key, std::move(value_json)});
}

void template_defaults(const Value& parent, const std::string& path, std::vector<json_patch_op>& out) {
  const Value* t = member(parent, "template");
  if (t == nullptr || !t->IsObject()) return;
  const Value* spec = member(*t, "spec");
  if (spec == nullptr || !spec->IsObject()) return;  // validation reports it
  add_if_absent(*spec, path + "/template/spec", "restartPolicy", json::quote(default_restart_policy), out);
}

}  // namespace

std::vector<json_patch_op> runnerset_defaults(const rapidjson::Value& object) {
  std::vector<json_patch_op> out;
  const Value* spec = member(object, "spec");
  if (spec == nullptr || !spec->IsObject()) return out;
  add_if_absent(*spec, "/spec", "runnerGroup", json::quote(default_runner_group), out);
  const Value* min = member(*spec, "minRunners");
  std::int64_t min_runners = 0;
  if (min == nullptr || min->IsNull()) {
    out.push_back({"add", "/spec/minRunners", "0"});
  } else if (min->IsInt()) {
    min_runners = min->GetInt();
  }
  add_if_absent(*spec, "/spec", "maxRunners",
                std::to_string(std::max<std::int64_t>(min_runners, model::default_max_runners)), out);
  template_defaults(*spec, "/spec", out);
  if (const Value* variants = member(*spec, "variants"); variants != nullptr && variants->IsArray()) {
    for (rapidjson::SizeType i = 0; i < variants->Size(); ++i)
      template_defaults((*variants)[i], "/spec/variants/" + std::to_string(i), out);
  }
  return out;
}

}  // namespace octorun::admission
