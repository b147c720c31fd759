// libFuzzer target: a GitHub webhook delivery after its HMAC check. The body
// is signed with the intake's secret here, so the fuzzer's bytes reach the
// workflow_job parser, the delivery-id dedupe and the intake's answers
// rather than stopping at 401. The first byte picks the headers (event name,
// delivery id, a wrong signature now and then); the rest is the body.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "adapters/github/crypto.hpp"
#include "adapters/github/webhook.hpp"
#include "adapters/github/webhook_intake.hpp"

namespace {

constexpr std::string_view secret = "fuzz-webhook-secret";

// Reads every field a consumer of the message reads.
std::size_t touch(const octorun::messages::job_message& m) {
  return std::visit(
      [](const auto& msg) {
        const auto& j = msg.job;
        std::size_t n = j.github_job_id.size() + j.repository.size() + j.workflow_ref.size() +
                        j.display_name.size() + static_cast<std::size_t>(j.job_id & 1) +
                        static_cast<std::size_t>(j.run_id & 1);
        for (const auto& l : j.labels) n += l.size();
        return n;
      },
      m);
}

octorun::github::webhook_intake& intake() {
  // One intake for the process (a loopback server on a free port that no
  // request reaches: handle() is called directly). Never destroyed.
  static auto* in = [] {
    octorun::github::intake_options o;
    o.secret = std::string(secret);
    o.http.bind_address = "127.0.0.1";
    o.http.port = 0;
    o.http.threads = 1;
    o.dedupe_capacity = 64;  // small: the fuzzer also exercises eviction
    auto started =
        octorun::github::webhook_intake::start(o, [](octorun::messages::job_message m) { (void)touch(m); });
    if (!started) std::abort();
    return started->release();
  }();
  return *in;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);

  if (auto parsed = octorun::github::parse_workflow_job(body); parsed && parsed->has_value())
    (void)touch(**parsed);

  octorun::http::server_request req;
  req.method = "POST";
  req.path = "/webhook";
  req.body = body;
  static constexpr const char* events[] = {"workflow_job", "workflow_job", "workflow_job",
                                           "ping",         "workflow_run", "",
                                           "workflow_job", "workflow_job"};
  req.headers.push_back({"x-github-event", events[flags & 7]});
  // Few distinct ids, so duplicates are common.
  req.headers.push_back(
      {"x-github-delivery", (flags & 8) ? std::string() : "d-" + std::to_string(flags >> 5)});
  req.headers.push_back(
      {"x-hub-signature-256", (flags & 16) ? "sha256=00" : octorun::github::webhook_signature(secret, body)});
  auto answer = intake().handle(req);
  if (answer.status < 200 || answer.status > 499) std::abort();  // the intake never fails itself
  return 0;
}
