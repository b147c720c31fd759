// The scale-set listener actor against the GitHub simulator: what it hands
// the job route is one session message per message of the session, named
// after its set, with the jobs and statistics GitHub sent together (the set
// applies them at once: a completion never reaches it without the
// statistics that stop counting the job). It acquires the jobs offered and
// acknowledges each message.
#include "actors/listener/listener_actor.hpp"

#include <gtest/gtest.h>

#include <caf/all.hpp>
#include <variant>

#include "test/github/sim_fixture.hpp"

namespace octorun::listener {
namespace {

using namespace std::chrono_literals;

// Plays the RunnerSet: the scale set and the client's options; the session
// ids the listener reports go on to `told`.
protocols::listener_setup_api::behavior_type runnerset_stand_in(protocols::listener_setup_api::pointer,
                                                                protocols::listener_setup setup,
                                                                caf::actor told) {
  return {
      [setup](protocols::listener_setup_atom, const std::string&) -> protocols::listener_setup_reply {
        return setup;
      },
      [told](protocols::listener_session_atom a, const std::string& variant, const std::string& session) {
        caf::anon_send(told, a, variant, session);
      },
  };
}

struct ListenerActor : ::testing::Test {
  std::unique_ptr<sim::simulator> sim;
  std::shared_ptr<github::testing::sleep_log> sleeps = std::make_shared<github::testing::sleep_log>();
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  caf::scoped_actor router{sys};  // receives what the listener sends the job route
  protocols::listener_setup_api runnerset;
  caf::actor listener;
  github::scaleset_options options;
  std::int64_t scale_set_id = 0;

