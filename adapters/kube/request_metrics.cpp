#include "adapters/kube/request_metrics.hpp"

#include <cctype>
#include <vector>

namespace octorun::kube {
namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto seg = path.substr(0, slash);
    if (!seg.empty()) out.push_back(seg);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool watch_query(std::string_view query) {
  for (std::string_view q = query; !q.empty();) {
    auto amp = q.find('&');
    auto pair = q.substr(0, amp);
    if (pair == "watch=true" || pair == "watch=1") return true;
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return false;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

request_kind classify_request(std::string_view method, std::string_view path_and_query) {
  const auto q = path_and_query.find('?');
  const auto path = path_and_query.substr(0, q);
  const auto query = q == std::string_view::npos ? std::string_view{} : path_and_query.substr(q + 1);
  auto segs = segments(path);
  // /api/v1/... (core) or /apis/GROUP/VERSION/...
  std::string group;
  std::size_t first = 0;
  if (segs.size() >= 3 && segs[0] == "api")
    first = 2;
  else if (segs.size() >= 4 && segs[0] == "apis") {
    group = std::string(segs[1]);
    first = 3;
  } else {
    return {lower(method), ""};
  }
  std::vector<std::string_view> rest(segs.begin() + static_cast<std::ptrdiff_t>(first), segs.end());
  // namespaces/NS/RESOURCE/... is a namespaced resource; namespaces[/NS] itself is not.
  if (rest.size() >= 3 && rest[0] == "namespaces") rest.erase(rest.begin(), rest.begin() + 2);
  std::string resource(rest[0]);
  if (!group.empty()) resource += "." + group;
  if (rest.size() >= 3) resource += "/" + std::string(rest[2]);
  const bool named = rest.size() >= 2;
  std::string verb;
  if (method == "GET")
    verb = watch_query(query) ? "watch" : named ? "get" : "list";
  else if (method == "POST")
    verb = "create";
  else if (method == "PUT")
    verb = "update";
  else if (method == "PATCH")
    verb = "patch";
  else if (method == "DELETE")
    verb = named ? "delete" : "deletecollection";
  else
    verb = lower(method);
  return {verb, resource};
}

}  // namespace octorun::kube
