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
  for (const auto& v : model::effective_variants(o.set->spec)) {
    model::version_facts f;
    f.variant = v.name;
    f.now = now;
    f.latest = o.latest_runner_release;
    for (const auto& c : v.template_->containers)
      if (c.name == model::runner_container) f.image = c.image;
    f.running = model::version_of_image(f.image);
    if (auto exit = o.deprecated_exits.find(v.name); exit != o.deprecated_exits.end()) {
      f.deprecated_exit = exit->second.pod_fingerprint == model::pod_fingerprint(*v.template_, v.pod);
      if (f.deprecated_exit) f.reported = exit->second.reported;
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

bool blocks_new_runners(const variant_verdicts& verdicts, const std::string& variant) {
  for (const auto& [name, v] : verdicts)
    if (name == variant) return v.blocks_new_runners();
  return false;
}

}  // namespace octorun::runnerset
