// kube::client against a scripted local HTTP server: throttling, error
// bodies that are not Status objects, malformed replies, watch streams.
#include <gtest/gtest.h>

#include <atomic>

#include "adapters/http/http_server.hpp"
#include "adapters/kube/client.hpp"

namespace octorun::kube {
namespace {

using namespace std::chrono_literals;

struct fake_api {
  std::unique_ptr<http::server> server;
  config cfg;
  explicit fake_api(http::handler fn) {
    auto s = http::server::start({}, {{"/", {}, http::request_body::accepted, std::move(fn)}});
    if (!s) ADD_FAILURE() << s.error();
    server = std::move(*s);
    cfg.server = server->base_url();
    cfg.token = token_source::fixed("t0k3n");
  }
};

http::server_response reply(int status, std::string body, std::string type = "application/json") {
  http::server_response r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(type);
  return r;
}

TEST(ClientAgainstAFakeServer, Honours429RetryAfterThenSucceeds) {
  std::atomic<int> calls{0};
  fake_api api([&](const http::server_request& r) {
    EXPECT_EQ(r.header_value("authorization"), "Bearer t0k3n");
    if (calls++ == 0) {
      auto busy = reply(429, "Too many requests, please try again later.\n", "text/plain");
      busy.headers.push_back({"Retry-After", "1"});
      return busy;
    }
    return reply(200, R"({"metadata":{"name":"a","namespace":"ns","resourceVersion":"3"}})");
  });
  client c(api.cfg);
  auto start = std::chrono::steady_clock::now();
  auto got = c.get(configmaps(), "ns", "a");
  ASSERT_TRUE(got) << to_string(got.error());
  EXPECT_EQ(got->name, "a");
  EXPECT_EQ(calls, 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);  // waited as told
}

TEST(ClientAgainstAFakeServer, GivesUpAfterMaxRetriesWithTheThrottleAsAValue) {
  std::atomic<int> calls{0};
  fake_api api([&](const http::server_request&) {
    ++calls;
    auto busy = reply(429, "slow down", "text/plain");
    busy.headers.push_back({"Retry-After", "1"});
    return busy;
  });
  client_options opts;
  opts.max_retries = 1;
  client c(api.cfg, opts);
  auto got = c.get(configmaps(), "ns", "a");
  ASSERT_FALSE(got);
  EXPECT_TRUE(got.error().too_many_requests());
  EXPECT_EQ(got.error().retry_after, 1s);
  EXPECT_EQ(got.error().message, "slow down");
  EXPECT_EQ(calls, 2);
}

TEST(ClientAgainstAFakeServer, BadBodiesAreErrorsNotCrashes) {
  fake_api api([&](const http::server_request& r) {
    if (r.path.ends_with("/html")) return reply(502, "<html>bad gateway</html>", "text/html");
    if (r.path.ends_with("/garbage")) return reply(200, "{\"metadata\":");
    if (r.path.ends_with("/array")) return reply(200, "[]");
    return reply(200,
                 R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"9"},"items":{"not":"an array"}})");
  });
  client c(api.cfg);
  auto html = c.get(configmaps(), "ns", "html");
  ASSERT_FALSE(html);
  EXPECT_EQ(html.error().code, 502);
  EXPECT_TRUE(html.error().retryable());
  EXPECT_EQ(html.error().message, "<html>bad gateway</html>");
  auto garbage = c.get(configmaps(), "ns", "garbage");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().reason, "MalformedResponse");
  EXPECT_FALSE(c.get(configmaps(), "ns", "array"));
  auto list = c.list(configmaps(), "ns");
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().reason, "MalformedResponse");
}

