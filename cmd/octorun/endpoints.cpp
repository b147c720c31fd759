#include "cmd/octorun/endpoints.hpp"

#include "adapters/files/whole_file.hpp"
#include "common/json_writer.hpp"

namespace octorun::manager {
namespace {

http::server_options listener(const std::string& bind, std::uint16_t port, int threads, int header_timeout_ms,
                              int keep_alive_timeout_ms) {
  http::server_options s;
  s.bind_address = bind;
  s.port = port;
  s.threads = threads;
  s.header_timeout_ms = header_timeout_ms;
  s.keep_alive_timeout_ms = keep_alive_timeout_ms;
  return s;
}

}  // namespace

endpoint_options endpoints(const options& o) {
  endpoint_options e;
  // More threads than connections anyone is expected to hold at once: a
  // connection beyond them waits in arrival order behind the slow ones, and
  // an idle worker costs only its stack pages and header buffer. The probes
  // and every answer to the apiserver must not wait (the kubelet restarts
  // the manager; admission fails closed for the whole cluster).
  constexpr int many = 128;

  // Only the exec probe inside the pod calls it, with the whole request in
  // one write: a short header deadline and no keep-alive let any other
  // connection go at once, and a deep backlog takes bursts of reconnects.
  e.probes = listener(o.health_bind, o.health_port, many, 1'000, 0);
  e.probes.listen_backlog = 1024;
  e.probes.max_header_bytes = 4 << 10;
  e.probes.max_body_bytes = 0;

  // Prometheus scrapes once an interval: a connection per scrape is cheap,
  // and without keep-alive no idle connection holds a thread.
  e.metrics = listener(o.metrics_bind, o.metrics_port, 32, 5'000, 0);
  e.metrics.max_header_bytes = 8 << 10;
  e.metrics.max_body_bytes = 0;

  // The apiserver keeps its connections to the webhook between reviews and
  // sends each review whole: a handshake and headers from it take far less
  // than the deadline, and a body well above the minimum rate.
  e.admission = listener(o.admission_bind, o.admission_port, many, 2'000, 5'000);
  e.admission.body_timeout_ms = 5'000;
  e.admission.min_body_bytes_per_second = 16 << 10;

  // GitHub (through the ingress) opens a connection per delivery.
  e.intake = listener(o.webhook_bind, o.webhook_port, 64, 5'000, 0);
  e.intake.body_timeout_ms = 10'000;
  e.intake.min_body_bytes_per_second = 4 << 10;
  return e;
}

std::string endpoints_json(const listening& l) {
  json::writer w;
  w.open()
      .optional("health", l.health)
      .optional("metrics", l.metrics)
      .optional("admission", l.admission)
      .optional("webhookIntake", l.webhook_intake);
  return w.close().str() + "\n";
}

expected<ok_t, std::string> write_endpoints_file(const std::string& path, const listening& l) {
  auto written = files::write_whole(path, endpoints_json(l));
  if (!written) return unexpected<std::string>{"--endpoints-file: " + written.error()};
  return ok;
}

}  // namespace octorun::manager
