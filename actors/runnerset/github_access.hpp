// What GitHub's answers say of a RunnerSet's credentials and scope, and the
// CredentialsReady condition that tells it (docs/github-network.md). Pure:
// the actor hands in each answer of a GitHub call it made for the set.
//
// CredentialsReady answers one question for the set's owner: can the set
// use its credentials on its scope? So it is False not only when the Secret
// is missing or malformed (reason Invalid), but also when GitHub cannot be
// reached (GitHubUnreachable), refuses the credentials (CredentialsRefused:
// 401, or a 403 that is no rate limit) or cannot show them the scope
// (ScopeNotFound: 404 on a call about the scope itself). True (Loaded) means
// the Secret loaded and GitHub refused nothing since.
#pragma once

#include <optional>
#include <string>

#include "adapters/github/error.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

struct github_access {
  enum class verdict {
    unknown,          // no call answered since the credentials loaded
    accepted,         // the last call that said anything about access succeeded
    unreachable,      // no answer: DNS, connect, timeout, TLS, proxy
    refused,          // 401, or 403 without rate-limit headers
    scope_not_found,  // 404 on a call about the scope
  };
  verdict state = verdict::unknown;
  std::string detail;  // what GitHub (or the transport) said, without timings
  bool operator==(const github_access&) const = default;
};

// What a call was about: the scope itself (its registration token, runner
// groups, scale sets, a REST JIT configuration, the sweep's listings), whose
// 404 means the credentials cannot see the scope; or one object of it (a
// runner, a scale set's JIT configuration), whose 404 means that object is
// gone.
enum class github_call_target { scope, object };

// The access after an answer: `failed` null is a success. Answers that say
// nothing about access (5xx, conflicts, a rate limit, a runner busy, a call
// cancelled) leave it as it was.
github_access after_github_answer(const github_access& before, const github::error* failed,
                                  github_call_target target);

// What the condition is judged from.
struct credentials_facts {
  bool loaded = false;             // the Secret loaded and the GitHub clients exist
  std::string secret_problem;      // why the Secret cannot be used (empty: none)
  std::string connection_problem;  // the TLS or proxy problem of the last call (empty: none)
  github_access access;
  std::string secret;     // its name, for the messages
  std::string scope_url;  // spec.scopeURL, for the messages
  // The CredentialsReady the set last published (none: none yet). While no
  // call has been answered since the credentials loaded, GitHub's verdict
  // in it stands: a restarted manager does not flip a refused set to True
  // and back (two status writes and two Events for nothing).
  std::optional<model::condition> published;
};

// The CredentialsReady condition (no lastTransitionTime: set_condition adds it).
model::condition credentials_condition(const credentials_facts& f);

// libcurl's detail without the figures that change from one attempt to the
// next ("after 3 ms"), so the same failure gives the same message.
std::string without_timings(const std::string& transport_message);

}  // namespace octorun::runnerset
