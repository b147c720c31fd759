// The scale-set protocol client against the simulator: scale sets, sessions
// (conflict, refresh on 401), long poll with acknowledgement, acquire jobs,
// JIT configuration and runner removal, through a whole job.
#include <future>
#include <regex>

#include "adapters/github/scaleset_client.hpp"
#include "test/github/sim_fixture.hpp"

namespace octorun::github {
namespace {

using namespace std::chrono_literals;
using testing::fast_calls;
using testing::sleep_log;

struct ScaleSet : ::testing::Test {
  std::unique_ptr<sim::simulator> sim;
  std::shared_ptr<sleep_log> sleeps = std::make_shared<sleep_log>();

  void SetUp() override { start({}); }
  void start(sim::simulator_options o) {
    if (o.long_poll == 50'000ms) o.long_poll = 10s;
    sim = testing::start_simulator(o);
  }
  std::unique_ptr<scaleset_client> client() {
    auto c = scaleset_client::make(
        {sim->ghes_url() + "/octo", pat_auth("ghp_simulator"), fast_calls(sleeps), 10s, nullptr});
    EXPECT_TRUE(c) << c.error();
    return c ? std::move(*c) : nullptr;
  }
  std::int64_t linux_job(std::chrono::milliseconds duration = 0ms) {
    sim::job_spec job;
    job.labels = {"linux"};
    job.duration = duration;
    return sim->add_job(job);
  }
  // A simulator with a short long poll, and a client with a session on a "linux" scale set.
  std::unique_ptr<scaleset_client> polling_client(std::chrono::milliseconds long_poll) {
    sim::simulator_options o;
    o.long_poll = long_poll;
    start(o);
    auto c = client();
    auto s = make_set(*c, "linux");
    EXPECT_TRUE(c->create_session(s.id, "host"));
    return c;
  }
  scale_set make_set(scaleset_client& c, const std::string& name, std::vector<std::string> labels = {}) {
    scale_set s;
    s.name = name;
    s.runner_group_id = 1;
    s.labels = std::move(labels);
    auto created = c.create_scale_set(s);
    EXPECT_TRUE(created) << created.error().describe();
    return created ? *created : scale_set{};
  }
};

TEST_F(ScaleSet, RegistersAndManagesScaleSets) {
  auto c = client();
  auto group = c->runner_group_by_name("Default");
  ASSERT_TRUE(group) << group.error().describe();
  EXPECT_EQ(group->id, 1);
  EXPECT_EQ(sim->calls("rest.registration_token"), 1);
  EXPECT_EQ(sim->calls("rest.runner_registration"), 1);
  EXPECT_EQ(c->tenant_url(), sim->base_url() + "/tenant/1/");
  auto missing_group = c->runner_group_by_name("gpu");
  ASSERT_FALSE(missing_group);
  EXPECT_EQ(missing_group.error().kind, error_kind::not_found);

  auto none = c->scale_set_by_name(1, "arc");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto s = make_set(*c, "arc");
  EXPECT_GT(s.id, 0);
  EXPECT_EQ(s.labels, std::vector<std::string>{"arc"});
  EXPECT_TRUE(s.disable_update);
  auto found = c->scale_set_by_name(1, "arc");
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->id, s.id);
  // A lookup compares names as create does (issue 32: "ARC" was missed by
  // the lookup while create refused it as taken).
  auto other_case = c->scale_set_by_name(1, "ARC");
  ASSERT_TRUE(other_case && other_case->has_value()) << "a lookup missed the scale set create calls taken";
  EXPECT_EQ((*other_case)->id, s.id);
  scale_set change;
  change.labels = {"arc", "gpu"};
  auto updated = c->update_scale_set(s.id, change);
  ASSERT_TRUE(updated) << updated.error().describe();
  EXPECT_EQ(updated->name, "arc");
  EXPECT_EQ(updated->labels, (std::vector<std::string>{"arc", "gpu"}));
  auto dup = c->create_scale_set(s);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().kind, error_kind::conflict);
  scale_set upper = s;
  upper.name = "ARC";  // taken in any letter case, as the lookup finds it
  auto taken = c->create_scale_set(upper);
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().kind, error_kind::conflict);
  ASSERT_TRUE(c->delete_scale_set(s.id));
  auto gone = c->get_scale_set(s.id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, error_kind::not_found);
  // The admin token was reused for all of these calls.
  EXPECT_EQ(sim->calls("rest.runner_registration"), 1);
}

