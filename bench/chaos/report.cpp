#include "bench/chaos/report.hpp"

#include <rapidjson/document.h>

#include <cstdio>

#include "adapters/kube/client.hpp"
#include "bench/manager/harness.hpp"
#include "common/json.hpp"

namespace octorun::chaos {

std::vector<std::string> check_leaks(env& e) {
  std::vector<std::string> leaks;
  kube::client c(e.admin);
  const std::vector<std::pair<kube::resource, std::string>> kinds = {
      {{"octorun.io", "v1alpha1", "runners", true}, ""},
      {{"", "v1", "pods", true}, "octorun.io/runner"},
      {{"", "v1", "secrets", true}, "octorun.io/runner"}};
  for (std::string ns : {"chaos-a", doomed_namespace})
    for (const auto& [res, selector] : kinds) {
      kube::list_options lo;
      lo.label_selector = selector;
      auto l = c.list(res, ns, lo);
      if (!l) {
        leaks.push_back("cannot list " + res.plural + " in " + ns + ": " + kube::to_string(l.error()));
        continue;
      }
      for (const auto& o : l->items) leaks.push_back(res.plural + " " + o.key());
    }
  rapidjson::Document d;
  auto state = e.sim.state_json();
  d.Parse(state.data(), state.size());
  if (const auto* rs = json::member(d, "runners"); rs != nullptr && rs->IsArray())
    for (const auto& r : rs->GetArray())
      leaks.push_back("GitHub runner " + json::str(r, "name") + " (" + json::str(r, "status") +
                      (json::boolean(r, "busy") ? ", busy" : "") + ")");
  for (const auto& s : e.sim.scale_sets())
    leaks.push_back("GitHub scale set " + s.name + (s.session_id.empty() ? "" : " with a message session"));
  if (auto n = json::i64(d, "sessions"); n > 0)
    leaks.push_back(std::to_string(n) + " message session(s) on GitHub");
  for (const auto& l : leaks) e.observer.add_violation("leak", l + " left after the teardown");
  return leaks;
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string rss_line(const std::vector<replicas::memory>& m) {
  std::string out;
  for (const auto& x : m)
    out += (out.empty() ? "" : ", ") + x.identity + " " + fmt("%.1f MiB", x.rss_kib / 1024.0);
  return out.empty() ? "-" : out;
}

std::string quantiles(const std::vector<double>& v) {
  if (v.empty()) return "- (no jobs)";
  return fmt("%.1f", bench::percentile(v, 0.5)) + " / " + fmt("%.1f", bench::percentile(v, 0.99)) + " s (" +
         std::to_string(v.size()) + " jobs)";
}

}  // namespace

std::string render(const report& r, const timeline& tl) {
  std::string out = "\n## chaos run: profile " + r.profile + ", seed " + std::to_string(r.seed) + "\n\n";
  out += "| measure | value |\n| --- | --- |\n";
  out += "| load and faults | " + std::to_string(r.duration.count()) + " s (whole run " +
         fmt("%.0f", r.wall_seconds) + " s) |\n";
  int injected = 0, skipped = 0;
  std::string by_kind;
  for (auto k : all_fault_kinds()) {
    int i = r.injected.count(k) ? r.injected.at(k) : 0, s = r.skipped.count(k) ? r.skipped.at(k) : 0;
    injected += i;
    skipped += s;
    if (i + s > 0)
      by_kind += std::string(by_kind.empty() ? "" : ", ") + std::string(to_string(k)) + " " +
                 std::to_string(i) + (s ? " (+" + std::to_string(s) + " skipped)" : "");
  }
  out += "| faults injected | " + std::to_string(injected) + " (" + std::to_string(skipped) +
         " skipped): " + by_kind + " |\n";
  const auto& j = r.jobs;
  out += "| jobs queued | " + std::to_string(j.queued) + " |\n";
  out += "| jobs run to success | " + std::to_string(j.succeeded) + " |\n";
  out += "| jobs cancelled | " + std::to_string(j.canceled) + " |\n";
  out +=
      "| jobs failed: their runner's pod killed by a fault | " + std::to_string(j.failed_by_fault) + " |\n";
  std::string causes;
  for (const auto& [c, n] : j.lost_by_cause)
    causes += (causes.empty() ? "" : "; ") + c + ": " + std::to_string(n);
  out += "| jobs lost to a fault (known, by cause) | " + std::to_string(j.lost_known_cause) +
         (causes.empty() ? "" : " (" + causes + ")") + " |\n";
  out += "| jobs lost without a cause | " + std::to_string(j.lost_unexplained) + " |\n";
  out += "| queue time p50 / p99, all | " + quantiles(j.queue_all) + " |\n";
  out += "| queue time p50 / p99, queued under faults | " + quantiles(j.queue_under_fault) + " |\n";
  out += "| queue time p50 / p99, queued in calm | " + quantiles(j.queue_calm) + " |\n";
  out += "| manager RSS at start | " + rss_line(r.rss_start) + " |\n";
  out += "| manager RSS at end | " + rss_line(r.rss_end) + " |\n";
  out += "| manager restarts / crashes | " + std::to_string(r.restarts) + " / " + std::to_string(r.crashes) +
         " |\n";
  out += "| drained within the bound / clean SIGTERM stop | " + std::string(r.drained ? "yes" : "no") +
         " / " + (r.clean_stop ? "yes" : "no") + " |\n";
  out += "| leaks after teardown | " + std::to_string(r.leaks.size()) + " |\n";
  std::map<std::string, int> by_invariant;
  for (const auto& v : r.violations) {
    auto key = v.invariant;
    if (auto at = v.text.find(" ["); v.invariant == "max-runners" && at != std::string::npos)
      key += "/" + v.text.substr(at + 2, v.text.find(':', at) - at - 2);  // its diagnosis
    ++by_invariant[key];
  }
  std::string vs;
  for (const auto& [k, n] : by_invariant) vs += (vs.empty() ? "" : ", ") + k + " " + std::to_string(n);
  out +=
      "| violations | " + std::to_string(r.violations.size()) + (vs.empty() ? "" : " (" + vs + ")") + " |\n";
  out += "| load average at start / end | " + r.load_start + " / " + r.load_end + " |\n";
  if (r.violations.empty()) return out + "\nNo violation.\n";
  out += "\n### Violations (the first 20 with the timeline around them)\n";
  for (std::size_t i = 0; i < r.violations.size(); ++i) {
    const auto& v = r.violations[i];
    out += "\n" + std::to_string(i + 1) + ". t=" + fmt("%.1f", v.t) + " s **" + v.invariant +
           "**: " + v.text + "\n";
    if (i < 20) out += "\n```\n" + tl.around(v.t) + "```\n";
  }
  return out;
}

}  // namespace octorun::chaos
