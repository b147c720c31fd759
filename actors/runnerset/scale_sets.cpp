#include "actors/runnerset/scale_sets.hpp"

#include <algorithm>
#include <set>

#include "model/naming.hpp"

namespace octorun::runnerset {

std::string scale_set_name(std::string_view set, std::string_view variant) {
  std::string out(set);
  if (!variant.empty()) out.append("-").append(variant);
  return out;
}

std::vector<std::string> scale_set_labels(std::vector<std::string> runner_labels,
                                          const std::string& scale_set_name, std::string_view set_uid) {
  if (std::find(runner_labels.begin(), runner_labels.end(), scale_set_name) == runner_labels.end())
    runner_labels.push_back(scale_set_name);
  if (!set_uid.empty()) runner_labels.push_back(model::registering_set_label(set_uid));
  return runner_labels;
}

bool registered_by_the_set(std::int64_t found_id, const std::vector<std::string>& found_labels,
                           std::int64_t known_id, std::string_view set_uid) {
  if (known_id != 0 && found_id == known_id) return true;
  if (set_uid.empty()) return false;
  const auto mark = model::registering_set_label(set_uid);
  return std::find(found_labels.begin(), found_labels.end(), mark) != found_labels.end();
}

bool same_labels(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

std::map<std::string, std::int64_t> recorded_scale_sets(const model::runnerset_status& status) {
  std::map<std::string, std::int64_t> out;
  if (status.scale_set_id != 0) out[""] = status.scale_set_id;
  for (const auto& v : status.variants)
    if (v.scale_set_id != 0) out[v.name] = v.scale_set_id;
  return out;
}

std::string recorded_session(const model::runnerset_status& status, const std::string& variant) {
  if (variant.empty()) return status.session_id;
  for (const auto& v : status.variants)
    if (v.name == variant) return v.session_id;
  return {};
}

std::vector<retired_variant> retired_variants(const std::vector<model::effective_variant>& current,
                                              const std::vector<std::string>& runner_variants,
                                              const std::map<std::string, std::int64_t>& scale_sets) {
  std::set<std::string> declared;
  for (const auto& v : current) declared.insert(v.name);
  std::map<std::string, retired_variant> out;
  for (const auto& name : runner_variants)
    if (declared.count(name) == 0) {
      auto& r = out[name];
      r.name = name;
      r.has_runners = true;
    }
  for (const auto& [name, id] : scale_sets)
    if (declared.count(name) == 0 && id != 0) {
      auto& r = out[name];
      r.name = name;
      r.scale_set_id = id;
    }
  std::vector<retired_variant> list;
  for (auto& [name, r] : out) list.push_back(std::move(r));
  return list;
}

}  // namespace octorun::runnerset
