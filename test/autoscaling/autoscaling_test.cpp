// Autoscaling a RunnerSet through custom metrics, end to end, every part
// real: the octorun binary against a control plane of its own (the
// aggregation layer configured, kube-controller-manager running the HPA
// controller every second), the GitHub simulator delivering webhooks,
// Prometheus (Debian's package) scraping the manager, prometheus-adapter
// (built from its Go module) with deploy/monitoring/prometheus-adapter-rules.yaml
// registered as v1beta1.custom.metrics.k8s.io, and the chart's HPA template.
//
// The adapter runs on this machine, not in a pod: the API server's
// aggregation layer reaches it at an EndpointSlice address (aggregator
// routing), and EndpointSlices refuse loopback addresses, so it listens on
// the machine's own address; its serving certificate is the cluster CA's for
// prometheus-adapter.NS.svc, the name the aggregator verifies.
//
// One process runs every test, in order, on one environment (a private
// cluster: an APIService is cluster-wide, and a stopped adapter makes
// discovery fail for everyone).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "adapters/common/json.hpp"
#include "adapters/http/http_client.hpp"
#include "test/chart/helm.hpp"
#include "test/manager/binary_harness.hpp"
#include "test/manager/wiring.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"

#ifndef OCTORUN_BINARY
#error "OCTORUN_BINARY must name the octorun binary"
#endif
#ifndef OCTORUN_DEPLOY_DIR
#error "OCTORUN_DEPLOY_DIR must name deploy/"
#endif
#ifndef OCTORUN_ADAPTER_BUILD_SCRIPT
#error "OCTORUN_ADAPTER_BUILD_SCRIPT must name test/tools/prometheus-adapter/build.sh"
#endif

namespace octorun {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

const std::string deploy = OCTORUN_DEPLOY_DIR;
const std::string set_name = "linux";  // test::create_runnerset's
const std::string secret = "autoscaling-webhook-secret";

// ---- small helpers ------------------------------------------------------------

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A free TCP port on `ip`: bound, then released for the process told to listen there.
int free_port(const std::string& ip) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// The machine's first non-loopback IPv4 address ("" if it has none).
std::string host_address() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return {};
  std::string out;
  for (auto* i = all; i != nullptr && out.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    if (!std::string_view(text).starts_with("127.")) out = text;
  }
  freeifaddrs(all);
  return out;
}

std::string http_get(const std::string& url) {
  http::client client;
  auto r = client.perform({"GET", url, {}, {}, 10s});
  return r && r->status == 200 ? r->body : std::string{};
}

double seconds_since(clock_type::time_point t0, clock_type::time_point t) {
  return std::chrono::duration<double>(t - t0).count();
}

// ---- the environment -------------------------------------------------------------

struct environment {
  const test::cluster_info* c = nullptr;
  std::string dir;  // scratch: configs, certificates, logs, Prometheus' data
  std::string ns;   // the manager's namespace (it watches this one only)
  std::string ip;   // where the adapter listens
  int prometheus_port = 0, adapter_port = 0;
  std::string metrics_url;  // the manager's /metrics
  std::unique_ptr<sim::simulator> sim;
  std::unique_ptr<test::namespace_watch> watch;
  std::unique_ptr<test::octorun_process> manager, prometheus, adapter;

  std::string kubectl(const std::string& args) const { return test::kubectl(*c, args); }
  // kubectl that may fail: its exit status and everything it printed.
  test::command_result try_kubectl(const std::string& args) const {
    return test::run_shell(test::shell_quote(c->bin + "/kubectl") +
                           " --kubeconfig=" + test::shell_quote(c->kubeconfig) + " " + args);
  }
  std::string get(const std::string& what, const std::string& in_ns = "") const {
    auto r = try_kubectl("-n " + (in_ns.empty() ? ns : in_ns) + " get " + what);
    return r.status == 0 ? r.output : std::string{};
  }

