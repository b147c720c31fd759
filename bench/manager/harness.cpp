#include "bench/manager/harness.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "adapters/http/http_client.hpp"

namespace octorun::bench {
namespace {

const char* flow_schema_prefix = "octorun-bench-";
const std::vector<std::string> written_resources = {
    "runners", "runners/status", "runnersets", "runnersets/status", "pods", "secrets", "leases", "events"};
const std::vector<std::string> write_verbs = {"create", "update", "patch", "delete"};

std::string schema_name(const std::string& resource, const std::string& verb) {
  auto name = flow_schema_prefix + resource + "-" + verb;
  for (auto& ch : name)
    if (ch == '/') ch = '.';
  return name;
}

// A FlowSchema for the manager's user on the exempt priority level (its
// requests are counted, never queued).
std::string flow_schema(const std::string& name, int precedence, const std::string& rules) {
  return R"({"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":")" +
         name + R"("},"spec":{"matchingPrecedence":)" + std::to_string(precedence) +
         R"(,"priorityLevelConfiguration":{"name":"exempt"},"rules":[{"subjects":[{"kind":"User","user":{"name":"octorun-test-user"}}],)" +
         rules + "}]}}";
}

}  // namespace

std::string prepare_manager_identity(const test::cluster_info& c, const std::string& dir) {
  test::kubectl(c,
                "create clusterrolebinding octorun-bench-manager --clusterrole=cluster-admin "
                "--user=octorun-test-user --dry-run=client -o yaml | " +
                    c.bin + "/kubectl --kubeconfig=" + c.kubeconfig + " apply -f - >/dev/null");
  std::string items;
  auto add = [&](const std::string& json) { items += (items.empty() ? "" : ",") + json; };
  for (const auto& r : written_resources)
    for (const auto& v : write_verbs)
      add(flow_schema(schema_name(r, v), 50,
                      R"("resourceRules":[{"verbs":[")" + v + R"("],"apiGroups":["*"],"resources":[")" + r +
                          R"("],"namespaces":["*"],"clusterScope":true}])"));
  add(flow_schema(std::string(flow_schema_prefix) + "other-writes", 60,
                  R"("resourceRules":[{"verbs":["create","update","patch","delete","deletecollection"],)"
                  R"("apiGroups":["*"],"resources":["*"],"namespaces":["*"],"clusterScope":true}])"));
  add(flow_schema(std::string(flow_schema_prefix) + "reads", 70,
                  R"("resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"namespaces":["*"],)"
                  R"("clusterScope":true}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}])"));
  test::kubectl(c, "apply -f - >/dev/null <<'EOF'\n{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" +
                       items + "]}\nEOF");
  auto kubeconfig = dir + "/manager.kubeconfig";
  std::ofstream out(kubeconfig);
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " << c.server
      << "\n    certificate-authority: " << c.ca_file
      << "\nusers:\n- name: octorun\n  user:\n    token: " << c.user_token
      << "\ncontexts:\n- name: c\n  context: {cluster: c, user: octorun}\ncurrent-context: c\n";
  return kubeconfig;
}

std::map<std::string, std::int64_t> manager_requests(const test::cluster_info& c) {
  http::tls_options tls;
  tls.ca_file = c.ca_file;
  http::client client(tls);
  auto r = client.perform({"GET", c.server + "/metrics", {{"Authorization", "Bearer " + c.admin_token}}, ""});
  std::map<std::string, std::int64_t> out;
  if (!r || r->status != 200) {
    std::fprintf(stderr, "warning: apiserver /metrics unavailable\n");
    return out;
  }
  // apiserver_flowcontrol_dispatched_requests_total{flow_schema="octorun-bench-pods-create",priority_level="exempt"}
  // 12
  static const std::regex line(
      R"re(apiserver_flowcontrol_dispatched_requests_total\{flow_schema="octorun-bench-([^"]+)",[^}]*\} ([0-9.e+]+))re");
  for (auto it = std::sregex_iterator(r->body.begin(), r->body.end(), line); it != std::sregex_iterator();
       ++it) {
    auto key = (*it)[1].str();
    for (const auto& v : write_verbs)
      if (key.ends_with("-" + v)) key = key.substr(0, key.size() - v.size() - 1) + " " + v;
    for (auto& ch : key)
      if (ch == '.') ch = '/';
    out[key] = static_cast<std::int64_t>(std::stod((*it)[2].str()));
  }
  return out;
}

memory memory_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  memory m;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("VmRSS:")) m.rss_kib = std::stoll(line.substr(6));
    if (line.starts_with("VmHWM:")) m.hwm_kib = std::stoll(line.substr(6));
  }
  return m;
}

double ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}
double median(const std::vector<double>& v) { return percentile(v, 0.5); }

std::map<std::int64_t, std::string> runner_of_jobs(const sim::simulator& s) {
  rapidjson::Document d;
  auto text = s.state_json();
  d.Parse(text.data(), text.size());
  std::map<std::int64_t, std::string> out;
  auto jobs = d.FindMember("jobs");
  if (d.HasParseError() || jobs == d.MemberEnd() || !jobs->value.IsArray()) return out;
  for (const auto& j : jobs->value.GetArray()) {
    auto id = j.FindMember("id"), name = j.FindMember("runner_name");
    if (id != j.MemberEnd() && id->value.IsInt64() && name != j.MemberEnd() && name->value.IsString())
      out[id->value.GetInt64()] = name->value.GetString();
  }
  return out;
}

expected<bench_cluster, std::string> prepare_bench_cluster() {
  const auto& c = test::cluster();
  test::install_crds(c);
  char dir[] = "/tmp/octorun-bench-XXXXXX";
  if (mkdtemp(dir) == nullptr) return unexpected{std::string("mkdtemp failed")};
  auto manager_kubeconfig = prepare_manager_identity(c, dir);
  auto watch = kube::load_kubeconfig(c.kubeconfig);
  if (!watch) return unexpected{watch.error()};
  return bench_cluster{c, std::move(manager_kubeconfig), std::move(*watch)};
}

}  // namespace octorun::bench
