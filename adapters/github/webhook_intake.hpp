// The GitHub webhook intake: a civetweb endpoint that verifies
// X-Hub-Signature-256 in constant time, deduplicates by X-GitHub-Delivery,
// turns away a replayed body (github::job_replays), answers 202 at once and hands the parsed job message to a
// sink (an actor). It never calls GitHub or Kubernetes on the request path.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "adapters/github/webhook.hpp"
#include "adapters/http/http_server.hpp"
#include "common/expected.hpp"
#include "common/json_parse.hpp"
#include "messages/jobs.hpp"

namespace octorun::github {

using job_sink = std::function<void(messages::job_message)>;

// A sink that anon_sends each message to `dst` as its own type.
job_sink actor_sink(caf::actor dst);

struct intake_counters {
  std::atomic<std::int64_t> accepted{0};  // job messages handed to the sink
  std::atomic<std::int64_t> duplicates{0};
  std::atomic<std::int64_t> replayed{0};  // a job's action seen before under another delivery id
  std::atomic<std::int64_t> pings{0};
  std::atomic<std::int64_t> ignored{0};  // other events and actions
  std::atomic<std::int64_t> bad_signature{0};
  std::atomic<std::int64_t> malformed{0};
};

// The webhook secrets of the RunnerClasses that name one
// (spec.github.webhookSecretRef), as the manager last read them: class
// name -> the secret, or why it cannot be used (its Secret missing, its key
// absent or empty). The manager's reader replaces them whole on each change;
// the intake's request threads look one up per delivery.
class class_webhook_secrets {
 public:
  using secret = expected<std::string, std::string>;
  void replace(std::map<std::string, secret> all);
  std::optional<secret> find(const std::string& class_name) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, secret> secrets_;
};

struct intake_options {
  std::string secret;           // required unless allow_insecure
  bool allow_insecure = false;  // accept unsigned deliveries (development only)
  // The intake's path, verified with `secret`; under it, path/classes/NAME
  // for each RunnerClass `classes` holds, verified with that class's secret
  // alone (one HMAC per delivery, whatever the number of classes).
  std::string path = "/webhook";
  std::shared_ptr<const class_webhook_secrets> classes;  // none: no class paths
  std::size_t max_body_bytes = json::sources::github_webhook.max_bytes;
  // How long delivery ids and job actions are remembered; a queued job older
  // than this is refused as a replay (github::job_replays).
  std::chrono::seconds dedupe_ttl{24 * 3600};
  std::size_t dedupe_capacity = 100'000;
  http::server_options http;  // bind address, port (0), TLS, threads
  // Told of each delivery turned away (reason: bad_signature,
  // malformed_delivery, duplicate_delivery, replayed_delivery; the X-GitHub-Delivery id, if
  // any, and why): the manager logs and counts them. Called on the request
  // thread; must not block. None: nobody.
  std::function<void(const char* reason, const std::string& delivery, const std::string& why)> on_rejected;
  // Where the deliveries are counted (the manager's metrics keep them across
  // intakes); none: counters of the intake's own.
  std::shared_ptr<intake_counters> counters;
};

class webhook_intake {
 public:
  // Fails when there is no secret and allow_insecure is false, or the server cannot start.
  static expected<std::unique_ptr<webhook_intake>, std::string> start(intake_options options, job_sink sink);

  std::uint16_t port() const { return server_->port(); }
  std::string url() const { return server_->base_url() + options_.path; }
  const intake_counters& counters() const { return *counters_; }

  // The request handler, usable without a server (unit tests, benchmarks).
  http::server_response handle(const http::server_request& req);

 private:
  // The secret a RunnerClass's path verifies with, or its refusal: 404 for
  // a class with no webhook secret (or none of that name), 503 for one
  // whose Secret cannot be used. Decided from the path alone.
  expected<std::string, http::refusal> class_secret(const std::string& class_name) const;

  webhook_intake() = default;
  intake_options options_;
  job_sink sink_;
  std::mutex dedupe_mutex_;
  std::unique_ptr<delivery_dedupe> dedupe_;
  std::unique_ptr<job_replays> replays_;
  std::shared_ptr<intake_counters> counters_;
  std::unique_ptr<http::server> server_;  // last: stopped first
};

}  // namespace octorun::github