  std::string prometheus_url() const { return "http://127.0.0.1:" + std::to_string(prometheus_port); }

  // An instant query's result as Prometheus' JSON ("" when it failed).
  std::string query(const std::string& promql) const {
    return http_get(prometheus_url() + "/api/v1/query?query=" + http::url_encode(promql));
  }

  void start_adapter() {
    std::vector<std::string> args = {
        "--secure-port=" + std::to_string(adapter_port),
        "--bind-address=" + ip,
        "--tls-cert-file=" + dir + "/adapter.crt",
        "--tls-private-key-file=" + dir + "/adapter.key",
        "--lister-kubeconfig=" + c->kubeconfig,
        "--authentication-kubeconfig=" + c->kubeconfig,
        "--authorization-kubeconfig=" + c->kubeconfig,
        "--prometheus-url=" + prometheus_url() + "/",
        // The very rules the chart ships (deploy/monitoring/).
        "--config=" + deploy + "/monitoring/prometheus-adapter-rules.yaml",
        // A new RunnerSet's series are served after the next relist.
        "--metrics-relist-interval=2s",
    };
    adapter = std::make_unique<test::octorun_process>(adapter_binary(), args, "", dir + "/adapter.log");
  }

  static std::string adapter_binary() {
    static const std::string path = [] {
      auto built = test::run_shell(test::shell_quote(OCTORUN_ADAPTER_BUILD_SCRIPT));
      auto out = built.output;
      while (!out.empty() && out.back() == '\n') out.pop_back();
      return built.status == 0 ? out.substr(out.rfind('\n') + 1) : std::string{};
    }();
    return path;
  }

  std::string logs() const {
    std::string out;
    for (auto [name, p] : {std::pair{"manager", manager.get()}, std::pair{"adapter", adapter.get()}})
      if (p != nullptr) out += std::string("--- ") + name + " log (tail):\n" + p->log_tail(3000) + "\n";
    return out;
  }
};

// Set up once for the whole process; a failure here fails every test with it.
environment* env = nullptr;
std::string setup_error;

// Throws a runtime_error naming what did not come up.
void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

