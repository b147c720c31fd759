// The REST client against the simulator: every call, its success and its
// errors; rate-limit backoff. (App auth: app_auth_test.cpp.)
#include "test/github/sim_fixture.hpp"

namespace octorun::github {
namespace {

using namespace std::chrono_literals;
using testing::fast_calls;
using testing::sleep_log;

struct RestClient : ::testing::Test {
  std::unique_ptr<sim::simulator> sim = testing::start_simulator();
  std::shared_ptr<sleep_log> sleeps = std::make_shared<sleep_log>();

  rest_client client(scope where = {scope_kind::repository, "octo", "app"},
                     std::string token = "ghp_simulator") {
    return rest_client(rest_options{sim->api_url(), where, pat_auth(token), fast_calls(sleeps)});
  }
};

TEST_F(RestClient, RegistrationAndRemoveTokensAtEveryScope) {
  for (auto where : {scope{scope_kind::repository, "octo", "app"},
                     scope{scope_kind::organization, "octo", {}}, scope{scope_kind::enterprise, "big", {}}}) {
    auto c = client(where);
    auto reg = c.registration_token();
    ASSERT_TRUE(reg) << reg.error().describe();
    EXPECT_FALSE(reg->token.empty());
    EXPECT_GT(reg->expires_at, 0);
    auto rm = c.remove_token();
    ASSERT_TRUE(rm) << rm.error().describe();
  }
  EXPECT_EQ(sim->calls("rest.registration_token"), 3);
  EXPECT_EQ(sim->calls("rest.remove_token"), 3);
}

TEST_F(RestClient, ConfigUrlOfTheSimulatorLeadsToItsGhesApi) {
  auto target = parse_config_url(sim->ghes_url() + "/octo/app");
  ASSERT_TRUE(target);
  EXPECT_EQ(target->api_base, sim->api_url());
  rest_client c(rest_options{target->api_base, target->where, pat_auth("ghp_simulator"), fast_calls(sleeps)});
  EXPECT_TRUE(c.registration_token());
}

TEST_F(RestClient, JitConfigThenListGetAndDelete) {
  auto c = client();
  auto jit = c.generate_jit_config({"runner-a", 1, {"self-hosted", "linux"}, "_work"});
  ASSERT_TRUE(jit) << jit.error().describe();
  EXPECT_FALSE(jit->encoded_jit_config.empty());
  EXPECT_EQ(jit->registered.name, "runner-a");
  EXPECT_EQ(jit->registered.labels, (std::vector<std::string>{"self-hosted", "linux"}));
  auto list = c.list_runners("runner-a");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 1u);
  auto got = c.get_runner(jit->registered.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, "offline");
  EXPECT_FALSE(got->busy);
  auto del = c.delete_runner(jit->registered.id);
  ASSERT_TRUE(del);
  EXPECT_EQ(*del, delete_outcome::deleted);
  auto gone = c.get_runner(jit->registered.id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, error_kind::not_found);
  auto again = c.delete_runner(jit->registered.id);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, delete_outcome::not_found);
}

TEST_F(RestClient, DeletingABusyRunnerAnswersBusyWithoutRetrying) {
  auto c = client();
  auto jit = c.generate_jit_config({"runner-b", 1, {"self-hosted"}, "_work"});
  ASSERT_TRUE(jit);
  ASSERT_TRUE(sim->set_runner_busy("runner-b", true));
  auto del = c.delete_runner(jit->registered.id);
  ASSERT_TRUE(del) << del.error().describe();
  EXPECT_EQ(*del, delete_outcome::busy);
  EXPECT_EQ(sim->calls("rest.delete_runner"), 1);
  EXPECT_TRUE(sleeps->get().empty());
}

