// Which URLs an answer from GitHub may send the manager to. The Actions
// service's address (runner-registration's `url`) and the message queue's
// (a session's `messageQueueUrl`) come from a server; "GitHub" is whatever
// answers the set's configured URL, so a URL it hands back is fetched only
// with the scheme and a host already trusted for that set:
//   - https, or http when the configured URL is http:// itself;
//   - the configured host or its API host (with their ports), or a host
//     under the domains GitHub serves the set from at the default port:
//     github.com: *.actions.githubusercontent.com (GitHub's documented
//     Actions hosts); NAME.ghe.com: *.NAME.ghe.com and
//     *.actions.githubusercontent.com; a GitHub Enterprise Server HOST:
//     *.HOST (its subdomain isolation).
//   - never credentials in the URL (https://github.com@elsewhere/).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/github/scope.hpp"
#include "common/expected.hpp"

namespace octorun::github {

struct server_url_policy {
  bool plain_http = false;
  std::vector<std::string> hosts;    // "host:port", lower case
  std::vector<std::string> domains;  // a host under one of these, at the scheme's default port
};

// The policy for a set configured with `target`.
server_url_policy server_url_policy_for(const github_target& target);

// Ok, or why `url` (named `what` in the message, e.g. "the Actions service
// URL") is refused. The message quotes no more of the URL than its scheme
// and host, and only when they are made of the characters those may have.
expected<ok_t, std::string> check_server_url(std::string_view url, const server_url_policy& policy,
                                             std::string_view what);

}  // namespace octorun::github
