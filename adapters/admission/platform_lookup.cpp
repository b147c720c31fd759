#include "adapters/admission/platform_lookup.hpp"

#include <spdlog/spdlog.h>

#include "adapters/kube/client.hpp"
#include "model/namespace_cap.hpp"
#include "model/parse.hpp"

namespace octorun::admission {

platform_lookup read_platform(kube::config cfg, kube::resource runner_classes, kube::resource runner_sets) {
  return [cfg = std::move(cfg), runner_classes = std::move(runner_classes),
          runner_sets = std::move(runner_sets)](
             const std::string& ns) -> expected<model::platform_classes, std::string> {
    kube::client api(cfg);  // one per judgement: civetweb's threads share nothing
    model::platform_classes out;
    auto classes = api.list(runner_classes, "");
    if (!classes) return unexpected<std::string>{"RunnerClasses: " + kube::to_string(classes.error())};
    for (const auto& item : classes->items) {
      auto c = model::parse_runner_class(*item.doc);
      if (!c) {
        spdlog::error("admission: RunnerClass {} cannot be read: {}: {}", item.key(), c.error().front().field,
                      c.error().front().message);
        continue;
      }
      out.classes.emplace(c->metadata.name, std::move(*c));
    }
    auto space = api.get(kube::namespaces(), "", ns);
    if (!space) return unexpected<std::string>{"namespace " + ns + ": " + kube::to_string(space.error())};
    out.namespace_labels[ns] = model::read_object_meta(*space->doc).labels;
    auto sets = api.list(runner_sets, ns);
    if (!sets) return unexpected<std::string>{"RunnerSets of " + ns + ": " + kube::to_string(sets.error())};
    auto& listed = out.namespace_sets[ns];
    for (const auto& item : sets->items)
      if (auto set = model::parse_runnerset(*item.doc); set && !set->metadata.deleting)
        listed.push_back(model::namespace_set_of(set->metadata, set->spec));
    return out;
  };
}

}  // namespace octorun::admission