// The client deletes nothing on a name conflict: it names the holder, and the
// Runner actor decides (actors/runner/jit_conflict.hpp). This is the sequence
// the actor runs for an idle holder: delete it, ask again.
TEST_F(RestClient, JitNameConflictNamesTheHolderWhichCanBeDeletedToRecover) {
  auto c = client();
  auto first =
      c.generate_jit_config({"runner-c", 1, {"self-hosted", "octorun-set-0123456789abcdef"}, "_work"});
  ASSERT_TRUE(first);
  auto taken = c.generate_jit_config({"runner-c", 1, {"self-hosted"}, "_work"});
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().kind, error_kind::conflict);
  ASSERT_TRUE(taken.error().holder);
  EXPECT_EQ(taken.error().holder->runner_id, first->registered.id);
  EXPECT_FALSE(taken.error().holder->busy);
  // Its labels, the ones it was registered with: the RunnerSet's label among
  // them shows the set registered it (actors/runnerset/set_registrations.hpp).
  EXPECT_EQ(taken.error().holder->labels,
            (std::vector<std::string>{"self-hosted", "octorun-set-0123456789abcdef"}));
  EXPECT_EQ(sim->calls("rest.delete_runner"), 0);
  auto freed = c.delete_runner(taken.error().holder->runner_id);
  ASSERT_TRUE(freed);
  EXPECT_EQ(*freed, delete_outcome::deleted);
  auto second = c.generate_jit_config({"runner-c", 1, {"self-hosted"}, "_work"});
  ASSERT_TRUE(second) << second.error().describe();
  EXPECT_NE(second->registered.id, first->registered.id);
  EXPECT_EQ(sim->calls("rest.generate_jitconfig"), 3);
  EXPECT_EQ(sim->calls("rest.delete_runner"), 1);
  // A busy holder of the name is reported as busy.
  ASSERT_TRUE(sim->set_runner_busy("runner-c", true));
  auto third = c.generate_jit_config({"runner-c", 1, {"self-hosted"}, "_work"});
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().kind, error_kind::conflict);
  ASSERT_TRUE(third.error().holder);
  EXPECT_TRUE(third.error().holder->busy);
}

TEST_F(RestClient, InvalidJitRequestIsRejected) {
  auto c = client();
  auto r = c.generate_jit_config({"runner-d", 1, {}, "_work"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::rejected);
  EXPECT_EQ(r.error().status, 422);
}

TEST_F(RestClient, UnknownScopeIsNotFoundAndBadTokenUnauthorized) {
  auto missing = client({scope_kind::repository, "octo", "nope"}).registration_token();
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, error_kind::not_found);
  auto bad = client({scope_kind::repository, "octo", "app"}, "ghp_wrong").registration_token();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, error_kind::unauthorized);
  EXPECT_EQ(bad.error().message, "Bad credentials");
}

TEST_F(RestClient, ListsEveryPage) {
  auto c = client({scope_kind::organization, "octo", {}});
  for (int i = 0; i < 130; ++i)
    ASSERT_TRUE(c.generate_jit_config({"r-" + std::to_string(i), 1, {"self-hosted"}, ""}));
  sim->reset_counts();
  auto all = c.list_runners();
  ASSERT_TRUE(all) << all.error().describe();
  EXPECT_EQ(all->size(), 130u);
  EXPECT_EQ(sim->calls("rest.list_runners"), 2);
}

// The webhook intake's sweep: an organisation's repositories (every page),
// each one's queued and running runs (every page), and the jobs of the runs
// not known already; a completed run is not listed.
TEST_F(RestClient, ListsTheQueuedAndRunningWorkOfAnOrganisation) {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 120; ++i) {
    sim::job_spec j;
    j.repository = i % 2 == 0 ? "octo/app" : "octo/lib";
    j.labels = {"self-hosted", "linux"};
    j.duration = std::chrono::milliseconds(-1);
    ids.push_back(sim->add_job(j));
  }
  auto c = client({scope_kind::organization, "octo", {}});
  auto jit = c.generate_jit_config({"r-1", 1, {"self-hosted", "linux"}, ""});
  ASSERT_TRUE(jit) << jit.error().describe();
  ASSERT_TRUE(sim->runner_online("r-1"));  // takes the first job: in progress
  ASSERT_TRUE(sim->cancel_job(ids[1]));    // completed: its run is listed no more
  sim->reset_counts();
  auto work = c.list_active_work({});
  ASSERT_TRUE(work) << work.error().describe();
  EXPECT_EQ(work->runs.size(), 119u);
  ASSERT_EQ(work->jobs.size(), 119u);
  std::map<std::string, int> by_status;
  for (const auto& j : work->jobs) {
    ++by_status[j.status];
    EXPECT_NE(j.id, ids[1]);
    EXPECT_EQ(j.labels, (std::vector<std::string>{"self-hosted", "linux"}));
    if (j.status == "in_progress") {
      EXPECT_EQ(j.runner_name, "r-1");
    }
  }
  EXPECT_EQ(by_status["in_progress"], 1);
  EXPECT_EQ(by_status["queued"], 118);
  EXPECT_EQ(sim->calls("rest.org_repos"), 1);
  EXPECT_EQ(sim->calls("rest.list_runs"), 4);  // two statuses, two repositories, one page each
  EXPECT_EQ(sim->calls("rest.run_jobs"), 119);

  // Runs listed before: their jobs are not listed again while they run.
  sim->reset_counts();
  messages::sweep_request listed_before;
  listed_before.listed_runs = work->runs;
  auto again = c.list_active_work(listed_before);
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(again->runs, work->runs);
  EXPECT_TRUE(again->jobs.empty());
  EXPECT_EQ(sim->calls("rest.run_jobs"), 0);

  // A followed run that ended: its jobs are listed, with how they ended.
  ASSERT_TRUE(sim->complete_job(ids[0], "failed"));
  std::int64_t run = 0;
  for (const auto& j : work->jobs)
    if (j.id == ids[0]) run = j.run_id;
  messages::sweep_request follow;
  follow.followed_runs = {{run, "octo/app"}};
  follow.listed_runs = work->runs;
  auto ended = c.list_active_work(follow);
  ASSERT_TRUE(ended) << ended.error().describe();
  EXPECT_FALSE(ended->runs.contains(run));
  ASSERT_EQ(ended->jobs.size(), 1u);
  EXPECT_EQ(ended->jobs[0].status, "completed");
  EXPECT_EQ(ended->jobs[0].conclusion, "failure");
  EXPECT_EQ(ended->jobs[0].runner_name, "r-1");

  // A repository scope lists its own runs only; pages of 100.
  sim->reset_counts();
  auto repo = client({scope_kind::repository, "octo", "app"}).list_active_work({});
  ASSERT_TRUE(repo) << repo.error().describe();
  EXPECT_EQ(repo->jobs.size(), 59u);  // one of its 60 completed above
  EXPECT_EQ(sim->calls("rest.org_repos"), 0);
}

