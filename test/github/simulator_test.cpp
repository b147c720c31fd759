// The simulator as the demo and the bench drive it: over its HTTP control API,
// and over HTTPS with in-process certificates.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "adapters/http/http_server.hpp"
#include "adapters/tls/certificates.hpp"
#include "common/json.hpp"
#include "test/github/sim_fixture.hpp"

namespace octorun::github {
namespace {

using namespace std::chrono_literals;

http::response call(http::client& c, const std::string& method, const std::string& url,
                    const std::string& body = {}) {
  auto r = c.perform({method, url, {{"Authorization", "Bearer ghp_simulator"}}, body});
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : http::response{};
}

TEST(SimulatorControl, ScriptsJobsFaultsAndCountsOverHttp) {
  sim::simulator_options o;
  o.auto_online = true;
  auto sim = testing::start_simulator(o);
  ASSERT_TRUE(sim);
  http::client c;
  c.set_plain_http(true);
  const auto base = sim->base_url();
  EXPECT_EQ(call(c, "POST", base + "/_sim/repos", R"({"full_name":"demo/svc"})").status, 200);
  EXPECT_EQ(call(c, "POST", base + "/_sim/repos", R"({"full_name":"nope"})").status, 400);
  EXPECT_EQ(
      call(c, "POST", base + "/_sim/faults", R"({"endpoint":"rest.list_runners","status":503,"count":1})")
          .status,
      200);
  EXPECT_EQ(call(c, "GET", sim->api_url() + "/repos/demo/svc/actions/runners").status, 503);
  EXPECT_EQ(call(c, "GET", sim->api_url() + "/repos/demo/svc/actions/runners").status, 200);

  auto jit = call(c, "POST", sim->api_url() + "/repos/demo/svc/actions/runners/generate-jitconfig",
                  R"({"name":"demo-1","runner_group_id":1,"labels":["self-hosted","gpu"]})");
  EXPECT_EQ(jit.status, 201);
  auto job =
      call(c, "POST", base + "/_sim/jobs", R"({"repository":"demo/svc","labels":["gpu"],"duration_ms":-1})");
  ASSERT_EQ(job.status, 201);
  rapidjson::Document d;
  d.Parse(job.body.c_str());
  auto id = json::i64(d, "id");
  ASSERT_GT(id, 0);
  EXPECT_EQ(sim->job_state(id), "running");  // the auto-online runner took it
  EXPECT_EQ(call(c, "POST", sim->api_url() + "/repos/demo/svc/actions/runners/100", "").status, 404);
  auto busy = call(c, "DELETE", sim->api_url() + "/repos/demo/svc/actions/runners/100");
  EXPECT_EQ(busy.status, 422);
  EXPECT_EQ(call(c, "POST", base + "/_sim/jobs/" + std::to_string(id) + "/complete", R"({"result":"failed"})")
                .status,
            200);
  EXPECT_EQ(sim->job_state(id), "completed");
  EXPECT_EQ(call(c, "DELETE", sim->api_url() + "/repos/demo/svc/actions/runners/100").status,
            404);  // ephemeral: gone

  auto calls = call(c, "GET", base + "/_sim/calls");
  rapidjson::Document counts;
  counts.Parse(calls.body.c_str());
  EXPECT_EQ(json::i64(counts, "rest.list_runners"), 2);
  EXPECT_EQ(json::i64(counts, "rest.generate_jitconfig"), 1);
  auto state = call(c, "GET", base + "/_sim/state");
  EXPECT_NE(state.body.find("\"state\":\"completed\""), std::string::npos);
  EXPECT_EQ(call(c, "DELETE", base + "/_sim/calls").status, 200);
  EXPECT_EQ(call(c, "GET", base + "/_sim/nothing").status, 404);
  EXPECT_EQ(call(c, "POST", base + "/_sim/jobs", "{broken").status, 400);
}

// What a client can tell about GitHub beyond status codes: request ids on
// every answer, and a runner registration that reads the configuration URL
// in any of GitHub's forms.
TEST(SimulatorFidelity, AnswersCarryRequestIdsAndRegistrationReadsTheUrl) {
  auto sim = testing::start_simulator();
  ASSERT_TRUE(sim);
  http::client c;
  c.set_plain_http(true);
  auto rest = call(c, "GET", sim->api_url() + "/orgs/octo/actions/runners");
  EXPECT_EQ(rest.status, 200);
  EXPECT_FALSE(rest.header_value("x-github-request-id").empty());
  auto refused = c.perform({"GET", sim->api_url() + "/orgs/octo/actions/runners", {}, {}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_FALSE(refused->header_value("x-github-request-id").empty());

  auto register_with = [&](const std::string& scope, const std::string& url) {
    auto token = call(c, "POST", sim->api_url() + "/" + scope + "/actions/runners/registration-token");
    rapidjson::Document d;
    d.Parse(token.body.c_str());
    return c.perform({"POST",
                      sim->api_url() + "/actions/runner-registration",
                      {{"Authorization", "RemoteAuth " + json::str(d, "token")}},
                      "{\"url\":" + json::quote(url) + ",\"runner_event\":\"register\"}"});
  };
  auto tenant = [](const expected<http::response, http::transport_error>& r) {
    rapidjson::Document d;
    d.Parse(r->body.c_str());
    return json::str(d, "url");
  };
  // github.com, GHE.com and GHES forms of the same organization: one tenant.
  auto dotcom = register_with("orgs/octo", "https://github.com/octo");
  ASSERT_TRUE(dotcom);
  ASSERT_EQ(dotcom->status, 200) << dotcom->body;
  auto ghe = register_with("orgs/octo", "https://octo-corp.ghe.com/octo/");
  auto ghes = register_with("orgs/octo", sim->ghes_url() + "/octo");
  EXPECT_EQ(tenant(ghe), tenant(dotcom));
  EXPECT_EQ(tenant(ghes), tenant(dotcom));
  auto repo = register_with("repos/octo/app", "https://github.com/octo/app");
  auto enterprise = register_with("enterprises/big", "https://ghes.example/enterprises/big");
  ASSERT_EQ(repo->status, 200) << repo->body;
  ASSERT_EQ(enterprise->status, 200) << enterprise->body;
  EXPECT_NE(tenant(repo), tenant(dotcom));
  EXPECT_NE(tenant(enterprise), tenant(dotcom));
  // A registration token is for its scope only; a URL that is no scope is refused.
  EXPECT_EQ(register_with("orgs/octo", "https://github.com/octo/app")->status, 404);
  EXPECT_EQ(register_with("orgs/octo", "not a url")->status, 422);
  auto service = c.perform({"GET", tenant(dotcom) + "_apis/runtime/runnergroups/?groupName=Default", {}, {}});
  ASSERT_TRUE(service);
  EXPECT_EQ(service->status, 400);  // no api-version
  EXPECT_FALSE(service->header_value("activityid").empty());
}

TEST(SimulatorControl, RunnerGroupsAreCreatedOverHttpAndListedByRest) {
  auto sim = testing::start_simulator();
  ASSERT_TRUE(sim);
  http::client c;
  c.set_plain_http(true);
  auto created = call(c, "POST", sim->base_url() + "/_sim/runner-groups", R"({"org":"octo","name":"gpu"})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(call(c, "POST", sim->base_url() + "/_sim/runner-groups", R"({"name":"x"})").status, 400);
  auto listed = call(c, "GET", sim->api_url() + "/orgs/octo/actions/runner-groups");
  EXPECT_NE(listed.body.find("\"total_count\":2"), std::string::npos) << listed.body;
  EXPECT_NE(listed.body.find("\"name\":\"gpu\""), std::string::npos) << listed.body;
  rapidjson::Document d;
  d.Parse(created.body.c_str());
  auto group = json::i64(d, "id");
  // A REST JIT runner in that group, and none in a group the organization lacks.
  auto jit = call(c, "POST", sim->api_url() + "/orgs/octo/actions/runners/generate-jitconfig",
                  R"({"name":"g-1","runner_group_id":)" + std::to_string(group) + R"(,"labels":["gpu"]})");
  EXPECT_EQ(jit.status, 201) << jit.body;
  EXPECT_NE(jit.body.find("\"runner_group_id\":" + std::to_string(group)), std::string::npos);
  EXPECT_EQ(call(c, "POST", sim->api_url() + "/orgs/octo/actions/runners/generate-jitconfig",
                 R"({"name":"g-2","runner_group_id":999,"labels":["gpu"]})")
                .status,
            404);
}

// The controls the chaos harness (bench/chaos) needs: cancelled jobs, a
// runner whose process is gone, and deliveries lost outright.
TEST(SimulatorControl, CancelsJobsLosesRunnersAndDropsDeliveries) {
  std::mutex mu;
  std::vector<std::string> bodies;
  auto hook = http::server::start(
      {}, {{"/hook", {"POST"}, http::request_body::accepted, [&](const http::server_request& r) {
              std::lock_guard l(mu);
              bodies.push_back(r.body);
              return http::server_response{200, "text/plain", "ok", {}};
            }}});
  ASSERT_TRUE(hook);
  auto sim = testing::start_simulator({});
  ASSERT_TRUE(sim);
  sim->add_repository("demo/svc");
  sim->set_webhook((*hook)->base_url() + "/hook", "s");
  http::client c;
  c.set_plain_http(true);
  const auto base = sim->base_url();

  // A queued job cancelled over HTTP completes with no runner.
  sim->set_delivery_fault({.drop = 1});  // its queued delivery is lost
  auto queued = sim->add_job({.repository = "demo/svc", .labels = {"gpu"}, .duration = -1ms});
  EXPECT_EQ(call(c, "POST", base + "/_sim/jobs/" + std::to_string(queued) + "/cancel").status, 200);
  EXPECT_EQ(sim->job_state(queued), "completed");
  EXPECT_FALSE(sim->cancel_job(queued));
  ASSERT_TRUE(sim->wait_until([](const sim::simulator& s) { return s.deliveries_sent() == 1; }, 10s));
  auto dropped = sim->dropped_deliveries();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_NE(dropped[0].body.find("\"action\":\"queued\""), std::string::npos);
  {
    std::lock_guard l(mu);
    ASSERT_EQ(bodies.size(), 1u);
    EXPECT_NE(bodies[0].find("\"conclusion\":\"cancelled\""), std::string::npos) << bodies[0];
    EXPECT_NE(bodies[0].find("\"runner_name\":null"), std::string::npos) << bodies[0];
  }

  // A runner running a job loses its process: the job fails, the runner goes.
  auto jit = call(c, "POST", sim->api_url() + "/repos/demo/svc/actions/runners/generate-jitconfig",
                  R"({"name":"demo-1","runner_group_id":1,"labels":["self-hosted","gpu"]})");
  ASSERT_EQ(jit.status, 201);
  auto running = sim->add_job({.repository = "demo/svc", .labels = {"gpu"}, .duration = -1ms});
  ASSERT_TRUE(sim->runner_online("demo-1"));
  EXPECT_EQ(sim->job_state(running), "running");
  EXPECT_EQ(call(c, "POST", base + "/_sim/runners/demo-1/lost").status, 200);
  EXPECT_EQ(sim->job_state(running), "completed");
  EXPECT_NE(sim->state_json().find("\"result\":\"failed\""), std::string::npos);
  EXPECT_FALSE(sim->lose_runner("demo-1"));  // ephemeral: gone with its job
  EXPECT_EQ(call(c, "POST", base + "/_sim/delivery-faults", R"({"drop":2})").status, 200);
}

TEST(SimulatorControl, RateLimitIsEnforcedWithHeaders) {
  sim::simulator_options o;
  o.rate_limit = 3;
  auto sim = testing::start_simulator(o);
  ASSERT_TRUE(sim);
  http::client c;
  c.set_plain_http(true);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(call(c, "GET", sim->api_url() + "/orgs/octo/actions/runners").status, 200);
  auto limited = call(c, "GET", sim->api_url() + "/orgs/octo/actions/runners");
  EXPECT_EQ(limited.status, 403);
  EXPECT_EQ(limited.header_value("x-ratelimit-remaining"), "0");
  EXPECT_FALSE(limited.header_value("x-ratelimit-reset").empty());
}

TEST(SimulatorTls, ServesTheApiOverHttps) {
  auto ca = tls::make_ca("sim-ca", std::chrono::hours(1));
  ASSERT_TRUE(ca) << ca.error();
  auto cert =
      tls::issue_serving_certificate(*ca, {"127.0.0.1", {"localhost"}, {"127.0.0.1"}, std::chrono::hours(1)});
  ASSERT_TRUE(cert) << cert.error();
  char path[] = "/tmp/octorun-sim-tls-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << cert->private_key << cert->certificate;
  sim::simulator_options o;
  o.http.tls_pem_file = path;
  auto sim = testing::start_simulator(o);
  std::remove(path);
  ASSERT_TRUE(sim);
  ASSERT_TRUE(sim->base_url().starts_with("https://"));
  call_options opts;
  opts.tls.ca_pem = ca->certificate;
  rest_client rest(
      rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, pat_auth("ghp_simulator"), opts});
  auto token = rest.registration_token();
  ASSERT_TRUE(token) << token.error().describe();
}

}  // namespace
}  // namespace octorun::github