void set_up(environment& e) {
  e.ip = host_address();
  require(!e.ip.empty(),
          "this machine has no non-loopback IPv4 address: the aggregation layer reaches prometheus-adapter "
          "through an EndpointSlice, and EndpointSlices refuse loopback addresses");
  require(!environment::adapter_binary().empty(), OCTORUN_ADAPTER_BUILD_SCRIPT " failed");
  require(std::system("command -v prometheus >/dev/null") == 0,
          "prometheus is not installed (scripts/install-deps.sh installs Debian's package)");
  e.c = &test::private_cluster();
  test::install_crds(*e.c);
  e.ns = test::make_namespace(*e.c, "hpa");
  char scratch[] = "/tmp/octorun-autoscaling-XXXXXX";
  require(mkdtemp(scratch) != nullptr, "mkdtemp");
  e.dir = scratch;

  // GitHub, and the manager watching e.ns.
  auto sim = sim::simulator::start({});
  require(static_cast<bool>(sim), "the GitHub simulator did not start");
  e.sim = std::move(*sim);
  e.sim->add_organization("acme");
  auto cfg = kube::load_kubeconfig(e.c->kubeconfig);
  require(static_cast<bool>(cfg), "kubeconfig");
  e.watch = std::make_unique<test::namespace_watch>(*cfg, e.ns, *e.sim);
  e.manager = std::make_unique<test::octorun_process>(
      OCTORUN_BINARY, test::octorun_args(e.c->kubeconfig, e.ns, "hpa-0"), secret, e.dir + "/manager.log");
  const auto health = e.manager->wait_health(60s);
  require(!health.empty(), "the manager serves no health endpoints");
  e.metrics_url = health + "/metrics";
  const auto intake = e.manager->wait_leading(60s);
  require(!intake.empty(), "the manager does not lead");
  e.sim->set_webhook(intake, secret);

  // Prometheus scrapes the manager as service discovery would present it: a
  // target label `namespace` (the manager's), so the manager's own
  // `namespace` label becomes `exported_namespace`, which the rules expect.
  e.prometheus_port = free_port("127.0.0.1");
  const auto target = health.substr(health.find("//") + 2);
  write_file(e.dir + "/prometheus.yml",
             "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
             "rule_files: ['" +
                 deploy +
                 "/monitoring/alerts.yaml']\n"
                 "scrape_configs:\n"
                 "- job_name: octorun\n"
                 "  static_configs:\n"
                 "  - targets: ['" +
                 target +
                 "']\n"
                 "    labels: {namespace: octorun-system}\n");
  e.prometheus = std::make_unique<test::octorun_process>(
      "/usr/bin/prometheus",
      std::vector<std::string>{
          "--config.file=" + e.dir + "/prometheus.yml", "--storage.tsdb.path=" + e.dir + "/prometheus-data",
          "--storage.tsdb.retention.time=1h",
          "--web.listen-address=127.0.0.1:" + std::to_string(e.prometheus_port), "--log.level=warn"},
      "", e.dir + "/prometheus.log");
  require(test::poll([&] { return http_get(e.prometheus_url() + "/-/ready"); },
                     [](const std::string& b) { return !b.empty(); }, 60s)
              .met,
          "Prometheus is not ready: " + e.prometheus->log_tail());

  // prometheus-adapter with a serving certificate from the cluster CA, and
  // its registration: a Service without selector, its EndpointSlice at this
  // machine's address, the APIService trusting the cluster CA.
  write_file(e.dir + "/adapter.ext",
             "subjectAltName=DNS:prometheus-adapter." + e.ns + ".svc\nextendedKeyUsage=serverAuth\n");
  const auto pki = e.c->dir + "/pki";
  auto certs = test::run_shell(
      "cd " + test::shell_quote(e.dir) +
      " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=prometheus-adapter"
      " -keyout adapter.key -out adapter.csr && openssl x509 -req -in adapter.csr -CA " +
      test::shell_quote(pki + "/ca.crt") + " -CAkey " + test::shell_quote(pki + "/ca.key") +
      " -CAserial ca.srl -CAcreateserial -days 1 -out adapter.crt -extfile adapter.ext");
  require(certs.status == 0, "the adapter's certificate: " + certs.all());
  e.adapter_port = free_port(e.ip);
  e.start_adapter();
  std::string ca_bundle;
  {
    auto b = test::run_shell("base64 -w0 " + test::shell_quote(pki + "/ca.crt"));
    ca_bundle = b.output;
  }
  const auto port = std::to_string(e.adapter_port);
  e.kubectl(
      "apply -f - >/dev/null <<'EOF'\n"
      "apiVersion: v1\nkind: Service\nmetadata: {name: prometheus-adapter, namespace: " +
      e.ns +
      "}\n"
      "spec:\n  ports: [{name: https, port: 443, targetPort: " +
      port +
      ", protocol: TCP}]\n"
      "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"
      "metadata:\n  name: prometheus-adapter\n  namespace: " +
      e.ns +
      "\n"
      "  labels: {kubernetes.io/service-name: prometheus-adapter}\n"
      "addressType: IPv4\nendpoints:\n- addresses: ['" +
      e.ip +
      "']\n  conditions: {ready: true}\n"
      "ports: [{name: https, port: " +
      port +
      ", protocol: TCP}]\n"
      "---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\n"
      "metadata: {name: v1beta1.custom.metrics.k8s.io}\n"
      "spec:\n  group: custom.metrics.k8s.io\n  version: v1beta1\n  groupPriorityMinimum: 100\n"
      "  versionPriority: 100\n  service: {namespace: " +
      e.ns +
      ", name: prometheus-adapter, port: 443}\n"
      "  caBundle: " +
      ca_bundle + "\nEOF");
  require(test::poll(
              [&] {
                return e.get(
                    "apiservice v1beta1.custom.metrics.k8s.io -o "
                    "jsonpath='{.status.conditions[?(@.type==\"Available\")].status}'");
              },
              [](const std::string& s) { return s == "True"; }, 90s)
              .met,
          "the APIService v1beta1.custom.metrics.k8s.io is not Available: " +
              e.get("apiservice v1beta1.custom.metrics.k8s.io -o jsonpath='{.status.conditions}'") + "\n" +
              e.logs());
}

