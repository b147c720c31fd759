// What octorun::http::server refuses, and that a refusal closes the
// connection rather than reading (or discarding) the rest of the body on the
// worker thread: real sockets on port 0, requests written byte for byte.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "adapters/http/http_client.hpp"
#include "adapters/http/http_server.hpp"
#include "test/support/raw_socket.hpp"

namespace octorun::http {
namespace {

using namespace std::chrono_literals;
using test::raw_connection;
using test::status_of;

std::vector<route> routes() {
  return {{"/upload",
           {"POST"},
           request_body::accepted,
           [](const server_request& r) {
             return server_response{200, "text/plain", r.body, {}};
           }},
          {"/status", {"GET"}, request_body::refused, [](const server_request&) {
             return server_response{200, "text/plain", "ok", {}};
           }}};
}

// A server that would wait a minute for each read: an answer that arrives,
// with the connection closed, well before that came without reading on.
server_options patient() {
  server_options o;
  o.header_timeout_ms = 60'000;
  o.body_timeout_ms = 120'000;
  o.min_body_bytes_per_second = 0;
  o.max_body_bytes = 1024;
  return o;
}

// Sends `request` (without the body it announces) and returns the reply
// read until the server closes, within a bound far below patient()'s waits.
raw_connection::reply exchange(const server& srv, const std::string& request) {
  raw_connection c(srv.port());
  EXPECT_TRUE(c.connected());
  EXPECT_TRUE(c.send(request));
  return c.read_until_closed(20s);
}

TEST(HttpServerLimits, RefusesABodyToARouteThatTakesNoneWith413AndCloses) {
  auto srv = server::start(patient(), routes());
  ASSERT_TRUE(srv) << srv.error();
  auto reply = exchange(**srv, "GET /status HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n");
  EXPECT_EQ(status_of(reply.bytes), 413) << reply.bytes;
  EXPECT_TRUE(reply.closed) << "the server waited for the body it refused";
  EXPECT_NE(reply.bytes.find("Connection: close"), std::string::npos) << reply.bytes;
  // The same route without a body answers.
  auto plain = exchange(**srv, "GET /status HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(plain.bytes), 200) << plain.bytes;
}

TEST(HttpServerLimits, ClosesTheConnectionAfterRefusingAnOverSizeBody) {
  auto srv = server::start(patient(), routes());
  ASSERT_TRUE(srv) << srv.error();
  auto reply = exchange(**srv, "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\nabc");
  EXPECT_EQ(status_of(reply.bytes), 413) << reply.bytes;
  EXPECT_TRUE(reply.closed) << "the server read on after refusing the body";
}

TEST(HttpServerLimits, RefusesABodyOfUnknownLengthWith411AndCloses) {
  auto srv = server::start(patient(), routes());
  ASSERT_TRUE(srv) << srv.error();
  auto reply =
      exchange(**srv, "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab");
  EXPECT_EQ(status_of(reply.bytes), 411) << reply.bytes;
  EXPECT_TRUE(reply.closed);
}

TEST(HttpServerLimits, RefusesABodyToAnUnknownPathAndCloses) {
  auto srv = server::start(patient(), routes());
  ASSERT_TRUE(srv) << srv.error();
  auto reply = exchange(**srv, "POST /nowhere HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n");
  EXPECT_EQ(status_of(reply.bytes), 404) << reply.bytes;
  EXPECT_TRUE(reply.closed);
}

// A prefix route whose names come and go (the webhook intake's RunnerClass
// paths) refuses an unknown name from its path alone: answered without
// reading the body, and closed, as for a route that takes none.
TEST(HttpServerLimits, AScreenedRouteRefusesByPathBeforeReadingTheBody) {
  std::vector<route> named{{"/named/",
                            {"POST"},
                            request_body::accepted,
                            [](const server_request& r) {
                              return server_response{200, "text/plain", r.body, {}};
                            },
                            [](const server_request& r) -> std::optional<refusal> {
                              if (r.path == "/named/known") return std::nullopt;
                              return refusal{404, "no such name: " + r.path.substr(7)};
                            }}};
  auto srv = server::start(patient(), named);
  ASSERT_TRUE(srv) << srv.error();
  auto refused = exchange(**srv, "POST /named/other HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nab");
  EXPECT_EQ(status_of(refused.bytes), 404) << refused.bytes;
  EXPECT_NE(refused.bytes.find("no such name: other"), std::string::npos) << refused.bytes;
  EXPECT_TRUE(refused.closed) << "the server waited for the body of a path it refused";
  auto chunked =
      exchange(**srv, "POST /named/other HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab");
  EXPECT_EQ(status_of(chunked.bytes), 404) << chunked.bytes;
  auto bodiless = exchange(**srv, "POST /named/other HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(bodiless.bytes), 404) << bodiless.bytes;
  auto known = exchange(
      **srv, "POST /named/known HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(status_of(known.bytes), 200) << known.bytes;
  EXPECT_NE(known.bytes.find("hello"), std::string::npos) << known.bytes;
}

// A body that stops coming falls below the minimum rate once the header
// timeout has passed: 408, and the connection is closed.
TEST(HttpServerLimits, RefusesABodyBelowTheMinimumRateWith408AndCloses) {
  server_options o;
  o.header_timeout_ms = 200;  // also how long one read waits
  o.body_timeout_ms = 120'000;
  o.min_body_bytes_per_second = 1024;
  auto srv = server::start(o, routes());
  ASSERT_TRUE(srv) << srv.error();
  auto reply = exchange(**srv, "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nfirst bytes");
  EXPECT_EQ(status_of(reply.bytes), 408) << reply.bytes;
  EXPECT_TRUE(reply.closed);
}

// Without a minimum rate, the whole-body deadline ends it.
TEST(HttpServerLimits, RefusesABodyPastItsDeadlineWith408AndCloses) {
  server_options o;
  o.header_timeout_ms = 200;
  o.body_timeout_ms = 500;
  o.min_body_bytes_per_second = 0;
  auto srv = server::start(o, routes());
  ASSERT_TRUE(srv) << srv.error();
  auto reply = exchange(**srv, "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\nfirst bytes");
  EXPECT_EQ(status_of(reply.bytes), 408) << reply.bytes;
  EXPECT_TRUE(reply.closed);
}

// A whole body within the limits is read and answered.
TEST(HttpServerLimits, ReadsAWholeBodyWithinTheLimits) {
  auto srv = server::start(patient(), routes());
  ASSERT_TRUE(srv) << srv.error();
  auto reply = exchange(
      **srv, "POST /upload HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(status_of(reply.bytes), 200) << reply.bytes;
  EXPECT_NE(reply.bytes.find("\r\n\r\nhello"), std::string::npos) << reply.bytes;
}

// A large body arrives whole: reads ask for what has arrived, in large
// pieces once the kernel holds them.
TEST(HttpServerLimits, ReadsALargeBodyWhole) {
  server_options o;
  o.max_body_bytes = 4 << 20;
  auto srv = server::start(o, routes());
  ASSERT_TRUE(srv) << srv.error();
  client c;
  c.set_plain_http(true);
  const std::string body(3 << 20, 'x');
  auto resp = c.perform({"POST", (*srv)->base_url() + "/upload", {}, body});
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(resp->body.size(), body.size());
}

// Headers that never end are let go after the header timeout: the thread
// is free again for the next client.
TEST(HttpServerLimits, LetsGoOfHeadersThatNeverEnd) {
  server_options o;
  o.threads = 1;
  o.header_timeout_ms = 200;
  auto srv = server::start(o, routes());
  ASSERT_TRUE(srv) << srv.error();
  raw_connection stuck((*srv)->port());
  ASSERT_TRUE(stuck.send("GET /status HTTP/1.1\r\nHost: t\r\nX-Slow: a"));
  auto after = exchange(**srv, "GET /status HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(after.bytes), 200) << after.bytes;
  EXPECT_TRUE(stuck.read_until_closed(20s).closed);
}

}  // namespace
}  // namespace octorun::http
