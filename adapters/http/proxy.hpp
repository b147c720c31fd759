// Which proxy a request goes through. Without proxy_options an http::client
// leaves the choice to libcurl (its environment rules); with them the choice
// is ours and explicit: one proxy per URL scheme, the hosts that bypass it,
// and the proxy's credentials (never written into a URL, so never logged).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace octorun::http {

struct proxy_endpoint {
  std::string url;  // http(s)://HOST[:PORT]
  std::string username;
  std::string password;  // both empty: no credentials
  bool operator==(const proxy_endpoint&) const = default;
};

struct proxy_options {
  std::optional<proxy_endpoint> http;   // for http:// URLs; none: direct
  std::optional<proxy_endpoint> https;  // for https:// URLs; none: direct
  // Hosts that bypass the proxy, comma-separated as libcurl and Go read
  // NO_PROXY: a host name (its subdomains too), ".domain", an IP address, a
  // CIDR, or "*" for every host.
  std::string no_proxy;
  bool operator==(const proxy_options&) const = default;
};

// The proxy the manager's environment names: https_proxy / HTTPS_PROXY,
// http_proxy / HTTP_PROXY, no_proxy / NO_PROXY, the lower-case name first
// when both are set (libcurl's order). Unlike libcurl, which reads only the
// lower-case http_proxy (a CGI script's HTTP_PROXY can come from a request's
// "Proxy:" header), upper-case HTTP_PROXY is honoured as Go and kubectl do:
// the manager is no CGI script, and platforms set the upper-case names.
// Credentials in a URL (http://user:pass@host) are taken out of it (and
// percent-decoded). `getenv` is injectable for tests.
proxy_options proxy_from_environment(const std::function<const char*(const char*)>& getenv = {});

// The endpoint a request to `url` uses under `proxy`, before NO_PROXY (which
// libcurl applies): none for a scheme without a proxy.
const proxy_endpoint* proxy_for(const proxy_options& proxy, const std::string& url);

}  // namespace octorun::http
