#include "actors/runnerset/scale_sets.hpp"

#include <algorithm>
#include <set>

namespace octorun::runnerset {

std::string scale_set_name(std::string_view set, std::string_view variant) {
  std::string out(set);
  if (!variant.empty()) out.append("-").append(variant);
  return out;
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
