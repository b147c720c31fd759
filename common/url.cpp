#include "common/url.hpp"

#include <algorithm>

#include "common/strings.hpp"

namespace octorun {
namespace {

bool scheme_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-' ||
         c == '.';
}

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// Where the port's ':' is in HOST[:PORT]; npos when there is none.
std::size_t port_colon(std::string_view host) {
  const auto colon = host.rfind(':');
  if (colon == std::string_view::npos || host.find(']', colon) != std::string_view::npos)
    return std::string_view::npos;
  return colon;
}

}  // namespace

std::string url_scheme(std::string_view url) {
  const auto colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  const auto scheme = url.substr(0, colon);
  return std::all_of(scheme.begin(), scheme.end(), scheme_character) ? ascii_lower(scheme) : std::string();
}

std::string_view url_parts::host_name() const { return std::string_view(host).substr(0, port_colon(host)); }

std::optional<std::string_view> url_parts::port() const {
  const auto colon = port_colon(host);
  if (colon == std::string_view::npos) return std::nullopt;
  return std::string_view(host).substr(colon + 1);
}

std::string url_parts::without_userinfo() const {
  std::string out = scheme + "://" + host + path;
  if (query) out += "?" + *query;
  if (fragment) out += "#" + *fragment;
  return out;
}

std::optional<url_parts> split_url(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || text.substr(colon + 1, 2) != "//") return std::nullopt;
  url_parts out;
  for (char c : text.substr(0, colon))
    if (!scheme_character(c)) return std::nullopt;
  out.scheme = std::string(text.substr(0, colon));
  std::string_view rest = text.substr(colon + 3);
  if (auto hash = rest.find('#'); hash != std::string_view::npos) {
    out.fragment = std::string(rest.substr(hash + 1));
    rest = rest.substr(0, hash);
  }
  if (auto question = rest.find('?'); question != std::string_view::npos) {
    out.query = std::string(rest.substr(question + 1));
    rest = rest.substr(0, question);
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) out.path = std::string(rest.substr(slash));
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    out.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  out.host = std::string(authority);
  return out;
}

bool valid_host(std::string_view host) {
  auto colon = host.rfind(':');
  if (colon != std::string_view::npos) {
    auto port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    long value = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value == 0 || value > 65535) return false;
    host = host.substr(0, colon);
  }
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') return false;
  for (char c : host)
    if (!is_alnum(c) && c != '.' && c != '-') return false;
  return true;
}

std::optional<url_problem> http_url_problem(url_parts& parts) {
  parts.scheme = ascii_lower(parts.scheme);
  if (parts.scheme != "http" && parts.scheme != "https") return url_problem::not_http;
  if (parts.userinfo || parts.query || parts.fragment ||
      (parts.host + parts.path).find_first_of("@ \t\r\n") != std::string::npos)
    return url_problem::forbidden_characters;
  if (!valid_host(parts.host)) return url_problem::bad_host;
  return std::nullopt;
}

expected<url_parts, url_problem> split_http_url(std::string_view text) {
  auto parts = split_url(text);
  if (!parts) return unexpected<url_problem>{url_problem::not_http};
  if (auto problem = http_url_problem(*parts)) return unexpected<url_problem>{*problem};
  return *parts;
}

}  // namespace octorun
