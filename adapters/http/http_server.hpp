// An HTTP(S) server on civetweb for our endpoints: the GitHub webhook intake,
// the admission webhook, metrics and health, and the GitHub simulator.
// Handlers run on civetweb's worker threads; they must not block for long and
// hand real work to actors.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/http/http_client.hpp"
#include "common/expected.hpp"

struct mg_context;

namespace octorun::http {

struct server_request {
  std::string method;
  std::string path;             // without the query string
  std::string query;            // raw, without '?'
  std::vector<header> headers;  // names lower-cased
  std::string body;
  std::string remote_addr;

  std::string_view header_value(std::string_view lower_name) const;
  // Value of one query parameter (percent-decoded); empty when absent.
  std::string query_param(std::string_view name) const;
};

struct server_response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<header> headers;
};

// A JSON {"message": ...} answer (errors, acknowledgements).
server_response message_response(int status, std::string_view message);

using handler = std::function<server_response(const server_request&)>;

struct route {
  std::string path;                  // exact match, or a prefix when it ends with '/'
  std::vector<std::string> methods;  // empty: any method
  handler fn;
};

struct server_options {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;    // 0: the kernel picks a free port (see server::port)
  std::string tls_pem_file;  // private key + certificate chain in one PEM file; empty: plain HTTP
  int threads = 4;
  std::size_t max_body_bytes = 1 << 20;
  int request_timeout_ms = 10'000;
};

class server {
 public:
  // Fails with a message when the port cannot be bound, the certificate cannot
  // be loaded, or TLS is wanted but civetweb cannot provide it.
  static expected<std::unique_ptr<server>, std::string> start(server_options options,
                                                              std::vector<route> routes);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  std::uint16_t port() const { return port_; }
  bool tls() const { return !options_.tls_pem_file.empty(); }
  std::string base_url() const;

  struct state;  // shared with civetweb's callbacks

 private:
  server() = default;
  mg_context* ctx_ = nullptr;
  std::uint16_t port_ = 0;
  server_options options_;
  std::unique_ptr<state> state_;
};

// True when civetweb can serve TLS in this process (see openssl_compat/).
bool tls_available();

// A query string's value: percent_decode (common/strings.hpp), '+' a space.
std::string url_decode(std::string_view s);

}  // namespace octorun::http
