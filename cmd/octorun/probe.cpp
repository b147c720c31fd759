#include "cmd/octorun/probe.hpp"

#include <chrono>
#include <ostream>
#include <string_view>

#include "adapters/http/http_client.hpp"
#include "cmd/octorun/options.hpp"

namespace octorun::manager {
int probe(const std::vector<std::string>& args, std::ostream& err) {
  long port = options{}.health_port;
  long timeout_seconds = 1;
  std::string path = "/healthz";
  for (const auto& arg : args) {
    std::string_view a = arg;
    if (a.starts_with("--port=") && whole_number(a.substr(7), port, 1, 65535)) continue;
    if (a.starts_with("--timeout-seconds=") && whole_number(a.substr(18), timeout_seconds, 1, 3600)) continue;
    if (a.starts_with("--path=/")) {
      path = a.substr(7);
      continue;
    }
    err << "octorun probe: " << arg
        << " is not one of --port=1..65535, --path=/..., --timeout-seconds=1..3600\n";
    return 2;
  }
  http::client client;
  client.set_plain_http(true);
  http::request req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + path;
  req.timeout = std::chrono::seconds(timeout_seconds);
  req.max_body_bytes = 4096;
  auto got = client.perform(req);
  if (!got) {
    err << "octorun probe: " << req.url << ": " << got.error().message << "\n";
    return 1;
  }
  if (got->status != 200) {
    err << "octorun probe: " << req.url << " answered " << got->status << "\n";
    return 1;
  }
  return 0;
}

}  // namespace octorun::manager
