// Octorun installed as users install it: the manager's image (scripts/image.sh)
// imported into the real node's containerd, the Helm chart installed with the
// manager pinned to the real node (host networking) and runner pods to kwok's
// node. The manager pod becomes Ready, takes the Lease, serves admission
// through its Service (the apiserver calls it there), and scales a
// Listener-intake RunnerSet 0 -> N -> 0 against the GitHub simulator.
//
// The test cluster has no kube-proxy, no cluster DNS and no ServiceAccount
// admission plugin: the committed test/deploy/real-node.values.yaml (which
// scripts/try-chart.sh installs with too) stands in for what a cluster
// provides, and the test adds what only it knows (ports, tag, namespace).
// The simulator listens on loopback, where the host-network pod reaches it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "test/binary/binary_test_base.hpp"
#include "test/chart/helm.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/free_port.hpp"
#include "test/support/test_cluster.hpp"

#ifndef OCTORUN_IMAGE_SCRIPT
#error "OCTORUN_IMAGE_SCRIPT must name scripts/image.sh"
#endif
#ifndef OCTORUN_BUILD_DIR
#error "OCTORUN_BUILD_DIR must name the build tree"
#endif

namespace octorun {
namespace {

using namespace std::chrono_literals;

sim::simulator_options listener_simulator() {
  sim::simulator_options o;
  o.long_poll = 20s;
  o.session_idle_timeout = 4s;
  return o;
}

// Polls `read` until it returns something `pred` accepts; returns the last value.
template <class Read, class Pred>
std::string eventually(Read read, Pred pred, std::chrono::seconds within) {
  auto deadline = std::chrono::steady_clock::now() + within;
  std::string v;
  while (std::chrono::steady_clock::now() < deadline) {
    v = read();
    if (pred(v)) return v;
    std::this_thread::sleep_for(200ms);
  }
  return v;
}

class Deploy : public test::binary_test_base {
 protected:
  Deploy()
      : binary_test_base("deploy", listener_simulator()),
        node_(test::real_node(c_)),
        release_("octorun-" + std::to_string(getpid())),
        system_ns_(test::make_namespace(c_, "deploy-system")) {}

  ~Deploy() override {
    if (installed_) helm("uninstall " + release_ + " --wait --timeout 120s");
    test::kubectl(c_, "delete namespace " + system_ns_ + " --wait=false >/dev/null");
    std::remove(values_.c_str());
  }

  test::command_result helm(const std::string& args) {
    return test::helm(args + " -n " + system_ns_ + " --kubeconfig " + test::shell_quote(c_.kubeconfig));
  }

  std::string in_system(const std::string& args) {
    return test::kubectl(c_, "-n " + system_ns_ + " " + args);
  }
  std::string manager_pod() {
    return in_system("get pods -l app.kubernetes.io/instance=" + release_ +
                     ",app.kubernetes.io/component=manager -o jsonpath='{.items[0].metadata.name}'");
  }
  std::string diagnostics() {
    return in_system("get pods -o wide 2>&1 || true") + in_system("describe pods 2>&1 | tail -n 40 || true") +
           in_system("logs -l app.kubernetes.io/instance=" + release_ + " --tail=60 2>&1 || true");
  }

  // What only this run knows, over the committed values for this cluster
  // (test/deploy/real-node.values.yaml; see the comment at the top).
  void write_values(const std::string& image_tag) {
    const auto api_port = c_.server.substr(c_.server.rfind(':') + 1);
    values_ = "/tmp/octorun-deploy-" + release_ + ".values.json";
    std::ofstream(values_) << R"({"fullnameOverride":")" << release_ << R"(","image":{"tag":")" << image_tag
                           << R"("},"watchNamespaces":[")" << ns_ << R"("],"admission":{"port":)"
                           << test::free_port("0.0.0.0") << R"(},"metrics":{"port":)"
                           << test::free_port("0.0.0.0") << R"(},"probes":{"port":)"
                           << test::free_port("0.0.0.0") << R"(},"nodeSelector":{"kubernetes.io/hostname":")"
                           << node_.name
                           << R"("},"extraEnv":[{"name":"KUBERNETES_SERVICE_HOST","value":"127.0.0.1"},)"
                              R"({"name":"KUBERNETES_SERVICE_PORT","value":")"
                           << api_port
                           << R"("}],)"
                           // The chart's default RunnerClass, for this test's
                           // namespace alone (classes are cluster-wide) and
                           // the simulator's GitHub.
                           << R"("runnerClasses":{"default":{"name":")" << release_
                           << R"(","namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":")"
                           << ns_ << R"("}},"servers":[")" << sim_->ghes_url() << R"("]}}})";
  }

  std::string runnerset(const std::string& name, const std::string& scope_url) {
    return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
           R"("},"spec":{"scopeURL":")" + scope_url +
           R"(","credentialsSecretName":"github","intake":"Listener","runnerLabels":["linux"],)"
           R"("minRunners":0,"maxRunners":3,"template":{"spec":{"nodeSelector":{"type":"kwok"},)"
           R"("containers":[{"name":"runner","image":"r"}]}}}})";
  }
  test::command_result create(const std::string& json) {
    const std::string file = "/tmp/octorun-deploy-" + release_ + ".runnerset.json";
    std::ofstream(file) << json;
    auto r = test::run_shell(test::shell_quote(c_.bin + "/kubectl") +
                             " --kubeconfig=" + test::shell_quote(c_.kubeconfig) + " -n " + ns_ +
                             " create -f " + file + " 2>&1");
    std::remove(file.c_str());
    return r;
  }

  const test::real_node_info& node_;
  std::string release_, system_ns_, values_;
  bool installed_ = false;
};

