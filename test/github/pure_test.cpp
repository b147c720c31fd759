// The pure parts of adapters/github: HMAC, JWT, times, rate-limit
// decisions, config URLs, webhook payloads, delivery dedupe.
#include <gtest/gtest.h>

#include "adapters/github/crypto.hpp"
#include "adapters/github/rate_limit.hpp"
#include "adapters/github/rest_client.hpp"
#include "adapters/github/scope.hpp"
#include "adapters/github/webhook.hpp"
#include "common/base64.hpp"
#include "test/support/jwt_testing.hpp"

namespace octorun::github {
namespace {

using testing::generate_rsa_key;
using testing::make_hs256_jwt;
using testing::verify_app_jwt;

TEST(GithubHmac, MatchesGithubsDocumentedTestVector) {
  EXPECT_EQ(webhook_signature("It's a Secret to Everybody", "Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  EXPECT_TRUE(
      webhook_signature_matches("It's a Secret to Everybody", "Hello, World!",
                                "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"));
}

TEST(GithubHmac, RejectsWrongSecretBodyPrefixAndLength) {
  auto good = webhook_signature("s", "body");
  EXPECT_FALSE(webhook_signature_matches("t", "body", good));
  EXPECT_FALSE(webhook_signature_matches("s", "body!", good));
  EXPECT_FALSE(webhook_signature_matches("s", "body", good.substr(0, good.size() - 1)));
  EXPECT_FALSE(webhook_signature_matches("s", "body", "sha1=" + good.substr(7)));
  EXPECT_FALSE(webhook_signature_matches("s", "body", ""));
  std::string upper = good;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_FALSE(webhook_signature_matches("s", "body", upper));
}

TEST(GithubJwt, AppJwtVerifiesWithThePublicKeyOnly) {
  auto key = generate_rsa_key(2048);
  ASSERT_TRUE(key) << key.error();
  auto other = generate_rsa_key(2048);
  ASSERT_TRUE(other);
  const std::int64_t now = 1'800'000'000;
  auto jwt = make_app_jwt(key->private_key, "Iv1.client", now);
  ASSERT_TRUE(jwt) << jwt.error();
  auto claims = verify_app_jwt(*jwt, key->public_key, now);
  ASSERT_TRUE(claims) << claims.error();
  EXPECT_EQ(claims->iss, "Iv1.client");
  EXPECT_EQ(claims->iat, now - 60);
  EXPECT_LE(claims->exp, now + 600);
  EXPECT_FALSE(verify_app_jwt(*jwt, other->public_key, now));
  EXPECT_FALSE(verify_app_jwt(*jwt, key->public_key, now + 601));  // expired
  std::string tampered = *jwt;
  tampered[tampered.find('.') + 3] ^= 1;
  EXPECT_FALSE(verify_app_jwt(tampered, key->public_key, now));
  EXPECT_FALSE(verify_app_jwt("not.a.jwt", key->public_key, now));
  EXPECT_FALSE(make_app_jwt("garbage", "x", now));
}

TEST(GithubJwt, PeeksClaimsOfAnyJwt) {
  auto t = make_hs256_jwt("k", {"iss", 10, 99});
  auto c = peek_jwt_claims(t);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exp, 99);
  EXPECT_FALSE(peek_jwt_claims("abc"));
  EXPECT_FALSE(peek_jwt_claims(base64url_encode("{}") + "." + base64url_encode("{\"iss\":1}") + ".x"));
}

http::response limited(long status, std::vector<http::header> h, std::string body = {}) {
  http::response r;
  r.status = status;
  r.headers = std::move(h);
  r.body = std::move(body);
  return r;
}

TEST(GithubRateLimit, ReadsHeaders) {
  auto info = parse_rate_limit(limited(200, {{"x-ratelimit-limit", "5000"},
                                             {"x-ratelimit-remaining", "4999"},
                                             {"x-ratelimit-used", "1"},
                                             {"x-ratelimit-reset", "1800000000"},
                                             {"x-ratelimit-resource", "core"}}));
  EXPECT_TRUE(info.present);
  EXPECT_EQ(info.limit, 5000);
  EXPECT_EQ(info.remaining, 4999);
  EXPECT_EQ(info.reset_epoch, 1800000000);
  EXPECT_EQ(info.resource, "core");
  EXPECT_FALSE(parse_rate_limit(limited(200, {{"x-ratelimit-limit", "x"}})).present);
}

TEST(GithubRateLimit, TellsLimitsFromPlainForbidden) {
  EXPECT_TRUE(is_rate_limit_response(limited(429, {})));
  EXPECT_TRUE(is_rate_limit_response(limited(403, {{"retry-after", "3"}})));
  EXPECT_TRUE(is_rate_limit_response(limited(403, {{"x-ratelimit-remaining", "0"}})));
  EXPECT_TRUE(
      is_rate_limit_response(limited(403, {}, R"({"message":"You have exceeded a secondary rate limit"})")));
  EXPECT_FALSE(
      is_rate_limit_response(limited(403, {{"x-ratelimit-remaining", "10"}}, R"({"message":"nope"})")));
  EXPECT_FALSE(is_rate_limit_response(limited(500, {})));
}

TEST(GithubRateLimit, DecidesWaitsInDocumentedOrder) {
  retry_policy p;
  const std::int64_t now = 1000;
  auto r1 =
      limited(429, {{"retry-after", "7"}, {"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "2000"}});
  auto d = decide_retry(p, 0, &r1, now, 0.5);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.wait, std::chrono::seconds(7));
  auto r2 = limited(403, {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1030"}});
  EXPECT_EQ(decide_retry(p, 0, &r2, now, 0.5).wait, std::chrono::seconds(30));
  auto r3 = limited(403, {}, "secondary rate limit");
  auto w0 = decide_retry(p, 0, &r3, now, 0.0).wait;
  auto w1 = decide_retry(p, 1, &r3, now, 0.0).wait;
  EXPECT_GE(w0, std::chrono::seconds(60));
  EXPECT_GT(w1, w0);
  auto r4 = limited(429, {{"retry-after", "Thu, 01 Jan 1970 00:20:00 GMT"}});
  EXPECT_EQ(decide_retry(p, 0, &r4, now, 0.5).wait, std::chrono::seconds(1200 - now));
}

TEST(GithubRateLimit, BacksOffServerErrorsWithCapAndJitterAndGivesUp) {
  retry_policy p;
  p.base = std::chrono::milliseconds(100);
  p.cap = std::chrono::milliseconds(1000);
  p.max_attempts = 4;
  auto r = limited(503, {});
  EXPECT_EQ(decide_retry(p, 0, &r, 0, 0.0).wait, std::chrono::milliseconds(50));
  EXPECT_EQ(decide_retry(p, 0, &r, 0, 0.999).wait.count(), 99);
  EXPECT_EQ(decide_retry(p, 2, &r, 0, 0.0).wait, std::chrono::milliseconds(200));
  EXPECT_EQ(http::backoff_delay(p, 20, 0.0), std::chrono::milliseconds(500));  // capped
  EXPECT_FALSE(decide_retry(p, 3, &r, 0, 0.0).retry);                          // attempts exhausted
  EXPECT_TRUE(decide_retry(p, 0, nullptr, 0, 0.0).retry);                      // transport
  auto notimpl = limited(501, {});
  EXPECT_FALSE(decide_retry(p, 0, &notimpl, 0, 0.0).retry);
  auto bad = limited(422, {});
  EXPECT_FALSE(decide_retry(p, 0, &bad, 0, 0.0).retry);
}

TEST(GithubScope, ParsesConfigUrlsForGithubAndGhes) {
  auto org = parse_config_url("https://github.com/acme/");
  ASSERT_TRUE(org) << org.error();
  EXPECT_EQ(org->api_base, "https://api.github.com");
  EXPECT_EQ(org->where.kind, scope_kind::organization);
  EXPECT_EQ(runners_url(org->api_base, org->where), "https://api.github.com/orgs/acme/actions/runners");
  auto repo = parse_config_url("https://ghes.example.com/acme/app");
  ASSERT_TRUE(repo);
  EXPECT_EQ(repo->api_base, "https://ghes.example.com/api/v3");
  EXPECT_TRUE(repo->enterprise_server);
  EXPECT_EQ(repo->where.api_path(), "/repos/acme/app");
  auto ent = parse_config_url("http://localhost:8080/Enterprises/big");
  ASSERT_TRUE(ent);
  EXPECT_EQ(ent->where.kind, scope_kind::enterprise);
  EXPECT_EQ(ent->api_base, "http://localhost:8080/api/v3");
  EXPECT_EQ(parse_config_url("https://foo.ghe.com/o")->api_base, "https://api.foo.ghe.com");
  EXPECT_FALSE(parse_config_url("github.com/acme"));
  EXPECT_FALSE(parse_config_url("https://github.com/"));
  EXPECT_FALSE(parse_config_url("https://github.com/a/b/c"));
  EXPECT_FALSE(parse_config_url("ftp://github.com/a"));
  EXPECT_FALSE(parse_config_url("https://github.com/a b"));
}

// What every test payload carries: the repository, and on which server.
const std::string repo = R"("repository":{"full_name":"acme/app","html_url":"https://github.com/acme/app"}})";

TEST(GithubWebhookPayload, TurnsActionsIntoJobMessages) {
  std::string base = R"({"action":"%A%","workflow_job":{"id":9000000001,"run_id":8000000002,"name":"build",
    "labels":["self-hosted","linux"],"workflow_name":"CI","head_branch":"main","runner_name":%R%,"runner_id":%I%,
    "conclusion":%C%},"repository":{"full_name":"acme/app","html_url":"https://github.com/acme/app"}})";
  auto make = [&](std::string a, std::string r, std::string i, std::string c) {
    std::string s = base;
    s.replace(s.find("%A%"), 3, a);
    s.replace(s.find("%R%"), 3, r);
    s.replace(s.find("%I%"), 3, i);
    s.replace(s.find("%C%"), 3, c);
    return s;
  };
  auto q = parse_workflow_job(make("queued", "null", "null", "null"));
  ASSERT_TRUE(q) << q.error();
  ASSERT_TRUE(q->has_value());
  auto& avail = std::get<messages::job_available>(**q);
  EXPECT_EQ(avail.job.job_id, 9000000001);
  EXPECT_EQ(avail.job.run_id, 8000000002);
  EXPECT_EQ(avail.job.repository, "acme/app");
  EXPECT_EQ(avail.job.server, "https://github.com");
  EXPECT_EQ(avail.job.installation_id, 0) << "a repository's or organisation's hook names no installation";
  EXPECT_EQ(avail.job.workflow_ref, "CI@main");
  EXPECT_EQ(avail.job.labels, (std::vector<std::string>{"self-hosted", "linux"}));
  auto s = parse_workflow_job(make("in_progress", "\"r-1\"", "42", "null"));
  ASSERT_TRUE(s);
  auto& started = std::get<messages::job_started>(**s);
  EXPECT_EQ(started.runner_name, "r-1");
  EXPECT_EQ(started.runner_id, 42);
  auto c = parse_workflow_job(make("completed", "\"r-1\"", "42", "\"success\""));
  ASSERT_TRUE(c);
  EXPECT_EQ(std::get<messages::job_completed>(**c).result, "success");
  auto w = parse_workflow_job(make("waiting", "null", "null", "null"));
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->has_value());
}

TEST(GithubWebhookPayload, JobTimesComeFromCreatedStartedAndCompletedAt) {
  auto c = parse_workflow_job(
      R"({"action":"completed","workflow_job":{"id":1,"runner_name":"r","conclusion":"failure",)"
      R"("created_at":"2026-01-01T00:00:00Z","started_at":"2026-01-01T00:00:30Z",)"
      R"("completed_at":"2026-01-01T00:10:30Z"},)" +
      repo);
  ASSERT_TRUE(c) << c.error();
  const auto& job = std::get<messages::job_completed>(**c).job;
  EXPECT_EQ(job.queued_at, 1767225600);
  EXPECT_EQ(job.started_at, 1767225630);
  EXPECT_EQ(job.completed_at, 1767226230);
  // Queued: no start yet (null), an unreadable time is unknown, not an error.
  auto q = parse_workflow_job(R"({"action":"queued","workflow_job":{"id":1,"created_at":"yesterday",)"
                              R"("started_at":null},)" +
                              repo);
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<messages::job_available>(**q).job.queued_at, 0);
  EXPECT_EQ(std::get<messages::job_available>(**q).job.started_at, 0);
}

TEST(GithubWebhookPayload, RejectsMalformedPayloadsWithoutCrashing) {
  for (std::string bad : std::vector<std::string>{
           "", "{", "[]", "null", R"({"action":"queued"})", R"({"action":"queued","workflow_job":[]})",
           R"({"action":"queued","workflow_job":{"id":"x"}})", R"({"workflow_job":{"id":1}})",
           R"({"action":"exploded","workflow_job":{"id":1}})",
           R"({"action":"queued","workflow_job":{"id":1,"labels":[1,{},null],"run_id":"x"},)" + repo}) {
    auto r = parse_workflow_job(bad);
    if (bad.find("labels") != std::string::npos) {
      ASSERT_TRUE(r);  // wrongly typed optional fields are tolerated
      EXPECT_TRUE(std::get<messages::job_available>(**r).job.labels.empty());
    } else {
      EXPECT_FALSE(r) << bad;
    }
  }
}

// Regression (workflow_job_fuzz): run_id 1.1e32 was converted to int64
// (undefined behaviour); an id beyond int64 was taken as a negative id.
TEST(GithubWebhookPayload, NumbersBeyondInt64AreRejectedOrIgnored) {
  auto r = parse_workflow_job(
      R"({"action":"queued","workflow_job":{"id":9,"run_id":111111111111111111111111111111111},)" + repo);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(std::get<messages::job_available>(**r).job.job_id, 9);
  EXPECT_EQ(std::get<messages::job_available>(**r).job.run_id, 0);
  auto big = parse_workflow_job(R"({"action":"queued","workflow_job":{"id":18446744073709551615}})");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find("workflow_job.id"), std::string::npos) << big.error();
  EXPECT_FALSE(parse_workflow_job(R"({"action":"queued","workflow_job":{"id":1e30}})"));
}

