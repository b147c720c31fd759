#include "adapters/http/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <ctime>
#include <mutex>

#include "common/strings.hpp"
#include "common/url.hpp"

namespace octorun::http {
namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

struct transfer {
  CURL* handle = nullptr;
  response resp;
  const chunk_sink* sink = nullptr;
  bool sink_stopped = false;
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::milliseconds idle_timeout{0};
  std::chrono::steady_clock::time_point last_byte = std::chrono::steady_clock::now();
  bool went_silent = false;
  std::size_t max_body = default_max_body_bytes;
  bool over_cap = false;
};

// Appends a chunk to the collected body, or refuses it past the cap.
bool collect(transfer& t, std::string_view chunk) {
  if (chunk.size() > t.max_body - std::min(t.max_body, t.resp.body.size())) {
    t.over_cap = true;
    return false;
  }
  t.resp.body.append(chunk);
  return true;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  t->last_byte = std::chrono::steady_clock::now();
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    t->resp.headers.clear();  // a new response (redirect or 100-continue) starts over
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos)
    t->resp.headers.emplace_back(ascii_lower(trim(line.substr(0, colon))),
                                 std::string(trim(line.substr(colon + 1))));
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  t->last_byte = std::chrono::steady_clock::now();
  std::string_view chunk(data, size * n);
  if (t->sink == nullptr) return collect(*t, chunk) ? chunk.size() : 0;
  // Headers are complete once the body starts: an error body (a Status, a
  // GitHub message) is collected for the caller, not streamed.
  if (t->resp.status == 0) curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &t->resp.status);
  if (t->resp.status >= 300) return collect(*t, chunk) ? chunk.size() : 0;
  if (!(*t->sink)(chunk)) {
    t->sink_stopped = true;
    return 0;  // makes curl abort with CURLE_WRITE_ERROR
  }
  return chunk.size();
}

// libcurl calls this about once a second even while nothing arrives.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<transfer*>(user);
  if (t->cancel != nullptr && t->cancel->load(std::memory_order_relaxed)) return 1;
  if (t->idle_timeout.count() > 0 && std::chrono::steady_clock::now() - t->last_byte > t->idle_timeout) {
    t->went_silent = true;
    return 1;
  }
  return 0;
}

void set_blob(CURL* h, CURLoption opt, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(h, opt, &blob);
}

// An explicit proxy choice: CURLOPT_PROXY "" and CURLOPT_NOPROXY set (even
// empty) make libcurl ignore its environment variables.
void set_proxy_options(CURL* h, const proxy_options& proxy, const std::string& url, const tls_options& tls) {
  const auto* endpoint = proxy_for(proxy, url);
  curl_easy_setopt(h, CURLOPT_PROXY, endpoint != nullptr ? endpoint->url.c_str() : "");
  curl_easy_setopt(h, CURLOPT_NOPROXY, proxy.no_proxy.c_str());
  if (endpoint == nullptr) return;
  if (!endpoint->username.empty() || !endpoint->password.empty()) {
    curl_easy_setopt(h, CURLOPT_PROXYUSERNAME, endpoint->username.c_str());
    curl_easy_setopt(h, CURLOPT_PROXYPASSWORD, endpoint->password.c_str());
  }
  // An https:// proxy is trusted as the server is (a private CA signs both).
  if (!tls.ca_file.empty()) curl_easy_setopt(h, CURLOPT_PROXY_CAINFO, tls.ca_file.c_str());
  if (!tls.ca_pem.empty()) set_blob(h, CURLOPT_PROXY_CAINFO_BLOB, tls.ca_pem);
}

transport_cause cause_of(CURLcode rc, long connect_code) {
  if (connect_code >= 300 || rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_PROXY)
    return transport_cause::proxy;
  // CURLE_SSL_CONNECT_ERROR stays a network error: a connection reset
  // during the handshake gives it too, and a retry may help then.
  switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
      return transport_cause::tls;
    default:
      return transport_cause::network;
  }
}

}  // namespace

