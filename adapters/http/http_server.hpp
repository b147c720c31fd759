// An HTTP(S) server on civetweb for our endpoints: the GitHub webhook intake,
// the admission webhook, metrics and health, and the GitHub simulator.
// Handlers run on civetweb's worker threads; they must not block for long and
// hand real work to actors.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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

// Whether a route reads a request body. A route that takes none answers a
// request that announces one (a Content-Length above zero, or chunked) with
// 413 without reading it, and closes the connection.
enum class request_body { refused, accepted };

// A request turned away before its body is read.
struct refusal {
  int status;
  std::string message;
};

struct route {
  std::string path;                  // exact match, or a prefix when it ends with '/'
  std::vector<std::string> methods;  // empty: any method
  request_body body;                 // declared by every route: no default
  handler fn;
  // Optional, for a route whose path alone may be refused (a prefix route
  // serving names that come and go): called with the request line and
  // headers, before any of the body is read. A refusal is answered without
  // reading the body, and the connection closed, as for a route that takes
  // none.
  std::function<std::optional<refusal>(const server_request&)> screen = nullptr;
};

// What one endpoint lets a client hold. civetweb serves each connection on a
// worker thread of its own, from the TLS handshake to the close, and queues
// the connections it accepted beyond them (connection_queue, then the
// kernel's listen backlog) in arrival order: a connection nobody serves waits
// behind the slow ones. So an endpoint stays answerable while fewer than
// `threads` connections are slow at once, and each slow one is let go within
// the limits below. The defaults are safe for an endpoint on a network; the
// manager sets each of its endpoints (cmd/octorun/endpoints.cpp).
struct server_options {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;     // 0: the kernel picks a free port (see server::port)
  std::string tls_pem_file;   // private key + certificate chain in one PEM file; empty: plain HTTP
  int threads = 16;           // connections served at once (the connection cap)
  int connection_queue = 16;  // accepted connections waiting for a thread
  // Connections the kernel holds before civetweb accepts them: beyond it the
  // kernel drops connection attempts (retried a second later), so a burst of
  // reconnects must not fill it.
  int listen_backlog = 256;
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_header_bytes = 16 << 10;  // the request line and headers
  // The TLS handshake, and then the request line and headers, each must
  // arrive within this (civetweb's request_timeout_ms: a deadline from when
  // it starts waiting for them, checked after each read, and a read waits
  // at most this long, so a trickle is let go within twice this).
  int header_timeout_ms = 5'000;
  // How long a connection may wait idle for its next request; 0: one
  // request per connection.
  int keep_alive_timeout_ms = 0;
  // The whole body must arrive within this after the headers ...
  int body_timeout_ms = 10'000;
  // ... and, once header_timeout_ms has passed, at this average rate at
  // least: a body trickled a byte at a time is refused with 408 long before
  // the deadline.
  std::size_t min_body_bytes_per_second = 4096;
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
