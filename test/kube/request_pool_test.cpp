// The request pool against a scripted local HTTP server: a request that
// queued behind a slow one for longer than its requester waits is answered
// with an error and never reaches the apiserver; the pool goes on serving;
// namespaces take turns, so one namespace's burst does not hold another's
// first request behind it.
#include <gtest/gtest.h>

#include <algorithm>
#include <caf/all.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "adapters/http/http_server.hpp"
#include "adapters/kube/informer.hpp"

namespace octorun::kube {
namespace {

using namespace std::chrono_literals;

http::server_response named(std::string_view name) {
  http::server_response r;
  r.status = 200;
  r.content_type = "application/json";
  r.body = R"({"metadata":{"name":")" + std::string(name) + R"(","namespace":"ns","resourceVersion":"1"}})";
  return r;
}

std::string last_segment(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// A local "apiserver" that records each request as "namespace/name" in the
// order it arrives and holds the one named "slow" until released, so the
// pool's one worker is busy while the test queues what follows.
struct scripted_apiserver {
  std::promise<void> slow_arrived, release_slow;
  std::shared_future<void> released = release_slow.get_future().share();
  std::mutex mu;
  std::vector<std::string> served;
  std::unique_ptr<http::server> server;
  config cfg;

  scripted_apiserver() {
    auto started = http::server::start(
        {}, {{"/", {}, http::request_body::refused, [this](const http::server_request& r) {
                auto name = last_segment(r.path);  // .../namespaces/NS/configmaps/NAME
                auto ns = last_segment(r.path.substr(0, r.path.rfind("/configmaps/")));
                {
                  std::lock_guard l(mu);
                  served.push_back(ns + "/" + name);
                }
                if (name == "slow") {
                  slow_arrived.set_value();
                  released.wait();
                }
                return named(name);
              }}});
    EXPECT_TRUE(started) << started.error();
    if (!started) return;
    server = std::move(*started);
    cfg.server = server->base_url();
    cfg.token = token_source::fixed("t0k3n");
  }
  std::vector<std::string> seen() {
    std::lock_guard l(mu);
    return served;
  }
};

TEST(RequestPool, ARequestThatWaitedPastItsRequesterIsAnsweredWithoutBeingSent) {
  scripted_apiserver api;
  ASSERT_TRUE(api.server);
  const auto& cfg = api.cfg;
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  constexpr auto max_wait = 200ms;
  auto pool = spawn_request_pool(sys, cfg, {}, 1, max_wait);  // one worker: "late" queues behind "slow"

  object_result slow_result = unexpected{api_error{}};
  std::thread slow_requester([&] {
    caf::scoped_actor self{sys};
    self->request(pool, caf::infinite, get_request{configmaps(), "ns", "slow", ""})
        .receive([&](object_result& r) { slow_result = std::move(r); },
                 [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  });
  api.slow_arrived.get_future().wait();  // the worker is busy with "slow"

  caf::scoped_actor self{sys};
  auto late = self->request(pool, caf::infinite, get_request{configmaps(), "ns", "late", ""});
  // Hold the worker until "late" has queued for longer than the limit.
  std::this_thread::sleep_until(std::chrono::steady_clock::now() + max_wait + 100ms);
  api.release_slow.set_value();

  late.receive(
      [&](object_result& r) {
        ASSERT_FALSE(r) << "a request nobody waits for was sent";
        EXPECT_TRUE(r.error().transport);
        EXPECT_TRUE(r.error().retryable());
        EXPECT_NE(r.error().message.find("not sent"), std::string::npos) << r.error().message;
      },
      [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  slow_requester.join();
  ASSERT_TRUE(slow_result) << to_string(slow_result.error());
  EXPECT_EQ(slow_result->name, "slow");

  // A request that did not wait is served as ever.
  self->request(pool, caf::infinite, get_request{configmaps(), "ns", "fresh", ""})
      .receive([&](object_result& r) { EXPECT_TRUE(r && r->name == "fresh"); },
               [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_EQ(api.seen(), (std::vector<std::string>{"ns/slow", "ns/fresh"}));
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST(RequestPool, OneNamespacesBurstDoesNotHoldAnothersFirstRequestBehindIt) {
  scripted_apiserver api;
  ASSERT_TRUE(api.server);
  const auto& cfg = api.cfg;
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  auto pool = spawn_request_pool(sys, cfg, {}, 1);  // one worker: everything else waits in the pool

  caf::scoped_actor self{sys};
  auto slow = self->request(pool, caf::infinite, get_request{configmaps(), "burst", "slow", ""});
  api.slow_arrived.get_future().wait();  // the worker is busy; what follows waits
  constexpr int burst = 200;
  std::vector<decltype(slow)> answers;
  for (int i = 0; i < burst; ++i)
    answers.push_back(
        self->request(pool, caf::infinite, get_request{configmaps(), "burst", "b" + std::to_string(i), ""}));
  answers.push_back(self->request(pool, caf::infinite, get_request{configmaps(), "quiet", "first", ""}));
  // The quiet request is in the pool behind the whole burst (a request to
  // the pool is answered in order per requester: this one comes back last).
  api.release_slow.set_value();
  int answered = 0;
  for (auto& a : answers)
    a.receive([&](object_result& r) { answered += r.has_value(); },
              [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  slow.receive([&](object_result& r) { EXPECT_TRUE(r); },
               [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_EQ(answered, burst + 1);
  const auto served = api.seen();
  ASSERT_EQ(served.size(), static_cast<size_t>(burst + 2));
  auto quiet = std::find(served.begin(), served.end(), "quiet/first");
  ASSERT_NE(quiet, served.end());
  // slow, then one of the burst (its turn came first), then the quiet one.
  EXPECT_LE(quiet - served.begin(), 2)
      << "the quiet namespace waited behind " << (quiet - served.begin()) << " requests of the burst";
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace octorun::kube
