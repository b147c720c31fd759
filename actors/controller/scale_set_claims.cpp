#include "actors/controller/scale_set_claims.hpp"

#include <cstdint>
#include <limits>
#include <tuple>

#include "actors/runnerset/scale_sets.hpp"
#include "common/rfc3339.hpp"
#include "common/strings.hpp"
#include "model/scope.hpp"

namespace octorun::controller {
namespace {

struct claim {
  std::int64_t created = 0;  // seconds; a set without a readable timestamp is the newest
  std::string ns, name, key, variant, scale_set_name;
  auto order() const { return std::tie(created, ns, name); }
};

}  // namespace

std::string scale_set_place(const std::optional<model::github_scope>& scope,
                            const std::string& scale_set_name) {
  if (!scope) return {};
  return model::scope_identity(*scope) + " " + ascii_lower(scale_set_name);
}

bool same_claims(const model::runnerset& a, const model::runnerset& b) {
  if (a.spec.intake != b.spec.intake || a.spec.scope_url != b.spec.scope_url ||
      a.metadata.creation_timestamp != b.metadata.creation_timestamp ||
      a.spec.variants.size() != b.spec.variants.size())
    return false;
  for (std::size_t i = 0; i < a.spec.variants.size(); ++i)
    if (a.spec.variants[i].name != b.spec.variants[i].name) return false;
  return true;
}

std::map<std::string, std::map<std::string, messages::scale_set_taken>> scale_set_names_taken(
    const std::map<std::string, std::shared_ptr<const model::runnerset>>& sets) {
  // The oldest claim of each place.
  std::map<std::string, claim> holders;
  std::vector<std::pair<std::string, claim>> claims;
  for (const auto& [key, set] : sets) {
    if (!set || set->spec.intake != model::intake_mode::listener) continue;
    const auto created = parse_rfc3339(set->metadata.creation_timestamp);
    for (const auto& v : model::effective_variants(set->spec)) {
      claim c{created.value_or(std::numeric_limits<std::int64_t>::max()),
              set->metadata.namespace_,
              set->metadata.name,
              key,
              v.name,
              runnerset::scale_set_name(set->metadata.name, v.name)};
      auto place = scale_set_place(set->spec.scope, c.scale_set_name);
      if (place.empty()) continue;
      auto [it, first] = holders.try_emplace(place, c);
      if (!first && c.order() < it->second.order()) it->second = c;
      claims.emplace_back(std::move(place), std::move(c));
    }
  }
  std::map<std::string, std::map<std::string, messages::scale_set_taken>> out;
  for (const auto& [place, c] : claims) {
    const auto& holder = holders.at(place);
    if (holder.key == c.key) continue;
    out[c.key][c.variant] = {c.scale_set_name, holder.key};
  }
  return out;
}

}  // namespace octorun::controller
