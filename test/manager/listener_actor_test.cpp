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

// Plays the RunnerSet: the scale set and the client's options.
listener_setup_api::behavior_type runnerset_stand_in(listener_setup_api::pointer, listener_setup setup) {
  return {[setup](listener_setup_atom, const std::string&) -> listener_setup_reply { return setup; }};
}

struct ListenerActor : ::testing::Test {
  std::unique_ptr<sim::simulator> sim;
  std::shared_ptr<github::testing::sleep_log> sleeps = std::make_shared<github::testing::sleep_log>();
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  caf::scoped_actor router{sys};  // receives what the listener sends the job route
  listener_setup_api runnerset;
  caf::actor listener;

  void SetUp() override {
    sim::simulator_options o;
    o.long_poll = 1s;
    sim = github::testing::start_simulator(o);
    ASSERT_TRUE(sim);
    github::scaleset_options options{sim->ghes_url() + "/octo", github::pat_auth("ghp_simulator"),
                                     github::testing::fast_calls(sleeps), 1s, nullptr};
    auto client = github::scaleset_client::make(options);
    ASSERT_TRUE(client) << client.error();
    github::scale_set s;
    s.name = "linux";
    s.runner_group_id = 1;
    auto created = (*client)->create_scale_set(s);
    ASSERT_TRUE(created) << created.error().describe();
    listener_config cfg;
    cfg.set_id = "ci/linux";
    runnerset = sys.spawn(runnerset_stand_in, listener_setup{created->id, "test-host/ci/linux", options, 10});
    cfg.runnerset = runnerset;
    cfg.jobs = caf::actor_cast<controller::job_router>(router);
    cfg.request_timeout = 10s;
    listener = spawn_listener(router.ptr(), std::move(cfg));
  }
  void TearDown() override {
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

}  // namespace
}  // namespace octorun::listener
