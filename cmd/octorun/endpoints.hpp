// What each of the manager's HTTP endpoints lets a client hold: its threads
// (the connection cap), how long a TLS handshake, headers, an idle
// keep-alive connection and a body may take (http::server_options). Who can
// reach an endpoint decides its numbers; docs/security.md has the trust model
// and test/manager/slow_clients_test.cpp attacks every endpoint with them.
#pragma once

#include "adapters/http/http_server.hpp"
#include "cmd/octorun/options.hpp"

namespace octorun::manager {

struct endpoint_options {
  http::server_options probes;     // /healthz, /readyz: loopback, the exec probe
  http::server_options metrics;    // /metrics: Prometheus
  http::server_options admission;  // the admission webhook: the apiserver
  http::server_options intake;     // the GitHub webhook intake: the ingress
};

endpoint_options endpoints(const options& o);

}  // namespace octorun::manager
