// The webhook intake: signature, size, method, JSON and header checks with
// clear 4xx answers, dedupe by delivery id, ping, and end to end with the
// simulator's signed (and duplicated, reordered) deliveries into a CAF actor.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/github/crypto.hpp"
#include "adapters/github/webhook_intake.hpp"
#include "test/github/sim_fixture.hpp"
#include "test/support/raw_socket.hpp"

namespace octorun::github {
namespace {

using namespace std::chrono_literals;

struct collected {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<messages::job_message> all;
  job_sink sink() {
    return [this](messages::job_message m) {
      {
        std::lock_guard l(mu);
        all.push_back(std::move(m));
      }
      cv.notify_all();
    };
  }
  bool wait_for(size_t n, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock l(mu);
    return cv.wait_for(l, timeout, [&] { return all.size() >= n; });
  }
  size_t size() {
    std::lock_guard l(mu);
    return all.size();
  }
};

const std::string secret = "It's a Secret to Everybody";
const std::string queued_body =
    R"({"action":"queued","workflow_job":{"id":77,"run_id":5000000000,"labels":["self-hosted"],"name":"b",)"
    R"("workflow_name":"CI","head_branch":"main","runner_name":null,"runner_id":null},)"
    R"("repository":{"full_name":"o/r","html_url":"https://github.com/o/r"}})";

struct Intake : ::testing::Test {
  collected got;
  std::unique_ptr<webhook_intake> intake;
  http::client client;
  std::mutex rejected_mu;
  std::vector<std::string> rejected_reasons;  // what on_rejected was told, in order
  std::shared_ptr<class_webhook_secrets> classes = std::make_shared<class_webhook_secrets>();

  std::vector<std::string> rejected() {
    std::lock_guard l(rejected_mu);
    return rejected_reasons;
  }