TEST_F(ScaleSet, ShortLivedAdminTokenIsRefreshedProactively) {
  sim::simulator_options o;
  o.admin_token_ttl = 30s;  // inside the client's 60 s margin: every call re-registers
  start(o);
  auto c = client();
  ASSERT_TRUE(c->runner_group_by_name("Default"));
  ASSERT_TRUE(c->scale_set_by_name(1, "x"));
  EXPECT_EQ(sim->calls("rest.runner_registration"), 2);
}

// GitHub may refuse an admin token before its exp (revoked, clocks apart):
// the client registers again once and repeats the call.
TEST_F(ScaleSet, RefusedAdminTokenIsRenewedOnceAndTheCallRepeated) {
  auto c = client();
  ASSERT_TRUE(c->runner_group_by_name("Default"));
  sim->expire_admin_tokens();
  auto group = c->runner_group_by_name("Default");
  ASSERT_TRUE(group) << group.error().describe();
  EXPECT_EQ(sim->calls("rest.runner_registration"), 2);
  EXPECT_EQ(sim->calls("scaleset.runner_groups"), 3);
  // A 401 that survives the renewal is an error, not a loop.
  sim->add_fault(testing::fault_at("scaleset.runner_groups", 401, 2));
  auto refused = c->runner_group_by_name("Default");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, error_kind::unauthorized);
  EXPECT_EQ(sim->calls("rest.runner_registration"), 3);
}

TEST_F(ScaleSet, EachScopeHasItsOwnTenant) {
  auto org = client();
  auto repo = scaleset_client::make(
      {sim->ghes_url() + "/octo/app", pat_auth("ghp_simulator"), fast_calls(sleeps), 10s, nullptr});
  ASSERT_TRUE(repo);
  auto in_org = make_set(*org, "linux");
  ASSERT_TRUE((*repo)->runner_group_by_name("Default"));
  EXPECT_NE((*repo)->tenant_url(), org->tenant_url());
  auto seen = (*repo)->scale_set_by_name(1, "linux");
  ASSERT_TRUE(seen);
  EXPECT_FALSE(seen->has_value());
  auto by_id = (*repo)->get_scale_set(in_org.id);
  ASSERT_FALSE(by_id);
  EXPECT_EQ(by_id.error().kind, error_kind::not_found);
  auto in_repo = make_set(**repo, "linux");  // the same name in another tenant
  EXPECT_NE(in_repo.id, in_org.id);
  // Runner names are per tenant too.
  ASSERT_TRUE(org->generate_jit_config(in_org.id, "r-1"));
  EXPECT_TRUE((*repo)->generate_jit_config(in_repo.id, "r-1"));
  auto sets = sim->scale_sets();
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].scope, "orgs/octo");
  EXPECT_EQ(sets[1].scope, "repos/octo/app");
}

TEST_F(ScaleSet, RunnerGroupsBesideDefault) {
  auto gpu = sim->add_runner_group("orgs/octo", "gpu");
  ASSERT_GT(gpu, 1);
  EXPECT_EQ(sim->add_runner_group("orgs/octo", "gpu"), 0);       // names are unique in a scope
  EXPECT_EQ(sim->add_runner_group("repos/octo/app", "gpu"), 0);  // repositories have Default only
  auto c = client();
  auto group = c->runner_group_by_name("gpu");
  ASSERT_TRUE(group) << group.error().describe();
  EXPECT_EQ(group->id, gpu);
  EXPECT_FALSE(group->is_default);
  scale_set s;
  s.name = "gpu-set";
  s.runner_group_id = gpu;
  auto created = c->create_scale_set(s);
  ASSERT_TRUE(created) << created.error().describe();
  EXPECT_EQ(created->runner_group_name, "gpu");
  s.name = "nowhere";
  s.runner_group_id = 777;
  EXPECT_FALSE(c->create_scale_set(s));
  auto listed = c->rest().runner_group_by_name("gpu");
  ASSERT_TRUE(listed) << listed.error().describe();
  EXPECT_EQ(listed->id, gpu);
}

