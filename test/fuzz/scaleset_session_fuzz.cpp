// libFuzzer target: a message session as the Actions service answers it
// (create and refresh), and the check its message queue URL must pass
// before the manager fetches it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "adapters/github/scaleset_client.hpp"
#include "test/fuzz/server_url_policies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace octorun::github;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto s = parse_session(input);
  if (!s) return 0;
  const auto& p = octorun::fuzz::policy_for_kind(static_cast<int>(s->session_id.size()));
  if (check_server_url(s->message_queue_url, p, "the message queue URL"))
    octorun::fuzz::check_accepted(s->message_queue_url, p);
  return 0;
}
