#include "actors/runnerset/runner_versions.hpp"

#include "actors/runnerset/plan.hpp"
#include "common/rfc3339.hpp"
#include "model/children.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset {

variant_verdicts variant_versions(const set_observation& o) {
  variant_verdicts out;
  if (!o.set) return out;
  const auto now = parse_rfc3339(o.wall_time).value_or(0);
  const auto variants = o.class_verdict ? model::variants_under(o.set->spec, *o.class_verdict)
                                        : model::effective_variants(o.set->spec);
  for (const auto& v : variants) {
    model::version_facts f;
    f.variant = v.name;
    f.now = now;
    f.latest = o.latest_runner_release;
    for (const auto& c : v.template_->containers)
      if (c.name == model::runner_container) f.image = c.image;
    f.running = model::version_of_image(f.image);
    const auto fingerprint = model::pod_fingerprint(*v.template_, v.pod);
    if (auto exit = o.deprecated_exits.find(v.name); exit != o.deprecated_exits.end()) {
      f.deprecated_exit = exit->second.pod_fingerprint == fingerprint;
      if (f.deprecated_exit) f.reported = exit->second.reported;
    }
    // Its record survives a restart, which the memory above does not.
    if (auto record = deprecation_record(o, v.name, fingerprint); !record.empty()) {
      f.deprecated_exit = true;
      if (const auto& r = o.runners.at(record); r.reported_version) f.reported = r.reported_version;
    }
    out.emplace_back(v.name, model::judge_runner_version(f));
  }
  return out;
}

model::condition runner_version_condition(const variant_verdicts& verdicts) {
  std::vector<model::version_verdict> all;
  for (const auto& [variant, v] : verdicts) all.push_back(v);
  const auto judged = model::runner_version_condition(all);
  model::condition c;
  c.type = "RunnerVersionCurrent";
  c.status = judged.status;
  c.reason = judged.reason;
  c.message = judged.message;
  return c;
}

std::string deprecation_record(const set_observation& o, const std::string& variant,
                               std::uint64_t pod_fingerprint) {
  const std::pair<const std::string, observed_runner>* newest = nullptr;
  for (const auto& entry : o.runners) {
    const auto& r = entry.second;
    if (r.variant != variant || r.view.phase != model::runner_phase::outdated || r.view.deleting ||
        r.pod_fingerprint == 0 || r.pod_fingerprint != pod_fingerprint)
      continue;
    if (newest == nullptr || r.view.created > newest->second.view.created) newest = &entry;
  }
  return newest == nullptr ? std::string() : newest->first;
}

bool blocks_new_runners(const variant_verdicts& verdicts, const std::string& variant) {
  for (const auto& [name, v] : verdicts)
    if (name == variant) return v.blocks_new_runners();
  return false;
}

}  // namespace octorun::runnerset