std::string_view response::header_value(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return v;
  return {};
}

client::client(tls_options tls, std::chrono::milliseconds connect_timeout)
    : tls_(std::move(tls)), connect_timeout_(connect_timeout) {
  global_init_once();
  easy_ = curl_easy_init();
  if (easy_ == nullptr) std::abort();  // out of memory: nothing sensible to do
}

client::~client() { curl_easy_cleanup(static_cast<CURL*>(easy_)); }

void client::set_tls(tls_options tls) { tls_ = std::move(tls); }

expected<response, transport_error> client::perform(const request& req) { return run(req, nullptr); }

expected<response, transport_error> client::stream(const request& req, const chunk_sink& sink) {
  return run(req, &sink);
}

expected<response, transport_error> client::run(const request& req, const chunk_sink* sink) {
  // Only https (and http where the configuration chose it): a URL a server
  // handed back must not read a file (file://) or send chosen bytes to
  // another service (gopher://, dict://). libcurl is told the same below.
  const auto scheme = url_scheme(req.url);
  if (scheme != "https" && !(scheme == "http" && plain_http_)) {
    transport_error refused;
    refused.cause = transport_cause::refused;
    const std::string allowed = plain_http_ ? "https:// and http://" : "https://";
    refused.message =
        scheme == "http" ? "plain http:// refused: this client allows https:// only"
        : scheme.empty() ? "a URL without a scheme refused: this client allows " + allowed
                         : "URL scheme '" + scheme.substr(0, 32) + "' refused: this client allows " + allowed;
    return unexpected{std::move(refused)};
  }
  auto* h = static_cast<CURL*>(easy_);
  curl_easy_reset(h);  // keeps the connection cache and TLS sessions
  transfer t;
  t.handle = h;
  t.sink = sink;
  t.cancel = cancel_;
  t.idle_timeout = req.idle_timeout;
  t.max_body = req.max_body_bytes;

  // Headers first: on_body needs the status before the first chunk.
  curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  const char* protocols = plain_http_ ? "http,https" : "https";
  const auto protocols_rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, protocols);
  // Redirects are not followed (CURLOPT_FOLLOWLOCATION stays off); were one
  // ever followed, it could not change to another scheme either.
  const auto redirect_rc = curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
  if (auto refused =
          protocols_not_restricted(protocols_rc == CURLE_OK, redirect_rc == CURLE_OK,
                                   curl_easy_strerror(protocols_rc != CURLE_OK ? protocols_rc : redirect_rc)))
    return unexpected{std::move(*refused)};
  // A body announced longer than the cap is refused before it is read.
  if (sink == nullptr)
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(req.max_body_bytes));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  // HTTP/1.1 even over TLS (libcurl would negotiate HTTP/2): a client does
  // one request at a time on its own connection, so HTTP/2 multiplexes
  // nothing, and a reused HTTP/2 connection the apiserver had gone away on
  // was seen to hang a request until its timeout ("Error in the HTTP2
  // framing layer"); a dead HTTP/1.1 connection is detected and redialled.
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it

  if (req.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (req.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    }
  }

  if (!tls_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, tls_.ca_file.c_str());
  if (!tls_.ca_pem.empty()) set_blob(h, CURLOPT_CAINFO_BLOB, tls_.ca_pem);
  if (!tls_.client_cert_file.empty()) curl_easy_setopt(h, CURLOPT_SSLCERT, tls_.client_cert_file.c_str());
  if (!tls_.client_key_file.empty()) curl_easy_setopt(h, CURLOPT_SSLKEY, tls_.client_key_file.c_str());
  if (!tls_.client_cert_pem.empty()) set_blob(h, CURLOPT_SSLCERT_BLOB, tls_.client_cert_pem);
  if (!tls_.client_key_pem.empty()) set_blob(h, CURLOPT_SSLKEY_BLOB, tls_.client_key_pem);
  if (tls_.insecure_skip_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (proxy_) set_proxy_options(h, *proxy_, req.url, tls_);
  char detail[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);

  curl_slist* list = nullptr;
  bool has_expect = false;
  for (const auto& [k, v] : req.headers) {
    list = curl_slist_append(list, (k + ": " + v).c_str());
    has_expect = has_expect || ascii_lower(k) == "expect";
  }
  if (!has_expect) list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);

  CURLcode rc = curl_easy_perform(h);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);  // `detail` ends with this call
  curl_slist_free_all(list);
  t.resp.status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.resp.status);

  if (rc != CURLE_OK) {
    bool stopped_by_sink = rc == CURLE_WRITE_ERROR && t.sink_stopped;
    if (stopped_by_sink) return std::move(t.resp);  // the caller chose to stop
    transport_error err;
    if (t.over_cap || rc == CURLE_FILESIZE_EXCEEDED) {
      err.cause = transport_cause::refused;
      err.message =
          "response body over the " + std::to_string(req.max_body_bytes) + "-byte limit of this request";
      return unexpected{std::move(err)};
    }
    long connect_code = 0;
    curl_easy_getinfo(h, CURLINFO_HTTP_CONNECTCODE, &connect_code);
    err.cause = cause_of(rc, connect_code);
    // The detail says what the code does not: which certificate problem,
    // which host, the proxy's answer.
    err.message = curl_easy_strerror(rc);
    if (detail[0] != '\0' && err.message != detail) err.message += std::string(": ") + detail;
    if (connect_code >= 300)
      err.message += " (the proxy answered the tunnel request with HTTP " + std::to_string(connect_code) +
                     (connect_code == 407 ? ": its credentials are missing or wrong)" : ")");
    err.timed_out = rc == CURLE_OPERATION_TIMEDOUT || t.went_silent;
    err.aborted = rc == CURLE_ABORTED_BY_CALLBACK && !t.went_silent;
    if (t.went_silent)
      err.message =
          "no byte for " + std::to_string(req.idle_timeout.count()) + " ms: the connection went silent";
    bool streamed_ok = sink != nullptr && t.resp.status > 0 && t.resp.status < 300;
    if (streamed_ok && (rc == CURLE_OPERATION_TIMEDOUT || t.went_silent)) {
      t.resp.went_silent = t.went_silent;
      return std::move(t.resp);  // a stream that ran to its deadline (or went silent) ended normally
    }
    return unexpected{std::move(err)};
  }
  return std::move(t.resp);
}

