#include "adapters/http/http_server.hpp"

#include <arpa/inet.h>
#include <civetweb.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <future>

#include "common/json_writer.hpp"
#include "common/strings.hpp"

extern "C" int octorun_openssl_compat_version(void);
extern "C" int octorun_crypto_compat_version(void);

namespace octorun::http {

struct server::state {
  server_options options;
  std::vector<route> routes;
  std::uint16_t port = 0;  // the port bound (options.port may be 0)
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

// An answer sent before the body was read: civetweb then closes the
// connection (mg_send_http_error marks it to close) instead of reading and
// discarding the rest of the body on this thread, which a client trickling
// the body would hold for as long as it likes.
int refuse(mg_connection* c, int status, const char* message) {
  mg_send_http_error(c, status, "%s", message);
  return status;
}

enum class body_read { complete, too_slow, cut_short };

std::uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

// The address of `a` as civetweb writes a remote address (inet_ntop).
std::string address_of(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, text, sizeof text);
  else if (a.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, text, sizeof text);
  return text;
}

// The socket of the connection a handler serves (civetweb does not expose
// it): the one whose local port is the server's and whose peer is the
// client (address and port: two clients may use the same source port). The
// handler's thread owns it until the handler returns. -1: not found.
int connection_socket(std::uint16_t server_port, const mg_request_info& client) {
  DIR* fds = ::opendir("/proc/self/fd");
  if (fds == nullptr) return -1;
  int found = -1;
  while (const dirent* e = ::readdir(fds)) {
    int fd = std::atoi(e->d_name);
    if (fd <= 2 || fd == ::dirfd(fds)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        port_of(local) != server_port)
      continue;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
        port_of(peer) != client.remote_port || address_of(peer) != client.remote_addr)
      continue;
    found = fd;
    break;
  }
  ::closedir(fds);
  return found;
}

// How many body bytes one mg_read may ask for without waiting. mg_read
// returns only once it has all it asked for (or a read waited a whole
// header_timeout_ms for nothing), so asking for more than has arrived lets a
// client that trickles a byte at a time hold it without end. Plain HTTP: what
// the kernel holds. TLS: the kernel holds records, of which only whole ones
// decrypt; leave out one record of the largest size and each record's
// overhead. At least one byte: what civetweb or OpenSSL already buffered, or
// a wait of at most one read.
std::size_t readable_now(int fd, bool tls, std::size_t remaining) {
  int queued = 0;
  if (fd < 0 || ::ioctl(fd, FIONREAD, &queued) != 0 || queued <= 0) return 1;
  std::size_t n = static_cast<std::size_t>(queued);
  if (tls) {
    constexpr std::size_t largest_record = 16384 + 256;
    n = n > largest_record ? n - largest_record - n / 256 : 1;
  }
  return std::clamp<std::size_t>(n, 1, remaining);
}

// Reads the announced body into `out` against the endpoint's deadline and
// minimum rate, checked after every read, each of which waits at most
// header_timeout_ms.
body_read read_body(mg_connection* c, const server::state& st, std::size_t length, std::string& out) {
  using clock = std::chrono::steady_clock;
  const auto& o = st.options;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::milliseconds(o.body_timeout_ms);
  const auto grace = std::chrono::milliseconds(o.header_timeout_ms);
  const int fd = connection_socket(st.port, *mg_get_request_info(c));
  const bool tls = !o.tls_pem_file.empty();
  out.resize(length);
  std::size_t have = 0;
  // Nothing in the kernel: the rest is in civetweb's buffer (read with the
  // headers) or still to come; a byte at a time, asking the kernel again
  // every so often rather than before every byte.
  int single_bytes = 0;
  while (have < length) {
    std::size_t ask = 1;
    if (single_bytes > 0)
      --single_bytes;
    else if (ask = readable_now(fd, tls, length - have); ask == 1)
      single_bytes = 63;
    const int n = mg_read(c, out.data() + have, ask);
    if (n < 0) return body_read::cut_short;  // the client closed or broke the connection
    have += static_cast<std::size_t>(n);
    if (have == length) break;
    const auto now = clock::now();
    if (now >= deadline) return body_read::too_slow;
    const auto elapsed = std::chrono::duration<double>(now - start);
    if (now - start > grace &&
        static_cast<double>(have) < static_cast<double>(o.min_body_bytes_per_second) * elapsed.count())
      return body_read::too_slow;
  }
  return body_read::complete;
}

