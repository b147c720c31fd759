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
  EXPECT_EQ(repo->where.path(), "/repos/acme/app");
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

TEST(GithubWebhookPayload, TurnsActionsIntoJobMessages) {
  std::string base = R"({"action":"%A%","workflow_job":{"id":9000000001,"run_id":8000000002,"name":"build",
    "labels":["self-hosted","linux"],"workflow_name":"CI","head_branch":"main","runner_name":%R%,"runner_id":%I%,
    "conclusion":%C%},"repository":{"full_name":"acme/app"}})";
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
      R"("completed_at":"2026-01-01T00:10:30Z"},"repository":{"full_name":"acme/app"}})");
  ASSERT_TRUE(c) << c.error();
  const auto& job = std::get<messages::job_completed>(**c).job;
  EXPECT_EQ(job.queued_at, 1767225600);
  EXPECT_EQ(job.started_at, 1767225630);
  EXPECT_EQ(job.completed_at, 1767226230);
  // Queued: no start yet (null), an unreadable time is unknown, not an error.
  auto q = parse_workflow_job(R"({"action":"queued","workflow_job":{"id":1,"created_at":"yesterday",)"
                              R"("started_at":null}})");
  ASSERT_TRUE(q) << q.error();
  EXPECT_EQ(std::get<messages::job_available>(**q).job.queued_at, 0);
  EXPECT_EQ(std::get<messages::job_available>(**q).job.started_at, 0);
}

TEST(GithubWebhookPayload, RejectsMalformedPayloadsWithoutCrashing) {
  for (std::string bad :
       {"", "{", "[]", "null", R"({"action":"queued"})", R"({"action":"queued","workflow_job":[]})",
        R"({"action":"queued","workflow_job":{"id":"x"}})", R"({"workflow_job":{"id":1}})",
        R"({"action":"exploded","workflow_job":{"id":1}})",
        R"({"action":"queued","workflow_job":{"id":1,"labels":[1,{},null],"run_id":"x"},"repository":7})"}) {
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
      R"({"action":"queued","workflow_job":{"id":9,"run_id":111111111111111111111111111111111}})");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(std::get<messages::job_available>(**r).job.job_id, 9);
  EXPECT_EQ(std::get<messages::job_available>(**r).job.run_id, 0);
  auto big = parse_workflow_job(R"({"action":"queued","workflow_job":{"id":18446744073709551615}})");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find("workflow_job.id"), std::string::npos) << big.error();
  EXPECT_FALSE(parse_workflow_job(R"({"action":"queued","workflow_job":{"id":1e30}})"));
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
