#include "adapters/http/http_server.hpp"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <future>

#include "common/json_writer.hpp"
#include "common/strings.hpp"

extern "C" int octorun_openssl_compat_version(void);
extern "C" int octorun_crypto_compat_version(void);

namespace octorun::http {

struct server::state {
  server_options options;
  std::vector<route> routes;
};

namespace {

unsigned civetweb_features() {
  // mg_init_library is reference-counted; one call for the process is enough.
  static const unsigned features = [] {
    // Keep the compat libraries loaded before civetweb dlopen()s OpenSSL.
    (void)octorun_openssl_compat_version();
    (void)octorun_crypto_compat_version();
    return mg_init_library(MG_FEATURES_TLS);
  }();
  return features;
}

void send(mg_connection* c, const server_response& r) {
  mg_response_header_start(c, r.status);
  if (!r.content_type.empty()) mg_response_header_add(c, "Content-Type", r.content_type.c_str(), -1);
  for (const auto& [k, v] : r.headers) mg_response_header_add(c, k.c_str(), v.c_str(), -1);
  auto len = std::to_string(r.body.size());
  mg_response_header_add(c, "Content-Length", len.c_str(), -1);
  mg_response_header_send(c);
  if (!r.body.empty()) mg_write(c, r.body.data(), r.body.size());
}

bool route_matches(const route& rt, const std::string& path) {
  if (!rt.path.empty() && rt.path.back() == '/') return path.starts_with(rt.path);
  return path == rt.path;
}

int dispatch(mg_connection* c, void* cbdata) {
  auto* st = static_cast<server::state*>(cbdata);
  const mg_request_info* ri = mg_get_request_info(c);
  server_request req;
  req.method = ri->request_method ? ri->request_method : "";
  req.path = ri->local_uri ? ri->local_uri : "";
  req.query = ri->query_string ? ri->query_string : "";
  req.remote_addr = ri->remote_addr;
  for (int i = 0; i < ri->num_headers; ++i)
    req.headers.emplace_back(ascii_lower(ri->http_headers[i].name), ri->http_headers[i].value);

  const route* found = nullptr;
  bool path_known = false;
  for (const auto& rt : st->routes) {
    if (!route_matches(rt, req.path)) continue;
    path_known = true;
    if (rt.methods.empty() ||
        std::find(rt.methods.begin(), rt.methods.end(), req.method) != rt.methods.end()) {
      found = &rt;
      break;
    }
  }
  if (found == nullptr) {
    auto r = message_response(path_known ? 405 : 404, path_known ? "method not allowed" : "not found");
    send(c, r);
    return r.status;
  }

  const auto cap = st->options.max_body_bytes;
  if (ri->content_length > 0 && static_cast<unsigned long long>(ri->content_length) > cap) {
    auto r = message_response(413, "request body too large");
    send(c, r);
    return 413;
  }
  char buf[16384];
  for (;;) {
    int n = mg_read(c, buf, sizeof buf);
    if (n <= 0) break;
    if (req.body.size() + static_cast<size_t>(n) > cap) {  // chunked bodies have no length
      auto r = message_response(413, "request body too large");
      send(c, r);
      return 413;
    }
    req.body.append(buf, static_cast<size_t>(n));
  }

  server_response r;
  try {
    r = found->fn(req);
  } catch (const std::exception& e) {
    // A handler bug must not take the process down with untrusted input.
    r = message_response(500, "internal error");
  }
  send(c, r);
  return r.status;
}

int log_message(const mg_connection*, const char*) { return 1; }  // silence stderr

void wake(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::close(fd);
}

}  // namespace

server_response message_response(int status, std::string_view message) {
  server_response r;
  r.status = status;
  r.body = json::writer().open().field("message", message).close().str();
  return r;
}

std::string_view server_request::header_value(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return v;
  return {};
}

std::string server_request::query_param(std::string_view name) const {
  std::string_view q = query;
  while (!q.empty()) {
    auto amp = q.find('&');
    auto part = q.substr(0, amp);
    auto eq = part.find('=');
    auto key = url_decode(part.substr(0, eq));
    if (key == name) return eq == std::string_view::npos ? std::string{} : url_decode(part.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return {};
}

bool tls_available() { return (civetweb_features() & MG_FEATURES_TLS) != 0; }

expected<std::unique_ptr<server>, std::string> server::start(server_options options,
                                                             std::vector<route> routes) {
  const bool want_tls = !options.tls_pem_file.empty();
  civetweb_features();
  if (want_tls && !tls_available())
    return unexpected{std::string("TLS is not available in civetweb (OpenSSL could not be loaded)")};

  std::unique_ptr<server> s(new server());
  s->options_ = options;
  s->state_ = std::make_unique<state>(state{options, std::move(routes)});

  std::string ports = options.bind_address + ":" + std::to_string(options.port) + (want_tls ? "s" : "");
  std::string threads = std::to_string(std::max(1, options.threads));
  std::string timeout = std::to_string(options.request_timeout_ms);
  std::vector<const char*> opts = {
      "listening_ports", ports.c_str(),       "num_threads", threads.c_str(), "request_timeout_ms",
      timeout.c_str(),   "enable_keep_alive", "yes",         "tcp_nodelay",   "1"};
  if (want_tls) {
    opts.insert(opts.end(), {"ssl_certificate", options.tls_pem_file.c_str(), "ssl_protocol_version", "4"});
  }
  opts.push_back(nullptr);

  mg_callbacks cb{};
  cb.log_message = log_message;
  char errtxt[256] = {0};
  mg_init_data init{};
  init.callbacks = &cb;
  init.user_data = s->state_.get();
  init.configuration_options = opts.data();
  unsigned errcode = 0;
  mg_error_data err{};
  err.code = &errcode;
  err.text = errtxt;
  err.text_buffer_size = sizeof errtxt;
  s->ctx_ = mg_start2(&init, &err);
  if (s->ctx_ == nullptr)
    return unexpected{std::string("cannot start HTTP server on ") + ports + ": " + errtxt};
  mg_set_request_handler(s->ctx_, "/", dispatch, s->state_.get());

  mg_server_port sp[4] = {};
  int n = mg_get_server_ports(s->ctx_, 4, sp);
  if (n < 1) return unexpected{std::string("HTTP server started without a listening port")};
  s->port_ = static_cast<std::uint16_t>(sp[0].port);
  return s;
}

server::~server() {
  if (ctx_ == nullptr) return;
  // civetweb's master thread notices mg_stop only when its poll() returns,
  // which takes up to two seconds when idle; a connection wakes it at once.
  auto stopped = std::async(std::launch::async, [ctx = ctx_] { mg_stop(ctx); });
  while (stopped.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) wake(port_);
}

std::string server::base_url() const {
  return std::string(tls() ? "https://" : "http://") + options_.bind_address + ":" + std::to_string(port_);
}

std::string url_decode(std::string_view s) { return percent_decode(s, true); }

}  // namespace octorun::http