// A refusal of a request whose body is still coming: the answer goes first,
// then what the client keeps sending of the announced body is read and
// dropped while it arrives without a pause, within the body deadline, and
// the connection closes. Closing with unread bytes makes the kernel reset
// the connection, and a client still sending then often loses the answer;
// a client that pauses (or trickles) is not waited for.
int refuse_body(mg_connection* c, const server::state& st, int status, const char* message,
                unsigned long long announced) {
  mg_send_http_error(c, status, "%s", message);
  const int fd = connection_socket(st.port, *mg_get_request_info(c));
  if (fd < 0) return status;
  const bool tls = !st.options.tls_pem_file.empty();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(st.options.body_timeout_ms);
  constexpr int pause_ms = 200;
  std::string dropped(64 * 1024, '\0');
  unsigned long long drained = 0;
  while (drained < announced && std::chrono::steady_clock::now() < deadline) {
    pollfd arriving{fd, POLLIN, 0};
    if (::poll(&arriving, 1, pause_ms) <= 0) break;  // a pause, or the connection failed
    int queued = 0;
    if (::ioctl(fd, FIONREAD, &queued) != 0 || queued <= 0) break;  // closed by the client
    const auto ask = std::min<std::size_t>(readable_now(fd, tls, announced - drained), dropped.size());
    const int n = mg_read(c, dropped.data(), ask);
    if (n <= 0) break;
    drained += static_cast<unsigned long long>(n);
  }
  return status;
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
  // civetweb answers a Transfer-Encoding other than chunked with 400 itself.
  const bool chunked = !req.header_value("transfer-encoding").empty();
  const bool has_body = chunked || ri->content_length > 0;

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
    const int status = path_known ? 405 : 404;
    const char* why = path_known ? "method not allowed" : "not found";
    if (chunked) return refuse(c, status, why);
    if (has_body)
      return refuse_body(c, *st, status, why, static_cast<unsigned long long>(ri->content_length));
    send(c, message_response(status, why));
    return status;
  }

  if (found->screen)
    if (auto refused = found->screen(req)) {
      if (chunked) return refuse(c, refused->status, refused->message.c_str());
      if (has_body)
        return refuse_body(c, *st, refused->status, refused->message.c_str(),
                           static_cast<unsigned long long>(ri->content_length));
      send(c, message_response(refused->status, refused->message));
      return refused->status;
    }

  if (has_body) {
    // A body of unknown length could not be held to the deadline: civetweb
    // reads each chunk-size line a byte at a time, each read with its own wait.
    if (chunked)
      return refuse(c, found->body == request_body::refused ? 413 : 411,
                    found->body == request_body::refused ? "this route takes no request body"
                                                         : "a request body needs a Content-Length");
    const auto length = static_cast<unsigned long long>(ri->content_length);
    if (found->body == request_body::refused)
      return refuse_body(c, *st, 413, "this route takes no request body", length);
    if (length > st->options.max_body_bytes)
      return refuse_body(c, *st, 413, "request body too large", length);
    switch (read_body(c, *st, static_cast<std::size_t>(length), req.body)) {
      case body_read::complete:
        break;
      case body_read::too_slow:
        return refuse(c, 408, "request body too slow");
      case body_read::cut_short:
        return refuse(c, 400, "request body ended early");
    }
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
  auto number = [](long long n) { return std::to_string(std::max(1LL, n)); };
  const std::string threads = number(options.threads);
  const std::string queue = number(options.connection_queue);
  const std::string backlog = number(options.listen_backlog);
  const std::string header_bytes = number(static_cast<long long>(options.max_header_bytes));
  const std::string header_timeout = number(options.header_timeout_ms);
  const bool keep_alive = options.keep_alive_timeout_ms > 0;
  const std::string keep_alive_timeout = number(options.keep_alive_timeout_ms);
  std::vector<const char*> opts = {"listening_ports",       ports.c_str(),
                                   "num_threads",           threads.c_str(),
                                   "connection_queue",      queue.c_str(),
                                   "listen_backlog",        backlog.c_str(),
                                   "max_request_size",      header_bytes.c_str(),
                                   "request_timeout_ms",    header_timeout.c_str(),
                                   "enable_keep_alive",     keep_alive ? "yes" : "no",
                                   "keep_alive_timeout_ms", keep_alive_timeout.c_str(),
                                   "tcp_nodelay",           "1"};
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
  mg_server_port sp[4] = {};
  int n = mg_get_server_ports(s->ctx_, 4, sp);
  if (n < 1) return unexpected{std::string("HTTP server started without a listening port")};
  s->port_ = static_cast<std::uint16_t>(sp[0].port);
  s->state_->port = s->port_;
  mg_set_request_handler(s->ctx_, "/", dispatch, s->state_.get());
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