// The long poll announces how many jobs the listener can run; no more are handed out.
TEST_F(ScaleSet, MaxCapacityBoundsTheJobsHandedOut) {
  auto c = polling_client(300ms);
  ASSERT_TRUE(c->get_message(0, 1));  // announces capacity 1
  std::vector<std::int64_t> ids{linux_job(), linux_job(), linux_job()};
  auto first = c->get_message(0, 1);
  ASSERT_TRUE(first && first->has_value());
  ASSERT_EQ((*first)->jobs.size(), 1u);
  EXPECT_EQ(std::get<messages::job_available>((*first)->jobs[0]).job.job_id, ids[0]);
  ASSERT_TRUE((*first)->statistics);
  EXPECT_EQ((*first)->statistics->total_available_jobs, 1);
  EXPECT_EQ(sim->scale_sets()[0].max_capacity, 1);
  ASSERT_TRUE(c->delete_message((*first)->message_id));
  auto more = c->get_message((*first)->message_id, 3);  // room for the other two
  ASSERT_TRUE(more && more->has_value());
  EXPECT_EQ((*more)->jobs.size(), 2u);
}

TEST_F(ScaleSet, SecondSessionConflictsUntilTheFirstIsDeleted) {
  auto a = client();
  auto b = client();
  auto s = make_set(*a, "linux");
  auto first = a->create_session(s.id, "host-a");
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_TRUE(std::regex_match(
      first->session_id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << first->session_id;
  EXPECT_EQ(first->scale_set_id, s.id);
  auto second = b->create_session(s.id, "host-b");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, error_kind::conflict);
  EXPECT_EQ(second.error().status, 409);
  EXPECT_NE(second.error().message.find("RunnerScaleSetSessionConflictException"), std::string::npos);
  auto refreshed = a->refresh_session();
  ASSERT_TRUE(refreshed);
  EXPECT_NE(refreshed->message_queue_token, first->message_queue_token);
  ASSERT_TRUE(a->delete_session());
  EXPECT_TRUE(b->create_session(s.id, "host-b"));
  EXPECT_EQ(sim->calls("scaleset.create_session"), 3);
}

TEST_F(ScaleSet, InjectedSessionConflictIsAConflict) {
  auto c = client();
  auto s = make_set(*c, "linux");
  sim->add_fault(testing::fault_at("scaleset.create_session", 409, 1));
  auto r = c->create_session(s.id, "host");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::conflict);
  EXPECT_TRUE(c->create_session(s.id, "host"));
}

TEST_F(ScaleSet, LongPollAnswersNothingWhenIdle) {
  auto c = polling_client(200ms);
  auto m = c->get_message(0, 10);
  ASSERT_TRUE(m) << m.error().describe();
  EXPECT_FALSE(m->has_value());
}

TEST_F(ScaleSet, LongPollIsReleasedByANewJob) {
  auto c = client();
  auto s = make_set(*c, "linux");
  ASSERT_TRUE(c->create_session(s.id, "host"));
  auto poll = std::async(std::launch::async, [&] { return c->get_message(0, 10); });
  ASSERT_TRUE(
      sim->wait_until([](const sim::simulator& x) { return x.calls("scaleset.get_message") == 1; }, 10s));
  auto id = linux_job();
  auto m = poll.get();
  ASSERT_TRUE(m) << m.error().describe();
  ASSERT_TRUE(m->has_value());
  ASSERT_EQ((*m)->jobs.size(), 1u);
  auto& avail = std::get<messages::job_available>((*m)->jobs[0]);
  EXPECT_EQ(avail.job.job_id, id);
  EXPECT_EQ(avail.job.repository, "octo/app");
  EXPECT_EQ(avail.job.labels, std::vector<std::string>{"linux"});
  EXPECT_EQ(avail.job.scale_set_id, s.id);
  ASSERT_TRUE((*m)->statistics);
  EXPECT_EQ((*m)->statistics->total_available_jobs, 1);
}

