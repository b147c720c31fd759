#include "bench/common/apiserver_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "common/json.hpp"

namespace octorun::bench {
namespace {

const std::vector<std::string> written_resources = {
    "runners", "runners/status", "runnersets", "runnersets/status", "pods", "secrets", "leases", "events"};
const std::vector<std::string> write_verbs = {"create", "update", "patch", "delete"};

const kube::resource& flow_schemas = flow_schemas_resource;

std::string schema_name(const std::string& prefix, const std::string& resource, const std::string& verb) {
  auto name = prefix + resource + "-" + verb;
  for (auto& ch : name)
    if (ch == '/') ch = '.';
  return name;
}

std::string flow_schema(const flow_counters& f, const std::string& name, int precedence,
                        const std::string& rules) {
  return R"({"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":)" +
         json::quote(name) + R"(,"labels":{"app.kubernetes.io/managed-by":"octorun-bench"}},)" +
         R"("spec":{"matchingPrecedence":)" + std::to_string(precedence) +
         R"(,"priorityLevelConfiguration":{"name":)" + json::quote(f.priority_level) +
         R"(},"rules":[{"subjects":[{"kind":"User","user":{"name":)" + json::quote(f.user) + "}}]," + rules +
         "}]}}";
}

// The labels of one exposition line: {a="x",b="y"} -> map.
std::map<std::string, std::string> labels_of(const std::string& line, size_t open, size_t close) {
  std::map<std::string, std::string> out;
  size_t i = open + 1;
  while (i < close) {
    auto eq = line.find('=', i);
    if (eq == std::string::npos || eq > close || line[eq + 1] != '"') break;
    auto end = line.find('"', eq + 2);
    if (end == std::string::npos) break;
    out[line.substr(i, eq - i)] = line.substr(eq + 2, end - eq - 2);
    i = end + 2;  // past `",`
  }
  return out;
}

expected<std::string, std::string> metrics_text(kube::client& api) {
  auto text = api.call("GET", "/metrics");
  if (!text) return unexpected{"the apiserver's /metrics: " + kube::to_string(text.error())};
  return std::move(*text);
}

}  // namespace

expected<ok_t, std::string> install_flow_counters(kube::client& api, const flow_counters& f) {
  auto create = [&](const std::string& body) -> expected<ok_t, std::string> {
    auto r = api.create(flow_schemas, "", body);
    if (!r && !r.error().already_exists()) return unexpected{"FlowSchema: " + kube::to_string(r.error())};
    return ok;
  };
  for (const auto& r : written_resources)
    for (const auto& v : write_verbs) {
      auto done = create(flow_schema(f, schema_name(f.prefix, r, v), 50,
                                     R"("resourceRules":[{"verbs":[")" + v +
                                         R"("],"apiGroups":["*"],"resources":[")" + r +
                                         R"("],"namespaces":["*"],"clusterScope":true}])"));
      if (!done) return done;
    }
  auto other = create(
      flow_schema(f, f.prefix + "other-writes", 60,
                  R"("resourceRules":[{"verbs":["create","update","patch","delete","deletecollection"],)"
                  R"("apiGroups":["*"],"resources":["*"],"namespaces":["*"],"clusterScope":true}])"));
  if (!other) return other;
  return create(
      flow_schema(f, f.prefix + "reads", 70,
                  R"("resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"namespaces":["*"],)"
                  R"("clusterScope":true}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}])"));
}

expected<std::map<std::string, std::int64_t>, std::string> read_flow_counters(kube::client& api,
                                                                              const std::string& prefix) {
  auto text = metrics_text(api);
  if (!text) return unexpected{text.error()};
  // apiserver_flowcontrol_dispatched_requests_total{flow_schema="P-pods-create",priority_level="exempt"} 12
  std::map<std::string, std::int64_t> out;
  std::istringstream in(*text);
  const std::string metric = "apiserver_flowcontrol_dispatched_requests_total{";
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(metric)) continue;
    auto close = line.find('}');
    if (close == std::string::npos) continue;
    auto schema = labels_of(line, metric.size() - 1, close)["flow_schema"];
    if (!schema.starts_with(prefix)) continue;
    auto key = schema.substr(prefix.size());
    for (const auto& v : write_verbs)
      if (key.ends_with("-" + v)) key = key.substr(0, key.size() - v.size() - 1) + " " + v;
    for (auto& ch : key)
      if (ch == '.') ch = '/';
    out[key] += static_cast<std::int64_t>(std::strtod(line.c_str() + close + 1, nullptr));
  }
  return out;
}

void remove_flow_counters(kube::client& api, const std::string& prefix) {
  auto list = api.list(flow_schemas, "");
  if (!list) return;
  for (const auto& fs : list->items)
    if (fs.name.starts_with(prefix)) (void)api.remove(flow_schemas, "", fs.name);
}

std::int64_t writes_in(const std::map<std::string, std::int64_t>& counts) {
  std::int64_t n = 0;
  for (const auto& [k, v] : counts)
    if (k != "reads") n += v;
  return n;
}

double histogram::quantile_ms(double q) const {
  if (count <= 0 || buckets.empty()) return 0;
  const double rank = q * count;
  double lower = 0, below = 0;
  for (const auto& [le, cumulative] : buckets) {
    if (cumulative >= rank) {
      if (std::isinf(le)) return 1000 * lower;  // beyond the last finite bound
      double in_bucket = cumulative - below;
      double fraction = in_bucket > 0 ? (rank - below) / in_bucket : 1;
      return 1000 * (lower + (le - lower) * fraction);
    }
    lower = le;
    below = cumulative;
  }
  return 1000 * lower;
}

histogram operator-(const histogram& after, const histogram& before) {
  histogram out = after;
  out.sum -= before.sum;
  out.count -= before.count;
  for (size_t i = 0; i < out.buckets.size() && i < before.buckets.size(); ++i)
    out.buckets[i].second -= before.buckets[i].second;
  return out;
}

std::map<std::string, histogram> read_request_latencies(kube::client& api) {
  std::map<std::string, histogram> out;
  auto text = metrics_text(api);
  if (!text) return out;
  const std::string base = "apiserver_request_duration_seconds";
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(base + "_")) continue;
    auto open = line.find('{'), close = line.find('}');
    if (open == std::string::npos || close == std::string::npos) continue;
    auto series = line.substr(base.size(), open - base.size());
    auto l = labels_of(line, open, close);
    auto key = l["verb"] + " " + l["resource"] + (l["subresource"].empty() ? "" : "/" + l["subresource"]);
    double value = std::strtod(line.c_str() + close + 1, nullptr);
    auto& h = out[key];
    if (series == "_sum") {
      h.sum += value;
    } else if (series == "_count") {
      h.count += value;
    } else if (series == "_bucket") {
      double le =
          l["le"] == "+Inf" ? std::numeric_limits<double>::infinity() : std::strtod(l["le"].c_str(), nullptr);
      auto it =
          std::find_if(h.buckets.begin(), h.buckets.end(), [&](const auto& b) { return b.first == le; });
      if (it == h.buckets.end()) {
        h.buckets.emplace_back(le, value);
        std::sort(h.buckets.begin(), h.buckets.end());
      } else {
        it->second += value;
      }
    }
  }
  return out;
}

}  // namespace octorun::bench
