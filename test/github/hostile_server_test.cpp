// "GitHub" is whatever answers a set's configured URL. A server that hands
// back URLs of another scheme or host, redirects, nests its JSON a hundred
// thousand deep or sends more than a body's cap gets a clear error, never a
// fetch of the URL, a crash or its body in an Event.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "adapters/github/crypto.hpp"
#include "adapters/github/scaleset_client.hpp"
#include "adapters/github/server_urls.hpp"
#include "adapters/http/http_server.hpp"
#include "common/base64.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "test/support/jwt_testing.hpp"

namespace octorun::github {
namespace {

// A GitHub stand-in on port 0 whose answers the test chooses: the Actions
// service URL of runner-registration, the message queue URL of a session,
// and a body for the session or the message.
class hostile_github {
 public:
  hostile_github() {
    std::vector<http::route> routes{
        {"/api/v3/orgs/octo/actions/runners/registration-token",
         {"POST"},
         http::request_body::accepted,
         stored(&hostile_github::registration_token_body, 201)},
        {"/api/v3/app/installations/42/access_tokens",
         {"POST"},
         http::request_body::accepted,
         stored(&hostile_github::installation_token_body, 201)},
        {"/api/v3/actions/runner-registration",
         {"POST"},
         http::request_body::accepted,
         [this](const http::server_request&) {
           std::lock_guard l(mu);
           if (!registration_redirect.empty()) {
             http::server_response r;
             r.status = 307;
             r.headers.push_back({"Location", registration_redirect});
             r.body.clear();
             return r;
           }
           http::server_response r;
           const auto token = testing::make_hs256_jwt("k", {"sim", 0, 4'102'444'800});
           r.body = json::writer().open().field("url", tenant_url).field("token", token).close().str();
           return r;
         }},
        {"/tenant/",
         {},
         http::request_body::accepted,
         [this](const http::server_request& req) {
           std::lock_guard l(mu);
           ++tenant_calls;
           http::server_response r;
           if (req.path.ends_with("/sessions")) {
             r.body = session_body.empty() ? json::writer()
                                                 .open()
                                                 .field("sessionId", "5f0c2c4e-0000-4000-8000-000000000001")
                                                 .field("ownerName", "host")
                                                 .field("messageQueueUrl", queue_url)
                                                 .field("messageQueueAccessToken", "queue-token")
                                                 .open("statistics")
                                                 .close()
                                                 .close()
                                                 .str()
                                           : session_body;
           }
           return r;
         }},
        {"/queue", {"GET"}, http::request_body::refused, stored(&hostile_github::message_body, 200)},
    };
    auto s = http::server::start({}, std::move(routes));
    if (!s) ADD_FAILURE() << s.error();
    server = std::move(*s);
    base = server->base_url();
    tenant_url = base + "/tenant/1/";
    queue_url = base + "/queue";
  }

  // A handler answering `status` with the body the test stored in `answer`.
  http::handler stored(std::string hostile_github::*answer, int status) {
    return [this, answer, status](const http::server_request&) {
      std::lock_guard l(mu);
      http::server_response r;
      r.status = status;
      r.body = this->*answer;
      return r;
    };
  }

  // Sets one of the answers, under the lock the handlers take.
  void set(std::string hostile_github::*answer, std::string value) {
    std::lock_guard l(mu);
    this->*answer = std::move(value);
  }

  std::unique_ptr<scaleset_client> client() {
    scaleset_options o;
    o.config_url = base + "/octo";
    o.auth = pat_auth("pat");
    o.call.retry.max_attempts = 1;
    o.call.sleep = [](std::chrono::milliseconds) {};
    auto c = scaleset_client::make(std::move(o));
    EXPECT_TRUE(c) << c.error();
    return std::move(*c);
  }

  std::mutex mu;
  std::string tenant_url, queue_url, session_body, message_body, registration_redirect,
      registration_token_body = R"({"token":"reg","expires_at":"2099-01-01T00:00:00Z"})",
      installation_token_body;
  int tenant_calls = 0;
  std::unique_ptr<http::server> server;
  std::string base;
};

std::string nested_objects(int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += R"({"a":)";
  return out;
}

template <class T>
void expect_too_deep(const result<T>& r) {
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nested deeper than 128"), std::string::npos) << r.error().describe();
}

// The file a file:// URL named never reaches an error (and so an Event).
void expect_refused(const result<scaleset_session>& s, const std::string& what) {
  ASSERT_FALSE(s) << what << " was accepted";
  EXPECT_EQ(s.error().kind, error_kind::bad_response) << s.error().describe();
  EXPECT_NE(s.error().message.find("is refused"), std::string::npos) << s.error().describe();
  EXPECT_EQ(s.error().describe().find("root:"), std::string::npos) << s.error().describe();
}

TEST(HostileGitHub, ActionsServiceUrlOfAnotherSchemeOrHostIsRefused) {
  hostile_github gh;
  const auto port = std::to_string(gh.server->port());
  for (const std::string& url : std::vector<std::string>{
           "file:///etc/passwd", "gopher://127.0.0.1:" + port + "/_POST%20/x",
           "dict://127.0.0.1:" + port + "/", "http://127.0.0.2:" + port + "/tenant/1/",
           "http://127.0.0.1:1/tenant/1/", "http://x@127.0.0.1:" + port + "/tenant/1/", "/tenant/1/"}) {
    gh.set(&hostile_github::tenant_url, url);
    auto c = gh.client();
    expect_refused(c->create_session(1, "host"), url);
  }
  EXPECT_EQ(gh.tenant_calls, 0);
}

TEST(HostileGitHub, MessageQueueUrlOfAnotherSchemeOrHostIsRefused) {
  hostile_github gh;
  for (const std::string url : {"file:///etc/passwd", "gopher://127.0.0.1:70/_x", "http://127.0.0.2/queue",
                                "https://broker.actions.githubusercontent.com/x"}) {
    gh.set(&hostile_github::queue_url, url);
    auto c = gh.client();
    expect_refused(c->create_session(1, "host"), url);
    EXPECT_FALSE(c->session());
  }
  gh.set(&hostile_github::queue_url, gh.base + "/queue");
  auto c = gh.client();
  auto s = c->create_session(1, "host");
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(s->message_queue_url, gh.base + "/queue");
}

// A redirect is an answer, not followed: nothing is fetched from its Location.
TEST(HostileGitHub, ARedirectToAnotherSchemeIsNotFollowed) {
  hostile_github gh;
  for (const char* to : {"file:///etc/passwd", "gopher://127.0.0.1:70/_x", "http://127.0.0.2/"}) {
    gh.set(&hostile_github::registration_redirect, to);
    auto s = gh.client()->create_session(1, "host");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().status, 307);
    EXPECT_EQ(s.error().describe().find("root:"), std::string::npos) << s.error().describe();
  }
  EXPECT_EQ(gh.tenant_calls, 0);
}

TEST(HostileGitHub, DeepOrOverSizeAnswersAreClearErrors) {
  hostile_github gh;
  for (const auto& deep : {std::string(100'000, '['), nested_objects(100'000)}) {
    gh.set(&hostile_github::session_body, deep);
    expect_too_deep(gh.client()->create_session(1, "host"));
  }
  gh.set(&hostile_github::session_body,
         "\"" + std::string(json::sources::actions_service_response.max_bytes, 'x') + "\"");
  auto big = gh.client()->create_session(1, "host");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().kind, error_kind::transport);
  EXPECT_NE(big.error().message.find("-byte limit of this request"), std::string::npos)
      << big.error().describe();
}

// The REST client's answers and the admin token's JWT payload go through
// the same parser.
TEST(HostileGitHub, ADeepRestAnswerOrTokenPayloadIsAClearError) {
  hostile_github gh;
  gh.set(&hostile_github::registration_token_body, std::string(100'000, '['));
  auto rest = gh.client()->create_session(1, "host");
  expect_too_deep(rest);
  EXPECT_EQ(rest.error().kind, error_kind::bad_response);

  const auto token =
      base64url_encode(R"({"alg":"HS256"})") + "." + base64url_encode(nested_objects(10'000)) + ".c2ln";
  auto claims = peek_jwt_claims(token);
  ASSERT_FALSE(claims);
  EXPECT_NE(claims.error().find("nested deeper than 128"), std::string::npos) << claims.error();
}

TEST(HostileGitHub, ADeepMessageOrJobListIsAClearError) {
  hostile_github gh;
  auto c = gh.client();
  ASSERT_TRUE(c->create_session(1, "host"));
  gh.set(&hostile_github::message_body, std::string(100'000, '[') + std::string(100'000, ']'));
  expect_too_deep(c->get_message(0, 10));

  // The job list is JSON inside a string: parsed with the same limits.
  gh.set(&hostile_github::message_body, json::writer()
                                            .open()
                                            .field("messageId", 7)
                                            .field("messageType", "RunnerScaleSetJobMessages")
                                            .field("body", std::string(100'000, '['))
                                            .close()
                                            .str());
  auto inner = c->get_message(0, 10);
  ASSERT_TRUE(inner) << inner.error().describe();
  ASSERT_TRUE(*inner);
  ASSERT_EQ((*inner)->skipped.size(), 1u);
  EXPECT_NE((*inner)->skipped[0].detail.find("nested deeper than 128"), std::string::npos);
}

// The rules, host by host (server_urls.hpp): which URLs a set configured
// with `configured` accepts and refuses.
void expect_trust(const char* configured, std::initializer_list<const char*> accepted,
                  std::initializer_list<const char*> refused) {
  auto target = parse_config_url(configured);
  ASSERT_TRUE(target) << target.error();
  auto p = server_url_policy_for(*target);
  for (const char* url : accepted) EXPECT_TRUE(check_server_url(url, p, "u")) << configured << ": " << url;
  for (const char* url : refused) EXPECT_FALSE(check_server_url(url, p, "u")) << configured << ": " << url;
}

TEST(ServerUrls, GitHubComTrustsItsActionsHostsOnly) {
  expect_trust(
      "https://github.com/octo",
      {"https://pipelinesghubeus22.actions.githubusercontent.com/abc/",
       "https://broker.actions.githubusercontent.com/scalesets/message?x=1", "https://api.github.com/x",
       "HTTPS://API.GITHUB.COM:443/x"},
      {"http://pipelines.actions.githubusercontent.com/", "https://actions.githubusercontent.com.evil.com/",
       "https://evil.com/", "https://api.github.com:8443/", "https://github.com@evil.com/",
       "https://pipelines.actions.githubusercontent.com:444/", "file:///etc/passwd",
       "gopher://api.github.com/", "https://", "https:///x", "https://exa mple.com/"});
  auto p = server_url_policy_for(*parse_config_url("https://github.com/octo"));
  auto refused = check_server_url("https://evil.com/x", p, "the Actions service URL");
  EXPECT_EQ(
      refused.error(),
      "the Actions service URL from GitHub is refused: its host 'evil.com:443' is neither the configured "
      "GitHub nor one it serves Actions from");
}

TEST(ServerUrls, EnterpriseServerTrustsItsOwnHostAndSubdomains) {
  expect_trust("https://ghes.corp.example/octo",
               {"https://ghes.corp.example/_services/pipelines/x", "https://actions.ghes.corp.example/x"},
               {"https://ghes.corp.example.evil/x", "https://pipelines.actions.githubusercontent.com/",
                "http://ghes.corp.example/x"});
  expect_trust("https://octo.ghe.com/octo",
               {"https://api.octo.ghe.com/x", "https://pipelines.octo.ghe.com/x"},
               {"https://other.ghe.com/x"});
}

TEST(ServerUrls, PlainHttpOnlyWhereTheConfiguredUrlIsPlainHttp) {
  expect_trust("http://127.0.0.1:8080/octo", {"http://127.0.0.1:8080/tenant/1/"},
               {"http://127.0.0.1:8081/tenant/1/", "http://1.127.0.0.1:80/", "ftp://127.0.0.1:8080/"});
}

}  // namespace
}  // namespace octorun::github