TEST_F(ScaleSet, UnacknowledgedMessagesAreRedelivered) {
  auto c = client();
  auto s = make_set(*c, "linux");
  ASSERT_TRUE(c->create_session(s.id, "host"));
  linux_job();
  auto first = c->get_message(0, 10);
  ASSERT_TRUE(first && first->has_value());
  auto again = c->get_message(0, 10);
  ASSERT_TRUE(again && again->has_value());
  EXPECT_EQ((*again)->message_id, (*first)->message_id);
  ASSERT_TRUE(c->delete_message((*first)->message_id));
  auto twice = c->delete_message((*first)->message_id);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().kind, error_kind::not_found);
}

TEST_F(ScaleSet, ExpiredQueueTokenRefreshesTheSessionOnce) {
  auto c = client();
  auto s = make_set(*c, "linux");
  ASSERT_TRUE(c->create_session(s.id, "host"));
  linux_job();
  sim->expire_tokens();
  auto m = c->get_message(0, 10);
  ASSERT_TRUE(m) << m.error().describe();
  EXPECT_TRUE(m->has_value());
  EXPECT_EQ(sim->calls("scaleset.refresh_session"), 1);
  EXPECT_EQ(sim->calls("scaleset.get_message"), 2);
  // A second 401 in a row is an error, not a loop.
  sim->add_fault(testing::fault_at("scaleset.get_message", 401, 2));
  auto failed = c->get_message(0, 10);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().kind, error_kind::unauthorized);
}

TEST_F(ScaleSet, ServerErrorOnGetMessageIsRetried) {
  auto c = client();
  auto s = make_set(*c, "linux");
  ASSERT_TRUE(c->create_session(s.id, "host"));
  linux_job();
  sim->add_fault(testing::fault_at("scaleset.get_message", 503, 1));
  auto m = c->get_message(0, 10);
  ASSERT_TRUE(m && m->has_value());
  EXPECT_EQ(sleeps->get().size(), 1u);
}