std::optional<transport_error> protocols_not_restricted(bool protocols_set, bool redirect_protocols_set,
                                                        std::string_view failure) {
  if (protocols_set && redirect_protocols_set) return std::nullopt;
  transport_error refused;
  refused.cause = transport_cause::refused;
  refused.message = std::string("request refused: libcurl did not restrict the schemes it may use (") +
                    (protocols_set ? "CURLOPT_REDIR_PROTOCOLS_STR" : "CURLOPT_PROTOCOLS_STR") + ": " +
                    std::string(failure) + "); a libcurl of 7.85 or later is required";
  return refused;
}

std::string url_encode(std::string_view s) { return percent_encode(s); }

std::optional<std::int64_t> retry_after_seconds(std::string_view value, std::int64_t now_epoch) {
  constexpr std::int64_t a_day = 86'400;
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::int64_t seconds = 0;
    for (char c : value) {
      seconds = seconds * 10 + (c - '0');
      if (seconds > a_day) return a_day;
    }
    return seconds;
  }
  if (now_epoch <= 0) return std::nullopt;
  std::tm tm{};  // IMF-fixdate: "Wed, 21 Oct 2015 07:28:00 GMT"
  const std::string text(value);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(timegm(&tm)) - now_epoch, 0, a_day);
}

}  // namespace octorun::http
