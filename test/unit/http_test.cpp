// The shared HTTP pieces: our libcurl client against our civetweb server,
// plain and over TLS with in-process certificates.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <thread>

#include "adapters/http/http_client.hpp"
#include "adapters/http/http_server.hpp"
#include "adapters/http/retry.hpp"
#include "adapters/tls/certificates.hpp"

namespace octorun::http {
namespace {

std::vector<route> echo_routes() {
  return {
      {"/echo",
       {"POST"},
       request_body::accepted,
       [](const server_request& r) {
         server_response out;
         out.status = 201;
         out.content_type = "text/plain";
         out.body =
             r.method + " " + std::string(r.header_value("x-test")) + " " + r.query_param("q") + " " + r.body;
         out.headers.push_back({"X-Reply", "yes"});
         return out;
       }},
      {"/big",
       {"GET"},
       request_body::refused,
       [](const server_request&) {
         server_response out;
         out.body = std::string(1 << 20, 'x');
         return out;
       }},
  };
}

// Both clients read Retry-After through this one function: a value from a
// server (GitHub, a proxy, the apiserver) is never trusted to be sane.
TEST(RetryAfter, ReadsDelaySecondsAndDatesAndRefusesTheRest) {
  EXPECT_EQ(http::retry_after_seconds("120", 0), 120);
  EXPECT_EQ(http::retry_after_seconds(" 7 ", 0), 7);
  EXPECT_EQ(http::retry_after_seconds("0", 0), 0);
  EXPECT_EQ(http::retry_after_seconds("99999999999999999999999", 0), 86'400);  // at most a day
  EXPECT_EQ(http::retry_after_seconds("", 0), std::nullopt);
  EXPECT_EQ(http::retry_after_seconds("-5", 0), std::nullopt);
  EXPECT_EQ(http::retry_after_seconds("1.5", 0), std::nullopt);
  EXPECT_EQ(http::retry_after_seconds("soon", 0), std::nullopt);
  const std::int64_t now = 1000;
  EXPECT_EQ(http::retry_after_seconds("Thu, 01 Jan 1970 00:20:00 GMT", now), 200);
  EXPECT_EQ(http::retry_after_seconds("Thu, 01 Jan 1970 00:00:10 GMT", now), 0);  // in the past
  EXPECT_EQ(http::retry_after_seconds("Fri, 01 Jan 2100 00:00:00 GMT", now), 86'400);
  EXPECT_EQ(http::retry_after_seconds("Thu, 01 Jan 1970 00:20:00 GMT", 0), std::nullopt);  // no clock
  EXPECT_EQ(http::retry_after_seconds("Thu, 01 Jan 1970 00:20:00 GMT trailing", now), std::nullopt);
}

// The one retry rule of both clients.
TEST(RetryRule, ObeysAdviceWithinBoundsBacksOffOtherwiseAndStopsAtTheLastAttempt) {
  using std::chrono::milliseconds;
  http::retry_policy p;
  p.max_attempts = 3;
  p.base = milliseconds(100);
  p.cap = milliseconds(1000);
  p.min_advised_wait = milliseconds(1000);
  p.max_advised_wait = milliseconds(30'000);
  auto answered = [](long status, std::optional<milliseconds> advice = std::nullopt) {
    http::attempt_outcome o;
    o.status = status;
    o.advised_wait = advice;
    return o;
  };
  http::attempt_outcome no_answer;
  no_answer.transport_error = true;
  EXPECT_EQ(http::decide_retry(p, 0, answered(429, milliseconds(5000)), 0.5).wait, milliseconds(5000));
  EXPECT_EQ(http::decide_retry(p, 0, answered(429, milliseconds(0)), 0.5).wait,
            milliseconds(1000));  // at least
  EXPECT_EQ(http::decide_retry(p, 0, answered(429, std::chrono::hours(1)), 0.5).wait, milliseconds(30'000));
  EXPECT_FALSE(http::decide_retry(p, 2, answered(429, milliseconds(5000)), 0.5).retry);  // the last attempt
  // Without advice: exponential backoff with equal jitter (half fixed, half random), capped.
  auto transport = http::decide_retry(p, 1, no_answer, 0.0);
  EXPECT_TRUE(transport.retry);
  EXPECT_EQ(transport.wait, milliseconds(100));  // 200 ms, its fixed half
  EXPECT_TRUE(http::decide_retry(p, 0, answered(503), 0.5).retry);
  EXPECT_FALSE(http::decide_retry(p, 0, answered(501), 0.5).retry);  // not implemented stays so
  EXPECT_FALSE(http::decide_retry(p, 0, answered(404), 0.5).retry);
  // A policy that retries only what the server throttled.
  p.retry_transport_errors = p.retry_server_errors = false;
  EXPECT_FALSE(http::decide_retry(p, 0, no_answer, 0.5).retry);
  EXPECT_FALSE(http::decide_retry(p, 0, answered(503), 0.5).retry);
  EXPECT_TRUE(http::decide_retry(p, 0, answered(503, milliseconds(2000)), 0.5).retry);
}

TEST(HttpServer, RoundTripsThroughTheClient) {
  auto srv = server::start({}, echo_routes());
  ASSERT_TRUE(srv) << srv.error();
  ASSERT_NE((*srv)->port(), 0);
  client c;
  c.set_plain_http(true);
  request req{"POST", (*srv)->base_url() + "/echo?q=a%20b", {{"X-Test", "hdr"}}, "payload"};
  auto resp = c.perform(req);
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 201);
  EXPECT_EQ(resp->body, "POST hdr a b payload");
  EXPECT_EQ(resp->header_value("x-reply"), "yes");

  // The same client reuses its connection for a second request.
  auto again = c.perform(req);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 201);
}

TEST(HttpServer, AnswersUnknownPathsAndMethodsWithClearErrors) {
  auto srv = server::start({}, echo_routes());
  ASSERT_TRUE(srv);
  client c;
  c.set_plain_http(true);
  auto missing = c.perform({"GET", (*srv)->base_url() + "/nope", {}, ""});
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto wrong_method = c.perform({"GET", (*srv)->base_url() + "/echo", {}, ""});
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
}

TEST(HttpServer, RejectsOversizedBodies) {
  server_options opts;
  opts.max_body_bytes = 1024;
  auto srv = server::start(opts, echo_routes());
  ASSERT_TRUE(srv);
  client c;
  c.set_plain_http(true);
  auto resp = c.perform({"POST", (*srv)->base_url() + "/echo", {}, std::string(4096, 'a')});
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->status, 413);
  // Chunked uploads carry no length: refused before any of it is read
  // (http_server_limits_test.cpp has why).
  auto chunked = c.perform(
      {"POST", (*srv)->base_url() + "/echo", {{"Transfer-Encoding", "chunked"}}, std::string(4096, 'a')});
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 411);
}

TEST(HttpServer, ReportsAPortThatCannotBeBound) {
  auto first = server::start({}, echo_routes());
  ASSERT_TRUE(first);
  server_options opts;
  opts.port = (*first)->port();
  auto second = server::start(opts, echo_routes());
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().find("cannot start"), std::string::npos) << second.error();
}

TEST(HttpClient, StreamsAndStopsWhenTheSinkSaysSo) {
  auto srv = server::start({}, echo_routes());
  ASSERT_TRUE(srv);
  client c;
  c.set_plain_http(true);
  size_t seen = 0;
  auto resp = c.stream({"GET", (*srv)->base_url() + "/big", {}, ""}, [&](std::string_view chunk) {
    seen += chunk.size();
    return seen < 4096;
  });
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_GE(seen, 4096u);
  EXPECT_LT(seen, 1u << 20);
  EXPECT_TRUE(resp->body.empty());
}

// A loopback server that answers one connection with `reply` and then holds
// it open, saying nothing more, until destroyed: what a proxy holding a
// dead watch looks like from the client.
class silent_server {
 public:
  explicit silent_server(std::string reply) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      std::abort();
    port_ = ntohs(addr.sin_port);
    thread_ = std::jthread([this, reply = std::move(reply)](std::stop_token stop) {
      int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      char buf[4096];
      (void)::recv(conn, buf, sizeof buf, 0);  // the request
      (void)::send(conn, reply.data(), reply.size(), MSG_NOSIGNAL);
      while (!stop.stop_requested()) ::usleep(20'000);  // held open, silent
      ::close(conn);
    });
  }
  ~silent_server() {
    ::shutdown(fd_, SHUT_RDWR);  // unblocks an accept still waiting
    thread_.request_stop();
    thread_.join();
    ::close(fd_);
  }
  // A long stream from it that may bring nothing for 1.5 s.
  request watch() const {
    request req{"GET", "http://127.0.0.1:" + std::to_string(port_) + "/watch", {}, ""};
    req.timeout = std::chrono::seconds(60);
    req.idle_timeout = std::chrono::milliseconds(1500);
    return req;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::jthread thread_;
};

TEST(HttpClient, EndsAStreamThatWentSilentAsIfItReachedItsDeadline) {
  silent_server srv("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  client c;
  c.set_plain_http(true);
  std::string got;
  auto resp = c.stream(srv.watch(), [&](std::string_view chunk) {
    got += chunk;
    return true;
  });
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_TRUE(resp->went_silent);
  EXPECT_EQ(got, "hello");
}

TEST(HttpClient, AServerSilentBeforeItsStatusLineIsATimeout) {
  silent_server srv("");
  client c;
  c.set_plain_http(true);
  auto resp = c.stream(srv.watch(), [](std::string_view) { return true; });
  ASSERT_FALSE(resp);
  EXPECT_TRUE(resp.error().timed_out);
  EXPECT_FALSE(resp.error().aborted);
  EXPECT_NE(resp.error().message.find("went silent"), std::string::npos) << resp.error().message;
}

TEST(HttpClient, ReportsConnectionFailuresAsValues) {
  std::uint16_t port;
  {
    auto srv = server::start({}, echo_routes());
    ASSERT_TRUE(srv);
    port = (*srv)->port();
  }  // stopped: nothing listens there now
  client c;
  c.set_plain_http(true);
  auto resp = c.perform({"GET", "http://127.0.0.1:" + std::to_string(port) + "/echo", {}, ""});
  ASSERT_FALSE(resp);
  EXPECT_FALSE(resp.error().message.empty());
}

// Only https, and http where the configuration chose it: a URL a server
// handed back must not read the manager's files or reach another protocol.
TEST(HttpClient, RefusesEverySchemeButHttpsUnlessPlainHttpIsAllowed) {
  auto srv = server::start({}, echo_routes());
  ASSERT_TRUE(srv);
  client strict;
  auto plain = strict.perform({"GET", (*srv)->base_url() + "/big", {}, ""});
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().cause, transport_cause::refused);
  EXPECT_EQ(plain.error().message, "plain http:// refused: this client allows https:// only");

  client relaxed;
  relaxed.set_plain_http(true);
  EXPECT_TRUE(relaxed.perform({"GET", (*srv)->base_url() + "/big", {}, ""}));
  const std::string gopher = "gopher://127.0.0.1:" + std::to_string((*srv)->port()) + "/_GET%20/big";
  for (const auto& url : {std::string("file:///etc/hostname"), gopher, std::string("dict://127.0.0.1/x"),
                          std::string("FILE:///etc/hostname"), std::string("/etc/hostname")}) {
    for (auto* c : {&strict, &relaxed}) {
      auto resp = c->perform({"GET", url, {}, ""});
      ASSERT_FALSE(resp) << url << " was fetched";
      EXPECT_EQ(resp.error().cause, transport_cause::refused) << url;
      EXPECT_NE(resp.error().message.find("refused"), std::string::npos) << resp.error().message;
    }
  }
}

// A redirect is answered, not followed: the Location (another scheme, another
// host) is never fetched.
TEST(HttpClient, DoesNotFollowARedirectToAnotherSchemeOrHost) {
  auto routes = echo_routes();
  routes.push_back({"/moved/", {"GET"}, request_body::refused, [](const server_request& r) {
                      server_response out;
                      out.status = 302;
                      out.headers.push_back({"Location", r.query_param("to")});
                      return out;
                    }});
  auto srv = server::start({}, routes);
  ASSERT_TRUE(srv);
  client c;
  c.set_plain_http(true);
  for (const char* target : {"file:///etc/passwd", "gopher://127.0.0.1:1/_x", "http://example.invalid/"}) {
    auto resp = c.perform({"GET", (*srv)->base_url() + "/moved/?to=" + url_encode(target), {}, ""});
    ASSERT_TRUE(resp) << resp.error().message;
    EXPECT_EQ(resp->status, 302);
    EXPECT_EQ(resp->header_value("location"), target);
    EXPECT_TRUE(resp->body.empty()) << resp->body.substr(0, 100);
  }
}

TEST(HttpClient, RefusesABodyOverTheRequestsCap) {
  auto srv = server::start({}, echo_routes());
  ASSERT_TRUE(srv);
  client c;
  c.set_plain_http(true);
  request req{"GET", (*srv)->base_url() + "/big", {}, ""};
  req.max_body_bytes = 1000;  // the reply announces 1 MiB
  auto resp = c.perform(req);
  ASSERT_FALSE(resp);
  EXPECT_EQ(resp.error().cause, transport_cause::refused);
  EXPECT_EQ(resp.error().message, "response body over the 1000-byte limit of this request");
  req.max_body_bytes = 1u << 20;
  auto fits = c.perform(req);
  ASSERT_TRUE(fits) << fits.error().message;
  EXPECT_EQ(fits->body.size(), 1u << 20);
}

// A body of no announced length is counted as it arrives.
TEST(HttpClient, RefusesAChunkedBodyOverTheCapAsItArrives) {
  silent_server srv("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n" + std::string(4096, 'x') +
                    "\r\n");
  client c;
  c.set_plain_http(true);
  auto req = srv.watch();
  req.max_body_bytes = 1000;
  auto resp = c.perform(req);
  ASSERT_FALSE(resp);
  EXPECT_EQ(resp.error().cause, transport_cause::refused);
  EXPECT_NE(resp.error().message.find("1000-byte limit"), std::string::npos) << resp.error().message;
}

TEST(HttpClient, CapsTheErrorBodyOfAStream) {
  silent_server srv("HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n" +
                    std::string(4096, 'x') + "\r\n");
  client c;
  c.set_plain_http(true);
  auto req = srv.watch();
  req.max_body_bytes = 1000;
  auto resp = c.stream(req, [](std::string_view) { return true; });
  ASSERT_FALSE(resp);
  EXPECT_EQ(resp.error().cause, transport_cause::refused);
}

// A libcurl that does not take the scheme restriction (before 7.85: an
// unknown option) must not run the request unrestricted.
TEST(HttpClient, FailsClosedWhenLibcurlDoesNotRestrictTheSchemes) {
  EXPECT_FALSE(protocols_not_restricted(true, true, "No error"));
  for (const auto& [protocols, redirects] : {std::pair{false, true}, {true, false}, {false, false}}) {
    auto refused =
        protocols_not_restricted(protocols, redirects, "An unknown option was passed in to libcurl");
    ASSERT_TRUE(refused) << protocols << redirects;
    EXPECT_EQ(refused->cause, transport_cause::refused);
    EXPECT_NE(refused->message.find(protocols ? "CURLOPT_REDIR_PROTOCOLS_STR" : "CURLOPT_PROTOCOLS_STR"),
              std::string::npos)
        << refused->message;
    EXPECT_NE(refused->message.find("unknown option"), std::string::npos) << refused->message;
  }
}

class TlsServer : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca_or = tls::make_ca("octorun-test-ca", std::chrono::hours(24));
    ASSERT_TRUE(ca_or) << ca_or.error();
    ca = *ca_or;
    auto leaf = tls::issue_serving_certificate(ca, {"localhost", {"localhost"}, {"127.0.0.1"}});
    ASSERT_TRUE(leaf) << leaf.error();
    char tmpl[] = "/tmp/octorun-tls-XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    pem_file = tmpl;
    std::ofstream(pem_file) << leaf->private_key << leaf->certificate;
  }
  void TearDown() override { std::remove(pem_file.c_str()); }
  tls::key_pair_pem ca;
  std::string pem_file;
};

TEST_F(TlsServer, ServesHttpsThatVerifiesAgainstItsCa) {
  ASSERT_TRUE(tls_available()) << "civetweb could not load OpenSSL (see adapters/http/openssl_compat)";
  server_options opts;
  opts.tls_pem_file = pem_file;
  auto srv = server::start(opts, echo_routes());
  ASSERT_TRUE(srv) << srv.error();
  EXPECT_EQ((*srv)->base_url().rfind("https://", 0), 0u);

  tls_options trust;
  trust.ca_pem = ca.certificate;
  client c(trust);
  auto resp = c.perform({"POST", (*srv)->base_url() + "/echo", {}, "secure"});
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 201);
  EXPECT_EQ(resp->body, "POST   secure");

