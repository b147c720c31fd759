#include "actors/controller/job_routing.hpp"

#include "actors/runnerset/routing.hpp"
#include "adapters/github/scope.hpp"
#include "common/strings.hpp"
#include "model/naming.hpp"

namespace octorun::controller {
namespace {

using keys = std::vector<std::string>;

keys demand(const job_routes& r, const messages::job_info& job) {
  for (const auto& [key, set] : r.sets) {
    if (set->metadata.deleting || !scope_serves(set->spec.scope_url, job.repository)) continue;
    if (runnerset::variant_for_job(model::effective_variants(set->spec), job.labels)) return {key};
  }
  return {};
}

}  // namespace

keys destinations(const job_routes& r, const messages::job_available& m) { return demand(r, m.job); }
keys destinations(const job_routes& r, const messages::job_assigned& m) { return demand(r, m.job); }

keys destinations(const job_routes& r, const messages::job_started& m) {
  if (auto owner = r.runner_set.find(m.runner_name); owner != r.runner_set.end()) return {owner->second};
  // Not seen yet (a restart before the watches synced): our runner names say
  // which set and variant made them. A start on a runner that is not ours at
  // all (another pool, a hosted runner) goes nowhere.
  for (const auto& [key, set] : r.sets)
    for (const auto& v : model::effective_variants(set->spec)) {
      auto prefix = model::runner_name_prefix(set->metadata.name, v.name);
      if (m.runner_name.size() == prefix.size() + model::runner_suffix_length &&
          m.runner_name.starts_with(prefix))
        return {key};
    }
  return {};
}

keys destinations(const job_routes& r, const messages::job_completed&) {
  keys all;
  for (const auto& [key, set] : r.sets) all.push_back(key);
  return all;
}

// The set a listener's session message names, if it is known.
keys destinations(const job_routes& r, const messages::session_message& m) {
  return r.sets.count(m.runner_set) > 0 ? keys{m.runner_set} : keys{};
}

bool scope_serves(const std::string& scope_url, const std::string& repository) {
  auto target = github::parse_config_url(scope_url);
  if (!target) return false;
  auto slash = repository.find('/');
  if (slash == std::string::npos) return false;
  const auto owner = ascii_lower(repository.substr(0, slash));
  switch (target->where.kind) {
    case github::scope_kind::enterprise:
      return true;
    case github::scope_kind::organization:
      return ascii_lower(target->where.owner) == owner;
    case github::scope_kind::repository:
      return ascii_lower(target->where.owner + "/" + target->where.repository) == ascii_lower(repository);
  }
  return false;
}

}  // namespace octorun::controller
