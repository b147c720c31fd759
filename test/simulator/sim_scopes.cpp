// Scopes as the simulator models them: each repository, organization and
// enterprise that registers with the Actions service gets a tenant of its own
// (its own scale sets, runner names and agents, at /tenant/{id}/), and
// organizations and enterprises have runner groups beside Default (id 1).
#include "test/simulator/simulator_impl.hpp"

namespace octorun::sim {

sim_tenant& simulator::impl::tenant_for(const std::string& scope_key) {
  auto it = tenants.find(scope_key);
  if (it == tenants.end()) it = tenants.emplace(scope_key, sim_tenant{next_tenant_id++, scope_key}).first;
  return it->second;
}

const sim_tenant* simulator::impl::tenant_by_id(std::int64_t id) const {
  for (const auto& [key, t] : tenants)
    if (t.id == id) return &t;
  return nullptr;
}

std::string simulator::impl::tenant_url(std::int64_t tenant_id) const {
  return base + "/tenant/" + std::to_string(tenant_id) + "/";
}

bool simulator::impl::scope_covers(const std::string& scope_key, const std::string& repository) {
  const auto owner = repository.substr(0, repository.find('/'));
  // The simulator does not model which organizations an enterprise holds: all of them.
  return scope_key == "repos/" + repository || scope_key == "orgs/" + owner ||
         scope_key.starts_with("enterprises/");
}

std::optional<sim_runner_group> simulator::impl::runner_group(const std::string& scope_key,
                                                              std::int64_t id) const {
  if (id == 1) return sim_runner_group{1, scope_key, "Default"};
  auto it = runner_groups.find(id);
  if (it == runner_groups.end() || it->second.scope_key != scope_key) return std::nullopt;
  return it->second;
}

std::vector<sim_runner_group> simulator::impl::runner_groups_of(const std::string& scope_key) const {
  std::vector<sim_runner_group> out{{1, scope_key, "Default"}};
  for (const auto& [id, g] : runner_groups)
    if (g.scope_key == scope_key) out.push_back(g);
  return out;
}

std::int64_t simulator::impl::add_runner_group(const std::string& scope_key, const std::string& name) {
  if (!scope_key.starts_with("orgs/") && !scope_key.starts_with("enterprises/")) return 0;
  for (const auto& g : runner_groups_of(scope_key))
    if (g.name == name) return 0;
  auto id = next_group_id++;
  runner_groups[id] = sim_runner_group{id, scope_key, name};
  scopes.insert(scope_key);
  changed();
  return id;
}

}  // namespace octorun::sim
