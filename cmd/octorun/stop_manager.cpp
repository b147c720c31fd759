#include "cmd/octorun/stop_manager.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"
#include "cmd/octorun/options.hpp"

namespace octorun::manager {
namespace {

kube::resource deployments() { return {"apps", "v1", "deployments", true}; }
kube::resource pods() { return {"", "v1", "pods", true}; }

}  // namespace

expected<stop_manager_options, std::string> parse_stop_manager(const std::vector<std::string>& args) {
  stop_manager_options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    const auto eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos)
      return unexpected{"stop-manager: expected --name=value, got '" + a + "'"};
    const auto name = a.substr(2, eq - 2);
    const auto value = a.substr(eq + 1);
    if (name == "kubeconfig")
      o.kubeconfig = value;
    else if (name == "namespace")
      o.ns = value;
    else if (name == "deployment")
      o.deployment = value;
    else if (name == "selector")
      o.selector = value;
    else if (name == "timeout-seconds") {
      long seconds = 0;
      if (!whole_number(value, seconds, 1, 24 * 3600))
        return unexpected{"stop-manager: --timeout-seconds takes a positive whole number, got '" + value +
                          "'"};
      o.timeout_seconds = static_cast<int>(seconds);
    } else
      return unexpected{"stop-manager: unknown flag --" + name};
  }
  if (o.ns.empty() || o.deployment.empty() || o.selector.empty())
    return unexpected{std::string("stop-manager: --namespace, --deployment and --selector are required")};
  return o;
}

int stop_manager(const stop_manager_options& o) {
  auto cfg = o.kubeconfig.empty() ? kube::default_config() : kube::load_kubeconfig(o.kubeconfig);
  if (!cfg) {
    spdlog::error("stop-manager: {}", cfg.error());
    return 1;
  }
  kube::client api(*cfg);
  auto scaled =
      api.patch(deployments(), o.ns, o.deployment, kube::patch_type::merge, R"({"spec":{"replicas":0}})");
  if (!scaled && !scaled.error().not_found()) {
    spdlog::error("stop-manager: scaling deployment {}/{} to 0: {}", o.ns, o.deployment,
                  kube::to_string(scaled.error()));
    return 1;
  }
  spdlog::info("stop-manager: deployment {}/{} scaled to 0; waiting for its pods", o.ns, o.deployment);
  kube::list_options selected;
  selected.label_selector = o.selector;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_seconds);
  for (;;) {
    auto left = api.list(pods(), o.ns, selected);
    if (left && left->items.empty()) {
      spdlog::info("stop-manager: the manager's pods are gone");
      return 0;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      spdlog::warn("stop-manager: {} s passed with manager pods left ({}); going on with the uninstall",
                   o.timeout_seconds,
                   left ? std::to_string(left->items.size()) : kube::to_string(left.error()));
      return 0;
    }
    // A poll, not a watch: this runs once, for seconds, at uninstall.
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace octorun::manager
