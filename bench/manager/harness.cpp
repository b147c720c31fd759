#include "bench/manager/harness.hpp"

#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "adapters/kube/client.hpp"
#include "bench/common/apiserver_metrics.hpp"

namespace octorun::bench {
namespace {

const char* flow_schema_prefix = "octorun-bench-";
const char* manager_user = "octorun-test-user";

kube::client admin_client(const test::cluster_info& c) {
  auto cfg = kube::load_kubeconfig(c.kubeconfig);
  if (!cfg) {
    std::fprintf(stderr, "bench: %s\n", cfg.error().c_str());
    std::exit(1);
  }
  return kube::client(*cfg);
}

}  // namespace

std::string prepare_manager_identity(const test::cluster_info& c, const std::string& dir) {
  test::kubectl(c, "create clusterrolebinding octorun-bench-manager --clusterrole=cluster-admin --user=" +
                       std::string(manager_user) + " --dry-run=client -o yaml | " + c.bin +
                       "/kubectl --kubeconfig=" + c.kubeconfig + " apply -f - >/dev/null");
  auto api = admin_client(c);
  auto installed = install_flow_counters(api, {flow_schema_prefix, manager_user, "exempt"});
  if (!installed) {
    std::fprintf(stderr, "bench: %s\n", installed.error().c_str());
    std::exit(1);
  }
  auto kubeconfig = dir + "/manager.kubeconfig";
  std::ofstream out(kubeconfig);
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " << c.server
      << "\n    certificate-authority: " << c.ca_file
      << "\nusers:\n- name: octorun\n  user:\n    token: " << c.user_token
      << "\ncontexts:\n- name: c\n  context: {cluster: c, user: octorun}\ncurrent-context: c\n";
  return kubeconfig;
}

std::map<std::string, std::int64_t> manager_requests(const test::cluster_info& c) {
  auto api = admin_client(c);
  auto counts = read_flow_counters(api, flow_schema_prefix);
  if (!counts) {
    std::fprintf(stderr, "warning: %s\n", counts.error().c_str());
    return {};
  }
  return *counts;
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

double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command (which may hold spaces) start past the last ')'.
  auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) {
      stime = std::stod(f);
      break;
    }
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

pid_t apiserver_pid(const test::cluster_info& c) {
  std::ifstream in(c.dir + "/pids/kube-apiserver");
  pid_t pid = 0;
  in >> pid;
  return pid;
}

std::map<std::int64_t, std::string> runner_of_jobs(const sim::simulator& s) {
  std::map<std::int64_t, std::string> out;
  for (const auto& j : parse_sim_jobs(s.state_json()))
    if (!j.runner_name.empty()) out[j.id] = j.runner_name;
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