  void SetUp() override {
    sim::simulator_options o;
    o.long_poll = 1s;
    sim = github::testing::start_simulator(o);
    ASSERT_TRUE(sim);
    options = {sim->ghes_url() + "/octo", github::pat_auth("ghp_simulator"),
               github::testing::fast_calls(sleeps), 1s, nullptr};
    auto client = github::scaleset_client::make(options);
    ASSERT_TRUE(client) << client.error();
    github::scale_set s;
    s.name = "linux";
    s.runner_group_id = 1;
    auto created = (*client)->create_scale_set(s);
    ASSERT_TRUE(created) << created.error().describe();
    scale_set_id = created->id;
  }
  // Starts the listener; its set's status recorded `previous_session` as the
  // session last opened on the scale set.
  void start(const std::string& previous_session = "") {
    listener_config cfg;
    cfg.set_id = "ci/linux";
    runnerset = sys.spawn(
        runnerset_stand_in,
        protocols::listener_setup{scale_set_id, "test-host/ci/linux", options, 10, previous_session},
        caf::actor{router});
    cfg.runnerset = runnerset;
    cfg.jobs = caf::actor_cast<protocols::job_router>(router);
    cfg.request_timeout = 10s;
    listener = spawn_listener(router.ptr(), std::move(cfg));
    router->monitor(listener);
  }
  // A session opened by a replica that then crashed: never deleted, and
  // recent enough that the service still holds it.
  std::string abandoned_session() {
    auto crashed = github::scaleset_client::make(options);
    EXPECT_TRUE(crashed) << crashed.error();
    auto s = (*crashed)->create_session(scale_set_id, "crashed-host/ci/linux");
    EXPECT_TRUE(s) << s.error().describe();
    return s ? s->session_id : std::string();
  }
  std::string session_on_the_service() const {
    for (const auto& s : sim->scale_sets())
      if (s.id == scale_set_id) return s.session_id;
    return {};
  }
  void TearDown() override {
    if (!listener) return;
    caf::anon_send_exit(listener, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(runnerset, caf::exit_reason::kill);
  }

  // The next session message the listener sends (a test failure if none comes).
  messages::session_message next() {
    messages::session_message out;
    bool got = false;
    router->receive([&](messages::session_message& m) { out = std::move(m), got = true; },
                    caf::after(std::chrono::seconds(20)) >> [] {});
    EXPECT_TRUE(got) << "no session message";
    return out;
  }
};

TEST_F(ListenerActor, HandsEachMessageToItsSetWholeAndAcquiresWhatItOffers) {
  start();
  auto opened = next();
  EXPECT_EQ(opened.runner_set, "ci/linux");
  EXPECT_TRUE(opened.jobs.empty());
  ASSERT_TRUE(opened.statistics) << "the session's opening statistics are demand";

  sim::job_spec job;
  job.labels = {"linux"};
  const auto id = sim->add_job(job);
  messages::session_message offered;
  do offered = next();
  while (offered.jobs.empty());
  EXPECT_EQ(offered.runner_set, "ci/linux");
  ASSERT_EQ(offered.jobs.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<messages::job_available>(offered.jobs[0]));
  EXPECT_EQ(std::get<messages::job_available>(offered.jobs[0]).job.job_id, id);
  ASSERT_TRUE(offered.statistics) << "the message's statistics come with its jobs";
  EXPECT_EQ(offered.statistics->total_available_jobs, 1);

  EXPECT_TRUE(sim->wait_until([id](const sim::simulator& s) { return s.job_state(id) == "assigned"; }, 20s))
      << "the listener acquires the job it was offered";
  EXPECT_TRUE(
      sim->wait_until([](const sim::simulator& s) { return s.calls("scaleset.delete_message") >= 1; }, 20s))
      << "and acknowledges the message";
  messages::session_message assigned;
  do assigned = next();
  while (assigned.jobs.empty());
  ASSERT_TRUE(std::holds_alternative<messages::job_assigned>(assigned.jobs[0]));
  ASSERT_TRUE(assigned.statistics);
  EXPECT_EQ(assigned.statistics->total_assigned_jobs, 1) << "the acquired job now counts as assigned";
}

// A replica that crashed left its session on the service; the set's status
// recorded its id, so the successor deletes it and opens its own at once
// instead of getting 409s until the service lets the old one go.
TEST_F(ListenerActor, TakesOverTheSessionItsCrashedPredecessorLeft) {
  const auto left = abandoned_session();
  ASSERT_FALSE(left.empty());
  start(left);
  auto opened = next();
  EXPECT_EQ(opened.runner_set, "ci/linux");
  std::string reported;
  router->receive(
      [&](protocols::listener_session_atom, const std::string&, const std::string& id) { reported = id; },
      caf::after(std::chrono::seconds(20)) >> [] {});
  EXPECT_FALSE(reported.empty()) << "the listener tells its set the session it opened";
  EXPECT_NE(reported, left);
  EXPECT_EQ(session_on_the_service(), reported);
  EXPECT_EQ(sim->calls("scaleset.delete_session"), 1);
}

// A session the set did not record (another owner's: e.g. a set of the same
// name in another namespace) is never deleted: the conflict stands and the
// listener ends, to be restarted with backoff.
TEST_F(ListenerActor, LeavesASessionItDidNotOpen) {
  const auto someone_elses = abandoned_session();
  ASSERT_FALSE(someone_elses.empty());
  start("5d6b2c1e-0000-4000-8000-000000000000");  // a session of its own that is gone
  bool ended = false;
  router->receive([&](const caf::down_msg& d) { ended = d.reason != caf::none; },
                  caf::after(std::chrono::seconds(20)) >> [] {});
  EXPECT_TRUE(ended) << "the 409 ends the incarnation";
  EXPECT_EQ(session_on_the_service(), someone_elses) << "someone else's session is untouched";
  listener = nullptr;
}

// A recorded id that is not an id (a status someone edited) is never put in
// a request path: no delete is sent, the conflict stands.
TEST_F(ListenerActor, NeverSendsARecordedSessionIdThatIsNotAnId) {
  const auto held = abandoned_session();
  ASSERT_FALSE(held.empty());
  start("../../" + std::to_string(scale_set_id));
  bool ended = false;
  router->receive([&](const caf::down_msg& d) { ended = d.reason != caf::none; },
                  caf::after(std::chrono::seconds(20)) >> [] {});
  EXPECT_TRUE(ended);
  EXPECT_EQ(sim->calls("scaleset.delete_session"), 0);
  EXPECT_EQ(session_on_the_service(), held);
  listener = nullptr;
}

}  // namespace
}  // namespace octorun::listener
