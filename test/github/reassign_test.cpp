// GitHub's reassignment, as the simulator plays it to a scale-set client
// (issue 34): a job assigned to a scale set that no runner of the scale set
// starts in time goes back to it (JobCompleted "canceled", then JobAvailable
// again), up to max_requeues times; the next such assignment cancels the job.
// Time passes with advance_clock, which does what falls due before it returns.
#include "adapters/github/scaleset_client.hpp"
#include "adapters/http/http_client.hpp"
#include "test/github/sim_fixture.hpp"

namespace octorun::github {
namespace {

using namespace std::chrono_literals;
using testing::fast_calls;
using testing::sleep_log;

struct Reassign : ::testing::Test {
  static constexpr std::chrono::milliseconds timeout = 90s;
  // The simulator's clock is real time plus what a test skips: a check that
  // something has not happened yet leaves this much real time for the test
  // itself to run (sanitizer builds are slow), never a millisecond.
  static constexpr std::chrono::milliseconds margin = 10s;
  std::unique_ptr<sim::simulator> sim;
  std::shared_ptr<sleep_log> sleeps = std::make_shared<sleep_log>();
  std::unique_ptr<scaleset_client> c;
  scale_set set;
  std::int64_t last = 0;

  void SetUp() override {
    sim::simulator_options o;
    o.assignment_timeout = timeout;
    start(o);
  }
  void start(sim::simulator_options o) {
    o.long_poll = 10s;  // never reached: each poll below finds messages waiting
    c.reset();          // its connections first, so the simulator stops at once
    sim = testing::start_simulator(o);
    auto made = scaleset_client::make(
        {sim->ghes_url() + "/octo", pat_auth("ghp_simulator"), fast_calls(sleeps), 10s, nullptr});
    ASSERT_TRUE(made) << made.error();
    c = std::move(*made);
    scale_set s;
    s.name = "linux";
    s.runner_group_id = 1;
    auto created = c->create_scale_set(s);
    ASSERT_TRUE(created) << created.error().describe();
    set = *created;
    ASSERT_TRUE(c->create_session(set.id, "host"));
    last = 0;
  }
  std::int64_t job() {
    sim::job_spec spec;
    spec.labels = {"linux"};
    spec.duration = -1ms;  // completed by hand
    return sim->add_job(spec);
  }
  // The next message, acknowledged.
  queue_message next() {
    auto m = c->get_message(last, 10);
    EXPECT_TRUE(m) << m.error().describe();
    if (!m || !m->has_value()) return {};
    last = (*m)->message_id;
    EXPECT_TRUE(c->delete_message(last));
    return **m;
  }
  // Offered, acquired and assigned: the job waits for a runner.
  void assign(std::int64_t id) {
    auto offered = next();
    ASSERT_EQ(offered.jobs.size(), 1u);
    ASSERT_TRUE(std::holds_alternative<messages::job_available>(offered.jobs.back()));
    auto acquired = c->acquire_jobs(set.id, {id});
    ASSERT_TRUE(acquired) << acquired.error().describe();
    ASSERT_EQ(*acquired, std::vector<std::int64_t>{id});
    auto assigned = next();
    ASSERT_EQ(assigned.jobs.size(), 1u);
    ASSERT_TRUE(std::holds_alternative<messages::job_assigned>(assigned.jobs[0]));
    ASSERT_EQ(sim->job_state(id), "assigned");
  }
};

TEST_F(Reassign, AnAssignmentNoRunnerTakesIsRequeuedThreeTimesThenTheJobIsCancelled) {
  auto id = job();
  ASSERT_NO_FATAL_FAILURE(assign(id));
  for (int requeue = 1; requeue <= 3; ++requeue) {
    sim->advance_clock(timeout - margin);
    EXPECT_EQ(sim->job_state(id), "assigned") << "requeued before its time, requeue " << requeue;
    EXPECT_EQ(sim->job_requeues(id), requeue - 1);
    sim->advance_clock(margin);
    EXPECT_EQ(sim->job_state(id), "queued");
    EXPECT_EQ(sim->job_requeues(id), requeue);
    // The assignment ends as a cancelled job, then the same job is offered again.
    auto m = next();
    ASSERT_EQ(m.jobs.size(), 2u);
    auto& ended = std::get<messages::job_completed>(m.jobs[0]);
    EXPECT_EQ(ended.job.job_id, id);
    EXPECT_EQ(ended.result, "canceled");
    EXPECT_TRUE(ended.runner_name.empty());
    EXPECT_EQ(std::get<messages::job_available>(m.jobs[1]).job.job_id, id);
    ASSERT_TRUE(m.statistics);
    EXPECT_EQ(m.statistics->total_assigned_jobs, 0);
    EXPECT_EQ(m.statistics->total_available_jobs, 1);
    auto acquired = c->acquire_jobs(set.id, {id});
    ASSERT_TRUE(acquired) << acquired.error().describe();
    EXPECT_EQ(*acquired, std::vector<std::int64_t>{id});
    auto again = next();
    ASSERT_EQ(again.jobs.size(), 1u);
    EXPECT_TRUE(std::holds_alternative<messages::job_assigned>(again.jobs[0]));
  }
  // The fourth assignment nobody takes: GitHub gives up and cancels the job.
  sim->advance_clock(timeout);
  EXPECT_EQ(sim->job_state(id), "completed");
  EXPECT_EQ(sim->job_requeues(id), 3);
  auto m = next();
  ASSERT_EQ(m.jobs.size(), 1u);
  auto& cancelled = std::get<messages::job_completed>(m.jobs[0]);
  EXPECT_EQ(cancelled.result, "canceled");
  EXPECT_TRUE(cancelled.runner_name.empty());
  ASSERT_TRUE(m.statistics);
  EXPECT_EQ(m.statistics->total_assigned_jobs, 0);
  EXPECT_EQ(m.statistics->total_available_jobs, 0);
  EXPECT_NE(sim->state_json().find("\"result\":\"canceled\",\"requeues\":3"), std::string::npos);
}

TEST_F(Reassign, ARunnerThatStartsTheJobInTimeKeepsIt) {
  auto id = job();
  ASSERT_NO_FATAL_FAILURE(assign(id));
  auto jit = c->generate_jit_config(set.id, "linux-1");
  ASSERT_TRUE(jit) << jit.error().describe();
  sim->advance_clock(timeout - margin);
  ASSERT_TRUE(sim->runner_online("linux-1"));
  EXPECT_EQ(sim->job_state(id), "running");
  sim->advance_clock(10 * timeout);
  EXPECT_EQ(sim->job_state(id), "running");
  EXPECT_EQ(sim->job_requeues(id), 0);
  auto m = next();
  ASSERT_EQ(m.jobs.size(), 1u);
  EXPECT_EQ(std::get<messages::job_started>(m.jobs[0]).runner_name, "linux-1");
}

TEST_F(Reassign, ARequeuedJobRunsOnTheRunnerThatComesForIt) {
  auto id = job();
  ASSERT_NO_FATAL_FAILURE(assign(id));
  sim->advance_clock(timeout);
  ASSERT_EQ(sim->job_requeues(id), 1);
  next();  // JobCompleted "canceled", JobAvailable
  ASSERT_TRUE(c->acquire_jobs(set.id, {id}));
  next();  // JobAssigned
  ASSERT_TRUE(c->generate_jit_config(set.id, "linux-2"));
  ASSERT_TRUE(sim->runner_online("linux-2"));
  EXPECT_EQ(sim->job_state(id), "running");
  ASSERT_TRUE(sim->complete_job(id, "succeeded"));
  auto m = next();
  ASSERT_EQ(m.jobs.size(), 2u);
  EXPECT_EQ(std::get<messages::job_started>(m.jobs[0]).runner_name, "linux-2");
  EXPECT_EQ(std::get<messages::job_completed>(m.jobs[1]).result, "succeeded");
  EXPECT_EQ(sim->job_requeues(id), 1);
}

TEST_F(Reassign, WithNoRequeuesTheFirstUntakenAssignmentCancelsTheJob) {
  sim::simulator_options o;
  o.assignment_timeout = timeout;
  o.max_requeues = 0;
  start(o);
  auto id = job();
  ASSERT_NO_FATAL_FAILURE(assign(id));
  sim->advance_clock(timeout);
  EXPECT_EQ(sim->job_state(id), "completed");
  EXPECT_EQ(sim->job_requeues(id), 0);
  auto m = next();
  ASSERT_EQ(m.jobs.size(), 1u);
  EXPECT_EQ(std::get<messages::job_completed>(m.jobs[0]).result, "canceled");
}

// GitHub's spacing (five minutes) by default, and the clock over the control API.
TEST_F(Reassign, ByDefaultAfterFiveMinutesAndTheClockMovesOverHttp) {
  start({});
  auto id = job();
  ASSERT_NO_FATAL_FAILURE(assign(id));
  http::client h;
  h.set_plain_http(true);
  auto advance = [&](const std::string& body) {
    http::request req;
    req.method = "POST";
    req.url = sim->base_url() + "/_sim/clock";
    req.body = body;
    auto r = h.perform(req);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->status : 0;
  };
  EXPECT_EQ(advance(R"({"advance_ms":290000})"), 200);  // five minutes less the margin
  EXPECT_EQ(sim->job_state(id), "assigned");
  EXPECT_EQ(advance(R"({"advance_ms":10000})"), 200);
  EXPECT_EQ(sim->job_state(id), "queued");
  EXPECT_EQ(sim->job_requeues(id), 1);
  EXPECT_EQ(advance(R"({"advance_ms":0})"), 400);
  EXPECT_EQ(advance(R"({"advance":"soon"})"), 400);
}

}  // namespace
}  // namespace octorun::github
