#include "adapters/github/request_metrics.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/url.hpp"

namespace octorun::github {
namespace {

// An id, a UUID, a token: anything with a digit that is not a short word
// such as "v3" (names are replaced by their position, below).
bool id_like(std::string_view seg) {
  const bool digits = std::all_of(seg.begin(), seg.end(), [](unsigned char c) { return std::isdigit(c); });
  const bool has_digit = std::any_of(seg.begin(), seg.end(), [](unsigned char c) { return std::isdigit(c); });
  return !seg.empty() && (digits || (has_digit && seg.size() >= 8));
}

}  // namespace

std::string endpoint_of(std::string_view method, std::string_view url) {
  const auto parts = split_url(url);
  const std::string whole = parts ? parts->path : std::string(url.substr(0, url.find_first_of("?#")));
  std::string_view path = whole;
  // The Actions service: https://HOST/TENANT/_apis/...
  if (auto apis = path.find("/_apis/"); apis != std::string_view::npos) path.remove_prefix(apis);
  // GHES: https://HOST/api/v3/...
  if (path.starts_with("/api/v3/") || path == "/api/v3") path.remove_prefix(7);

  std::vector<std::string_view> segs;
  for (std::string_view rest = path; !rest.empty();) {
    auto slash = rest.find('/');
    if (auto seg = rest.substr(0, slash); !seg.empty()) segs.push_back(seg);
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  std::string out(method);
  out += ' ';
  if (segs.empty()) out += '/';
  // Names follow these segments: /repos/OWNER/REPO, /orgs/ORG, /enterprises/ENT, /users/USER.
  std::vector<const char*> names;  // placeholders for the next segments, last first
  for (auto seg : segs) {
    out += '/';
    if (!names.empty()) {
      out += names.back();
      names.pop_back();
      continue;
    }
    out += id_like(seg) ? std::string_view("{id}") : seg;
    if (seg == "repos")
      names = {"{repo}", "{owner}"};
    else if (seg == "orgs")
      names = {"{org}"};
    else if (seg == "enterprises")
      names = {"{enterprise}"};
    else if (seg == "users")
      names = {"{user}"};
  }
  return out;
}

std::string_view status_class(long status) {
  switch (status / 100) {
    case 1:
      return "1xx";
    case 2:
      return "2xx";
    case 3:
      return "3xx";
    case 4:
      return "4xx";
    case 5:
      return "5xx";
    default:
      return "error";
  }
}

}  // namespace octorun::github
