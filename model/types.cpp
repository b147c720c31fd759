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

namespace {

struct runner_spec_pool {
  std::mutex mu;
  std::unordered_map<std::string, std::weak_ptr<const runner_spec>> known;  // by the spec's JSON
  std::size_t made_since_sweep = 0;
};

runner_spec_pool& spec_pool() {
  static runner_spec_pool pool;
  return pool;
}

}  // namespace

shared_runner_spec shared_runner_spec_for(const std::string& key) {
  auto& pool = spec_pool();
  std::lock_guard l(pool.mu);
  auto it = pool.known.find(key);
  return it == pool.known.end() ? nullptr : it->second.lock();
}

shared_runner_spec share_runner_spec(runner_spec spec, const std::string& key) {
  auto& pool = spec_pool();
  std::lock_guard l(pool.mu);
  auto& slot = pool.known[key];
  if (auto held = slot.lock()) return held;
  auto made = std::make_shared<const runner_spec>(std::move(spec));
  slot = made;
  // Now and then, forget the specs no Runner holds any more.
  if (++pool.made_since_sweep == 64) {
    pool.made_since_sweep = 0;
    std::erase_if(pool.known, [](const auto& entry) { return entry.second.expired(); });
  }
  return made;
}

const shared_runner_spec& empty_runner_spec() {
  static const shared_runner_spec empty = std::make_shared<const runner_spec>();
  return empty;
}

namespace {

std::optional<std::int32_t> target_seconds(const std::optional<start_time_target_spec>& target) {
  return target ? target->p95_seconds : std::nullopt;
}

}  // namespace

std::vector<effective_variant> effective_variants(const runnerset_spec& spec) {
  const std::int32_t set_min = spec.min_runners.value_or(0);
  const std::int32_t set_max = spec.max_runners.value_or(std::max(set_min, default_max_runners));
  if (spec.variants.empty())
    return {effective_variant{"", spec.runner_labels, &spec.template_, set_min, set_max, spec.pod,
                              spec.startup_timeout_seconds, target_seconds(spec.start_time_target)}};
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
                   v.min_runners.value_or(set_min), v.max_runners.value_or(set_max), std::move(pod),
                   v.startup_timeout_seconds ? v.startup_timeout_seconds : spec.startup_timeout_seconds,
                   target_seconds(v.start_time_target ? v.start_time_target : spec.start_time_target)});
  }
  return out;
}

std::string_view to_string(container_mode mode) {
  switch (mode) {
    case container_mode::none:
      return "none";
    case container_mode::dind:
      return "dind";
    case container_mode::kubernetes:
      return "kubernetes";
  }
  return "none";
}

std::string_view to_string(pod_security_level level) {
  switch (level) {
    case pod_security_level::privileged:
      return "privileged";
    case pod_security_level::baseline:
      return "baseline";
    case pod_security_level::restricted:
      return "restricted";
  }
  return "baseline";
}

std::optional<pod_security_level> pod_security_level_named(std::string_view name) {
  for (auto l :
       {pod_security_level::privileged, pod_security_level::baseline, pod_security_level::restricted})
    if (to_string(l) == name) return l;
  return std::nullopt;
}

std::optional<container_mode> container_mode_named(std::string_view name) {
  for (auto m : {container_mode::none, container_mode::dind, container_mode::kubernetes})
    if (to_string(m) == name) return m;
  return std::nullopt;
}

}  // namespace octorun::model
