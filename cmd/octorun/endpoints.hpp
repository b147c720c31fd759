// What each of the manager's HTTP endpoints lets a client hold: its threads
// (the connection cap), how long a TLS handshake, headers, an idle
// keep-alive connection and a body may take (http::server_options). Who can
// reach an endpoint decides its numbers; docs/security.md has the trust model
// and test/binary/slow_clients_test.cpp attacks every endpoint with them.
#pragma once

#include <string>

#include "adapters/http/http_server.hpp"
#include "cmd/octorun/options.hpp"
#include "common/expected.hpp"

namespace octorun::manager {

struct endpoint_options {
  http::server_options probes;     // /healthz, /readyz: loopback, the exec probe
  http::server_options metrics;    // /metrics: Prometheus
  http::server_options admission;  // the admission webhook: the apiserver
  http::server_options intake;     // the GitHub webhook intake: the ingress
};

endpoint_options endpoints(const options& o);

// Where the servers listen once they do: a URL each, empty when the server
// is off (no admission webhook, no webhook intake).
struct listening {
  std::string health;          // serves /healthz and /readyz ("leading" or "standby")
  std::string metrics;         // the /metrics URL
  std::string admission;       // https://bind:port
  std::string webhook_intake;  // the POST /webhook URL
};

// `l` as the JSON object --endpoints-file holds: health, metrics,
// admission, webhookIntake; a server that is off is left out.
std::string endpoints_json(const listening& l);

// Writes endpoints_json(l) to `path` through a file beside it renamed over
// it, so a reader sees no file or the whole of it. The error names the path
// and the reason.
expected<ok_t, std::string> write_endpoints_file(const std::string& path, const listening& l);

}  // namespace octorun::manager
