#include "model/types.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace octorun::model {

bool has_finalizer(const object_meta& m, std::string_view name) {
  return std::find(m.finalizers.begin(), m.finalizers.end(), name) != m.finalizers.end();
}

bool pod_template::has_container(const std::string& name) const {
  return std::any_of(containers.begin(), containers.end(),
                     [&](const container_view& c) { return c.name == name; });
}

shared_pod_template shared_template(pod_template t) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::weak_ptr<const pod_template>> known;  // by its JSON
  static std::size_t made_since_sweep = 0;
  std::lock_guard l(mu);
  auto& slot = known[t.json];
  if (auto held = slot.lock()) return held;
  auto made = std::make_shared<const pod_template>(std::move(t));
  slot = made;
  // Now and then, forget the templates no Runner holds any more.
  if (++made_since_sweep == 64) {
    made_since_sweep = 0;
    std::erase_if(known, [](const auto& entry) { return entry.second.expired(); });
  }
  return made;
}

std::vector<effective_variant> effective_variants(const runnerset_spec& spec) {
  const std::int32_t set_min = spec.min_runners.value_or(0);
  const std::int32_t set_max = spec.max_runners.value_or(std::max(set_min, default_max_runners));
  if (spec.variants.empty())
    return {effective_variant{"", spec.runner_labels, &spec.template_, set_min, set_max, spec.pod}};
  std::vector<effective_variant> out;
  out.reserve(spec.variants.size());
  for (const auto& v : spec.variants) {
    // A variant carries the set's labels plus its own.
    auto labels = spec.runner_labels;
    for (const auto& l : v.runner_labels)
      if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
    auto pod = spec.pod;
    if (v.container_mode) pod.container_mode = v.container_mode;
    out.push_back({v.name, std::move(labels), v.template_ ? &*v.template_ : &spec.template_,
                   v.min_runners.value_or(set_min), v.max_runners.value_or(set_max), std::move(pod)});
  }
  return out;
}

}  // namespace octorun::model