TEST_F(RestClient, AnEnterpriseCannotBeSweptAndAnUnknownOrganisationIsNotFound) {
  EXPECT_FALSE(client({scope_kind::enterprise, "e", {}}).list_active_work({}));
  auto unknown = client({scope_kind::organization, "nobody", {}}).list_active_work({});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().status, 404);
}

TEST_F(RestClient, RunnerGroupLookup) {
  auto org = client({scope_kind::organization, "octo", {}});
  auto g = org.runner_group_by_name("default");
  ASSERT_TRUE(g) << g.error().describe();
  EXPECT_EQ(g->id, 1);
  EXPECT_TRUE(g->is_default);
  auto missing = org.runner_group_by_name("gpu");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, error_kind::not_found);
  auto repo = client().runner_group_by_name("");
  ASSERT_TRUE(repo);
  EXPECT_EQ(repo->id, 1);
  EXPECT_FALSE(client().runner_group_by_name("gpu"));
}

TEST_F(RestClient, HonoursRetryAfterOn429AndExportsTheBudget) {
  auto c = client();
  {
    auto f = testing::fault_at("rest.list_runners", 429, 1);
    f.retry_after = 7;
    sim->add_fault(f);
  }
  auto r = c.list_runners();
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(sleeps->get(), (std::vector<std::chrono::milliseconds>{7s}));
  EXPECT_EQ(sim->calls("rest.list_runners"), 2);
  EXPECT_EQ(c.last_rate_limit().limit, 5000);
  EXPECT_EQ(c.options().call.budget->remaining.load(), 4999);  // the 429 was not billed
  EXPECT_EQ(c.options().call.budget->rate_limited_responses.load(), 1);
}

TEST_F(RestClient, WaitsForTheResetWhenThePrimaryLimitIsExhausted) {
  auto c = client();
  {
    auto f = testing::fault_at("rest.get_runner", 403, 1);
    f.exhausted = true;
    f.reset_in = 30;
    sim->add_fault(f);
  }
  auto r = c.get_runner(12345);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::not_found);  // the retry reached the real endpoint
  ASSERT_EQ(sleeps->get().size(), 1u);
  EXPECT_GE(sleeps->get()[0], 29s);
  EXPECT_LE(sleeps->get()[0], 31s);
}

TEST_F(RestClient, SecondaryLimitBacksOffExponentiallyFromTheMinimum) {
  auto c = client();
  {
    auto f = testing::fault_at("rest.registration_token", 403, 2);
    sim->add_fault(f);
  }
  ASSERT_TRUE(c.registration_token());
  auto w = sleeps->get();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_GE(w[0], 1000ms);
  EXPECT_GT(w[1], w[0]);
}

TEST_F(RestClient, LongLimitsAreReturnedAsRateLimitedInsteadOfSleeping) {
  auto c = client();
  {
    auto f = testing::fault_at("rest.list_runners", 403, 1);
    f.exhausted = true;
    f.reset_in = 3600;
    sim->add_fault(f);
  }
  auto r = c.list_runners();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::rate_limited);
  EXPECT_GE(r.error().retry_after, 3599s);
  EXPECT_GT(r.error().reset_epoch, 0);
  EXPECT_TRUE(sleeps->get().empty());
}

