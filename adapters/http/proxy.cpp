#include "adapters/http/proxy.hpp"

#include <cstdlib>
#include <string_view>

#include "common/strings.hpp"
#include "common/url.hpp"

namespace octorun::http {
namespace {

// A variable's value, the lower-case name first; empty when neither is set.
std::string either(const std::function<const char*(const char*)>& getenv, const char* lower,
                   const char* upper) {
  for (const char* name : {lower, upper})
    if (const char* v = getenv(name); v != nullptr && *v != '\0') return v;
  return {};
}

// "user:pass@host:port" (with or without a scheme): the credentials taken
// out, percent-decoded. No scheme means http://, as libcurl and Go read it.
std::optional<proxy_endpoint> endpoint_of(std::string url) {
  if (url.empty()) return std::nullopt;
  auto parts = split_url(url);
  if (!parts) {
    url = "http://" + url;
    parts = split_url(url);
  }
  proxy_endpoint e;
  if (parts && parts->userinfo) {
    const std::string_view userinfo = *parts->userinfo;
    const auto colon = userinfo.find(':');
    e.username = percent_decode(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) e.password = percent_decode(userinfo.substr(colon + 1));
    url = parts->without_userinfo();
  }
  e.url = std::move(url);
  return e;
}

}  // namespace

proxy_options proxy_from_environment(const std::function<const char*(const char*)>& getenv) {
  const std::function<const char*(const char*)> read =
      getenv ? getenv : [](const char* name) -> const char* { return std::getenv(name); };
  proxy_options p;
  p.https = endpoint_of(either(read, "https_proxy", "HTTPS_PROXY"));
  p.http = endpoint_of(either(read, "http_proxy", "HTTP_PROXY"));
  p.no_proxy = either(read, "no_proxy", "NO_PROXY");
  return p;
}

const proxy_endpoint* proxy_for(const proxy_options& proxy, const std::string& url) {
  const auto& e = url_scheme(url) == "https" ? proxy.https : proxy.http;
  return e ? &*e : nullptr;
}

}  // namespace octorun::http
