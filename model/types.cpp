#include "model/types.hpp"

#include <algorithm>

namespace octorun::model {

bool has_finalizer(const object_meta& m, std::string_view name) {
  return std::find(m.finalizers.begin(), m.finalizers.end(), name) != m.finalizers.end();
}

bool pod_template::has_container(const std::string& name) const {
  return std::any_of(containers.begin(), containers.end(),
                     [&](const container_view& c) { return c.name == name; });
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
