// The RunnerSet actor's GitHub budget on CAF's deterministic coordinator:
// one rate-limit answer pauses every GitHub call of the set until it ends.
#include "test/manager/runnerset_execute_fixture.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace execute_fixture;

// A metric of the set's in the event registry (-1: none).
double set_metric(const std::string& family) {
  for (const auto& f : metrics::event_registry().Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      bool ours = false;
      for (const auto& l : m.label) ours |= l.name == "runnerset" && l.value == "linux";
      if (ours) return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return -1;
}

bool rate_limited(const github::jit_reply& r) {
  return !r && r.error().kind == github::error_kind::rate_limited;
}

class RunnerSetBudget : public RunnerSetExecute {
 protected:
  RunnerSetBudget() {
    start();
    // A Runner the set is making (its create not yet watched): the set
    // serves JIT requests only for Runners it knows as its own.
    demand(1);
    if (!s_->created.empty()) asks_->name = std::string(kube::parse_object(s_->created[0])->name);
    runner_ = t_.sys.spawn(runner_stub, set_, asks_);
  }
  ~RunnerSetBudget() override { caf::anon_send_exit(runner_, caf::exit_reason::kill); }
  template <class... Ts>
  void ask(Ts... xs) {
    caf::anon_send(runner_, xs...);
    t_.run();
  }
  std::shared_ptr<runner_asks> asks_ = std::make_shared<runner_asks>();
  caf::actor runner_;
};

// One rate-limit answer pauses every GitHub call of the set until its retry
// time: a thousand waiting runners make no request; the pause is logged and
// counted once, and the calls go again once it ends.
TEST_F(RunnerSetBudget, ARateLimitPausesEveryGitHubCallUntilItEnds) {
  s_->rate_limited = true;
  ask(ask_jit_atom::value);
  ASSERT_EQ(asks_->jits.size(), 1u);
  EXPECT_TRUE(rate_limited(asks_->jits[0]));
  EXPECT_EQ(s_->jits, 1);
  EXPECT_EQ(set_metric("octorun_github_rate_limited"), 1);
  EXPECT_EQ(set_metric("octorun_github_rate_limit_pauses_total"), 1);
  for (int i = 0; i < 20; ++i) ask(ask_jit_atom::value);
  ask(ask_remove_atom::value, std::int64_t{5});
  EXPECT_EQ(s_->jits, 1) << "asked GitHub during the pause";
  EXPECT_EQ(s_->github_deletes, 0) << "asked GitHub during the pause";
  ASSERT_EQ(asks_->jits.size(), 21u);
  EXPECT_TRUE(rate_limited(asks_->jits.back()));
  EXPECT_GT(asks_->jits.back().error().retry_after.count(), 0) << "the runner is told how long to wait";
  EXPECT_LE(asks_->jits.back().error().retry_after, s_->retry_after);
  s_->rate_limited = false;
  t_.advance(s_->retry_after - 1s);
  ask(ask_jit_atom::value);
  EXPECT_EQ(s_->jits, 1) << "the pause ended early";
  t_.advance(1s);  // the set's wake-up at the end of the pause
  EXPECT_EQ(set_metric("octorun_github_rate_limited"), 0);
  ask(ask_jit_atom::value);
  EXPECT_EQ(s_->jits, 2);
  EXPECT_FALSE(rate_limited(asks_->jits.back()));
  EXPECT_EQ(set_metric("octorun_github_rate_limit_pauses_total"), 1) << "one pause, counted once";
}

// A runner that can run no job hands its GitHub removal to the set: the set
// answers once its status records it (so a restart cannot lose it), and
// removes it from GitHub after the pause.
TEST_F(RunnerSetBudget, AHandedOverRemovalIsRecordedBeforeTheRunnerMayGoAndDoneAfterThePause) {
  s_->rate_limited = true;
  ask(ask_remove_atom::value, std::int64_t{42});
  ASSERT_EQ(asks_->removals.size(), 1u);
  EXPECT_FALSE(asks_->removals[0]);
  s_->status = answer::silence;
  ask(ask_defer_atom::value, std::int64_t{42});
  EXPECT_TRUE(asks_->deferred.empty()) << "answered before the status recorded it";
  ASSERT_FALSE(s_->statuses.empty());
  EXPECT_NE(s_->statuses.back().find(R"("pendingRemovals":[{"runnerId":42,"name":"linux-abcde"}])"),
            std::string::npos)
      << s_->statuses.back();
  s_->status = answer::ok;
  caf::anon_send(kube_, release_atom::value);
  t_.run();
  EXPECT_EQ(asks_->deferred, (std::vector<std::int64_t>{42}));
  ask(ask_defer_atom::value, std::int64_t{42});
  EXPECT_EQ(asks_->deferred.size(), 2u) << "recorded already: answered at once";
  EXPECT_EQ(set_metric("octorun_github_deferred_removals"), 1);
  // The pause ends: the set removes it from GitHub and the status drops it.
  s_->rate_limited = false;
  EXPECT_TRUE(s_->github_deleted.empty());
  t_.advance(s_->retry_after);
  EXPECT_EQ(s_->github_deleted, (std::vector<std::int64_t>{42}));
  EXPECT_NE(s_->statuses.back().find(R"("pendingRemovals":null)"), std::string::npos) << s_->statuses.back();
  EXPECT_EQ(set_metric("octorun_github_deferred_removals"), 0);
}

// After a restart (or on the next leader) the removals the status lists are
// still done.
TEST_F(RunnerSetExecute, RemovalsTheStatusListsAreDoneAfterARestart) {
  rapidjson::Document d;
  d.Parse(set_json);
  auto& a = d.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  rapidjson::Value removals(rapidjson::kArrayType);
  rapidjson::Value entry(rapidjson::kObjectType);
  entry.AddMember("runnerId", 77, a);
  entry.AddMember("name", "linux-old", a);
  removals.PushBack(entry, a);
  status.AddMember("pendingRemovals", removals, a);
  d.AddMember("status", status, a);
  set_ = caf::actor_cast<caf::actor>(spawn_runnerset(t_.sys, cfg_));
  caf::anon_send(set_,
                 watched::runnerset_event{"rs", kube::event_type::modified,
                                          watched::read_runnerset(*kube::parse_object(json::write(d)))});
  t_.run();
  EXPECT_EQ(s_->github_deleted, (std::vector<std::int64_t>{77}));
  ASSERT_FALSE(s_->statuses.empty());
  EXPECT_NE(s_->statuses.back().find(R"("pendingRemovals":null)"), std::string::npos) << s_->statuses.back();
}

}  // namespace
}  // namespace octorun::runnerset
