#include "adapters/github/webhook_intake.hpp"

#include <ctime>

#include "adapters/github/crypto.hpp"
#include "common/json.hpp"

namespace octorun::github {
job_sink actor_sink(caf::actor dst) {
  return [dst = std::move(dst)](messages::job_message m) { messages::send_job_message(dst, std::move(m)); };
}

expected<std::unique_ptr<webhook_intake>, std::string> webhook_intake::start(intake_options options,
                                                                             job_sink sink) {
  if (options.secret.empty() && !options.allow_insecure)
    return unexpected{
        std::string("the webhook secret is empty: refusing to accept unsigned deliveries "
                    "(set a secret, or the explicit insecure flag for development)")};
  if (!sink) return unexpected{std::string("the webhook intake needs a sink")};
  std::unique_ptr<webhook_intake> in(new webhook_intake());
  in->options_ = options;
  in->counters_ = options.counters ? options.counters : std::make_shared<intake_counters>();
  in->sink_ = std::move(sink);
  in->dedupe_ = std::make_unique<delivery_dedupe>(options.dedupe_ttl,
                                                  std::max<std::size_t>(1, options.dedupe_capacity));
  in->replays_ =
      std::make_unique<job_replays>(options.dedupe_ttl, std::max<std::size_t>(1, options.dedupe_capacity));
  auto http_options = options.http;
  http_options.max_body_bytes = options.max_body_bytes;
  auto* self = in.get();
  auto srv = http::server::start(
      http_options,
      {{options.path, {"POST"}, http::request_body::accepted, [self](const http::server_request& r) {
          return self->handle(r);
        }}});
  if (!srv) return unexpected{srv.error()};
  in->server_ = std::move(*srv);
  return in;
}

http::server_response webhook_intake::handle(const http::server_request& req) {
  if (req.method != "POST") return http::message_response(405, "only POST is accepted");
  if (req.body.size() > options_.max_body_bytes) return http::message_response(413, "request body too large");
  auto delivery = std::string(req.header_value("x-github-delivery")).substr(0, 200);
  // Turned away: answered `status`, told to on_rejected.
  auto reject = [&](int status, const char* reason, const std::string& why) {
    if (options_.on_rejected) options_.on_rejected(reason, delivery, why);
    return http::message_response(status, why);
  };
  if (!options_.secret.empty()) {
    auto sig = req.header_value("x-hub-signature-256");
    if (sig.empty()) {
      counters_->bad_signature++;
      return reject(401, "bad_signature", "missing X-Hub-Signature-256");
    }
    if (!webhook_signature_matches(options_.secret, req.body, sig)) {
      counters_->bad_signature++;
      return reject(401, "bad_signature", "X-Hub-Signature-256 does not match the body");
    }
  }
  auto event = req.header_value("x-github-event");
  if (event.empty()) return reject(400, "malformed_delivery", "missing X-GitHub-Event");
  if (delivery.empty() || req.header_value("x-github-delivery").size() > 200)
    return reject(400, "malformed_delivery", "missing or invalid X-GitHub-Delivery");

  if (event == "ping") {
    counters_->pings++;
    return http::message_response(200, "pong");
  }
  if (event != "workflow_job") {
    counters_->ignored++;
    return http::message_response(202, "event ignored");
  }
  auto parsed = parse_workflow_job(req.body);
  if (!parsed) {
    counters_->malformed++;
    return reject(400, "malformed_delivery", parsed.error());
  }
  {
    std::lock_guard lock(dedupe_mutex_);
    if (!dedupe_->first_seen(delivery, delivery_dedupe::clock::now())) {
      counters_->duplicates++;
      return reject(200, "duplicate_delivery", "duplicate delivery");
    }
  }
  if (!parsed->has_value()) {
    counters_->ignored++;
    return http::message_response(202, "action ignored");
  }
  {
    std::lock_guard lock(dedupe_mutex_);
    if (auto replay = replays_->replayed(**parsed, delivery_dedupe::clock::now(), std::time(nullptr))) {
      counters_->replayed++;
      return reject(200, "replayed_delivery", *replay);
    }
  }
  counters_->accepted++;
  sink_(std::move(**parsed));
  return http::message_response(202, "accepted");
}

}  // namespace octorun::github
