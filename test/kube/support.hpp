// Helpers for the kube integration tests: configurations for the test
// cluster, a subscriber that mirrors an informer and checks its event
// sequence; the cuttable TCP proxy and etcd compaction: test/support/cluster_faults.hpp.
#pragma once

#include <gtest/gtest.h>

#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "adapters/kube/client.hpp"
#include "adapters/kube/informer.hpp"
#include "adapters/kube/protocol.hpp"
#include "test/support/cluster_faults.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::kube::testing {

// The admin configuration, read from the cluster's kubeconfig file.
config admin_config(const test::cluster_info& c);
// Same server and CA, another bearer token source.
config config_with_token(const test::cluster_info& c, std::shared_ptr<token_source> token);

std::string configmap_json(const std::string& ns, const std::string& name, const std::string& value,
                           const std::string& labels_json = "{}");

// Creates `count` ConfigMaps named prefix-0..prefix-(count-1), `parallel` at a time.
void create_configmaps(const config& cfg, const std::string& ns, const std::string& prefix, int count,
                       int parallel = 4, const std::string& labels_json = "{}");

// Polls `done` (test::poll) until it holds or `deadline` passes.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds deadline);

// A subscriber's view of one informer: the objects by key, built only from
// informer_event messages. It fails the test on an inconsistent sequence
// (ADDED of a held key, DELETED or MODIFIED of an unknown one, MODIFIED to
// the version already held).
struct mirror {
  std::map<std::string, std::string> rv_by_key;  // key -> resourceVersion
  size_t added = 0, modified = 0, deleted = 0, synced = 0;
  std::vector<std::string> deleted_keys;

  void apply(const informer_event& e);
  // Receives informer messages on `self` until `done()` or the deadline.
  bool run_until(caf::scoped_actor& self, const std::function<bool()>& done,
                 std::chrono::milliseconds deadline);
};

// The truth: key -> resourceVersion of a fresh list.
std::map<std::string, std::string> truth(client& api, const resource& r, const std::string& ns);

using test::tcp_proxy;

// cluster_control(c, "restart-apiserver"); on failure, fails the test with
// the end of the apiserver's log.
void restart_apiserver(const test::cluster_info& c);

int port_of(const std::string& url);

// `cfg` reaching its apiserver through `proxy` (one made with
// tcp_proxy(port_of(cfg.server))).
config through(const tcp_proxy& proxy, config cfg);

}  // namespace octorun::kube::testing