// The whole lifecycle of one job on an ephemeral JIT runner, as a listener sees it.
TEST_F(ScaleSet, JobIsAssignedToTheJitRunnerOnceItComesOnline) {
  auto c = client();
  auto s = make_set(*c, "linux", {"linux", "x64"});
  ASSERT_TRUE(c->create_session(s.id, "host"));
  auto id = linux_job(-1ms);  // completed by hand below

  std::int64_t last = 0;
  std::vector<messages::job_message> seen;
  auto next = [&] {
    auto m = c->get_message(last, 10);
    EXPECT_TRUE(m) << m.error().describe();
    if (!m || !m->has_value()) return messages::job_statistics{};
    last = (*m)->message_id;
    EXPECT_TRUE(c->delete_message(last));
    seen.insert(seen.end(), (*m)->jobs.begin(), (*m)->jobs.end());
    EXPECT_TRUE((*m)->statistics) << "every job message carries the statistics";
    return (*m)->statistics.value_or(messages::job_statistics{});
  };
  next();
  ASSERT_EQ(seen.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<messages::job_available>(seen[0]));
  auto acquired = c->acquire_jobs(s.id, {id});
  ASSERT_TRUE(acquired) << acquired.error().describe();
  EXPECT_EQ(*acquired, std::vector<std::int64_t>{id});
  auto stats = next();
  ASSERT_TRUE(std::holds_alternative<messages::job_assigned>(seen.back()));
  EXPECT_EQ(stats.total_assigned_jobs, 1);

  auto jit = c->generate_jit_config(s.id, "linux-runner-1");
  ASSERT_TRUE(jit) << jit.error().describe();
  EXPECT_EQ(jit->runner.scale_set_id, s.id);
  EXPECT_FALSE(jit->encoded_jit_config.empty());
  EXPECT_EQ(sim->job_state(id), "assigned");
  ASSERT_TRUE(sim->runner_online("linux-runner-1"));
  stats = next();
  auto& started = std::get<messages::job_started>(seen.back());
  EXPECT_EQ(started.runner_name, "linux-runner-1");
  EXPECT_EQ(started.runner_id, jit->runner.id);
  EXPECT_EQ(stats.total_running_jobs, 1);
  EXPECT_EQ(stats.total_busy_runners, 1);

  auto busy = c->remove_runner(jit->runner.id);
  ASSERT_TRUE(busy) << busy.error().describe();
  EXPECT_EQ(*busy, delete_outcome::busy);

  ASSERT_TRUE(sim->complete_job(id, "succeeded"));
  stats = next();
  auto& done = std::get<messages::job_completed>(seen.back());
  EXPECT_EQ(done.result, "succeeded");
  EXPECT_EQ(done.runner_name, "linux-runner-1");
  EXPECT_EQ(stats.total_assigned_jobs, 0);
  auto gone = c->get_runner(jit->runner.id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, error_kind::not_found);
  // GitHub unregistered it after its job; a removal of it still answers 204.
  auto removed = c->remove_runner(jit->runner.id);
  ASSERT_TRUE(removed) << removed.error().describe();
  EXPECT_EQ(*removed, delete_outcome::deleted);
  ASSERT_TRUE(c->delete_session());
}

// As with REST: the conflict names the holder; removing it (what the Runner
// actor does for one in the same scale set) frees the name.
TEST_F(ScaleSet, JitNameConflictNamesTheHolderWhichCanBeRemovedToRecover) {
  auto c = client();
  auto s = make_set(*c, "linux");
  auto first = c->generate_jit_config(s.id, "r-1");
  ASSERT_TRUE(first);
  auto byname = c->runner_by_name("r-1");
  ASSERT_TRUE(byname && byname->has_value());
  EXPECT_EQ((*byname)->id, first->runner.id);
  auto taken = c->generate_jit_config(s.id, "r-1");
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().kind, error_kind::conflict);
  ASSERT_TRUE(taken.error().holder);
  EXPECT_EQ(taken.error().holder->runner_id, first->runner.id);
  EXPECT_FALSE(taken.error().holder->other_scale_set);
  ASSERT_TRUE(c->remove_runner(first->runner.id));
  auto second = c->generate_jit_config(s.id, "r-1");
  ASSERT_TRUE(second) << second.error().describe();
  EXPECT_NE(second->runner.id, first->runner.id);
  EXPECT_EQ(sim->calls("scaleset.delete_agent"), 1);
  auto other = make_set(*c, "other");
  auto foreign = c->generate_jit_config(other.id, "r-1");
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().kind, error_kind::conflict);
  ASSERT_TRUE(foreign.error().holder);
  EXPECT_TRUE(foreign.error().holder->other_scale_set);
  auto removed = c->remove_runner(second->runner.id);
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, delete_outcome::deleted);
  auto again = c->remove_runner(second->runner.id);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, delete_outcome::not_found);
}

TEST_F(ScaleSet, BadConfigUrlAndMissingSessionAreErrors) {
  EXPECT_FALSE(scaleset_client::make({"not a url", pat_auth("x"), {}, 1s, nullptr}));
  auto c = client();
  auto m = c->get_message(0, 1);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().kind, error_kind::rejected);
  auto bad = scaleset_client::make(
      {sim->ghes_url() + "/octo", pat_auth("ghp_wrong"), fast_calls(sleeps), 1s, nullptr});
  ASSERT_TRUE(bad);
  auto r = (*bad)->runner_group_by_name("Default");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::unauthorized);
}

}  // namespace
}  // namespace octorun::github