class Autoscaling : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    env = new environment();
    try {
      set_up(*env);
    } catch (const std::exception& ex) {
      setup_error = ex.what();
    }
  }
  static void TearDownTestSuite() {
    if (env == nullptr) return;
    // The APIService first: without its server, discovery fails cluster-wide.
    if (env->c != nullptr) env->try_kubectl("delete apiservice v1beta1.custom.metrics.k8s.io --wait=false");
    env->adapter.reset();
    env->prometheus.reset();
    env->manager.reset();
    env->watch.reset();
    if (!env->dir.empty() && !::testing::UnitTest::GetInstance()->Failed())
      std::filesystem::remove_all(env->dir);
    else if (!env->dir.empty())
      std::cerr << "autoscaling test: logs and configuration kept in " << env->dir << "\n";
    delete env;
    env = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(setup_error.empty()) << "setting up: " << setup_error; }

  environment& e() { return *env; }

  // The HPA the chart renders for `name` (the template users deploy), applied in `ns`.
  void apply_chart_hpa(const std::string& name, const std::string& ns, double target_busy_ratio,
                       int scale_down_seconds, int max_replicas = 10) {
    std::ostringstream values;
    values << "--set-json "
           << test::shell_quote("autoscaling.runnerSets=[{\"name\":\"" + name + "\",\"namespace\":\"" + ns +
                                "\",\"minReplicas\":1,\"maxReplicas\":" + std::to_string(max_replicas) +
                                ",\"targetBusyRatio\":" + std::to_string(target_busy_ratio) +
                                ",\"scaleDownStabilizationSeconds\":" + std::to_string(scale_down_seconds) +
                                "}]");
    auto rendered = test::render(values.str());
    ASSERT_EQ(rendered.result.status, 0) << rendered.result.all();
    auto hpa = rendered.find("HorizontalPodAutoscaler", name);
    ASSERT_TRUE(hpa);
    YAML::Emitter out;
    out << *hpa;
    e().kubectl("apply -f - >/dev/null <<'EOF'\n" + std::string(out.c_str()) + "\nEOF");
  }

  // A RunnerSet as test::create_runnerset makes it, started at spec.replicas 1.
  void create_set(const std::string& ns, int max_runners) {
    test::create_runnerset(*e().c, ns, e().sim->ghes_url() + "/acme", 0, max_runners);
    e().kubectl("-n " + ns + " patch runnerset " + set_name +
                " --type=merge -p '{\"spec\":{\"replicas\":1}}' >/dev/null");
  }

  // The adapter's answer for `metric` of a RunnerSet, through the API server.
  test::command_result raw_metric(const std::string& ns, const std::string& set, const std::string& metric) {
    return e().try_kubectl("get --raw /apis/custom.metrics.k8s.io/v1beta1/namespaces/" + ns +
                           "/runnersets.octorun.io/" + set + "/" + metric);
  }
  // Its value ("" when it cannot be read).
  std::string metric_value(const std::string& ns, const std::string& set, const std::string& metric) {
    auto r = raw_metric(ns, set, metric);
    if (r.status != 0) return {};
    rapidjson::Document d;
    d.Parse(r.output.c_str());
    if (d.HasParseError() || !d.IsObject()) return {};
    const auto* items = json::find_value(d, "items");
    if (items == nullptr || !items->IsArray() || items->Empty()) return {};
    return json::str((*items)[0], "value");
  }

  std::string hpa_condition(const std::string& name, const std::string& type, const std::string& ns = "") {
    return e().get("hpa " + name + " -o jsonpath='{.status.conditions[?(@.type==\"" + type +
                       "\")].status}/{.status.conditions[?(@.type==\"" + type + "\")].reason}'",
                   ns);
  }
  std::string replicas(const std::string& ns = "") {
    return e().get("runnerset " + set_name + " -o jsonpath='{.spec.replicas}'", ns);
  }
  std::string context() { return e().get("hpa -o yaml") + e().logs(); }
};

