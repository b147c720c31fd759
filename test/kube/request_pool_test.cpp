// The request pool against a scripted local HTTP server: a request that
// queued behind a slow one for longer than its requester waits is answered
// with an error and never reaches the apiserver; the pool goes on serving.
#include <gtest/gtest.h>

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

TEST(RequestPool, ARequestThatWaitedPastItsRequesterIsAnsweredWithoutBeingSent) {
  std::promise<void> slow_arrived, release_slow;
  auto released = release_slow.get_future().share();
  std::mutex mu;
  std::vector<std::string> served;
  auto server = http::server::start({}, {{"/", {}, [&](const http::server_request& r) {
                                            auto name = last_segment(r.path);
                                            {
                                              std::lock_guard l(mu);
                                              served.push_back(name);
                                            }
                                            if (name == "slow") {
                                              slow_arrived.set_value();
                                              released.wait();
                                            }
                                            return named(name);
                                          }}});
  ASSERT_TRUE(server) << server.error();
  config cfg;
  cfg.server = (*server)->base_url();
  cfg.token = token_source::fixed("t0k3n");

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
  slow_arrived.get_future().wait();  // the worker is busy with "slow"

  caf::scoped_actor self{sys};
  auto late = self->request(pool, caf::infinite, get_request{configmaps(), "ns", "late", ""});
  // Hold the worker until "late" has queued for longer than the limit.
  std::this_thread::sleep_until(std::chrono::steady_clock::now() + max_wait + 100ms);
  release_slow.set_value();

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
  {
    std::lock_guard l(mu);
    EXPECT_EQ(served, (std::vector<std::string>{"slow", "fresh"}));
  }
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace octorun::kube
