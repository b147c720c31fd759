// The request pool against a scripted local HTTP server: a request that
// queued behind a slow one for longer than its requester waits is answered
// with an error and never reaches the apiserver; the pool goes on serving;
// RunnerSets take turns (namespaces, for requests made for no set), so one
// set's burst does not hold another's first request behind it.
#include <gtest/gtest.h>

#include <algorithm>
#include <caf/all.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "adapters/http/http_server.hpp"
#include "adapters/kube/informer.hpp"
#include "common/fair_queue.hpp"

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

TEST(RequestPool, OneSetsBurstDoesNotHoldAnotherSetsFirstRequestBehindIt) {
  scripted_apiserver api;
  ASSERT_TRUE(api.server);
  const auto& cfg = api.cfg;
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  auto pool = spawn_request_pool(sys, cfg, {}, 1);  // one worker: everything else waits in the pool

  caf::scoped_actor self{sys};
  auto in_set = [](get_request r, std::string set) {
    r.set = std::move(set);
    return r;
  };
  auto slow = self->request(pool, caf::infinite, in_set({configmaps(), "burst", "slow", ""}, "big"));
  api.slow_arrived.get_future().wait();  // the worker is busy; what follows waits
  constexpr int burst = 200;
  std::vector<decltype(slow)> answers;
  for (int i = 0; i < burst; ++i)
    answers.push_back(self->request(pool, caf::infinite,
                                    in_set({configmaps(), "burst", "b" + std::to_string(i), ""}, "big")));
  // Another set of the burst's namespace, a request of that namespace made
  // for no set, and a set of another namespace.
  answers.push_back(
      self->request(pool, caf::infinite, in_set({configmaps(), "burst", "neighbour", ""}, "small")));
  answers.push_back(self->request(pool, caf::infinite, get_request{configmaps(), "burst", "unowned", ""}));
  answers.push_back(
      self->request(pool, caf::infinite, in_set({configmaps(), "quiet", "first", ""}, "other")));
  // The others are in the pool behind the whole burst (a request to the
  // pool is answered in order per requester: they come back last).
  api.release_slow.set_value();
  int answered = 0;
  for (auto& a : answers)
    a.receive([&](object_result& r) { answered += r.has_value(); },
              [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  slow.receive([&](object_result& r) { EXPECT_TRUE(r); },
               [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_EQ(answered, burst + 3);
  const auto served = api.seen();
  ASSERT_EQ(served.size(), static_cast<size_t>(burst + 4));
  // slow, then one of the burst (its turn came first), then each of the
  // others in the order they came, each one turn.
  EXPECT_EQ(std::vector<std::string>(served.begin(), served.begin() + 6),
            (std::vector<std::string>{"burst/slow", "burst/b0", "burst/neighbour", "burst/unowned",
                                      "quiet/first", "burst/b1"}));
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

// The pool's queueing order, pure: fair_queue keyed by request_turn.
TEST(RequestTurn, EachSetTakesTurnsOfItsOwnAndRequestsForNoSetTakeTheirNamespaces) {
  fair_queue<std::string> q;
  for (int i = 0; i < 1000; ++i) q.push(request_turn("a", "burst"), "burst" + std::to_string(i));
  q.push(request_turn("a", "quiet"), "a/quiet");
  q.push(request_turn("a", ""), "a, no set");
  q.push(request_turn("b", "burst"), "b/burst");  // a set of the same name in another namespace
  q.push(request_turn("", ""), "cluster-scoped");
  q.push(request_turn("a", "quiet"), "a/quiet again");
  std::vector<std::string> first;
  for (int i = 0; i < 8; ++i) first.push_back(*q.pop());
  EXPECT_EQ(first, (std::vector<std::string>{"burst0", "a/quiet", "a, no set", "b/burst", "cluster-scoped",
                                             "burst1", "a/quiet again", "burst2"}));
  EXPECT_EQ(q.keys(), 1u) << "only the burst has requests waiting";
}

TEST(RequestTurn, NoSetSharesATurnWithAnotherSetOrWithItsNamespace) {
  EXPECT_EQ(request_turn("a", ""), "a");
  EXPECT_EQ(request_turn("", ""), "");
  EXPECT_NE(request_turn("a", "x"), request_turn("a", "y"));
  EXPECT_NE(request_turn("a", "x"), request_turn("b", "x"));
  EXPECT_NE(request_turn("a", "x"), request_turn("a", ""));
}

}  // namespace
}  // namespace octorun::kube
