// The real test node (test/controlplane/node.sh): the kubelet built from the
// pinned module joins the loopback apiserver, runs a hostNetwork pod from an
// image imported into its containerd (nothing is pulled), mounts the pod's
// projected ServiceAccount token and the cluster CA, and the apiserver reaches
// the kubelet over verified TLS (logs, exec).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include "test/support/test_cluster.hpp"

#ifndef OCTORUN_K8S_VERSION
#error "OCTORUN_K8S_VERSION must name the pinned k8s.io/kubernetes version"
#endif

namespace octorun {
namespace {

class RealNode : public ::testing::Test {
 protected:
  RealNode() : c_(test::cluster()), node_(test::real_node(c_)) {}

  const test::cluster_info& c_;
  const test::real_node_info& node_;
};

TEST_F(RealNode, IsReadyTaintedForItsOwnPodsAndRunsThePinnedKubelet) {
  auto out = test::kubectl(c_, "get node " + node_.name +
                                   " -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status} "
                                   "{.status.nodeInfo.kubeletVersion} {.spec.taints[*].key} "
                                   "{.status.addresses[?(@.type==\"InternalIP\")].address}'");
  EXPECT_EQ(out, std::string("True ") + OCTORUN_K8S_VERSION + " octorun.io/real-node " + node_.ip);
  // kwok's fake node is still there, for every other pod.
  EXPECT_EQ(test::kubectl(c_, "get node kwok-node-0 -o name"), "node/kwok-node-0\n");
}

TEST_F(RealNode, RunsAHostNetworkPodFromALocalImageWithItsServiceAccountToken) {
  auto ns = test::make_namespace(c_, "node");
  const std::string sa = "/var/run/secrets/kubernetes.io/serviceaccount";
  test::create_root_ca_configmap(c_, ns);
  test::kubectl(
      c_,
      "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hello"},"spec":{)"
          R"("nodeSelector":{"kubernetes.io/hostname":")" +
          node_.name +
          R"("},"tolerations":[{"key":"octorun.io/real-node","operator":"Exists","effect":"NoSchedule"}],)"
          R"("serviceAccountName":"default","hostNetwork":true,"enableServiceLinks":false,)"
          R"("terminationGracePeriodSeconds":5,)"
          R"("volumes":[)" +
          test::service_account_volume_json("kube-api-access") +
          R"(],"containers":[{"name":"c","image":"localhost/octorun/busybox:test","imagePullPolicy":"Never",)"
          R"("command":["/bin/sh","-c","echo hello from $(hostname) on the real node; echo >/tmp/ready; )"
          R"(trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done"],)"
          R"("readinessProbe":{"exec":{"command":["test","-f","/tmp/ready"]},"periodSeconds":1},)"
          R"("volumeMounts":[{"name":"kube-api-access","mountPath":")" +
          sa + R"(","readOnly":true}]}]}})" + "\nEOF");
  test::kubectl(c_, "-n " + ns + " wait --for=condition=Ready pod/hello --timeout=120s >/dev/null");

  // Host networking: the pod has the node's address.
  EXPECT_EQ(test::kubectl(c_, "-n " + ns + " get pod hello -o jsonpath='{.status.podIP} {.spec.nodeName}'"),
            node_.ip + " " + node_.name);
  // The apiserver reaches the kubelet: logs and exec.
  EXPECT_NE(test::kubectl(c_, "-n " + ns + " logs hello").find("on the real node"), std::string::npos);
  EXPECT_EQ(test::kubectl(c_, "-n " + ns + " exec hello -- cat " + sa + "/namespace"), ns);
  // The kubelet got a token for the pod's ServiceAccount, and the CA is the cluster's.
  std::ifstream ca_file(c_.ca_file);
  const std::string ca{std::istreambuf_iterator<char>(ca_file), std::istreambuf_iterator<char>()};
  EXPECT_EQ(test::kubectl(c_, "-n " + ns + " exec hello -- cat " + sa + "/ca.crt"), ca);
  auto token = test::kubectl(c_, "-n " + ns + " exec hello -- cat " + sa + "/token");
  EXPECT_EQ(std::count(token.begin(), token.end(), '.'), 2) << "not a JWT: " << token;

  test::kubectl(c_, "-n " + ns + " delete pod hello --wait=true --timeout=60s >/dev/null");
  test::kubectl(c_, "delete namespace " + ns + " --wait=false >/dev/null");
}

}  // namespace
}  // namespace octorun
