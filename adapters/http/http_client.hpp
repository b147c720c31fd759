// A blocking HTTP(S) client over one libcurl easy handle. One instance per
// thread: it reuses its connection (keep-alive, TLS session) across requests.
// Callers run it on detached actors or worker threads, never on CAF's shared
// scheduler threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/http/proxy.hpp"
#include "common/expected.hpp"

namespace octorun::http {

struct tls_options {
  std::string ca_file;           // PEM bundle to trust; empty: the system store
  std::string ca_pem;            // PEM data to trust (kubeconfig certificate-authority-data)
  std::string client_cert_file;  // client certificate (mutual TLS)
  std::string client_key_file;
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_verify = false;
};

using header = std::pair<std::string, std::string>;

// The largest response body a request reads unless it says otherwise.
inline constexpr std::size_t default_max_body_bytes = 16u << 20;

struct request {
  std::string method = "GET";
  std::string url;
  std::vector<header> headers;
  std::string body;
  std::chrono::milliseconds timeout{30'000};  // whole transfer; 0 = none (watches)
  // A streamed body that brings no byte for this long is ended as if it had
  // reached its deadline (0 = never): a connection that went silent (a
  // proxy or load balancer holding it half-open) is not waited on.
  std::chrono::milliseconds idle_timeout{0};
  // The largest body read into response::body (a streamed body's chunks
  // are the sink's to bound): a longer one ends the transfer with a
  // transport_cause::refused error naming the cap.
  std::size_t max_body_bytes = default_max_body_bytes;
};

struct response {
  long status = 0;
  std::vector<header> headers;  // names lower-cased
  std::string body;
  bool went_silent = false;  // a stream ended by request::idle_timeout

  // First value of a header, by lower-case name; empty when absent.
  std::string_view header_value(std::string_view lower_name) const;
};

// What kept a request from a status line: its cause decides whether a retry
// can help (the network) or only a change of configuration (TLS, a proxy).
enum class transport_cause {
  network,  // DNS, connect, reset, timeout, abort
  tls,      // the server's certificate (not trusted, wrong name, expired) or no common cipher
  proxy,    // the proxy cannot be resolved, or refused the tunnel (e.g. 407)
  refused,  // by this client: a URL scheme it does not allow, a body over the request's cap
};

// The request never reached a status line: DNS, connect, TLS, timeout, abort.
struct transport_error {
  std::string message;  // libcurl's words and its detail, e.g. "SSL certificate problem: ..."
  bool timed_out = false;
  bool aborted = false;  // the caller's cancel flag or stream callback stopped it
  transport_cause cause = transport_cause::network;
};

// Receives each chunk of a streamed body; return false to stop the transfer.
using chunk_sink = std::function<bool(std::string_view chunk)>;

class client {
 public:
  explicit client(tls_options tls = {}, std::chrono::milliseconds connect_timeout = std::chrono::seconds(10));
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  expected<response, transport_error> perform(const request& req);

  // Streams the body to `sink` as it arrives (watches, long polls). The
  // returned response has status and headers; its body holds only what was
  // received before the status turned out to be an error (>= 300).
  expected<response, transport_error> stream(const request& req, const chunk_sink& sink);

  // Another thread may set this to abort a transfer in flight within ~100 ms.
  void set_cancel_flag(const std::atomic<bool>* flag) { cancel_ = flag; }

  // Replaces the TLS settings (e.g. a rotated CA); takes effect on the next request.
  void set_tls(tls_options tls);

  // Whether plain http:// URLs may be fetched besides https:// (never any
  // other scheme, on redirects neither). Off unless the configuration chose
  // a plain-HTTP server (a kubeconfig's or a RunnerSet's http:// URL, the
  // tests' simulator).
  void set_plain_http(bool allowed) { plain_http_ = allowed; }

  // Chooses the proxy explicitly from now on (proxy.hpp); until then, or
  // after set_proxy(nullopt), libcurl reads its environment variables.
  void set_proxy(std::optional<proxy_options> proxy) { proxy_ = std::move(proxy); }

 private:
  expected<response, transport_error> run(const request& req, const chunk_sink* sink);
  void* easy_ = nullptr;  // CURL*
  tls_options tls_;
  std::optional<proxy_options> proxy_;
  std::chrono::milliseconds connect_timeout_;
  const std::atomic<bool>* cancel_ = nullptr;
  bool plain_http_ = false;
};

// A request is refused (transport_cause::refused) unless libcurl accepted
// both restrictions of the schemes it may use (CURLOPT_PROTOCOLS_STR,
// CURLOPT_REDIR_PROTOCOLS_STR; a libcurl older than 7.85 knows neither):
// without them it would fetch any scheme it supports. `failure` is libcurl's
// text for the first one it refused.
std::optional<transport_error> protocols_not_restricted(bool protocols_set, bool redirect_protocols_set,
                                                        std::string_view failure);

// Seconds to wait from a Retry-After header value (RFC 9110 10.2.3): its
// delay-seconds, or its HTTP-date (IMF-fixdate) less `now_epoch`; never
// negative, at most a day. nullopt when the value is empty or neither form,
// and for a date when `now_epoch` is 0 (no clock given). The one reading
// of the header for both clients (GitHub's and the Kubernetes API's).
std::optional<std::int64_t> retry_after_seconds(std::string_view value, std::int64_t now_epoch);

// Percent-encodes a query parameter value or path segment (RFC 3986 unreserved kept).
std::string url_encode(std::string_view s);

}  // namespace octorun::http
