// URLs in their parts: the one split of a URL in the manager, whether a
// user wrote it (a scope, a proxy), GitHub handed it back (the Actions
// service's URLs) or the environment set it (https_proxy). What each use
// allows of the parts is its own check on top (model/scope.hpp for users'
// URLs, adapters/github/server_urls.hpp for GitHub's).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace octorun {

// SCHEME://[USERINFO@]HOST[:PORT][/PATH][?QUERY][#FRAGMENT] (RFC 3986).
struct url_parts {
  std::string scheme;                   // as written (split_http_url: in lower case)
  std::string host;                     // HOST or HOST:PORT, as written ([v6] keeps its brackets)
  std::string path;                     // from the '/' after the host on; empty when none
  std::optional<std::string> userinfo;  // before the authority's last '@'
  std::optional<std::string> query;     // after the first '?', up to a '#'
  std::optional<std::string> fragment;  // after the first '#'
  bool operator==(const url_parts&) const = default;

  // The host without its port, and the port as written after its ':' (none
  // without one; a ':' inside an IPv6 literal's brackets is no port's).
  std::string_view host_name() const;
  std::optional<std::string_view> port() const;
  // The URL again, its userinfo left out.
  std::string without_userinfo() const;
};

// Splits `text`; none when it does not start with SCHEME:// (a scheme of
// letters, digits, '+', '-' and '.'). The authority ends at the first '/',
// '?' or '#'. Nothing is checked beyond that.
std::optional<url_parts> split_url(std::string_view text);

// The scheme of any URL, lower-cased ("https", also "file" of file:/etc or
// "mailto" of mailto:x, which split_url does not split); empty when it has
// none. For refusing a scheme by name, whatever follows it.
std::string url_scheme(std::string_view url);

// HOST or HOST:PORT as users may write it: a DNS name (letters, digits,
// '.', '-'; not starting with '.' or '-'; at most 253) or an IPv4 address,
// and a port 1-65535.
bool valid_host(std::string_view host);

// An http(s) URL as users give the manager one (scope URLs, proxies): no
// query, fragment, credentials or spaces, a valid_host; its scheme in lower case.
enum class url_problem { not_http, forbidden_characters, bad_host };
expected<url_parts, url_problem> split_http_url(std::string_view text);
// The same checks on a URL split already (its scheme put in lower case).
std::optional<url_problem> http_url_problem(url_parts& parts);

}  // namespace octorun
