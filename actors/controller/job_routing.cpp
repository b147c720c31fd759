#include "actors/controller/job_routing.hpp"

#include "actors/runnerset/routing.hpp"
#include "common/strings.hpp"
#include "model/naming.hpp"
#include "model/scope.hpp"

namespace octorun::controller {
namespace {

using keys = std::vector<std::string>;

keys demand(const job_routes& r, const messages::job_info& job) {
  for (const auto& [key, set] : r.sets) {
    if (!set_serves(r, key, job)) continue;
    if (runnerset::variant_for_job(model::effective_variants(set->spec), job.labels)) return {key};
  }
  return {};
}

}  // namespace

keys destinations(const job_routes& r, const messages::job_available& m) { return demand(r, m.job); }
keys destinations(const job_routes& r, const messages::job_assigned& m) { return demand(r, m.job); }

// One owner among `candidates` (set keys): the only one, else the only one
// whose scope serves the job's repository on its server; none when that
// leaves several. (A set being deleted, or one its class refuses now,
// still owns the runners it made.)
keys one_owner(const job_routes& r, const keys& candidates, const messages::job_info& job) {
  if (candidates.size() <= 1) return candidates;
  keys serving;
  for (const auto& key : candidates)
    if (auto set = r.sets.find(key);
        set != r.sets.end() && scope_serves(set->second->spec.scope, job.server, job.repository))
      serving.push_back(key);
  return serving.size() == 1 ? serving : keys{};
}

keys destinations(const job_routes& r, const messages::job_started& m) {
  if (auto holders = r.runner_sets.find(m.runner_name); holders != r.runner_sets.end()) {
    keys owners;
    for (const auto& [ns, key] : holders->second)
      if (of_jobs_class(r, key, m.job)) owners.push_back(key);
    return one_owner(r, owners, m.job);
  }
  // Not seen yet (a restart before the watches synced): our runner names say
  // which set and variant made them. A start on a runner that is not ours at
  // all (another pool, a hosted runner) goes nowhere.
  keys named;
  for (const auto& [key, set] : r.sets) {
    if (!of_jobs_class(r, key, m.job)) continue;
    for (const auto& v : model::effective_variants(set->spec)) {
      auto prefix = model::runner_name_prefix(set->metadata.name, v.name);
      if (m.runner_name.size() == prefix.size() + model::runner_suffix_length &&
          m.runner_name.starts_with(prefix)) {
        named.push_back(key);
        break;
      }
    }
  }
  return one_owner(r, named, m.job);
}

keys destinations(const job_routes& r, const messages::job_completed& m) {
  keys all;
  for (const auto& [key, set] : r.sets)
    if (of_jobs_class(r, key, m.job)) all.push_back(key);
  return all;
}

// The set a listener's session message names, if it is known.
keys destinations(const job_routes& r, const messages::session_message& m) {
  return r.sets.count(m.runner_set) > 0 ? keys{m.runner_set} : keys{};
}

bool scope_serves(const std::optional<model::github_scope>& scope, const std::string& server,
                  const std::string& repository) {
  if (!scope || model::server_identity(*scope) != server) return false;
  auto slash = repository.find('/');
  if (slash == std::string::npos) return false;
  const auto owner = ascii_lower(repository.substr(0, slash));
  switch (scope->kind) {
    case model::github_scope::level::enterprise:
      return true;
    case model::github_scope::level::organization:
      return ascii_lower(scope->owner) == owner;
    case model::github_scope::level::repository:
      return ascii_lower(scope->owner + "/" + scope->repository) == ascii_lower(repository);
  }
  return false;
}

bool of_jobs_class(const job_routes& r, const std::string& key, const messages::job_info& job) {
  if (job.runner_class.empty()) return true;
  auto judged = r.classes.find(key);
  return judged != r.classes.end() && judged->second == job.runner_class;
}

bool set_serves(const job_routes& r, const std::string& key, const messages::job_info& job) {
  auto set = r.sets.find(key);
  if (set == r.sets.end() || set->second->metadata.deleting || r.admitted.count(key) == 0) return false;
  if (!of_jobs_class(r, key, job)) return false;
  if (!scope_serves(set->second->spec.scope, job.server, job.repository)) return false;
  if (job.installation_id == 0) return true;
  auto credentials = r.installations.find(key);
  return credentials != r.installations.end() && credentials->second == job.installation_id;
}

}  // namespace octorun::controller
