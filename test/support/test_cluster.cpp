#include "test/support/test_cluster.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "test/support/poll.hpp"

#ifndef OCTORUN_CRDS_DIR
#error "OCTORUN_CRDS_DIR must name crds/"
#endif
#ifndef OCTORUN_CLUSTER_SCRIPT
#error "OCTORUN_CLUSTER_SCRIPT must name test/controlplane/cluster.sh"
#endif
#ifndef OCTORUN_NODE_SCRIPT
#error "OCTORUN_NODE_SCRIPT must name test/controlplane/node.sh"
#endif

namespace octorun::test {
namespace {

std::string run_command(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed: " + cmd);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int rc = pclose(p);
  if (status != nullptr) {
    *status = rc;
  } else if (rc != 0) {
    throw std::runtime_error("command failed (" + std::to_string(rc) + "): " + cmd + "\n" + out);
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

cluster_info load(const std::string& dir) {
  if (read_file(dir + "/env").empty()) {
    fprintf(stderr, "no test cluster at %s (missing env file)\n", dir.c_str());
    std::abort();
  }
  cluster_info c;
  c.dir = dir;
  auto ports = read_file(dir + "/ports");
  auto field = [&](const std::string& key) {
    auto at = ports.find(key + "=");
    if (at == std::string::npos) return std::string{};
    auto end = ports.find('\n', at);
    return ports.substr(at + key.size() + 1, end - at - key.size() - 1);
  };
  c.server = "https://127.0.0.1:" + field("api_port");
  c.etcd = "http://127.0.0.1:" + field("etcd_port");
  c.ca_file = dir + "/pki/ca.crt";
  c.admin_token = read_file(dir + "/pki/admin.token");
  c.user_token = read_file(dir + "/pki/user.token");
  c.client_cert = dir + "/pki/admin.crt";
  c.client_key = dir + "/pki/admin.key";
  c.kubeconfig = dir + "/kubeconfig";
  c.bin = read_file(dir + "/bin");
  while (!c.bin.empty() && (c.bin.back() == '\n' || c.bin.back() == ' ')) c.bin.pop_back();
  return c;
}

// A cluster this process started; stopped by the destructor at exit.
struct owned_cluster {
  cluster_info info;
  explicit owned_cluster(const std::string& tag) {
    char tmpl[] = "/tmp/octorun-cluster-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    std::string dir = std::string(tmpl) + "/" + tag;
    int status = 0;
    auto out = run_command(std::string(OCTORUN_CLUSTER_SCRIPT) + " start " + quote(dir) + " " +
                               std::to_string(getpid()) + " 2>&1",
                           &status);
    if (status != 0) {
      fprintf(stderr, "cannot start a test cluster:\n%s\n", out.c_str());
      std::abort();
    }
    info = load(dir);
  }
  ~owned_cluster() {
    int status = 0;
    run_command(std::string(OCTORUN_CLUSTER_SCRIPT) + " stop " + quote(info.dir) + " 2>&1", &status);
  }
};

}  // namespace

const cluster_info& cluster() {
  static const cluster_info* shared = [] {
    const char* dir = std::getenv("OCTORUN_TEST_CLUSTER");
    if (dir != nullptr && *dir != '\0') return new cluster_info(load(dir));
    static owned_cluster own("shared");
    return &own.info;
  }();
  return *shared;
}

const cluster_info& private_cluster() {
  static owned_cluster own("private");
  return own.info;
}

void cluster_control(const cluster_info& c, const std::string& verb) {
  run_command(std::string(OCTORUN_CLUSTER_SCRIPT) + " " + verb + " " + quote(c.dir) + " 2>&1");
}

std::string kubectl(const cluster_info& c, const std::string& args) {
  return run_command(quote(c.bin + "/kubectl") + " --kubeconfig=" + quote(c.kubeconfig) + " " + args);
}

void install_crds(const cluster_info& c) {
  struct attempt {
    int status = -1;
    std::string output;
  };
  // A failed apply: another test binary is applying the same objects and its
  // write won; read and try again.
  auto applied = poll(
      [&] {
        attempt a;
        a.output = run_command(quote(c.bin + "/kubectl") + " --kubeconfig=" + quote(c.kubeconfig) +
                                   " apply -f " + quote(OCTORUN_CRDS_DIR) + " 2>&1",
                               &a.status);
        return a;
      },
      [](const attempt& a) { return a.status == 0; }, std::chrono::seconds(30));
  if (!applied) throw std::runtime_error("cannot install the CRDs: " + applied.last.output);
  // kubectl wait fails at once, rather than waiting, on a CRD whose status has
  // no conditions yet (a busy apiserver has not written them): ask again.
  auto established = poll(
      [&] {
        attempt a;
        a.output =
            run_command(quote(c.bin + "/kubectl") + " --kubeconfig=" + quote(c.kubeconfig) +
                            " wait --for=condition=Established crd/runners.octorun.io "
                            "crd/runnersets.octorun.io crd/runnerclasses.octorun.io --timeout=60s 2>&1",
                        &a.status);
        return a;
      },
      [](const attempt& a) { return a.status == 0; }, std::chrono::seconds(90));
  if (!established) throw std::runtime_error("the CRDs are not Established: " + established.last.output);
}

const real_node_info& real_node(const cluster_info& c) {
  static std::mutex mu;
  static real_node_info node;
  std::lock_guard lock(mu);
  if (!node.name.empty()) return node;
  if (read_file(c.dir + "/node/ip").empty())
    run_command(std::string(OCTORUN_NODE_SCRIPT) + " up " + quote(c.dir) + " 2>&1");
  node.ip = read_file(c.dir + "/node/ip");
  while (!node.ip.empty() && node.ip.back() == '\n') node.ip.pop_back();
  if (node.ip.empty()) throw std::runtime_error("the real node of " + c.dir + " has no address");
  node.name = "real-node-0";
  return node;
}

std::string service_account_volume_json(const std::string& name) {
  return R"({"name":")" + name +
         R"(","projected":{"sources":[)"
         R"({"serviceAccountToken":{"path":"token","expirationSeconds":3607}},)"
         R"({"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},)"
         R"({"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"fieldPath":"metadata.namespace"}}]}}]}})";
}

void create_root_ca_configmap(const cluster_info& c, const std::string& ns) {
  kubectl(c, "-n " + quote(ns) + " create configmap kube-root-ca.crt --from-file=ca.crt=" + quote(c.ca_file) +
                 " >/dev/null");
}

void import_image(const cluster_info& c, const std::string& archive) {
  real_node(c);
  run_command(std::string(OCTORUN_NODE_SCRIPT) + " import " + quote(c.dir) + " " + quote(archive) + " 2>&1");
}

std::string make_namespace(const cluster_info& c, const std::string& prefix) {
  static std::atomic<int> counter{0};
  auto name = prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  // Labelled so that a load test pointed at this cluster sees a test suite at work and refuses to run.
  kubectl(c,
          "create -f - >/dev/null "
          "<<'EOF'\n{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" +
              name + "\",\"labels\":{\"octorun.io/test-suite\":\"" + std::to_string(getpid()) + "\"}}}\nEOF");
  return name;
}

}  // namespace octorun::test
