// libFuzzer target: the runner scale-set protocol's JSON as the Actions
// service sends it: the get-message envelope and the job messages in its
// string body, the session, scale sets and their statistics. The input is
// tried as the envelope itself and as the envelope's body, so the fuzzer
// reaches the job-message array without first inventing the string escaping.
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "adapters/github/scaleset_client.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"

namespace {

std::size_t touch(const octorun::github::queue_message& m) {
  std::size_t n = static_cast<std::size_t>(m.message_id & 1) +
                  static_cast<std::size_t>(m.statistics ? m.statistics->total_available_jobs & 1 : 0);
  for (const auto& job : m.jobs)
    n += octorun::messages::job_of(job).repository.size() + octorun::messages::job_of(job).labels.size();
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace octorun::github;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  if (auto m = parse_queue_message(input, 7)) (void)touch(*m);
  const std::string envelope = R"({"messageId":1,"messageType":"RunnerScaleSetJobMessages",)"
                               R"("statistics":{"totalAvailableJobs":1},"body":)" +
                               octorun::json::quote(input) + "}";
  if (auto m = parse_queue_message(envelope, 7)) (void)touch(*m);

  if (auto s = parse_session(input)) (void)s->statistics.total_assigned_jobs;

  namespace json = octorun::json;
  if (auto d = json::parse(input, json::sources::actions_service_response)) {
    auto set = parse_scale_set(*d);
    (void)parse_statistics(*d);
    // What the manager would send back for it must be valid JSON.
    for (bool for_update : {false, true})
      if (!json::parse(scale_set_json(set, for_update), json::sources::actions_service_response))
        __builtin_trap();
  }
  return 0;
}
