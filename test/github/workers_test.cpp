// Actors reach GitHub through the detached worker pool with request/then:
// the REST pool and a scale-set worker, against the simulator.
#include "adapters/github/github_workers.hpp"
#include "test/github/sim_fixture.hpp"

namespace octorun::github {
namespace {

using namespace std::chrono_literals;

using done_atom = caf::atom_constant<caf::atom("done")>;

struct Workers : ::testing::Test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<sim::simulator> sim = testing::start_simulator();
  std::shared_ptr<testing::sleep_log> sleeps = std::make_shared<testing::sleep_log>();
  std::vector<caf::actor> to_stop;

  void SetUp() override {
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
  void TearDown() override {
    for (auto& a : to_stop) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    to_stop.clear();  // a detached actor's thread ends only when its last handle is gone
    sys.reset();      // waits for the detached workers
  }
  caf::actor pool() {
    auto p = spawn_rest_pool(*sys,
                             rest_options{sim->api_url(),
                                          {scope_kind::repository, "octo", "app"},
                                          pat_auth("ghp_simulator"),
                                          testing::fast_calls(sleeps)},
                             2);
    to_stop.push_back(p);
    return p;
  }
};

// An event-based actor chains calls with request(...).then(ok, err) and never blocks.
caf::behavior runner_owner(caf::event_based_actor* self, caf::actor github, caf::actor report) {
  self->request(github, 10s, jit_config_atom::value, jit_request{"owned-runner", 1, {"self-hosted"}, "_work"})
      .then(
          [=](jit_reply& jit) {
            if (!jit) {
              self->send(report, done_atom::value, std::string("jit failed: ") + jit.error().describe());
              return;
            }
            self->request(github, 10s, delete_runner_atom::value, jit->registered.id)
                .then(
                    [=](delete_reply& del) {
                      self->send(report, done_atom::value,
                                 std::string(del && *del == delete_outcome::busy ? "busy" : "not busy"));
                    },
                    [=](caf::error& e) { self->send(report, done_atom::value, self->system().render(e)); });
          },
          [=](caf::error& e) { self->send(report, done_atom::value, self->system().render(e)); });
  return {[](caf::ok_atom) {}};
}

TEST_F(Workers, EventBasedActorCallsGithubThroughThePool) {
  auto github = pool();
  sim->add_fault(testing::fault_at("rest.delete_runner", 422, 1));  // as if the runner had just taken a job
  caf::scoped_actor self{*sys};
  auto owner = sys->spawn(runner_owner, github, caf::actor{self});
  std::string outcome;
  self->receive([&](done_atom, const std::string& s) { outcome = s; },
                caf::after(20s) >> [&] { outcome = "timeout"; });
  EXPECT_EQ(outcome, "busy");
  EXPECT_EQ(sim->calls("rest.generate_jitconfig"), 1);
  EXPECT_EQ(sim->calls("rest.delete_runner"), 1);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}

TEST_F(Workers, PoolRepliesCarryGithubErrorsAsValues) {
  auto github = pool();
  caf::scoped_actor self{*sys};
  bool got = false;
  self->request(github, 10s, get_runner_atom::value, std::int64_t{999})
      .receive(
          [&](runner_reply& r) {
            got = true;
            ASSERT_FALSE(r);
            EXPECT_EQ(r.error().kind, error_kind::not_found);
          },
          [&](caf::error& e) { FAIL() << sys->render(e); });
  EXPECT_TRUE(got);
  self->request(github, 10s, registration_token_atom::value)
      .receive([&](token_reply& r) { EXPECT_TRUE(r); }, [&](caf::error& e) { FAIL() << sys->render(e); });
  self->request(github, 10s, list_runners_atom::value, std::string{})
      .receive([&](runners_reply& r) { EXPECT_TRUE(r); }, [&](caf::error& e) { FAIL() << sys->render(e); });
  self->request(github, 10s, runner_group_atom::value, std::string{"default"})
      .receive([&](group_reply& r) { EXPECT_TRUE(r); }, [&](caf::error& e) { FAIL() << sys->render(e); });
  self->request(github, 10s, rate_budget_atom::value)
      .receive(
          [&](rate_limit_snapshot& s) {
            EXPECT_EQ(s.limit, 5000);
            EXPECT_EQ(s.remaining, 5000 - 3);  // the repository runner group needs no call
          },
          [&](caf::error& e) { FAIL() << sys->render(e); });
  self->request(github, 10s, latest_release_atom::value)
      .receive([&](release_reply& r) { EXPECT_TRUE(r) << r.error().describe(); },
               [&](caf::error& e) { FAIL() << sys->render(e); });
}

// A REST runner found by name carries the labels it was registered with (as
// GitHub lists them, label objects with a name): under the Webhook intake
// they are what shows which set registered it
// (actors/runnerset/set_registrations.hpp).
TEST_F(Workers, TheRestPoolFindsARunnerByNameWithItsLabels) {
  auto github = pool();
  caf::scoped_actor self{*sys};
  const std::vector<std::string> labels{"self-hosted", "octorun-set-0123456789abcdef"};
  std::int64_t registered = 0;
  self->request(github, 10s, jit_config_atom::value, jit_request{"labelled-runner", 1, labels, "_work"})
      .receive([&](jit_reply& r) { registered = r ? r->registered.id : 0; },
               [&](caf::error& e) { FAIL() << sys->render(e); });
  ASSERT_NE(registered, 0);
  self->request(github, 10s, find_runner_atom::value, std::string{"labelled-runner"})
      .receive(
          [&](maybe_reference_reply& r) {
            ASSERT_TRUE(r) << r.error().describe();
            ASSERT_TRUE(*r);
            EXPECT_EQ((*r)->id, registered);
            EXPECT_EQ((*r)->scale_set_id, 0) << "a REST runner has no scale set";
            EXPECT_EQ((*r)->labels, labels);
          },
          [&](caf::error& e) { FAIL() << sys->render(e); });
  self->request(github, 10s, find_runner_atom::value, std::string{"nobody"})
      .receive([&](maybe_reference_reply& r) { EXPECT_TRUE(r && !*r); },
               [&](caf::error& e) { FAIL() << sys->render(e); });
}

TEST_F(Workers, ScaleSetWorkerRunsTheListenerProtocol) {
  auto worker = spawn_scaleset_worker(*sys, {sim->ghes_url() + "/octo", pat_auth("ghp_simulator"),
                                             testing::fast_calls(sleeps), 10s, nullptr});
  ASSERT_TRUE(worker) << worker.error();
  to_stop.push_back(*worker);
  caf::scoped_actor self{*sys};
  auto fail = [&](caf::error& e) { FAIL() << sys->render(e); };
  scale_set wanted;
  wanted.name = "linux";
  wanted.runner_group_id = 1;
  std::int64_t id = 0;
  self->request(*worker, 10s, create_scale_set_atom::value, wanted)
      .receive(
          [&](scale_set_reply& s) {
            ASSERT_TRUE(s);
            id = s->id;
          },
          fail);
  ASSERT_GT(id, 0);
  self->request(*worker, 10s, open_session_atom::value, id, std::string{"host"}, std::string{})
      .receive([&](session_reply& s) { ASSERT_TRUE(s) << s.error().describe(); }, fail);
  sim::job_spec job;
  job.labels = {"linux"};
  auto job_id = sim->add_job(job);
  std::int64_t message_id = 0;
  self->request(*worker, 20s, poll_atom::value, std::int64_t{0}, std::int32_t{5})
      .receive(
          [&](message_reply& m) {
            ASSERT_TRUE(m && m->has_value());
            message_id = (*m)->message_id;
          },
          fail);
  self->request(*worker, 10s, ack_atom::value, message_id)
      .receive([&](ok_reply& r) { EXPECT_TRUE(r); }, fail);
  self->request(*worker, 10s, acquire_jobs_atom::value, id, std::vector<std::int64_t>{job_id})
      .receive([&](ids_reply& r) { EXPECT_TRUE(r && r->size() == 1); }, fail);
  self->request(*worker, 10s, jit_config_atom::value, id, std::string{"linux-1"})
      .receive([&](scaleset_jit_reply& r) { EXPECT_TRUE(r); }, fail);
  self->request(*worker, 10s, close_session_atom::value).receive([&](ok_reply& r) { EXPECT_TRUE(r); }, fail);
  EXPECT_EQ(sim->calls("scaleset.delete_session"), 1);
}

}  // namespace
}  // namespace octorun::github
