#include "adapters/kube/request_trace.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace octorun::kube::request_trace {
namespace {

struct sink {
  std::mutex mu;
  std::FILE* file = nullptr;
};

sink& the_sink() {
  static sink* s = [] {
    auto* out = new sink;  // never destroyed: requests may still finish during static destruction
    const char* path = std::getenv("OCTORUN_KUBE_TRACE");
    if (path != nullptr && *path != '\0') out->file = std::fopen(path, "a");
    return out;
  }();
  return *s;
}

std::vector<std::string_view> segments(std::string_view path) {
  path = path.substr(0, path.find('?'));
  std::vector<std::string_view> out;
  while (!path.empty()) {
    auto slash = path.find('/');
    if (slash != 0) out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Where the resource's segment is: after /api/v1 or /apis/GROUP/VERSION,
// and namespaces/NS/ for namespaced ones; npos for other paths.
size_t resource_at(const std::vector<std::string_view>& seg) {
  if (seg.empty() || (seg[0] != "api" && seg[0] != "apis")) return std::string_view::npos;
  size_t i = seg[0] == "api" ? 2 : 3;
  if (i + 2 < seg.size() && seg[i] == "namespaces") i += 2;
  return i;
}

}  // namespace

bool enabled() { return the_sink().file != nullptr; }

std::string kind_of(std::string_view path) {
  auto seg = segments(path);
  auto i = resource_at(seg);
  if (i == std::string_view::npos) return std::string(path.substr(0, path.find('?')));
  if (i >= seg.size()) return "namespaces";
  std::string kind(seg[i]);
  if (i + 2 < seg.size()) kind += "/" + std::string(seg[i + 2]);  // resource/name/subresource
  return kind;
}

std::string name_of(std::string_view path) {
  auto seg = segments(path);
  auto i = resource_at(seg);
  if (i == std::string_view::npos || i + 1 >= seg.size()) return "-";
  return std::string(seg[i + 1]);
}

void record(const timing& t) {
  auto& s = the_sink();
  if (s.file == nullptr) return;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.sent.time_since_epoch()).count();
  auto kind = kind_of(t.path), name = name_of(t.path);
  std::lock_guard lock(s.mu);
  std::fprintf(s.file, "%lld %.*s %s %s %ld %lld %lld %lld\n", static_cast<long long>(ms),
               static_cast<int>(t.method.size()), t.method.data(), kind.c_str(), name.c_str(), t.status,
               static_cast<long long>(t.queue.count()), static_cast<long long>(t.limiter.count()),
               static_cast<long long>(t.wire.count()));
  std::fflush(s.file);
}

}  // namespace octorun::kube::request_trace
