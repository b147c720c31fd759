#include "adapters/admission/webhook_server.hpp"

#include <vector>

#include "common/json_parse.hpp"

namespace octorun::admission {
namespace {

std::vector<http::route> routes(const admission_policy& policy) {
  std::vector<http::route> out;
  for (auto e : {endpoint::mutate_runnerset, endpoint::validate_runnerset, endpoint::validate_runner,
                 endpoint::validate_runnerclass}) {
    out.push_back(
        {path_of(e), {"POST"}, http::request_body::accepted, [e, policy](const http::server_request& req) {
           auto reply = handle_review(e, req.body, policy);
           http::server_response r;
           r.status = reply.status;
           r.body = std::move(reply.body);
           return r;
         }});
  }
  out.push_back({"/healthz", {"GET"}, http::request_body::refused, [](const http::server_request&) {
                   http::server_response r;
                   r.content_type = "text/plain";
                   r.body = "ok";
                   return r;
                 }});
  return out;
}

}  // namespace

expected<std::unique_ptr<webhook_server>, std::string> webhook_server::start(
    webhook_server_options options, certificate_source certificates) {
  if (!http::tls_available())
    return unexpected<std::string>{
        std::string("the admission webhook needs TLS, but civetweb cannot load OpenSSL in this process (see "
                    "adapters/http/openssl_compat)")};
  std::unique_ptr<webhook_server> self(new webhook_server(std::move(options), std::move(certificates)));
  auto material = self->certificates_.issue(self->options_.rotate_before);
  if (!material) return unexpected<std::string>{"webhook certificate: " + material.error()};
  self->material_ = std::move(*material);
  if (auto started = self->restart(); !started) return unexpected<std::string>{started.error()};
  return self;
}

expected<ok_t, std::string> webhook_server::restart() {
  http::server_options opts = options_.http;
  opts.bind_address = options_.bind_address;
  opts.port = server_ ? server_->port() : options_.port;
  opts.tls_pem_file = material_.pem_file;
  opts.max_body_bytes = json::sources::admission_review.max_bytes;
  server_.reset();  // release the port before binding it again
  auto srv = http::server::start(opts, routes(options_.policy));
  if (!srv) return unexpected<std::string>{"webhook server: " + srv.error()};
  server_ = std::move(*srv);
  options_.port = server_->port();
  return ok;
}

std::uint16_t webhook_server::port() const {
  std::lock_guard lock(mutex_);
  return options_.port;
}

std::string webhook_server::ca_bundle() const {
  std::lock_guard lock(mutex_);
  return material_.ca_bundle;
}

std::string webhook_server::url(endpoint e, const std::string& host) const {
  return "https://" + host + ":" + std::to_string(port()) + path_of(e);
}

expected<bool, std::string> webhook_server::rotate_if_due() {
  bool due;
  {
    std::lock_guard lock(mutex_);
    if (certificates_.self_signed_mode()) {
      auto left = certificates_.seconds_left();
      due = !left || rotation_due(*left, options_.rotate_before);
    } else {
      // Files are renewed by their owner (cert-manager): reload when they change.
      due = certificates_.files_changed();
    }
  }
  if (!due) return false;
  if (auto r = rotate_now(); !r) return unexpected<std::string>{r.error()};
  return true;
}

expected<ok_t, std::string> webhook_server::rotate_now() {
  std::lock_guard lock(mutex_);
  auto material = certificates_.issue(options_.rotate_before);
  if (!material) return unexpected<std::string>{"webhook certificate: " + material.error()};
  material_ = std::move(*material);
  return restart();
}

}  // namespace octorun::admission