// ---- the HPA scales a RunnerSet on its busy runners -------------------------------

TEST_F(Autoscaling, TheHpaRaisesReplicasFromTheMetricAndLowersThemAfterTheLoad) {
  auto& x = e();
  create_set(x.ns, 10);
  EXPECT_EQ(x.get("runnerset " + set_name + " --subresource=scale -o jsonpath='{.spec.replicas}'"), "1");
  // busy_runners per runner 0.5: replicas = 2 × busy runners. Scale-down
  // after 5 s of lower recommendations (the chart's default is 300 s).
  apply_chart_hpa(set_name, x.ns, 0.5, 5);
  // The adapter has listed the set's series and the HPA reads them.
  test::wait_for_value([&] { return metric_value(x.ns, set_name, "busy_runners"); }, std::string("0"), 60s,
                       "the adapter's busy_runners of the idle set", [&] { return context(); });
  test::wait_for_value([&] { return hpa_condition(set_name, "ScalingActive"); },
                       std::string("True/ValidMetricFound"), 60s, "the HPA to read the metric",
                       [&] { return context(); });
  EXPECT_EQ(replicas(), "1");

  // Load: four jobs of 30 s. Demand brings four runners; once they run the
  // jobs, busy_runners is 4 and the HPA wants 8 (a floor: 4 idle on top).
  const auto load_start = clock_type::now();
  auto jobs = test::queue_jobs(*x.sim, 4, 30s);
  auto up =
      test::wait_for([&] { return replicas(); }, [](const std::string& r) { return r != "1" && !r.empty(); },
                     60s, "the HPA to raise spec.replicas", [&] { return context(); });
  const auto replicas_up = clock_type::now();
  ASSERT_TRUE(up.met);
  // What the HPA read, through the aggregation layer.
  auto busy = metric_value(x.ns, set_name, "busy_runners");
  EXPECT_TRUE(busy == "4" || busy == "3" || busy == "2" || busy == "1") << busy;
  auto raw = raw_metric(x.ns, set_name, "busy_runners");
  EXPECT_NE(raw.output.find("\"kind\":\"MetricValueList\""), std::string::npos) << raw.all();
  EXPECT_NE(raw.output.find("\"describedObject\":{\"kind\":\"RunnerSet\",\"namespace\":\"" + x.ns +
                            "\",\"name\":\"" + set_name + "\",\"apiVersion\":\"octorun.io/v1alpha1\"}"),
            std::string::npos)
      << raw.all();
  test::wait_for_value([&] { return replicas(); }, std::string("8"), 60s,
                       "spec.replicas at 2 × 4 busy runners", [&] { return context(); });
  const auto replicas_full = clock_type::now();
  // A floor under demand: eight runners, four with the jobs, four idle.
  test::wait_for_value(
      [&] {
        return x.get("runnerset " + set_name + " -o jsonpath='{.status.desiredReplicas} {.status.replicas}'");
      },
      std::string("8 8"), 60s, "eight runners", [&] { return context(); });
  EXPECT_EQ(metric_value(x.ns, set_name, "assigned_jobs"), "4");

  ASSERT_TRUE(test::all_completed(*x.sim, jobs, 90s)) << context();
  const auto load_end = clock_type::now();
  test::wait_for_value([&] { return replicas(); }, std::string("1"), 90s,
                       "the HPA to lower spec.replicas to 1", [&] { return context(); });
  const auto replicas_down = clock_type::now();
  EXPECT_EQ(metric_value(x.ns, set_name, "busy_runners"), "0");
  EXPECT_EQ(metric_value(x.ns, set_name, "busy_ratio"), "0");
  test::wait_for_value(
      [&] { return x.get("runnerset " + set_name + " -o jsonpath='{.status.desiredReplicas}'"); },
      std::string("1"), 60s, "one runner wanted", [&] { return context(); });

  std::ostringstream timeline;
  timeline << "load start 0 s; spec.replicas raised " << seconds_since(load_start, replicas_up)
           << " s (at 8: " << seconds_since(load_start, replicas_full) << " s); load end "
           << seconds_since(load_start, load_end) << " s; spec.replicas back to 1 "
           << seconds_since(load_start, replicas_down) << " s (" << seconds_since(load_end, replicas_down)
           << " s after the load)";
  std::cout << "autoscaling timeline: " << timeline.str() << "\n";
  RecordProperty("timeline", timeline.str());
}

