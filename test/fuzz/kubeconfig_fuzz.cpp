// libFuzzer target: the kubeconfig reader (YAML through yaml-cpp, or JSON)
// on arbitrary text: every broken input must come back as an error naming
// the field, never a crash. Relative file references resolve in an empty
// folder, so they fail the same way on every run.
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "adapters/kube/config.hpp"
#include "adapters/kube/yaml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  rapidjson::Document d;
  (void)octorun::kube::parse_yaml(text, d);
  for (const char* context : {"", "fuzz"}) {
    auto cfg = octorun::kube::parse_kubeconfig(text, "/nonexistent-octorun-fuzz", context);
    if (cfg && cfg->token) (void)cfg->token->path();
  }
  return 0;
}
