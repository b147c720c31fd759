// libFuzzer target: the Actions service's registration answer
// ({"url": tenant, "token": admin JWT}) and the URL check every URL a server
// hands back passes. The first byte picks the configured GitHub (github.com,
// an Enterprise Server, a plain-HTTP simulator); the rest is tried as the
// answer's body and as a URL on its own.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "adapters/github/scaleset_client.hpp"
#include "test/fuzz/server_url_policies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace octorun::github;
  if (size == 0) return 0;
  const auto& p = octorun::fuzz::policy_for_kind(data[0]);
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  octorun::http::response r;
  r.status = 200;
  r.body = std::string(input);
  if (auto admin = parse_registration(r, p)) octorun::fuzz::check_accepted(admin->tenant_url, p);
  if (check_server_url(input, p, "a URL")) octorun::fuzz::check_accepted(input, p);
  return 0;
}