// ---- the dashboard and the alerts read what the manager exports --------------------

// The metric names a PromQL expression reads: identifiers that are not
// functions, keywords, label names (inside {} or by/on/... lists) or durations.
std::set<std::string> metric_names(std::string expr) {
  // Grafana's variables first: $__rate_interval sits where a duration does.
  expr = std::regex_replace(expr, std::regex(R"(\$\{?[A-Za-z_][A-Za-z0-9_]*(:[a-z]+)?\}?)"), "x");
  expr = std::regex_replace(expr, std::regex(R"("([^"\\]|\\.)*")"), "\"\"");
  expr = std::regex_replace(expr, std::regex(R"(\{[^}]*\})"), " ");
  expr = std::regex_replace(expr, std::regex(R"(\[[^\]]*\])"), " ");
  expr = std::regex_replace(
      expr, std::regex(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"), " ");
  static const std::set<std::string> keywords = {"and",         "or",      "unless", "bool",     "offset",
                                                 "by",          "without", "on",     "ignoring", "group_left",
                                                 "group_right", "inf",     "nan"};
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; };
  std::set<std::string> out;
  for (std::size_t i = 0; i < expr.size();) {
    const bool starts =
        (std::isalpha(static_cast<unsigned char>(expr[i])) || expr[i] == '_' || expr[i] == ':') &&
        (i == 0 || (!word(expr[i - 1]) && expr[i - 1] != '.'));
    if (!starts) {
      ++i;
      continue;
    }
    auto end = i;
    while (end < expr.size() && word(expr[end])) ++end;
    const auto name = expr.substr(i, end - i);
    auto next = end;
    while (next < expr.size() && std::isspace(static_cast<unsigned char>(expr[next]))) ++next;
    const bool function = next < expr.size() && expr[next] == '(';
    if (!function && keywords.count(name) == 0) out.insert(name);
    i = end;
  }
  return out;
}

// The families of a scrape, with a histogram's _bucket, _sum and _count.
std::set<std::string> exported_names(const std::string& scrape) {
  std::set<std::string> out;
  std::istringstream in(scrape);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, std::regex(R"(# TYPE (\S+) (\S+))"))) continue;
    out.insert(m[1]);
    if (m[2] == "histogram" || m[2] == "summary")
      for (const char* suffix : {"_bucket", "_sum", "_count"}) out.insert(m[1].str() + suffix);
  }
  return out;
}

void collect_exprs(const rapidjson::Value& panels, std::vector<std::string>& out) {
  if (!panels.IsArray()) return;
  for (const auto& p : panels.GetArray()) {
    if (const auto* targets = json::find_value(p, "targets"); targets != nullptr && targets->IsArray())
      for (const auto& t : targets->GetArray()) out.push_back(json::str(t, "expr"));
    if (const auto* nested = json::find_value(p, "panels")) collect_exprs(*nested, out);
  }
}

