#include "actors/runnerset/github_access.hpp"

#include <regex>

namespace octorun::runnerset {
namespace {

constexpr long unauthorized = 401;
constexpr long forbidden = 403;
constexpr long not_found = 404;

std::string answer_of(const github::error& e) {
  std::string out = e.status != 0 ? "HTTP " + std::to_string(e.status) : std::string();
  if (!e.message.empty()) out += (out.empty() ? "" : ": ") + e.message;
  return out;
}

}  // namespace

std::string without_timings(const std::string& transport_message) {
  static const std::regex timing(
      R"( after [0-9]+ (ms|milliseconds)( with [0-9]+ (out of [0-9]+ )?bytes received)?)");
  return std::regex_replace(transport_message, timing, "");
}

github_access after_github_answer(const github_access& before, const github::error* failed,
                                  github_call_target target) {
  using verdict = github_access::verdict;
  if (failed == nullptr) return {verdict::accepted, {}};
  const auto& e = *failed;
  switch (e.kind) {
    case github::error_kind::rate_limited:
    case github::error_kind::busy:
    case github::error_kind::conflict:
    case github::error_kind::server_error:
    case github::error_kind::bad_response:
    case github::error_kind::not_ready:
      return before;
    case github::error_kind::transport:
      if (e.message.starts_with("cancelled: ")) return before;  // the set stopped it
      return {verdict::unreachable, without_timings(e.message)};
    case github::error_kind::unauthorized:
      return {verdict::refused, answer_of(e)};  // 401, or App credentials that sign no token
    case github::error_kind::not_found:
      if (target == github_call_target::scope && e.status == not_found)
        return {verdict::scope_not_found, answer_of(e)};
      return before;
    case github::error_kind::rejected:
      if (e.status == forbidden || e.status == unauthorized) return {verdict::refused, answer_of(e)};
      return before;
  }
  return before;
}

model::condition credentials_condition(const credentials_facts& f) {
  using verdict = github_access::verdict;
  model::condition c;
  c.type = "CredentialsReady";
  c.status = "False";
  if (!f.secret_problem.empty()) {
    c.reason = "Invalid";
    c.message = f.secret_problem;
    return c;
  }
  if (!f.loaded) {  // being read: no status is written then (plan.cpp)
    c.status = "Unknown";
    c.reason = "Loading";
    c.message = "reading Secret " + f.secret;
    return c;
  }
  if (!f.connection_problem.empty()) {
    c.reason = "GitHubUnreachable";
    c.message = f.connection_problem;
    return c;
  }
  if (f.access.state == verdict::unknown && f.published && f.published->status == "False" &&
      (f.published->reason == "GitHubUnreachable" || f.published->reason == "CredentialsRefused" ||
       f.published->reason == "ScopeNotFound")) {
    c.reason = f.published->reason;
    c.message = f.published->message;
    return c;
  }
  switch (f.access.state) {
    case verdict::unreachable:
      c.reason = "GitHubUnreachable";
      c.message = "GitHub (" + f.scope_url + ") cannot be reached: " + f.access.detail;
      return c;
    case verdict::refused:
      c.reason = "CredentialsRefused";
      c.message = "GitHub refused the credentials of Secret " + f.secret + " (" + f.access.detail +
                  "): the token or App key is wrong, revoked or expired, or lacks the permission to "
                  "administer self-hosted runners of " +
                  f.scope_url;
      return c;
    case verdict::scope_not_found:
      c.reason = "ScopeNotFound";
      c.message = "GitHub answered Not Found for " + f.scope_url + " (" + f.access.detail +
                  "): it does not exist, or the credentials of Secret " + f.secret +
                  " cannot see it (a token of another owner, an App not installed there)";
      return c;
    case verdict::unknown:
    case verdict::accepted:
      break;
  }
  c.status = "True";
  c.reason = "Loaded";
  return c;
}

}  // namespace octorun::runnerset