// Issue 32: the job's server and installation route it (job_routing.hpp),
// so a payload that does not say them clearly is refused, naming the field.
TEST(GithubWebhookPayload, TheRepositorysServerAndTheInstallationAreReadOnceOrRefused) {
  auto with = [](const std::string& repository, const std::string& extra = "") {
    return R"({"action":"queued","workflow_job":{"id":5},"repository":)" + repository + extra + "}";
  };
  auto ghes =
      parse_workflow_job(with(R"({"full_name":"Acme/App","html_url":"https://GHES.example:443/acme/app"})",
                              R"(,"installation":{"id":42,"node_id":"MDIz"})"));
  ASSERT_TRUE(ghes) << ghes.error();
  const auto& job = std::get<messages::job_available>(**ghes).job;
  EXPECT_EQ(job.server, "https://ghes.example") << "as model::server_identity compares servers";
  EXPECT_EQ(job.repository, "Acme/App");
  EXPECT_EQ(job.installation_id, 42);
  auto none = parse_workflow_job(
      with(R"({"full_name":"a/b","html_url":"https://github.com/a/b"})", R"(,"installation":null)"));
  ASSERT_TRUE(none) << none.error();
  EXPECT_EQ(std::get<messages::job_available>(**none).job.installation_id, 0);

  const std::pair<std::string, std::string> refused[] = {
      {R"({"action":"queued","workflow_job":{"id":5}})", "payload has no repository object"},
      {with("7"), "payload has no repository object"},
      {with(R"({"full_name":"a/b"})"), "repository.html_url is missing"},
      {with(R"({"full_name":"ab","html_url":"https://github.com/a/b"})"), "repository.full_name"},
      {with(R"({"full_name":"a/b","html_url":"https://github.com/a"})"), "not a repository's web URL"},
      {with(R"({"full_name":"a/b","html_url":"github.com/a/b"})"), "not a repository's web URL"},
      {with(R"({"full_name":"a/b","html_url":"https://github.com/a/c"})"),
       "does not name repository.full_name"},
      {with(R"({"full_name":"a/b","html_url":"https://github.com/a/b"})", R"(,"installation":{"id":"42"})"),
       "installation.id is not a positive 64-bit integer"},
      {with(R"({"full_name":"a/b","html_url":"https://github.com/a/b"})", R"(,"installation":{"id":0})"),
       "installation.id"},
      {with(R"({"full_name":"a/b","html_url":"https://github.com/a/b"})", R"(,"installation":42)"),
       "installation.id"},
  };
  for (const auto& [body, why] : refused) {
    auto r = parse_workflow_job(body);
    ASSERT_FALSE(r) << body;
    EXPECT_NE(r.error().find(why), std::string::npos) << body << ": " << r.error();
  }
}

messages::job_message queued_job(std::int64_t id, std::int64_t queued_at) {
  messages::job_available m;
  m.job.job_id = id;
  m.job.queued_at = queued_at;
  return m;
}

// Which secret verifies a delivery, from its path alone: the intake's own
// (the manager's), a RunnerClass's (that class's), or none (404 before the
// body is read).
TEST(IntakePath, TheIntakesOwnOrOneClasssOrNone) {
  using k = intake_path::kind;
  EXPECT_EQ(intake_path_of("/webhook", "/webhook"), (intake_path{k::platform, ""}));
  EXPECT_EQ(intake_path_of("/webhook/classes/team-a", "/webhook"), (intake_path{k::runner_class, "team-a"}));
  EXPECT_EQ(intake_path_of("/hooks/classes/a.b", "/hooks"), (intake_path{k::runner_class, "a.b"}));
  for (const char* refused : {"/webhook/", "/webhook/classes/", "/webhook/classes", "/webhook/classes/Team-A",
                              "/webhook/classes/a/b", "/webhook/classes/a_b", "/webhook/classes/-a",
                              "/webhook/x", "/webhookclasses/a", "/other/classes/a", ""})
    EXPECT_EQ(intake_path_of(refused, "/webhook").which, k::unknown) << refused;
  EXPECT_EQ(intake_path_of("/webhook/classes/" + std::string(254, 'a'), "/webhook").which, k::unknown)
      << "longer than any object's name";
}

// A body signed with one class's secret must not mark another class's job
// as seen: each path remembers its own.
TEST(GithubJobReplays, EachClassPathRemembersItsOwn) {
  using namespace std::chrono_literals;
  job_replays replays(24h, 100);
  const auto t0 = job_replays::clock::time_point{} + 1h;
  const std::int64_t wall = 1'800'000'000;
  auto forged = queued_job(1, wall);
  std::get<messages::job_available>(forged).job.runner_class = "class-a";
  EXPECT_FALSE(replays.replayed(forged, t0, wall));
  auto genuine = queued_job(1, wall);
  std::get<messages::job_available>(genuine).job.runner_class = "class-b";
  EXPECT_FALSE(replays.replayed(genuine, t0, wall)) << "class b's own delivery of the job is taken";
  EXPECT_TRUE(replays.replayed(genuine, t0 + 1s, wall)) << "and once only";
  EXPECT_FALSE(replays.replayed(queued_job(1, wall), t0, wall)) << "the manager's own path too";
}

// Issue 32: the signature covers the body only, so a captured delivery sent
// again under a new X-GitHub-Delivery passes the delivery dedupe. A job's
// actions are taken once each, a queued never after the job started or
// completed, and a queued older than the window never.
TEST(GithubJobReplays, EachJobActionCountsOnceAndAStaleQueuedNever) {
  using namespace std::chrono_literals;
  job_replays replays(24h, 100);
  const auto t0 = job_replays::clock::time_point{} + 1h;
  const std::int64_t wall = 1'800'000'000;
  EXPECT_FALSE(replays.replayed(queued_job(1, wall - 5), t0, wall)) << "the first queued is taken";
  auto again = replays.replayed(queued_job(1, wall - 5), t0 + 1s, wall + 1);
  ASSERT_TRUE(again) << "the same body again";
  EXPECT_NE(again->find("job 1 was queued before"), std::string::npos) << *again;

  messages::job_started started;
  started.job.job_id = 2;
  started.runner_name = "r-1";
  messages::job_completed completed{started.job, "r-1", 7, "success"};
  EXPECT_FALSE(replays.replayed(started, t0, wall));
  EXPECT_TRUE(replays.replayed(started, t0 + 1s, wall)) << "a start counts once";
  EXPECT_FALSE(replays.replayed(completed, t0 + 2s, wall));
  EXPECT_TRUE(replays.replayed(completed, t0 + 3s, wall)) << "a completion counts once";
  EXPECT_TRUE(replays.replayed(queued_job(2, wall), t0 + 4s, wall))
      << "a queued after its job started is a replay (its first queued went to another replica)";
  messages::job_completed only_end{{}, "", 0, "cancelled"};
  only_end.job.job_id = 3;
  EXPECT_FALSE(replays.replayed(only_end, t0, wall));
  EXPECT_TRUE(replays.replayed(queued_job(3, wall), t0 + 1s, wall))
      << "a completed job's later queued is ignored";

  auto stale = replays.replayed(queued_job(4, wall - 2 * 24 * 3600), t0, wall);
  ASSERT_TRUE(stale) << "a queued of a job queued two days ago: captured";
  EXPECT_NE(stale->find("job 4 was queued 48 hours ago"), std::string::npos) << *stale;
  EXPECT_FALSE(replays.replayed(queued_job(5, wall - 23 * 3600), t0, wall))
      << "within the day a job may wait on GitHub's queue";
  EXPECT_FALSE(replays.replayed(queued_job(6, 0), t0, wall)) << "no created_at: no age to judge";

  // Memory is bounded: what the dedupe forgets after the window, the age
  // rule refuses; past the capacity the oldest go first.
  auto later = replays.replayed(queued_job(1, wall - 5), t0 + 25h, wall + 25 * 3600);
  ASSERT_TRUE(later) << "the first body, a day later: forgotten by the dedupe, refused by its age";
  EXPECT_NE(later->find("hours ago"), std::string::npos) << *later;
  job_replays small(24h, 2);
  for (std::int64_t id = 10; id < 20; ++id) EXPECT_FALSE(small.replayed(queued_job(id, wall), t0, wall));
  EXPECT_LE(small.size(), 2u);
}

TEST(GithubDedupe, ForgetsAfterTtlAndBoundsItsSize) {
  delivery_dedupe d(std::chrono::seconds(10), 3);
  auto t0 = delivery_dedupe::clock::time_point{} + std::chrono::hours(1);
  EXPECT_TRUE(d.first_seen("a", t0));
  EXPECT_FALSE(d.first_seen("a", t0 + std::chrono::seconds(9)));
  EXPECT_TRUE(d.first_seen("a", t0 + std::chrono::seconds(11)));
  EXPECT_TRUE(d.first_seen("b", t0 + std::chrono::seconds(12)));
  EXPECT_TRUE(d.first_seen("c", t0 + std::chrono::seconds(12)));
  EXPECT_TRUE(d.first_seen("d", t0 + std::chrono::seconds(12)));
  EXPECT_LE(d.size(), 3u);
  EXPECT_TRUE(d.first_seen("a", t0 + std::chrono::seconds(13)));  // evicted by capacity
}

}  // namespace
}  // namespace octorun::github

namespace octorun::github {
namespace {

TEST(GithubLatestRelease, ReadsTagAndTimeAndRefusesAHostileAnswer) {
  auto read = [](const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    return parse_latest_release(d);
  };
  auto ok = read(R"({"tag_name":"v2.331.0","published_at":"2026-01-02T03:04:05Z"})");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->version, (model::runner_version{2, 331, 0}));
  EXPECT_GT(ok->published_at, 0);
  auto undated = read(R"({"tag_name":"v2.331.0","published_at":"yesterday"})");
  ASSERT_TRUE(undated);
  EXPECT_EQ(undated->published_at, 0);
  for (const char* bad : {R"([])", R"({})", R"({"tag_name":2331})", R"({"tag_name":"latest"})",
                          R"({"tag_name":"v2.331.0-rc1"})", R"({"tag_name":"v99999999.0.0"})", "null"})
    EXPECT_FALSE(read(bad)) << bad;
}

}  // namespace
}  // namespace octorun::github
