// Access to the real local control plane for integration tests.
//
// Under ctest, the `cluster` fixture starts one cluster for the whole run and
// sets OCTORUN_TEST_CLUSTER to its folder. A test binary run by hand starts a
// private one (test/controlplane/cluster.sh) and stops it at exit; the
// script's reaper stops it even if the binary crashes.
#pragma once

#include <string>

namespace octorun::test {

struct cluster_info {
  std::string dir;          // the cluster folder (pki/, logs/, kubeconfig)
  std::string server;       // https://127.0.0.1:PORT
  std::string ca_file;      // the cluster CA, PEM
  std::string admin_token;  // system:masters
  std::string user_token;   // user "octorun-test-user", no roles
  std::string client_cert;  // admin client certificate (PEM file)
  std::string client_key;
  std::string kubeconfig;  // admin kubeconfig (token)
  std::string etcd;        // http://127.0.0.1:PORT
  std::string bin;         // folder with kubectl, etcd, kube-apiserver, ...
};

// The cluster for this process; starts one on first use when needed.
// Aborts the test binary with a clear message if no cluster can be had.
const cluster_info& cluster();

// Runs `cluster.sh VERB DIR` on this process's cluster (e.g. "restart-apiserver").
// Only for tests that own their cluster: see private_cluster().
void cluster_control(const cluster_info& c, const std::string& verb);

// Starts a cluster that this test alone may disturb (kill the apiserver,
// compact etcd); stopped at process exit.
const cluster_info& private_cluster();

// Runs kubectl against `c` with `args`; returns its stdout. Throws on failure.
std::string kubectl(const cluster_info& c, const std::string& args);

// Installs Octorun's CRDs (crds/) and waits until they are Established.
// Safe to call from test binaries running in parallel (a conflicting
// concurrent apply is retried). Throws when they cannot be installed.
void install_crds(const cluster_info& c);

// The real node of `c` (test/controlplane/node.sh: kubelet + containerd, host
// networking only, tainted octorun.io/real-node=true:NoSchedule). Under ctest
// the real_node fixture (REAL_NODE tests) has started it; otherwise it is
// started here and goes with the cluster. Throws when it cannot run.
struct real_node_info {
  std::string name;  // real-node-0
  std::string ip;    // its InternalIP: the machine's own address (hostNetwork pods have it)
};
const real_node_info& real_node(const cluster_info& c);

// The volume the ServiceAccount admission plugin would give a pod (the test
// cluster runs without it): a projected ServiceAccount token, the cluster CA
// and the namespace, as one JSON item of a pod's `volumes`. Mount it at
// /var/run/secrets/kubernetes.io/serviceaccount. The CA comes from the
// ConfigMap kube-root-ca.crt, which create_root_ca_configmap() writes into a
// namespace (the cluster runs no root CA publisher).
std::string service_account_volume_json(const std::string& name);
void create_root_ca_configmap(const cluster_info& c, const std::string& ns);

// Imports an image archive (docker-archive or OCI) into the real node's containerd.
void import_image(const cluster_info& c, const std::string& archive);

// A fresh, uniquely named namespace for one test, labelled
// octorun.io/test-suite=<pid> (bench/loadtest refuses a cluster with such
// namespaces: a test suite is running on it).
std::string make_namespace(const cluster_info& c, const std::string& prefix);

}  // namespace octorun::test
