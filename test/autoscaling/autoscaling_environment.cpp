// Setting up the autoscaling tests' environment (autoscaling_environment.hpp).
#include "test/autoscaling/autoscaling_environment.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "test/support/free_port.hpp"
#include "test/support/poll.hpp"

#ifndef OCTORUN_BINARY
#error "OCTORUN_BINARY must name the octorun binary"
#endif
#ifndef OCTORUN_DEPLOY_DIR
#error "OCTORUN_DEPLOY_DIR must name deploy/"
#endif
#ifndef OCTORUN_ADAPTER_BUILD_SCRIPT
#error "OCTORUN_ADAPTER_BUILD_SCRIPT must name test/tools/prometheus-adapter/build.sh"
#endif

namespace octorun::test::autoscaling {

using namespace std::chrono_literals;

const std::string deploy = OCTORUN_DEPLOY_DIR;
const std::string set_name = "linux";

namespace {

const std::string secret = "autoscaling-webhook-secret";

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

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

// Throws a runtime_error naming what did not come up.
void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

}  // namespace

std::string http_get(const std::string& url) {
  http::client client;
  client.set_plain_http(true);
  auto r = client.perform({"GET", url, {}, {}, 10s});
  return r && r->status == 200 ? r->body : std::string{};
}

void environment::start_adapter() {
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

std::string environment::adapter_binary() {
  static const std::string path = [] {
    auto built = test::run_shell(test::shell_quote(OCTORUN_ADAPTER_BUILD_SCRIPT));
    auto out = built.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return built.status == 0 ? out.substr(out.rfind('\n') + 1) : std::string{};
  }();
  return path;
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
  const auto metrics = e.manager->wait_metrics(60s);
  require(!metrics.empty(), "the manager serves no metrics");
  e.metrics_url = metrics + "/metrics";
  const auto intake = e.manager->wait_leading(60s);
  require(!intake.empty(), "the manager does not lead");
  e.sim->set_webhook(intake, secret);

  // Prometheus scrapes the manager as service discovery would present it: a
  // target label `namespace` (the manager's), so the manager's own
  // `namespace` label becomes `exported_namespace`, which the rules expect.
  e.prometheus_port = free_port("127.0.0.1");
  const auto target = metrics.substr(metrics.find("//") + 2);
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

}  // namespace octorun::test::autoscaling