  client untrusting;  // system store only: our private CA is unknown
  auto refused = untrusting.perform({"POST", (*srv)->base_url() + "/echo", {}, "secure"});
  EXPECT_FALSE(refused);
}

// A body of several TLS records arrives whole (the server asks for no more
// than whole records the kernel holds, http_server.cpp).
TEST_F(TlsServer, ReadsALargeBodyWhole) {
  server_options opts;
  opts.tls_pem_file = pem_file;
  opts.max_body_bytes = 4 << 20;
  auto srv = server::start(opts, echo_routes());
  ASSERT_TRUE(srv) << srv.error();
  tls_options trust;
  trust.ca_pem = ca.certificate;
  client c(trust);
  auto resp = c.perform({"POST", (*srv)->base_url() + "/echo", {}, std::string(3 << 20, 'y')});
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 201);
  EXPECT_EQ(resp->body.size(), std::string("POST   ").size() + (3u << 20));
}

TEST_F(TlsServer, FailsToStartWithAnUnreadableCertificate) {
  server_options opts;
  opts.tls_pem_file = "/nonexistent/octorun.pem";
  auto srv = server::start(opts, echo_routes());
  EXPECT_FALSE(srv);
}

TEST(Certificates, ReportExpiry) {
  auto ca = tls::make_ca("ca", std::chrono::hours(48));
  ASSERT_TRUE(ca);
  auto left = tls::seconds_until_expiry(ca->certificate);
  ASSERT_TRUE(left);
  EXPECT_GT(*left, 47 * 3600);
  EXPECT_LE(*left, 48 * 3600);
  EXPECT_FALSE(tls::seconds_until_expiry("not a certificate"));
  auto no_names = tls::issue_serving_certificate(*ca, {"x", {}, {}});
  EXPECT_FALSE(no_names);
}

}  // namespace
}  // namespace octorun::http
