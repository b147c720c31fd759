// GitHub App authentication against the simulator: the JWT it verifies with
// the key of the App its iss names, installation tokens only for that App's
// installations, each serving only its installation's account and granted
// repositories; the REST client's token caching and refresh.
#include "adapters/github/crypto.hpp"
#include "adapters/http/http_client.hpp"
#include "common/json.hpp"
#include "test/github/sim_fixture.hpp"
#include "test/support/jwt_testing.hpp"

namespace octorun::github {
namespace {

using namespace std::chrono_literals;
using testing::fast_calls;
using testing::generate_rsa_key;
using testing::rsa_key_pem;
using testing::sleep_log;

struct AppAuth : ::testing::Test {
  void SetUp() override {
    auto k = generate_rsa_key(2048);
    ASSERT_TRUE(k) << k.error();
    key = *k;
    sim::simulator_options o;
    o.installation_token_ttl = 400s;
    sim = testing::start_simulator(o);
    sim->add_app({1, "Iv1.simulated", key.public_key});
    sim->add_app_installation(1, 42, "octo");
  }
  rsa_key_pem key;
  std::unique_ptr<sim::simulator> sim;
  std::shared_ptr<sleep_log> sleeps = std::make_shared<sleep_log>();
};

TEST_F(AppAuth, JwtIsVerifiedAndTheInstallationTokenCached) {
  auto app = app_auth({"Iv1.simulated", 42, key.private_key, sim->api_url()});
  rest_client c(
      rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, app, fast_calls(sleeps)});
  ASSERT_TRUE(c.registration_token());
  ASSERT_TRUE(c.list_runners());
  EXPECT_EQ(sim->calls("rest.app_token"), 1);
  EXPECT_EQ(app->fetches(), 1);
}

TEST_F(AppAuth, TokenIsRefreshedBeforeExpiry) {
  std::atomic<std::int64_t> now{
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count()};
  auto opts = fast_calls(sleeps);
  opts.now = [&now] { return now.load(); };
  auto app = app_auth({"Iv1.simulated", 42, key.private_key, sim->api_url()});
  rest_client c(rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, app, opts});
  ASSERT_TRUE(c.registration_token());
  now += 50;  // 350 s left: still more than the 300 s margin
  ASSERT_TRUE(c.registration_token());
  EXPECT_EQ(app->fetches(), 1);
  now += 51;  // 299 s left: refreshed ahead of expiry
  ASSERT_TRUE(c.registration_token());
  EXPECT_EQ(app->fetches(), 2);
  EXPECT_EQ(sim->calls("rest.app_token"), 2);
}

TEST_F(AppAuth, ExpiredTokenIsRefreshedOnceAfter401) {
  auto app = app_auth({"Iv1.simulated", 42, key.private_key, sim->api_url()});
  rest_client c(
      rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, app, fast_calls(sleeps)});
  ASSERT_TRUE(c.registration_token());
  sim->expire_tokens();
  auto r = c.registration_token();
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(app->fetches(), 2);
  EXPECT_EQ(sim->calls("rest.registration_token"), 3);  // ok, 401, ok
}

// Issue 32: the simulator gave a token for any installation id, so a test
// could not tell an App JWT that reaches every installation of the App from
// one that reaches its own. GitHub answers 404 for an installation not of the
// App, and an installation token reaches only its installation's account
// and granted repositories.
TEST_F(AppAuth, TokensOnlyForTheAppsInstallationsAndOnlyTheirScopes) {
  auto stranger = app_auth({"Iv1.simulated", 4343, key.private_key, sim->api_url()});
  rest_client other(
      rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, stranger, fast_calls(sleeps)});
  auto refused = other.registration_token();
  ASSERT_FALSE(refused);
  EXPECT_EQ(sim->calls("rest.app_token"), 1);
  EXPECT_EQ(sim->calls("rest.registration_token"), 0) << "an installation not of the App got a token";

  sim->add_organization("elsewhere");
  auto app = app_auth({"Iv1.simulated", 42, key.private_key, sim->api_url()});
  rest_client theirs(
      rest_options{sim->api_url(), {scope_kind::organization, "elsewhere", {}}, app, fast_calls(sleeps)});
  auto r = theirs.list_runners();
  ASSERT_FALSE(r) << "installation 42 (on octo) served the organisation elsewhere";
  EXPECT_EQ(r.error().kind, error_kind::not_found);

  sim->add_repository("acme/granted");
  sim->add_repository("acme/withheld");
  sim->add_app_installation(1, 7, "acme", {"granted"});
  auto acme = app_auth({"Iv1.simulated", 7, key.private_key, sim->api_url()});
  rest_client granted(
      rest_options{sim->api_url(), {scope_kind::repository, "acme", "granted"}, acme, fast_calls(sleeps)});
  rest_client withheld(
      rest_options{sim->api_url(), {scope_kind::repository, "acme", "withheld"}, acme, fast_calls(sleeps)});
  EXPECT_TRUE(granted.list_runners());
  auto w = withheld.list_runners();
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind, error_kind::not_found);

  // An installation on all of octo's repositories serves them, and nothing
  // of another account: not an enterprise, not another owner's repository.
  rest_client repo(
      rest_options{sim->api_url(), {scope_kind::repository, "octo", "app"}, app, fast_calls(sleeps)});
  EXPECT_TRUE(repo.list_runners());
  rest_client enterprise(
      rest_options{sim->api_url(), {scope_kind::enterprise, "big", {}}, app, fast_calls(sleeps)});
  auto e = enterprise.registration_token();
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, error_kind::not_found);
  rest_client foreign(
      rest_options{sim->api_url(), {scope_kind::repository, "acme", "granted"}, app, fast_calls(sleeps)});
  auto f = foreign.list_runners();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().kind, error_kind::not_found);
}

