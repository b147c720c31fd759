// What GitHub's answers say of a set's credentials and scope, and the
// CredentialsReady condition and Event that tell it
// (actors/runnerset/github_access.hpp).
#include "actors/runnerset/github_access.hpp"

#include <gtest/gtest.h>

#include "actors/runnerset/set_events.hpp"
#include "actors/runnerset/set_status.hpp"

namespace octorun::runnerset {
namespace {

using verdict = github_access::verdict;
using github::error_kind;

github::error answer(error_kind kind, long status, std::string message) {
  return github::error{kind, status, std::move(message), {}, 0};
}

credentials_facts facts(github_access access) {
  credentials_facts f;
  f.loaded = true;
  f.access = std::move(access);
  f.secret = "gh";
  f.scope_url = "https://github.com/acme";
  return f;
}

// A set of Secret gh on https://github.com/acme, its credentials loaded.
set_observation loaded_set() {
  set_observation o;
  o.set = model::runnerset{};
  o.set->spec.credentials_secret_name = "gh";
  o.set->spec.set_scope_url("https://github.com/acme");
  o.credentials_loaded = true;
  return o;
}

TEST(GitHubAccess, ARefusedTokenIsRefused) {
  auto e = answer(error_kind::unauthorized, 401, "Bad credentials");
  auto a = after_github_answer({}, &e, github_call_target::object);
  EXPECT_EQ(a.state, verdict::refused);
  EXPECT_EQ(a.detail, "HTTP 401: Bad credentials");
  // A 403 that is no rate limit: a token without the permission.
  auto forbidden = answer(error_kind::rejected, 403, "Resource not accessible by integration");
  EXPECT_EQ(after_github_answer({}, &forbidden, github_call_target::scope).state, verdict::refused);
  // App credentials that sign no token: refused before any request.
  auto unsigned_jwt = answer(error_kind::unauthorized, 0, "cannot read the GitHub App private key (PEM)");
  EXPECT_EQ(after_github_answer({}, &unsigned_jwt, github_call_target::scope).state, verdict::refused);
}

TEST(GitHubAccess, ANotFoundScopeIsNotFoundOnlyOnACallAboutTheScope) {
  auto e = answer(error_kind::not_found, 404, "Not Found");
  auto a = after_github_answer({}, &e, github_call_target::scope);
  EXPECT_EQ(a.state, verdict::scope_not_found);
  EXPECT_EQ(a.detail, "HTTP 404: Not Found");
  // A runner or a scale set that is gone says nothing of the scope.
  const github_access accepted{verdict::accepted, {}};
  EXPECT_EQ(after_github_answer(accepted, &e, github_call_target::object), accepted);
  // A runner group missing (the service answers 200 with none) neither.
  auto no_group = answer(error_kind::not_found, 200, "expected one runner group named gpu, got 0");
  EXPECT_EQ(after_github_answer(accepted, &no_group, github_call_target::scope), accepted);
}

TEST(GitHubAccess, NoAnswerIsUnreachableWithoutItsTimings) {
  auto e = answer(error_kind::transport, 0,
                  "Couldn't connect to server: Failed to connect to 127.0.0.1 port 1 after 3 ms: Couldn't "
                  "connect to server");
  auto a = after_github_answer({}, &e, github_call_target::object);
  EXPECT_EQ(a.state, verdict::unreachable);
  EXPECT_EQ(a.detail,
            "Couldn't connect to server: Failed to connect to 127.0.0.1 port 1: Couldn't connect to server");
  auto later = answer(error_kind::transport, 0,
                      "Couldn't connect to server: Failed to connect to 127.0.0.1 port 1 after 1024 ms: "
                      "Couldn't connect to server");
  EXPECT_EQ(after_github_answer(a, &later, github_call_target::object), a)
      << "the same failure, the same words";
  EXPECT_EQ(without_timings("Timeout was reached: Operation timed out after 30000 milliseconds with 0 out of "
                            "120 bytes received"),
            "Timeout was reached: Operation timed out");
}

TEST(GitHubAccess, AnswersThatSayNothingOfAccessChangeNothing) {
  const github_access refused{verdict::refused, "HTTP 401: Bad credentials"};
  for (auto e : {answer(error_kind::server_error, 502, "Bad Gateway"),
                 answer(error_kind::rate_limited, 403, "API rate limit exceeded"),
                 answer(error_kind::conflict, 409, "taken"), answer(error_kind::busy, 422, "busy"),
                 answer(error_kind::bad_response, 200, "not a list"),
                 answer(error_kind::rejected, 422, "Validation Failed"),
                 answer(error_kind::transport, 0, "cancelled: stopped")})
    EXPECT_EQ(after_github_answer(refused, &e, github_call_target::scope), refused) << e.message;
  // Any success: GitHub took the credentials.
  EXPECT_EQ(after_github_answer(refused, nullptr, github_call_target::object).state, verdict::accepted);
}

TEST(CredentialsReady, SaysWhatGitHubSaid) {
  auto refused = credentials_condition(facts({verdict::refused, "HTTP 401: Bad credentials"}));
  EXPECT_EQ(refused.type, "CredentialsReady");
  EXPECT_EQ(refused.status, "False");
  EXPECT_EQ(refused.reason, "CredentialsRefused");
  EXPECT_NE(refused.message.find("Secret gh"), std::string::npos) << refused.message;
  EXPECT_NE(refused.message.find("HTTP 401: Bad credentials"), std::string::npos) << refused.message;

  auto missing = credentials_condition(facts({verdict::scope_not_found, "HTTP 404: Not Found"}));
  EXPECT_EQ(missing.status, "False");
  EXPECT_EQ(missing.reason, "ScopeNotFound");
  EXPECT_NE(missing.message.find("https://github.com/acme"), std::string::npos) << missing.message;

  auto away = credentials_condition(facts({verdict::unreachable, "Could not resolve host: github.example"}));
  EXPECT_EQ(away.status, "False");
  EXPECT_EQ(away.reason, "GitHubUnreachable");
  EXPECT_NE(away.message.find("Could not resolve host"), std::string::npos) << away.message;

  for (auto v : {verdict::unknown, verdict::accepted}) {
    auto ok = credentials_condition(facts({v, {}}));
    EXPECT_EQ(ok.status, "True");
    EXPECT_EQ(ok.reason, "Loaded");
  }
}

TEST(CredentialsReady, TheSecretComesFirstThenTheConnection) {
  auto f = facts({verdict::refused, "HTTP 401: Bad credentials"});
  f.connection_problem = "TLS: certificate not trusted";
  auto tls = credentials_condition(f);
  EXPECT_EQ(tls.reason, "GitHubUnreachable");
  EXPECT_EQ(tls.message, "TLS: certificate not trusted");
  f.secret_problem = "key github_token: empty";
  auto secret = credentials_condition(f);
  EXPECT_EQ(secret.reason, "Invalid");
  EXPECT_EQ(secret.message, "key github_token: empty");
  f = facts({});
  f.loaded = false;
  EXPECT_EQ(credentials_condition(f).status, "Unknown") << "being read";
}

// A restarted manager (new credentials clients, no answer yet) keeps what
// the last one published until GitHub answers; a Secret problem is judged
// afresh.
TEST(CredentialsReady, GitHubsLastVerdictStandsUntilItAnswersAgain) {
  auto f = facts({});
  f.published = model::condition{"CredentialsReady", "False", "CredentialsRefused", "refused before", "t", 1};
  auto kept = credentials_condition(f);
  EXPECT_EQ(kept.reason, "CredentialsRefused");
  EXPECT_EQ(kept.message, "refused before");
  f.access = {verdict::accepted, {}};
  EXPECT_EQ(credentials_condition(f).status, "True");
  f.access = {};
  f.published->reason = "Invalid";  // the Secret's problem, fixed since: not carried over
  EXPECT_EQ(credentials_condition(f).status, "True");
}

// A refused token is one Warning however often the set retries, one Normal
// Event when GitHub takes the credentials again, and a new Warning when
// GitHub's answer turns into another.
TEST(CredentialsReady, OneWarningPerChangeNotPerRetry) {
  auto o = loaded_set();
  set_summary before;
  before.credentials = set_summary::credentials_state::ready;
  auto e = answer(error_kind::unauthorized, 401, "Bad credentials");
  o.access = after_github_answer(o.access, &e, github_call_target::scope);
  auto after = summarize(before, o, set_plan{});
  auto events = set_events(before, after, "gh");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].warning);
  EXPECT_EQ(events[0].reason, "CredentialsRefused");
  EXPECT_NE(events[0].note.find("HTTP 401: Bad credentials"), std::string::npos) << events[0].note;
  for (int retry = 0; retry < 5; ++retry) {
    o.access = after_github_answer(o.access, &e, github_call_target::scope);
    auto again = summarize(after, o, set_plan{});
    EXPECT_TRUE(set_events(after, again, "gh").empty()) << "retry " << retry;
    after = again;
  }
  // The failing registrations it causes say nothing more.
  o.runner_registration_error = "unauthorized (HTTP 401): Bad credentials";
  o.scale_sets[""].error = "finding scale set linux: unauthorized (HTTP 401): Bad credentials";
  auto registrations = summarize(after, o, set_plan{});
  EXPECT_TRUE(set_events(after, registrations, "gh").empty());
  after = registrations;
  auto gone = answer(error_kind::not_found, 404, "Not Found");
  o.access = after_github_answer(o.access, &gone, github_call_target::scope);
  auto not_found = summarize(after, o, set_plan{});
  auto other = set_events(after, not_found, "gh");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].reason, "ScopeNotFound");
  o.access = after_github_answer(o.access, nullptr, github_call_target::scope);
  o.runner_registration_error.clear();
  o.scale_sets[""].error.clear();
  auto fixed = summarize(not_found, o, set_plan{});
  auto back = set_events(not_found, fixed, "gh");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_FALSE(back[0].warning);
  EXPECT_EQ(back[0].reason, "CredentialsLoaded");
}

// A restarted manager reads the reason from the status: nothing repeated.
TEST(CredentialsReady, ARestartRepeatsNoRefusal) {
  auto o = loaded_set();
  o.access = {verdict::refused, "HTTP 401: Bad credentials"};
  o.set->status.conditions.push_back(credentials_condition(credentials_facts_of(o)));
  auto before = summary_from_status(*o.set);
  EXPECT_TRUE(set_events(before, summarize(before, o, set_plan{}), "gh").empty());
}

}  // namespace
}  // namespace octorun::runnerset