// Every JSON the API server sends goes through json::parse: 100,000 levels
// of nesting in an object, a list, a watch line or an error Status, and a
// body over its cap, are errors with a message.
TEST(ClientAgainstAFakeServer, DeepOrOverSizeRepliesAreErrorsNotCrashes) {
  const std::string deep(100'000, '[');
  std::string deep_objects;
  for (int i = 0; i < 100'000; ++i) deep_objects += R"({"a":)";
  fake_api api([&](const http::server_request& r) {
    if (r.query_param("watch") == "1")
      return reply(200, R"({"type":"ADDED","object":)" + deep_objects + "\n");
    if (r.path.ends_with("/status")) return reply(500, deep);
    if (r.path.ends_with("/huge"))
      return reply(200, std::string(json::sources::kube_object.max_bytes + 1, ' '));
    if (r.path.ends_with("/objects")) return reply(200, deep_objects);
    if (r.path.ends_with("/configmaps")) return reply(200, R"({"items":)" + deep);
    return reply(200, deep);
  });
  client c(api.cfg);
  for (const char* name : {"deep", "objects"}) {
    auto got = c.get(configmaps(), "ns", name);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().reason, "MalformedResponse");
    EXPECT_NE(got.error().message.find("nested deeper than 128"), std::string::npos) << got.error().message;
  }
  auto list = c.list(configmaps(), "ns");
  ASSERT_FALSE(list);
  EXPECT_NE(list.error().message.find("nested deeper than 128"), std::string::npos) << list.error().message;
  auto status = c.get(configmaps(), "ns", "status");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, 500);
  EXPECT_LE(status.error().message.size(), 512u);
  auto huge = c.get(configmaps(), "ns", "huge");
  ASSERT_FALSE(huge);
  EXPECT_TRUE(huge.error().transport);
  EXPECT_NE(huge.error().message.find("-byte limit of this request"), std::string::npos)
      << huge.error().message;
  auto w = c.watch(configmaps(), "ns", {}, [](watch_event&) { return true; });
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("nested deeper than 128"), std::string::npos) << w.error().message;
}

// Plain HTTP only to an API server the kubeconfig names as http://.
TEST(ClientAgainstAFakeServer, RefusesAnotherSchemeThanTheKubeconfigs) {
  fake_api api([&](const http::server_request&) { return reply(200, "{}"); });
  config cfg = api.cfg;
  cfg.server = "file:///etc";
  client c(cfg);
  auto got = c.get(configmaps(), "ns", "x");
  ASSERT_FALSE(got);
  EXPECT_TRUE(got.error().transport);
  EXPECT_NE(got.error().message.find("refused"), std::string::npos) << got.error().message;
}

TEST(ClientAgainstAFakeServer, ListFollowsContinueTokens) {
  std::vector<std::string> queries;
  fake_api api([&](const http::server_request& r) {
    queries.push_back(r.query);
    if (r.query_param("continue").empty())
      return reply(
          200, R"({"metadata":{"resourceVersion":"7","continue":"p2"},"items":[{"metadata":{"name":"a"}}]})");
    if (r.query_param("continue") == "p2")
      return reply(200, R"({"metadata":{"resourceVersion":"7","continue":"p3"},"items":[]})");
    return reply(200, R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"b"}}]})");
  });
  client c(api.cfg);
  list_options o;
  o.label_selector = "app=x";
  o.limit = 1;
  auto all = c.list(configmaps(), "ns", o);
  ASSERT_TRUE(all) << to_string(all.error());
  ASSERT_EQ(all->items.size(), 2u);
  EXPECT_EQ(all->items[1].name, "b");
  EXPECT_EQ(all->resource_version, "7");
  EXPECT_EQ(queries, (std::vector<std::string>{"labelSelector=app%3Dx&limit=1",
                                               "labelSelector=app%3Dx&continue=p2&limit=1",
                                               "labelSelector=app%3Dx&continue=p3&limit=1"}));
}

TEST(ClientAgainstAFakeServer, WatchDeliversEventsThenTheServersError) {
  fake_api api([&](const http::server_request& r) {
    EXPECT_EQ(r.query_param("watch"), "1");
    EXPECT_EQ(r.query_param("allowWatchBookmarks"), "true");
    EXPECT_EQ(r.query_param("resourceVersion"), "5");
    return reply(
        200,
        R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"6"}}})"
        "\n"
        R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"8"}}})"
        "\n"
        R"({"type":"ERROR","object":{"kind":"Status","reason":"Expired","message":"too old","code":410}})"
        "\n");
  });
  client c(api.cfg);
  list_options o;
  o.resource_version = "5";
  o.allow_watch_bookmarks = true;
  std::vector<std::string> seen;
  auto w = c.watch(configmaps(), "ns", o, [&](watch_event& ev) {
    seen.push_back(std::string(to_string(ev.type)) + "@" + std::string(ev.obj.resource_version));
    return true;
  });
  ASSERT_FALSE(w);
  EXPECT_TRUE(w.error().gone());
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED@6", "BOOKMARK@8"}));
}

TEST(ClientAgainstAFakeServer, NoServerIsATransportError) {
  config cfg;
  {
    fake_api gone([](const http::server_request&) { return reply(200, "{}"); });
    cfg = gone.cfg;
  }
  client c(cfg);
  auto got = c.get(configmaps(), "ns", "a");
  ASSERT_FALSE(got);
  EXPECT_TRUE(got.error().transport);
  EXPECT_TRUE(got.error().retryable());
}

}  // namespace
}  // namespace octorun::kube
