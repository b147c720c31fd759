// Supervision: restart with capped jittered backoff, sibling isolation, and
// no message lost while a child is down.
#include "actors/supervisor/supervisor.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "test/support/caf_test_system.hpp"

namespace octorun::supervision {
namespace {

using namespace std::chrono_literals;
using fail_atom = caf::atom_constant<caf::atom("fail")>;

TEST(RestartPolicy, DoublesFromInitialUpToTheCap) {
  restart_policy p{1s, 30s, 2.0, 0.0, 60s};
  restart_history h;
  std::vector<duration> delays;
  for (int i = 0; i < 8; ++i) delays.push_back(next_restart_delay(p, h, 1s, 0.5));
  EXPECT_EQ(delays, (std::vector<duration>{1s, 2s, 4s, 8s, 16s, 30s, 30s, 30s}));
}

TEST(RestartPolicy, JitterStaysWithinItsBandAndUnderTheCap) {
  restart_policy p{10s, 20s, 2.0, 0.2, 60s};
  restart_history h;
  EXPECT_EQ(next_restart_delay(p, h, 0s, 0.0), 8s);
  h = {};
  EXPECT_EQ(next_restart_delay(p, h, 0s, 1.0), 12s);
  h = {5};
  EXPECT_EQ(next_restart_delay(p, h, 0s, 1.0), 20s);  // capped, even with jitter
}

TEST(RestartPolicy, AHealthyRunResetsTheBackoff) {
  restart_policy p{1s, 60s, 2.0, 0.0, 60s};
  restart_history h{4};
  EXPECT_EQ(next_restart_delay(p, h, 61s, 0.5), 1s);
  EXPECT_EQ(h.consecutive_failures, 1);
}

// Children record what they receive into a shared log; `fail` makes one crash.
struct received {
  std::string key;
  int value;
  int incarnation;
};

caf::behavior recording_child(caf::event_based_actor* self, std::shared_ptr<std::vector<received>> log,
                              std::string key, int incarnation) {
  return {
      [=](int v) {
        log->push_back({key, v, incarnation});
      },
      [=](fail_atom) { self->quit(caf::make_error(caf::sec::runtime_error)); },
  };
}

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest() {
    supervisor_options opts;
    opts.policy = {1s, 8s, 2.0, 0.0, 60s};
    opts.seed = 7;
    auto log = log_;
    auto spawned = spawned_;
    sup_ = spawn_supervisor(
        t_.sys, "test",
        [log, spawned](caf::local_actor* parent, const std::string& key) {
          int incarnation = ++(*spawned)[key];
          return parent->spawn(recording_child, log, key, incarnation);
        },
        opts);
  }
  ~SupervisorTest() override {
    caf::anon_send_exit(sup_, caf::exit_reason::user_shutdown);
    t_.run();
  }

  void route(const std::string& key, caf::message m) {
    caf::anon_send(sup_, route_atom::value, key, std::move(m));
    t_.run();
  }
  supervisor_status status() {
    supervisor_status out;
    caf::scoped_actor self{t_.sys};
    auto handle = self->request(sup_, caf::infinite, status_atom::value);
    t_.run();
    handle.receive([&](supervisor_status& s) { out = std::move(s); }, [](caf::error&) { ADD_FAILURE(); });
    return out;
  }

  test::caf_test_system t_;
  std::shared_ptr<std::vector<received>> log_ = std::make_shared<std::vector<received>>();
  std::shared_ptr<std::map<std::string, int>> spawned_ = std::make_shared<std::map<std::string, int>>();
  caf::actor sup_;
};

TEST_F(SupervisorTest, SpawnsAChildOnFirstSightAndRoutesToIt) {
  route("a", caf::make_message(1));
  route("a", caf::make_message(2));
  ASSERT_EQ(log_->size(), 2u);
  EXPECT_EQ((*log_)[1].value, 2);
  EXPECT_EQ((*spawned_)["a"], 1);
  auto st = status();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_TRUE(st[0].running);
}

TEST_F(SupervisorTest, RestartsAFailedChildAfterBackoffAndDeliversWhatArrivedMeanwhile) {
  route("a", caf::make_message(1));
  route("b", caf::make_message(10));
  route("a", caf::make_message(fail_atom::value));
  EXPECT_FALSE(status()[0].running);

  // The sibling keeps serving; a's messages wait for its next incarnation.
  route("b", caf::make_message(11));
  route("a", caf::make_message(2));
  route("a", caf::make_message(3));
  EXPECT_EQ(log_->back().key, "b");

  t_.advance(999ms);
  EXPECT_EQ((*spawned_)["a"], 1) << "restarted before the backoff elapsed";
  t_.advance(1ms);
  EXPECT_EQ((*spawned_)["a"], 2);
  ASSERT_GE(log_->size(), 5u);
  EXPECT_EQ((*log_)[log_->size() - 2].value, 2);
  EXPECT_EQ(log_->back().value, 3);
  EXPECT_EQ(log_->back().incarnation, 2);
  EXPECT_EQ((*spawned_)["b"], 1) << "a sibling was restarted";
}

TEST_F(SupervisorTest, BackoffGrowsWithConsecutiveFailures) {
  route("a", caf::make_message(fail_atom::value));
  t_.advance(1s);
  ASSERT_EQ((*spawned_)["a"], 2);
  route("a", caf::make_message(fail_atom::value));
  t_.advance(1s);
  EXPECT_EQ((*spawned_)["a"], 2) << "second restart should wait 2 s";
  t_.advance(1s);
  EXPECT_EQ((*spawned_)["a"], 3);
  EXPECT_EQ(status()[0].restarts, 2);
}

TEST_F(SupervisorTest, RetiredChildrenStayGone) {
  route("a", caf::make_message(1));
  caf::anon_send(sup_, retire_atom::value, std::string("a"));
  t_.run();
  EXPECT_TRUE(status().empty());
  t_.advance(10s);
  EXPECT_EQ((*spawned_)["a"], 1);
}

TEST_F(SupervisorTest, ARetiredChildWaitingToRestartIsNotRestarted) {
  route("a", caf::make_message(fail_atom::value));
  caf::anon_send(sup_, retire_atom::value, std::string("a"));
  t_.run();
  t_.advance(10s);
  EXPECT_EQ((*spawned_)["a"], 1);
  EXPECT_TRUE(status().empty());
}

}  // namespace
}  // namespace octorun::supervision
