#include "adapters/github/webhook_intake.hpp"

#include <ctime>

#include "adapters/github/crypto.hpp"
#include "common/json.hpp"

namespace octorun::github {
job_sink actor_sink(caf::actor dst) {
  return [dst = std::move(dst)](messages::job_message m) { messages::send_job_message(dst, std::move(m)); };
}

void class_webhook_secrets::replace(std::map<std::string, secret> all) {
  std::lock_guard lock(mutex_);
  secrets_ = std::move(all);
}

std::optional<class_webhook_secrets::secret> class_webhook_secrets::find(
    const std::string& class_name) const {
  std::lock_guard lock(mutex_);
  auto it = secrets_.find(class_name);
  if (it == secrets_.end()) return std::nullopt;
  return it->second;
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
  auto handle = [self](const http::server_request& r) { return self->handle(r); };
  std::vector<http::route> routes{{options.path, {"POST"}, http::request_body::accepted, handle, {}}};
  // A RunnerClass's path is refused before its body is read unless the
  // class has a webhook secret to verify it with.
  if (options.classes)
    routes.push_back({options.path + std::string(class_paths),
                      {"POST"},
                      http::request_body::accepted,
                      handle,
                      [self](const http::server_request& r) -> std::optional<http::refusal> {
                        auto where = intake_path_of(r.path, self->options_.path);
                        if (where.which != intake_path::kind::runner_class)
                          return http::refusal{404, "not found"};
                        if (auto secret = self->class_secret(where.class_name); !secret)
                          return secret.error();
                        return std::nullopt;
                      }});
  auto srv = http::server::start(http_options, std::move(routes));
  if (!srv) return unexpected{srv.error()};
  in->server_ = std::move(*srv);
  return in;
}

expected<std::string, http::refusal> webhook_intake::class_secret(const std::string& class_name) const {
  auto found = options_.classes ? options_.classes->find(class_name) : std::nullopt;
  if (!found)
    return unexpected{http::refusal{
        404, "no RunnerClass \"" + class_name + "\" with a webhook secret (spec.github.webhookSecretRef)"}};
  if (!*found)
    return unexpected{http::refusal{
        503, "the webhook secret of RunnerClass \"" + class_name + "\" cannot be used: " + found->error()}};
  return **found;
}

http::server_response webhook_intake::handle(const http::server_request& req) {
  if (req.method != "POST") return http::message_response(405, "only POST is accepted");
  if (req.body.size() > options_.max_body_bytes) return http::message_response(413, "request body too large");
  // One secret per path: the manager's on its own path, a class's on the
  // class's, never several tried in turn.
  const auto where = intake_path_of(req.path, options_.path);
  std::string secret = options_.secret;
  if (where.which == intake_path::kind::unknown) return http::message_response(404, "not found");
  if (where.which == intake_path::kind::runner_class) {
    auto found = class_secret(where.class_name);
    if (!found) return http::message_response(found.error().status, found.error().message);
    secret = std::move(*found);
  }
  auto delivery = std::string(req.header_value("x-github-delivery")).substr(0, 200);
  // Turned away: answered `status`, told to on_rejected.
  auto reject = [&](int status, const char* reason, const std::string& why) {
    if (options_.on_rejected) options_.on_rejected(reason, delivery, why);
    return http::message_response(status, why);
  };
  if (!secret.empty()) {
    auto sig = req.header_value("x-hub-signature-256");
    if (sig.empty()) {
      counters_->bad_signature++;
      return reject(401, "bad_signature", "missing X-Hub-Signature-256");
    }
    if (!webhook_signature_matches(secret, req.body, sig)) {
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
    if (!dedupe_->first_seen(where.class_name + " " + delivery, delivery_dedupe::clock::now())) {
      counters_->duplicates++;
      return reject(200, "duplicate_delivery", "duplicate delivery");
    }
  }
  if (!parsed->has_value()) {
    counters_->ignored++;
    return http::message_response(202, "action ignored");
  }
  // Its demand, starts and completions go only to the class's sets.
  std::visit([&](auto& m) { m.job.runner_class = where.class_name; }, **parsed);
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