TEST_F(Deploy, TheChartRunsTheManagerImageOnTheRealNodeAndItScalesARunnerSet) {
  // 1. The image, from this build tree, into the node's containerd.
  const std::string tag = "deploy-test";
  const std::string archive = std::string(OCTORUN_BUILD_DIR) + "/deploy-test/octorun-" + tag + ".oci.tar";
  auto built = test::run_shell(std::string(OCTORUN_IMAGE_SCRIPT) + " --build-dir " + OCTORUN_BUILD_DIR +
                               " --tag octorun:" + tag + " --output " + archive + " 2>&1");
  ASSERT_EQ(built.status, 0) << built.output;
  test::import_image(c_, archive);
  std::filesystem::remove(archive);

  // 2. helm install; --wait: the Deployment's pod is Ready on the real node.
  write_values(tag);
  test::create_root_ca_configmap(c_, system_ns_);
  auto install =
      helm("install " + release_ + " " + test::shell_quote(test::chart_dir()) + " -f " +
           test::shell_quote(OCTORUN_REAL_NODE_VALUES) + " -f " + values_ + " --wait --timeout 300s");
  installed_ = install.status == 0;
  ASSERT_TRUE(installed_) << install.output << diagnostics();
  const auto pod = manager_pod();
  EXPECT_EQ(in_system("get pod " + pod +
                      " -o jsonpath='{.spec.nodeName} {.status.conditions[?(@.type==\"Ready\")].status} "
                      "{.status.podIP}'"),
            node_.name + " True " + node_.ip)
      << diagnostics();

  // 3. It leads: the Lease names the identity the pod logs.
  auto holder = eventually(
      [&] {
        return in_system("get lease " + release_ +
                         "-manager -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true");
      },
      [](const std::string& h) { return !h.empty(); }, 60s);
  ASSERT_FALSE(holder.empty()) << diagnostics();
  EXPECT_NE(in_system("logs " + pod).find(holder), std::string::npos) << diagnostics();

  // 4. Admission through the Service: once the manager has injected its CA,
  // a bad RunnerSet is denied by the webhook and a good one admitted.
  auto ca = eventually(
      [&] {
        return test::kubectl(c_, "get validatingwebhookconfiguration " + release_ +
                                     " -o jsonpath='{.webhooks[0].clientConfig.caBundle}'");
      },
      [](const std::string& b) { return !b.empty(); }, 60s);
  ASSERT_FALSE(ca.empty()) << diagnostics();
  test::kubectl(
      c_, "-n " + ns_ + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
  auto bad = create(runnerset("bad", "ftp://github.com/acme"));
  EXPECT_NE(bad.status, 0);
  // The webhook's reason (the CRD's schema accepts any scopeURL string), and
  // the apiserver's record of who rejected it.
  EXPECT_NE(bad.output.find("\"ftp://github.com/acme\" must start with https://"), std::string::npos)
      << bad.output;
  EXPECT_EQ(test::run_shell("grep -q 'rejected by webhook \"vrunnerset.octorun.io\"' " +
                            test::shell_quote(c_.dir + "/logs/kube-apiserver.log"))
                .status,
            0);
  auto good = create(runnerset("linux", sim_->ghes_url() + "/acme"));
  ASSERT_EQ(good.status, 0) << good.output << diagnostics();

  // 5. 0 -> N -> 0: the Listener's session opens, jobs run on runners whose
  // pods kwok runs, and everything goes away again.
  ASSERT_TRUE(sim_->wait_until([](const sim::simulator& s) { return s.session_open("linux"); }, 60s))
      << sim_->state_json() << diagnostics();
  EXPECT_EQ(watch_->runners_seen(), 0u);
  auto jobs = test::queue_jobs(*sim_, 5, 500ms);
  EXPECT_TRUE(test::all_completed(*sim_, jobs, 180s)) << sim_->state_json() << diagnostics();
  EXPECT_GE(watch_->runners_seen(), 1u);
  EXPECT_LE(watch_->runners_seen(), 5u + 3u);
  EXPECT_TRUE(
      watch_->wait([](const test::namespace_watch& w) { return w.runners() == 0 && w.pods() == 0; }, 60s))
      << test::kubectl(c_, "-n " + ns_ + " get runners,pods") << diagnostics();

  // 6. helm uninstall: the pod leaves the node, its session is closed.
  auto uninstall = helm("uninstall " + release_ + " --wait --timeout 120s");
  installed_ = uninstall.status != 0;
  EXPECT_EQ(uninstall.status, 0) << uninstall.output;
  in_system("wait --for=delete pod/" + pod + " --timeout=120s >/dev/null 2>&1 || true");
  EXPECT_EQ(in_system("get pods -o name"), "");
  EXPECT_TRUE(sim_->wait_until([](const sim::simulator& s) { return !s.session_open("linux"); }, 30s));
  EXPECT_EQ(in_system("get lease " + release_ + "-manager -o jsonpath='{.spec.holderIdentity}' 2>&1 || true"),
            "")
      << "uninstall releases the Lease";
}

}  // namespace
}  // namespace octorun
