// Supervision: restart with capped jittered backoff, sibling isolation, and
// no message lost while a child is down (the parent holds the children's
// handles and keeps what it sends meanwhile: child_handles.hpp).
#include "actors/supervisor/supervisor.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "actors/supervisor/child_handles.hpp"
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

using recording_actor = caf::typed_actor<caf::reacts_to<int>, caf::reacts_to<fail_atom>>;

recording_actor::behavior_type recording_child(recording_actor::pointer self,
                                               std::shared_ptr<std::vector<received>> log, std::string key,
                                               int incarnation) {
  return {
      [=](int v) {
        log->push_back({key, v, incarnation});
      },
      [=](fail_atom) { self->quit(caf::make_error(caf::sec::runtime_error)); },
  };
}

// The parent: holds its children's handles and sends to them, as the
// controller and the RunnerSet actor do. (to, key, x) sends x to child key.
using to_atom = caf::atom_constant<caf::atom("to")>;
using use_atom = caf::atom_constant<caf::atom("use")>;
using parent_actor =
    caf::typed_actor<caf::reacts_to<use_atom, caf::actor>, caf::reacts_to<to_atom, std::string, int>,
                     caf::reacts_to<to_atom, std::string, fail_atom>,
                     caf::reacts_to<retire_atom, std::string>>::extend_with<child_notices>;
struct parent_state {
  child_handles<recording_actor> children;
};

// It takes its name only because CAF 0.17 reads a spawn's argument tuple
// through a null pointer when there are none (UBSan stops the test).
parent_actor::behavior_type parent(parent_actor::stateful_pointer<parent_state> self,
                                   const std::string& /*name*/) {
  return {
      [=](use_atom, caf::actor supervisor) {
        self->state.children = child_handles<recording_actor>(std::move(supervisor));
      },
      [=](to_atom, const std::string& key, int v) { self->state.children.send(self, key, v); },
      [=](to_atom, const std::string& key, fail_atom f) { self->state.children.send(self, key, f); },
      [=](retire_atom, const std::string& key) { self->state.children.retire(key); },
      [=](child_started_atom, const std::string& key, const caf::actor& child) {
        self->state.children.on_started(self, key, child);
      },
      [=](child_down_atom, const std::string& key, const caf::actor_addr& child) {
        self->state.children.on_down(key, child);
      },
      [=](child_gone_atom, const std::string& key, const caf::actor_addr& child) {
        self->state.children.on_gone(key, child);
      },
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
    parent_ = t_.sys.spawn(parent, std::string("parent"));
    opts.tell = caf::actor_cast<caf::actor>(parent_);
    sup_ = spawn_supervisor(
        t_.sys, "test",
        [log, spawned](caf::local_actor* parent, const std::string& key) {
          int incarnation = ++(*spawned)[key];
          return caf::actor_cast<caf::actor>(parent->spawn(recording_child, log, key, incarnation));
        },
        opts);
    caf::anon_send(parent_, use_atom::value, sup_);
    t_.run();
  }
  ~SupervisorTest() override {
    caf::anon_send_exit(sup_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(parent_, caf::exit_reason::user_shutdown);
    t_.run();
  }

  // Sent by the parent, straight to the child (or kept for it).
  template <class T>
  void route(const std::string& key, T x) {
    caf::anon_send(parent_, to_atom::value, key, x);
    t_.run();
  }
  void retire(const std::string& key) {
    caf::anon_send(parent_, retire_atom::value, key);
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
  parent_actor parent_;
  caf::actor sup_;
};

TEST_F(SupervisorTest, SpawnsAChildOnFirstSightAndRoutesToIt) {
  route("a", 1);
  route("a", 2);
  ASSERT_EQ(log_->size(), 2u);
  EXPECT_EQ((*log_)[1].value, 2);
  EXPECT_EQ((*spawned_)["a"], 1);
  auto st = status();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_TRUE(st[0].running);
}

TEST_F(SupervisorTest, RestartsAFailedChildAfterBackoffAndDeliversWhatArrivedMeanwhile) {
  route("a", 1);
  route("b", 10);
  route("a", fail_atom::value);
  EXPECT_FALSE(status()[0].running);

  // The sibling keeps serving; a's messages wait for its next incarnation.
  route("b", 11);
  route("a", 2);
  route("a", 3);
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
  route("a", fail_atom::value);
  t_.advance(1s);
  ASSERT_EQ((*spawned_)["a"], 2);
  route("a", fail_atom::value);
  t_.advance(1s);
  EXPECT_EQ((*spawned_)["a"], 2) << "second restart should wait 2 s";
  t_.advance(1s);
  EXPECT_EQ((*spawned_)["a"], 3);
  EXPECT_EQ(status()[0].restarts, 2);
}

TEST_F(SupervisorTest, RetiredChildrenStayGone) {
  route("a", 1);
  retire("a");
  EXPECT_TRUE(status().empty());
  t_.advance(10s);
  EXPECT_EQ((*spawned_)["a"], 1);
}

TEST_F(SupervisorTest, ARetiredChildWaitingToRestartIsNotRestarted) {
  route("a", fail_atom::value);
  retire("a");
  t_.advance(10s);
  EXPECT_EQ((*spawned_)["a"], 1);
  EXPECT_TRUE(status().empty());
}

// Messages sent before the parent has heard of the child's first
// incarnation are kept and delivered first, in order.
TEST_F(SupervisorTest, WhatIsSentBeforeTheChildStartsReachesItInOrder) {
  caf::anon_send(parent_, to_atom::value, std::string("a"), 1);
  caf::anon_send(parent_, to_atom::value, std::string("a"), 2);
  caf::anon_send(parent_, to_atom::value, std::string("a"), 3);
  t_.run();
  ASSERT_EQ(log_->size(), 3u);
  EXPECT_EQ((*log_)[0].value, 1);
  EXPECT_EQ((*log_)[2].value, 3);
  EXPECT_EQ((*spawned_)["a"], 1);
}

// A message sent to a child that is restarting is not lost: the parent
// keeps it (the supervisor never sees it) and the next incarnation gets it.
TEST_F(SupervisorTest, AMessageSentWhileTheChildRestartsIsKeptByTheParent) {
  route("a", 1);
  route("a", fail_atom::value);
  ASSERT_FALSE(status()[0].running);
  route("a", 2);
  EXPECT_EQ(log_->size(), 1u) << "delivered to no child";
  t_.advance(1s);
  ASSERT_EQ(log_->size(), 2u);
  EXPECT_EQ(log_->back().value, 2);
  EXPECT_EQ(log_->back().incarnation, 2);
  route("a", 3);
  EXPECT_EQ(log_->back().value, 3) << "sent straight to the new incarnation";
}

// A child retired and wanted again (a new object of the name) starts anew,
// and gets what was sent for it.
TEST_F(SupervisorTest, ARetiredNameUsedAgainGetsAFreshChild) {
  route("a", 1);
  caf::anon_send(parent_, retire_atom::value, std::string("a"));
  caf::anon_send(parent_, to_atom::value, std::string("a"), 2);
  t_.run();
  EXPECT_EQ((*spawned_)["a"], 2);
  ASSERT_EQ(log_->size(), 2u);
  EXPECT_EQ(log_->back().value, 2);
  EXPECT_EQ(log_->back().incarnation, 2);
}

}  // namespace
}  // namespace octorun::supervision
