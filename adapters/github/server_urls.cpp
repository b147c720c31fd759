#include "adapters/github/server_urls.hpp"

#include <algorithm>

#include "adapters/http/http_client.hpp"
#include "common/strings.hpp"
#include "common/url.hpp"

namespace octorun::github {
namespace {

std::string default_port(std::string_view scheme) { return scheme == "https" ? "443" : "80"; }

struct authority {
  std::string host;  // lower case, without the port
  std::string port;  // digits; the scheme's default when the URL names none
};

bool host_characters(std::string_view h) {
  return !h.empty() && h.size() <= 253 && std::all_of(h.begin(), h.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
  });
}

bool ip_literal(std::string_view h) {  // [v6], as it appears in a URL
  return h.size() > 2 && h.front() == '[' && h.back() == ']' &&
         std::all_of(h.begin() + 1, h.end() - 1, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.';
         });
}

// scheme://host[:port] of `url` (the scheme already checked); an error
// for credentials, an empty or strange host, a bad port.
expected<authority, std::string> authority_of(std::string_view url, std::string_view scheme) {
  auto parts = split_url(url);
  if (!parts) return unexpected{std::string("it has no host")};
  if (parts->userinfo) return unexpected{std::string("it carries credentials")};
  authority out;
  if (auto port = parts->port()) {
    out.port = std::string(*port);
    if (out.port.empty() || out.port.size() > 5 ||
        !std::all_of(out.port.begin(), out.port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return unexpected{std::string("its port is not a number")};
  }
  if (out.port.empty()) out.port = default_port(scheme);
  out.host = ascii_lower(parts->host_name());
  if (!host_characters(out.host) && !ip_literal(out.host))
    return unexpected{std::string("its host is not valid")};
  return out;
}

}  // namespace

server_url_policy server_url_policy_for(const github_target& target) {
  server_url_policy p;
  const auto scheme = url_scheme(target.config_url);
  p.plain_http = scheme == "http";
  for (const auto& base : {target.config_url, target.api_base}) {
    auto a = authority_of(base, url_scheme(base));
    if (a) p.hosts.push_back(a->host + ":" + a->port);
  }
  auto web = authority_of(target.config_url, scheme);
  if (!web) return p;
  const std::string& host = web->host;
  if (host == "github.com" || host == "www.github.com") {
    p.domains.push_back("actions.githubusercontent.com");
  } else if (host.ends_with(".ghe.com")) {
    p.domains.push_back(host);
    p.domains.push_back("actions.githubusercontent.com");
  } else if (host_characters(host) && !std::all_of(host.begin(), host.end(), [](char c) {
               return c == '.' || (c >= '0' && c <= '9');
             })) {  // an Enterprise Server (or github.localhost) by name, not an IPv4 address
    p.domains.push_back(host);
  }
  return p;
}

expected<ok_t, std::string> check_server_url(std::string_view url, const server_url_policy& policy,
                                             std::string_view what) {
  const auto scheme = url_scheme(url);
  auto refuse = [&](const std::string& why) {
    return unexpected{std::string(what) + " from GitHub is refused: " + why};
  };
  if (scheme.empty()) return refuse("it is not an absolute URL");
  if (scheme != "https" && !(scheme == "http" && policy.plain_http))
    return refuse("its scheme '" + scheme.substr(0, 32) + "' is not " +
                  (policy.plain_http ? "https or http" : "https"));
  auto a = authority_of(url, scheme);
  if (!a) return refuse(a.error());
  if (std::find(policy.hosts.begin(), policy.hosts.end(), a->host + ":" + a->port) != policy.hosts.end())
    return ok;
  if (a->port == default_port(scheme))
    for (const auto& d : policy.domains)
      if (a->host.ends_with("." + d)) return ok;
  return refuse("its host '" + a->host + ":" + a->port +
                "' is neither the configured GitHub nor one it serves Actions from");
}

}  // namespace octorun::github