TEST_F(AppAuth, JwtSignedWithAnotherKeyIsRefused) {
  auto other = generate_rsa_key(2048);
  ASSERT_TRUE(other);
  auto app = app_auth({"Iv1.simulated", 42, other->private_key, sim->api_url()});
  rest_client c(
      rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, app, fast_calls(sleeps)});
  auto r = c.registration_token();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, error_kind::unauthorized);
  EXPECT_NE(r.error().message.find("installation token"), std::string::npos);
}

// Issue 32: any App's JWT got a token for any installation. An installation
// belongs to one App; GitHub gives its tokens only to a JWT of that App (iss:
// its id or client id, signed with its key) and answers 404 to another App.
TEST_F(AppAuth, OnlyTheAppThatOwnsAnInstallationGetsItsTokens) {
  auto other_key = generate_rsa_key(2048);
  ASSERT_TRUE(other_key) << other_key.error();
  sim->add_organization("acme");
  sim->add_app({2, "Iv1.other", other_key->public_key});
  sim->add_app_installation(2, 43, "acme");
  http::client c;
  c.set_plain_http(true);
  struct answer {
    long status = 0;
    std::string message, selection;
  };
  auto ask = [&](const std::string& private_key, const std::string& iss, std::int64_t installation) {
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    auto jwt = make_app_jwt(private_key, iss, now);
    EXPECT_TRUE(jwt) << jwt.error();
    http::request req;
    req.method = "POST";
    req.url = sim->api_url() + "/app/installations/" + std::to_string(installation) + "/access_tokens";
    req.headers = {{"Authorization", "Bearer " + (jwt ? *jwt : std::string())}};
    auto r = c.perform(req);
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return answer{};
    rapidjson::Document d;
    d.Parse(r->body.c_str());
    return answer{r->status, json::str(d, "message"), json::str(d, "repository_selection")};
  };
  auto mine = ask(key.private_key, "Iv1.simulated", 42);
  EXPECT_EQ(mine.status, 201);
  EXPECT_EQ(mine.selection, "all");
  EXPECT_EQ(ask(key.private_key, "1", 42).status, 201) << "the App id names the App as its client id does";
  EXPECT_EQ(ask(other_key->private_key, "Iv1.other", 43).status, 201);
  EXPECT_EQ(ask(other_key->private_key, "2", 43).status, 201);

  auto theirs = ask(key.private_key, "Iv1.simulated", 43);
  EXPECT_EQ(theirs.status, 404) << "App 1 got a token for App 2's installation";
  EXPECT_EQ(theirs.message, "Not Found");
  EXPECT_EQ(ask(other_key->private_key, "Iv1.other", 42).status, 404);
  EXPECT_EQ(ask(key.private_key, "Iv1.simulated", 4343).status, 404);  // nobody's
  auto forged = ask(other_key->private_key, "Iv1.simulated", 42);      // App 2's key, App 1's name
  EXPECT_EQ(forged.status, 401);
  EXPECT_EQ(forged.message.rfind("A JSON web token could not be decoded", 0), 0u) << forged.message;
  auto nobody = ask(key.private_key, "Iv1.nobody", 42);
  EXPECT_EQ(nobody.status, 404);
  EXPECT_EQ(nobody.message, "Integration not found");
  http::request bare_request;
  bare_request.method = "POST";
  bare_request.url = sim->api_url() + "/app/installations/42/access_tokens";
  auto bare = c.perform(bare_request);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 401);

  // Through the client: App 2 with App 1's installation gets no token, so
  // no call of the installation's is made.
  sim->reset_counts();
  auto wrong = app_auth({"Iv1.other", 42, other_key->private_key, sim->api_url()});
  rest_client refused(
      rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, wrong, fast_calls(sleeps)});
  ASSERT_FALSE(refused.registration_token());
  EXPECT_EQ(sim->calls("rest.app_token"), 1);
  EXPECT_EQ(sim->calls("rest.registration_token"), 0);
  sim->add_app_installation(2, 44, "acme", {"granted"});
  EXPECT_EQ(ask(other_key->private_key, "Iv1.other", 44).selection, "selected");
}

// The control API declares Apps and installations as add_app and
// add_app_installation do, and refuses an installation of no App.
TEST_F(AppAuth, AppsAndInstallationsAreDeclaredOverHttp) {
  http::client c;
  c.set_plain_http(true);
  auto post = [&](const std::string& what, const std::string& body) {
    http::request req;
    req.method = "POST";
    req.url = sim->base_url() + "/_sim/" + what;
    req.body = body;
    auto r = c.perform(req);
    EXPECT_TRUE(r) << r.error().message;
    return r ? r->status : 0;
  };
  EXPECT_EQ(post("apps", "{\"id\":9,\"client_id\":\"Iv1.http\",\"public_key_pem\":" +
                             json::quote(key.public_key) + "}"),
            200);
  EXPECT_EQ(post("apps", R"({"id":10})"), 400);
  EXPECT_EQ(post("app-installations", R"({"app_id":9,"id":90,"account":"octo","repositories":["app"]})"),
            200);
  EXPECT_EQ(post("app-installations", R"({"app_id":11,"id":91,"account":"octo"})"), 400);
  auto app = app_auth({"Iv1.http", 90, key.private_key, sim->api_url()});
  rest_client granted(
      rest_options{sim->api_url(), {scope_kind::repository, "octo", "app"}, app, fast_calls(sleeps)});
  EXPECT_TRUE(granted.list_runners());
  rest_client org(
      rest_options{sim->api_url(), {scope_kind::organization, "octo", {}}, app, fast_calls(sleeps)});
  EXPECT_TRUE(org.list_runners()) << "the installation is on octo, with one repository granted";
}

}  // namespace
}  // namespace octorun::github