TEST_F(RestClient, ServerErrorsAreRetriedWithGrowingBackoffThenReported) {
  auto c = client();
  {
    auto f = testing::fault_at("rest.remove_token", 502, 2);
    sim->add_fault(f);
  }
  ASSERT_TRUE(c.remove_token());
  auto w = sleeps->get();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_LT(w[0], w[1]);
  {
    auto f = testing::fault_at("rest.remove_token", 500, -1);
    sim->add_fault(f);
  }
  auto r = c.remove_token();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::server_error);
  EXPECT_EQ(sim->calls("rest.remove_token"), 3 + 5);
}

TEST_F(RestClient, TransportFailureIsAValue) {
  std::string dead;
  {
    auto other = sim::simulator::start({});
    ASSERT_TRUE(other);
    dead = (*other)->api_url();
  }
  call_options opts = fast_calls(sleeps);
  opts.retry.max_attempts = 2;
  rest_client c(rest_options{dead, {scope_kind::organization, "octo", {}}, pat_auth("x"), opts});
  auto r = c.registration_token();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::transport);
}

TEST_F(RestClient, GarbageBodiesAreBadResponsesNotCrashes) {
  // A 2xx that is not the documented shape: bad_response, whatever the body.
  auto c = client();
  {
    auto f = testing::fault_at("rest.list_runners", 0, 1);
    sim->add_fault(f);
  }  // latency-only fault passes through
  ASSERT_TRUE(c.list_runners());
  auto raw = c.call("GET", "/repos/octo/app/actions/runners/abc");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->status, 404);
}

}  // namespace
}  // namespace octorun::github

namespace octorun::github {
namespace {

// GET /repos/actions/runner/releases/latest: read once per host and kept
// (latest_release_ttl), whatever client asks; a tag that names no version
// is an error, not a release, and is not kept.
TEST_F(RestClient, TheLatestRunnerReleaseIsReadOncePerHostAndKept) {
  const std::int64_t published = 1'780'000'000;
  sim->set_latest_runner_release("v2.332.1", published);
  auto first = client().latest_runner_release();
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_EQ(first->version, (model::runner_version{2, 332, 1}));
  EXPECT_EQ(first->published_at, published);
  auto other = client({scope_kind::organization, "octo", {}}).latest_runner_release();
  ASSERT_TRUE(other);
  EXPECT_EQ(*other, *first);
  EXPECT_EQ(sim->calls("rest.latest_runner_release"), 1) << "one answer serves every client of the host";
  sim->set_latest_runner_release("v2.333.0", published);
  auto fresh = client().latest_runner_release(std::chrono::seconds(0));
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->version, (model::runner_version{2, 333, 0}));
  EXPECT_EQ(sim->calls("rest.latest_runner_release"), 2);
}

TEST_F(RestClient, ALatestReleaseThatNamesNoVersionOrIsMissingIsAnError) {
  sim->set_latest_runner_release("v2.332\"}", 0);
  auto bad = client().latest_runner_release();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, error_kind::bad_response);
  sim::fault missing;
  missing.endpoint = "rest.latest_runner_release";
  missing.status = 404;
  missing.message = "Not Found";
  sim->add_fault(missing);
  auto none = client().latest_runner_release();
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, error_kind::not_found);
  sim->set_latest_runner_release("v2.331.0", 0);
  auto good = client().latest_runner_release();
  ASSERT_TRUE(good) << "a failure is not kept";
  EXPECT_EQ(good->version, (model::runner_version{2, 331, 0}));
}

// The simulator's GitHub refuses a runner older than its minimum as
// deprecated, with the line the runner prints, which the manager reads.
TEST_F(RestClient, ARunnerOlderThanTheMinimumIsRefusedAsDeprecated) {
  auto jit = client().generate_jit_config({"runner-old", 1, {"self-hosted"}, "_work"});
  ASSERT_TRUE(jit) << jit.error().describe();
  sim->set_minimum_runner_version("2.329.0");
  EXPECT_EQ(sim->connect_runner("runner-old", "2.320.0"), sim::connect_answer::deprecated);
  EXPECT_EQ(sim->calls("runner.deprecated"), 1);
  EXPECT_EQ(sim->connect_runner("runner-old", "not a version"), sim::connect_answer::deprecated);
  EXPECT_EQ(sim->connect_runner("nobody", "2.331.0"), sim::connect_answer::unknown);
  EXPECT_EQ(model::deprecated_version_in(sim::simulator::deprecation_message("2.320.0")),
            (model::runner_version{2, 320, 0}));
  EXPECT_EQ(sim->connect_runner("runner-old", "2.331.0"), sim::connect_answer::online);
  auto listed = client().get_runner(jit->registered.id);
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, "online");
}

}  // namespace
}  // namespace octorun::github