TEST_F(Autoscaling, TheDashboardQueriesOnlyFamiliesTheManagerExportsAndPrometheusAcceptsThem) {
  auto& x = e();
  const auto families = exported_names(http_get(x.metrics_url));
  ASSERT_GT(families.size(), 20u);
  rapidjson::Document d;
  const auto text = read_file(deploy + "/monitoring/grafana-dashboard.json");
  d.Parse(text.c_str());
  ASSERT_FALSE(d.HasParseError());
  std::vector<std::string> exprs;
  collect_exprs(d["panels"], exprs);
  // Template variables: label_values(METRIC, LABEL) is Grafana's, not PromQL.
  for (const auto& v : d["templating"]["list"].GetArray())
    if (const auto* q = json::find_value(v, "query"); q != nullptr && q->IsObject()) {
      std::smatch m;
      const std::string query = json::str(*q, "query");
      ASSERT_TRUE(std::regex_match(query, m, std::regex(R"(label_values\((\w+), *(\w+)\))"))) << query;
      EXPECT_TRUE(families.count(m[1]) > 0) << "variable query " << query << " reads " << m[1];
    }
  ASSERT_GT(exprs.size(), 20u);
  for (const auto& expr : exprs) {
    const auto names = metric_names(expr);
    EXPECT_FALSE(names.empty()) << expr;
    for (const auto& name : names) EXPECT_TRUE(families.count(name) > 0) << name << " in " << expr;
    // Prometheus parses and runs it (variables as Grafana substitutes them).
    auto promql = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "1m");
    promql = std::regex_replace(promql, std::regex(R"(\$runnerset)"), ".*");
    EXPECT_NE(x.query(promql).find("\"status\":\"success\""), std::string::npos) << promql;
  }
}

TEST_F(Autoscaling, PrometheusLoadedEveryAlertAndTheyReadExportedFamilies) {
  auto& x = e();
  const auto families = exported_names(http_get(x.metrics_url));
  const auto rules = http_get(x.prometheus_url() + "/api/v1/rules");
  rapidjson::Document d;
  d.Parse(rules.c_str());
  ASSERT_FALSE(d.HasParseError()) << rules;
  std::set<std::string> alerts;
  for (const auto& g : d["data"]["groups"].GetArray())
    for (const auto& r : g["rules"].GetArray()) {
      alerts.insert(json::str(r, "name"));
      EXPECT_EQ(json::str(r, "health"), "ok") << json::str(r, "name") << ": " << json::str(r, "lastError");
      for (const auto& name : metric_names(json::str(r, "query"))) {
        // The admission alert reads the API server's own metrics.
        if (name.starts_with("apiserver_admission_webhook_")) continue;
        EXPECT_TRUE(families.count(name) > 0) << name << " in " << json::str(r, "name");
      }
    }
  EXPECT_EQ(alerts,
            (std::set<std::string>{"OctorunRunnerStuckStarting", "OctorunJobsQueuedWithoutCapacity",
                                   "OctorunListenerSessionDown", "OctorunGitHubRateLimitNearlyExhausted",
                                   "OctorunNoLeader", "OctorunAdmissionWebhookFailing"}));
}

// ---- bad input: the HPA says what is wrong, nothing scales to zero -----------------

TEST_F(Autoscaling, AMetricOfARunnerSetThatDoesNotExistIsNotFoundAndItsHpaSaysSo) {
  auto& x = e();
  auto r = raw_metric(x.ns, "no-such-set", "busy_runners");
  EXPECT_NE(r.status, 0) << r.all();
  EXPECT_NE(r.errors.find("NotFound"), std::string::npos) << r.all();
  apply_chart_hpa("no-such-set", x.ns, 0.5, 5);
  test::wait_for_value([&] { return hpa_condition("no-such-set", "AbleToScale"); },
                       std::string("False/FailedGetScale"), 60s, "the HPA of a missing set to say so",
                       [&] { return context(); });
  x.kubectl("-n " + x.ns + " delete hpa no-such-set >/dev/null");
}

