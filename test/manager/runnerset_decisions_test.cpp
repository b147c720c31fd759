#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "actors/runnerset/credentials.hpp"
#include "actors/runnerset/routing.hpp"
#include "common/base64.hpp"

namespace octorun::runnerset {
namespace {

rapidjson::Document secret(std::initializer_list<std::pair<const char*, std::string>> data) {
  std::string body = R"({"kind":"Secret","data":{)";
  bool first = true;
  for (const auto& [k, v] : data) {
    body += (first ? "" : ",") + std::string("\"") + k + "\":\"" + v + "\"";
    first = false;
  }
  body += "}}";
  rapidjson::Document d;
  d.Parse(body.c_str());
  return d;
}

TEST(Credentials, ReadsATokenOrAnApp) {
  auto pat = read_credentials(secret({{"github_token", base64_encode("ghp_x\n")}}));
  ASSERT_TRUE(pat) << pat.error();
  EXPECT_EQ(std::get<pat_credentials>(*pat).token, "ghp_x");

  auto app = read_credentials(
      secret({{"github_app_id", base64_encode("123")},
              {"github_app_installation_id", base64_encode("456")},
              {"github_app_private_key", base64_encode("-----BEGIN PRIVATE KEY-----\n...")}}));
  ASSERT_TRUE(app) << app.error();
  EXPECT_EQ(std::get<app_credentials>(*app).installation_id, 456);
  EXPECT_EQ(std::get<app_credentials>(*app).app_id, "123");
}

TEST(Credentials, ABrokenSecretSaysWhatIsWrong) {
  auto message = [](const rapidjson::Document& d) {
    auto c = read_credentials(d);
    return c ? std::string("accepted") : c.error();
  };
  EXPECT_NE(message(secret({})).find("neither github_token"), std::string::npos);
  EXPECT_NE(message(secret({{"github_token", "!!"}})).find("github_token is not valid base64"),
            std::string::npos);
  EXPECT_NE(message(secret({{"github_token", base64_encode("  ")}})).find("empty"), std::string::npos);
  EXPECT_NE(message(secret({{"github_app_id", base64_encode("1")}})).find("github_app_installation_id"),
            std::string::npos);
  EXPECT_NE(message(secret({{"github_app_id", base64_encode("1")},
                            {"github_app_installation_id", base64_encode("x")},
                            {"github_app_private_key", base64_encode("-----BEGIN")}}))
                .find("positive number"),
            std::string::npos);
  EXPECT_NE(message(secret({{"github_app_id", base64_encode("1")},
                            {"github_app_installation_id", base64_encode("2")},
                            {"github_app_private_key", base64_encode("not pem")}}))
                .find("PEM"),
            std::string::npos);
  EXPECT_NE(message(secret({{"github_token", base64_encode("t")}, {"github_app_id", base64_encode("1")}}))
                .find("both"),
            std::string::npos);
  rapidjson::Document no_data;
  no_data.Parse(R"({"kind":"Secret"})");
  EXPECT_NE(message(no_data).find("no data"), std::string::npos);
}

std::vector<model::effective_variant> variants() {
  static model::pod_template t;
  return {{"small", {"linux", "x64"}, &t, 0, 1},
          {"large", {"linux", "x64", "large"}, &t, 0, 1},
          {"arm", {"linux", "ARM64"}, &t, 0, 1}};
}

TEST(Routing, PicksTheVariantThatCarriesEveryLabel) {
  EXPECT_EQ(variant_for_job(variants(), {"self-hosted", "linux", "x64"}), 0u);
  EXPECT_EQ(variant_for_job(variants(), {"self-hosted", "large"}), 1u);
  EXPECT_EQ(variant_for_job(variants(), {"arm64"}), 2u) << "labels match case-insensitively";
  EXPECT_EQ(variant_for_job(variants(), {"self-hosted"}), 0u) << "the most general fit";
  EXPECT_EQ(variant_for_job(variants(), {"gpu"}), std::nullopt);
  EXPECT_EQ(variant_for_job({}, {"self-hosted"}), std::nullopt);
}

// A set heeds the job messages of its own intake only: a webhook delivery
// about a Listener set's job arrives out of step with the scale set's
// statistics.
TEST(JobRouting, ASetHeedsOnlyItsOwnIntakesJobMessages) {
  EXPECT_TRUE(heeds_job_message(model::intake_mode::webhook, false));
  EXPECT_FALSE(heeds_job_message(model::intake_mode::webhook, true));
  EXPECT_TRUE(heeds_job_message(model::intake_mode::listener, true));
  EXPECT_FALSE(heeds_job_message(model::intake_mode::listener, false));
}

// A job's end is remembered only by a set that could hear of the job
// again (it counted it, ran it, or a variant of its would run it, or its
// spec is not read yet); every other set of the job's class forgets it.
TEST(JobRouting, OnlyASetThatCouldHearOfAJobAgainRemembersItsEnd) {
  EXPECT_FALSE(remembers_end(false, false, true, false)) << "another set's job";
  EXPECT_TRUE(remembers_end(true, false, true, false));
  EXPECT_TRUE(remembers_end(false, true, true, false));
  EXPECT_TRUE(remembers_end(false, false, true, true));
  EXPECT_TRUE(remembers_end(false, false, false, false)) << "its spec not read yet";
}

TEST(JobRouting, DemandForACompletedOrCountedJobIsStale) {
  EXPECT_FALSE(stale_demand(false, false));
  ASSERT_TRUE(stale_demand(true, false));
  EXPECT_STREQ(stale_demand(true, false)->reason, "stale_delivery");
  EXPECT_STREQ(stale_demand(true, true)->reason, "stale_delivery") << "completed wins";
  ASSERT_TRUE(stale_demand(false, true));
  EXPECT_STREQ(stale_demand(false, true)->reason, "stale_delivery");
  EXPECT_NE(std::string(stale_demand(false, true)->why).find("counted already"), std::string::npos);
}

}  // namespace
}  // namespace octorun::runnerset