  void SetUp() override {
    client.set_plain_http(true);
    intake_options o;
    o.secret = secret;
    o.max_body_bytes = 64 * 1024;
    o.classes = classes;
    o.on_rejected = [this](const char* reason, const std::string&, const std::string&) {
      std::lock_guard l(rejected_mu);
      rejected_reasons.emplace_back(reason);
    };
    auto in = webhook_intake::start(o, got.sink());
    ASSERT_TRUE(in) << in.error();
    intake = std::move(*in);
  }
  http::response post(const std::string& body, const std::string& event = "workflow_job",
                      const std::string& delivery = "d-1", std::string signature = {},
                      const std::string& method = "POST") {
    if (signature.empty()) signature = webhook_signature(secret, body);
    std::vector<http::header> h{{"Content-Type", "application/json"}};
    if (!event.empty()) h.emplace_back("X-GitHub-Event", event);
    if (!delivery.empty()) h.emplace_back("X-GitHub-Delivery", delivery);
    if (signature != "none") h.emplace_back("X-Hub-Signature-256", signature);
    auto r = client.perform({method, intake->url(), h, body});
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : http::response{};
  }
  // POSTs `body` to the intake's path + `suffix`, signed with `key`.
  http::response post_to(const std::string& suffix, const std::string& body, const std::string& delivery,
                         const std::string& key) {
    auto r = client.perform({"POST",
                             intake->url() + suffix,
                             {{"Content-Type", "application/json"},
                              {"X-GitHub-Event", "workflow_job"},
                              {"X-GitHub-Delivery", delivery},
                              {"X-Hub-Signature-256", webhook_signature(key, body)}},
                             body});
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : http::response{};
  }
};

TEST(IntakeStart, RefusesToStartWithoutASecretUnlessInsecureIsExplicit) {
  collected got;
  auto refused = webhook_intake::start({}, got.sink());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("secret"), std::string::npos);
  intake_options insecure;
  insecure.allow_insecure = true;
  auto started = webhook_intake::start(insecure, got.sink());
  ASSERT_TRUE(started) << started.error();
  http::client c;
  c.set_plain_http(true);
  auto r = c.perform({"POST",
                      (*started)->url(),
                      {{"X-GitHub-Event", "workflow_job"}, {"X-GitHub-Delivery", "x"}},
                      queued_body});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_TRUE(got.wait_for(1));
}

TEST_F(Intake, AcceptsASignedDeliveryAndHandsTheJobOn) {
  auto r = post(queued_body);
  EXPECT_EQ(r.status, 202);
  ASSERT_TRUE(got.wait_for(1));
  auto& avail = std::get<messages::job_available>(got.all[0]);
  EXPECT_EQ(avail.job.job_id, 77);
  EXPECT_EQ(avail.job.run_id, 5000000000);
  EXPECT_EQ(avail.job.repository, "o/r");
  EXPECT_EQ(intake->counters().accepted.load(), 1);
}

TEST_F(Intake, RejectsBadOrMissingSignatures) {
  EXPECT_EQ(post(queued_body, "workflow_job", "d-1", webhook_signature("wrong", queued_body)).status, 401);
  EXPECT_EQ(post(queued_body, "workflow_job", "d-2", "sha256=00").status, 401);
  EXPECT_EQ(post(queued_body, "workflow_job", "d-3", "none").status, 401);
  EXPECT_EQ(intake->counters().bad_signature.load(), 3);
  EXPECT_EQ(rejected(), std::vector<std::string>(3, "bad_signature"));
  EXPECT_EQ(got.size(), 0u);
}

TEST_F(Intake, RejectsOversizedBodies) {
  std::string big(100 * 1024, ' ');
  EXPECT_EQ(post(big).status, 413);
}

// A signed body nested 100,000 deep crashed a worker with the recursive
// parser; a sender with the secret is still only answered 400.
TEST_F(Intake, AnswersDeepNestingWith400) {
  intake_options o;  // the default body cap
  o.secret = secret;
  auto in = webhook_intake::start(o, got.sink());
  ASSERT_TRUE(in) << in.error();
  intake = std::move(*in);
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += R"({"a":)";
  for (const auto& body : {std::string(100'000, '['), objects}) {
    auto r = post(body, "workflow_job", "deep-" + std::to_string(body.size()));
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find("JSON nested deeper than 128 levels"), std::string::npos) << r.body;
  }
  EXPECT_EQ(intake->counters().malformed.load(), 2);
  EXPECT_EQ(post(queued_body).status, 202);
}

TEST_F(Intake, RejectsMalformedJsonAndPayloadsWithoutAJob) {
  EXPECT_EQ(post("{not json").status, 400);
  EXPECT_EQ(post(R"({"action":"queued"})", "workflow_job", "d-2").status, 400);
  EXPECT_EQ(post(R"({"action":"queued","workflow_job":{"id":"seven"}})", "workflow_job", "d-3").status, 400);
  EXPECT_EQ(intake->counters().malformed.load(), 3);
  EXPECT_EQ(rejected(), std::vector<std::string>(3, "malformed_delivery"));
  EXPECT_EQ(got.size(), 0u);
}

TEST_F(Intake, RejectsOtherMethodsAndMissingHeaders) {
  EXPECT_EQ(post(queued_body, "workflow_job", "d-1", {}, "GET").status, 405);
  EXPECT_EQ(post(queued_body, "workflow_job", "d-1", {}, "PUT").status, 405);
  EXPECT_EQ(post(queued_body, "", "d-1").status, 400);
  EXPECT_EQ(post(queued_body, "workflow_job", "").status, 400);
  EXPECT_EQ(rejected(), std::vector<std::string>(2, "malformed_delivery"));
  auto wrong_path = client.perform({"POST", intake->url() + "/x", {}, queued_body});
  ASSERT_TRUE(wrong_path);
  EXPECT_EQ(wrong_path->status, 404);
}

TEST_F(Intake, DeduplicatesRedeliveries) {
  EXPECT_EQ(post(queued_body, "workflow_job", "same").status, 202);
  EXPECT_EQ(post(queued_body, "workflow_job", "same").status, 200);
  ASSERT_TRUE(got.wait_for(1));
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(intake->counters().duplicates.load(), 1);
  EXPECT_EQ(rejected(), std::vector<std::string>{"duplicate_delivery"});
}

// Issue 32: the signature covers the body, not X-GitHub-Delivery, so a
// captured body sent again under a new id is a valid delivery; it changes
// nothing twice (github::job_replays), nor does a queued body older than
// a job waits on GitHub's queue.
TEST_F(Intake, TurnsAwayAReplayedBodyUnderANewDeliveryId) {
  EXPECT_EQ(post(queued_body, "workflow_job", "first").status, 202);
  auto replay = post(queued_body, "workflow_job", "second");
  EXPECT_EQ(replay.status, 200);
  EXPECT_NE(replay.body.find("job 77 was queued before"), std::string::npos) << replay.body;
  std::string captured = queued_body;
  captured.replace(captured.find(R"("id":77)"), 7, R"("id":78,"created_at":"2020-01-01T00:00:00Z")");
  auto old = post(captured, "workflow_job", "third");
  EXPECT_EQ(old.status, 200);
  EXPECT_NE(old.body.find("hours ago"), std::string::npos) << old.body;
  ASSERT_TRUE(got.wait_for(1));
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(intake->counters().replayed.load(), 2);
  EXPECT_EQ(intake->counters().accepted.load(), 1);
  EXPECT_EQ(rejected(), std::vector<std::string>(2, "replayed_delivery"));
}

TEST_F(Intake, AnswersPingAndIgnoresOtherEvents) {
  EXPECT_EQ(post(R"({"zen":"Design for failure.","hook_id":1})", "ping", "p").status, 200);
  EXPECT_EQ(post(R"({"action":"opened"})", "issues", "i").status, 202);
  EXPECT_EQ(post(R"({"action":"waiting","workflow_job":{"id":1}})", "workflow_job", "w").status, 202);
  EXPECT_EQ(intake->counters().pings.load(), 1);
  EXPECT_EQ(intake->counters().ignored.load(), 2);
  EXPECT_EQ(got.size(), 0u);
}

// Issue 32: with one secret for the platform, every team that configured a
// repository's hook held the key to every other team's deliveries. A
// RunnerClass with a secret of its own has a path of its own, verified
// with that secret alone (one HMAC, whatever the number of classes), and
// its jobs name the class (their demand goes to its sets only).
TEST_F(Intake, AClassPathTakesOnlyItsClasssSecretAndNamesTheClass) {
  classes->replace({{"team-a", std::string("a-secret")},
                    {"team-b", std::string("b-secret")},
                    {"broken", unexpected{std::string("Secret platform/hook does not exist")}}});
  EXPECT_EQ(post_to("/classes/team-a", queued_body, "c-1", "a-secret").status, 202);
  ASSERT_TRUE(got.wait_for(1));
  EXPECT_EQ(std::get<messages::job_available>(got.all[0]).job.runner_class, "team-a");
  EXPECT_EQ(post_to("/classes/team-b", queued_body, "c-2", "a-secret").status, 401)
      << "class a's secret on class b's path";
  EXPECT_EQ(post_to("/classes/team-a", queued_body, "c-3", secret).status, 401)
      << "the manager's secret on a class's path";
  EXPECT_EQ(post_to("", queued_body, "c-4", "a-secret").status, 401)
      << "a class's secret on the intake's path";
  EXPECT_EQ(post_to("/classes/team-b", queued_body, "c-5", "b-secret").status, 202)
      << "class b takes the same job from its own hook (each path remembers its own)";
  EXPECT_EQ(post(queued_body, "workflow_job", "c-6").status, 202) << "the manager's own path and secret";
  ASSERT_TRUE(got.wait_for(3));
  EXPECT_EQ(std::get<messages::job_available>(got.all[1]).job.runner_class, "team-b");
  EXPECT_EQ(std::get<messages::job_available>(got.all[2]).job.runner_class, "");
  EXPECT_EQ(rejected(), std::vector<std::string>(3, "bad_signature"));

  auto broken = post_to("/classes/broken", queued_body, "c-7", "x");
  EXPECT_EQ(broken.status, 503);
  EXPECT_NE(broken.body.find("Secret platform/hook does not exist"), std::string::npos) << broken.body;
  auto unknown = post_to("/classes/nobody", queued_body, "c-8", "x");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.body.find(R"(no RunnerClass "nobody" with a webhook secret)"), std::string::npos)
      << unknown.body;
  EXPECT_EQ(post_to("/classes/Not_A_Class", queued_body, "c-9", "x").status, 404);
  classes->replace({});
  EXPECT_EQ(post_to("/classes/team-a", queued_body, "c-10", "a-secret").status, 404) << "its secret went";
  EXPECT_EQ(got.size(), 3u);
}

// A class's path holds its body to the intake's limits: a team holding its
// class's secret is answered 400 for nesting and 413 for size, as on the
// manager's own path, and nothing reaches the sets.
TEST_F(Intake, AClassPathAnswersDeepNestingAndOverSizeBodiesLikeTheIntakesOwn) {
  classes->replace({{"team-a", std::string("a-secret")}});
  auto deep = post_to("/classes/team-a", std::string(20'000, '['), "cd-1", "a-secret");  // under the cap
  EXPECT_EQ(deep.status, 400);
  EXPECT_NE(deep.body.find("JSON nested deeper than 128 levels"), std::string::npos) << deep.body;
  EXPECT_EQ(post_to("/classes/team-a", std::string(100 * 1024, ' '), "cd-2", "a-secret").status, 413);
  EXPECT_EQ(got.size(), 0u);
  EXPECT_EQ(post_to("/classes/team-a", queued_body, "cd-3", "a-secret").status, 202);
}

// An unknown class's path is refused from the path alone: its body (which
// may be up to the intake's limit) is never read, and the connection closes.
TEST_F(Intake, AnUnknownClassPathIsRefusedBeforeItsBodyIsRead) {
  test::raw_connection c(intake->port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(
      c.send("POST /webhook/classes/nobody HTTP/1.1\r\nHost: t\r\nContent-Length: 60000\r\n"
             "X-GitHub-Event: workflow_job\r\nX-GitHub-Delivery: u-1\r\n\r\n{\"action\""));
  auto reply = c.read_until_closed(20s);
  EXPECT_EQ(test::status_of(reply.bytes), 404) << reply.bytes;
  EXPECT_TRUE(reply.closed) << "the intake waited for the body of a path it refuses";
}

caf::behavior collector_actor(caf::event_based_actor*, job_sink sink) {
  return {
      [=](const messages::job_available& m) { sink(m); },
      [=](const messages::job_started& m) { sink(m); },
      [=](const messages::job_completed& m) { sink(m); },
  };
}

// Simulator -> signed deliveries -> intake -> a CAF actor.
TEST(IntakeEndToEnd, SimulatorDeliveriesReachAnActorDespiteDuplicatesAndReordering) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  collected got;
  // Spawned with an argument: CAF 0.17 dereferences a null argument tuple for argument-less
  // function spawns (UBSan reports it), so the sink is passed in.
  auto collector = sys.spawn(collector_actor, got.sink());
  intake_options o;
  o.secret = "s3cret";
  auto intake = webhook_intake::start(o, actor_sink(collector));
  ASSERT_TRUE(intake) << intake.error();
  auto sim = testing::start_simulator();
  ASSERT_TRUE(sim);
  sim->set_webhook((*intake)->url(), "s3cret");
  sim->send_ping();
  sim->set_delivery_fault({.duplicate = 3, .reorder = 1, .delay = 0ms});

  rest_client rest(
      rest_options{sim->api_url(), {scope_kind::repository, "octo", "app"}, pat_auth("ghp_simulator"), {}});
  auto jit = rest.generate_jit_config({"hook-runner", 1, {"self-hosted", "linux"}, "_work"});
  ASSERT_TRUE(jit);
  sim::job_spec job;
  job.labels = {"linux"};
  job.duration = 0ms;
  auto id = sim->add_job(job);
  ASSERT_TRUE(sim->runner_online("hook-runner"));
  ASSERT_TRUE(got.wait_for(2));
  ASSERT_TRUE(sim->wait_until([](const sim::simulator& s) { return s.deliveries_sent() >= 7; }, 10s));
  // in_progress + completed, each once. The queued, overtaken by its
  // in_progress (the reordered pair), is turned away as a replay: a job's
  // actions only move forward, and the set counts a job from its start.
  std::lock_guard l(got.mu);
  ASSERT_EQ(got.all.size(), 2u);
  int available = 0, started = 0, completed = 0;
  for (const auto& m : got.all) {
    EXPECT_EQ(messages::job_of(m).job_id, id);
    if (std::holds_alternative<messages::job_available>(m)) ++available;
    if (auto* s = std::get_if<messages::job_started>(&m)) {
      ++started;
      EXPECT_EQ(s->runner_name, "hook-runner");
    }
    if (auto* c = std::get_if<messages::job_completed>(&m)) {
      ++completed;
      EXPECT_EQ(c->result, "success");
    }
  }
  EXPECT_EQ(available, 0);
  EXPECT_EQ(started + completed, 2);
  EXPECT_EQ((*intake)->counters().duplicates.load(), 3);
  EXPECT_EQ((*intake)->counters().replayed.load(), 1);
  EXPECT_EQ((*intake)->counters().pings.load(), 1);
  EXPECT_EQ(sim->calls("webhook.workflow_job"), 6);
  caf::anon_send_exit(collector, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace octorun::github
