// The HTTPS admission webhook: civetweb (octorun::http::server) serving the
// endpoints in handlers.hpp with a certificate from certificate_source.
// Starting fails fast when this process cannot serve TLS.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "adapters/admission/certificates.hpp"
#include "adapters/admission/handlers.hpp"
#include "adapters/http/http_server.hpp"
#include "common/expected.hpp"

namespace octorun::admission {

struct webhook_server_options {
  std::string bind_address = "0.0.0.0";
  std::uint16_t port = 0;  // 0: any free port (tests); the manager uses 9443
  // What a client may hold (threads, timeouts, keep-alive); its address,
  // port, certificate and body limit come from the fields here.
  http::server_options http;
  // Replace the serving certificate when it has less than this left.
  std::chrono::seconds rotate_before = std::chrono::hours(24 * 30);
  admission_policy policy;  // what the platform allows (manager flags)
};

class webhook_server {
 public:
  static expected<std::unique_ptr<webhook_server>, std::string> start(webhook_server_options options,
                                                                      certificate_source certificates);

  std::uint16_t port() const;
  // PEM to put (base64) into the webhook configurations' caBundle.
  std::string ca_bundle() const;
  // https://<host>:<port><path of e>.
  std::string url(endpoint e, const std::string& host = "127.0.0.1") const;

  // Called periodically by the manager: when the self-generated certificate
  // is due (files mode: when the files changed), issue/reload it and restart the listener
  // on the same port. Returns whether it rotated. The restart leaves a gap of
  // a few milliseconds in which the apiserver's calls fail (failurePolicy).
  expected<bool, std::string> rotate_if_due();
  expected<ok_t, std::string> rotate_now();

 private:
  webhook_server(webhook_server_options options, certificate_source certificates)
      : options_(std::move(options)), certificates_(std::move(certificates)) {}
  expected<ok_t, std::string> restart();

  webhook_server_options options_;
  certificate_source certificates_;
  mutable std::mutex mutex_;
  serving_material material_;
  std::unique_ptr<http::server> server_;
};

}  // namespace octorun::admission