TEST_F(Autoscaling, AnHpaOnASetWithoutAValidSelectorSaysSoAndScalesNothing) {
  auto& x = e();
  // Sets the manager does not watch, so it never writes their status: one
  // without a selector, one whose selector someone set to garbage. (An HPA
  // backs off exponentially while its target fails, so each gets its own.)
  auto condition = [&](const std::string& ns, const std::string& type) {
    const auto c = "{.status.conditions[?(@.type==\"" + type + "\")]";
    return x.get("hpa " + set_name + " -o jsonpath='" + c + ".status}/" + c + ".reason}: " + c + ".message}'",
                 ns);
  };
  const auto missing = test::make_namespace(*x.c, "no-selector");
  create_set(missing, 10);
  const auto garbage = test::make_namespace(*x.c, "bad-selector");
  create_set(garbage, 10);
  x.kubectl(
      "-n " + garbage + " patch runnerset " + set_name +
      " --subresource=status --type=merge -p '{\"status\":{\"selector\":\"octorun.io/runnerset in (\"}}' "
      ">/dev/null");
  apply_chart_hpa(set_name, missing, 0.5, 5);
  apply_chart_hpa(set_name, garbage, 0.5, 5);
  test::wait_for_value([&] { return condition(missing, "ScalingActive"); },
                       std::string("False/InvalidSelector: the HPA target's scale is missing a selector"),
                       60s, "the HPA to report the missing selector",
                       [&] { return x.get("hpa -o yaml", missing); });
  // The HPA's scale client refuses to read a scale whose selector does not parse.
  test::wait_for([&] { return condition(garbage, "AbleToScale"); },
                 [](const std::string& s) {
                   return s.starts_with("False/FailedGetScale: ") &&
                          s.find("failed to parse target selector") != std::string::npos;
                 },
                 60s, "the HPA to report the invalid selector",
                 [&] { return x.get("hpa -o yaml", garbage); });
  EXPECT_EQ(replicas(missing), "1") << "scaled although it cannot read its target";
  EXPECT_EQ(replicas(garbage), "1") << "scaled although it cannot read its target";
}

TEST_F(Autoscaling, WithTheAdapterDownTheHpaHoldsAndJobDemandIsStillServed) {
  auto& x = e();
  const auto before = replicas();
  ASSERT_NE(before, "0");
  x.adapter->stop(SIGTERM);
  test::wait_for_value([&] { return hpa_condition(set_name, "ScalingActive"); },
                       std::string("False/FailedGetObjectMetric"), 90s,
                       "the HPA to report the missing metric", [&] { return context(); });
  EXPECT_EQ(replicas(), before) << "scaled although it cannot read its metric";
  auto r = raw_metric(x.ns, set_name, "busy_runners");
  EXPECT_NE(r.status, 0) << r.all();
  // Demand alone sizes the set: five jobs get five runners and complete.
  auto jobs = test::queue_jobs(*x.sim, 5, 5s);
  test::wait_for_value(
      [&] { return x.get("runnerset " + set_name + " -o jsonpath='{.status.desiredReplicas}'"); },
      std::string("5"), 60s, "five runners wanted for five jobs", [&] { return context(); });
  EXPECT_TRUE(test::all_completed(*x.sim, jobs, 60s)) << context();
  EXPECT_EQ(replicas(), before);
  // Back up: the metric is served and read again.
  x.start_adapter();
  test::wait_for_value([&] { return metric_value(x.ns, set_name, "busy_runners"); }, std::string("0"), 90s,
                       "the adapter to serve the metric again", [&] { return context(); });
  test::wait_for_value([&] { return hpa_condition(set_name, "ScalingActive"); },
                       std::string("True/ValidMetricFound"), 60s, "the HPA to read its metric again",
                       [&] { return context(); });
}

}  // namespace
}  // namespace octorun
