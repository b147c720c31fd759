// Faults a test or the chaos harness (bench/chaos) inflicts on the
// Kubernetes side of a test cluster: a TCP proxy whose connections can be
// cut (clients point at it instead of the apiserver), and etcd compaction
// (older resourceVersions are gone: a watch resumed from one gets 410).
// Free of GoogleTest.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/expected.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::test {

// A TCP proxy on 127.0.0.1:port -> 127.0.0.1:target_port, whose traffic can be cut.
class tcp_proxy {
 public:
  explicit tcp_proxy(int target_port);
  ~tcp_proxy();
  tcp_proxy(const tcp_proxy&) = delete;
  tcp_proxy& operator=(const tcp_proxy&) = delete;
  int port() const { return port_; }
  // Drops every open connection and refuses new ones until resume().
  void cut();
  void resume();
  // Every connection open now stays open but carries nothing more, either
  // way, as one a load balancer holds half-open; new connections work.
  void freeze_open_connections() { frozen_below_ = next_id_.load(); }

 private:
  void accept_loop();
  void pump(int a, int b, uint64_t id);
  int listen_fd_ = -1, port_ = 0, target_port_;
  std::atomic<bool> stop_{false}, cut_{false};
  std::atomic<uint64_t> next_id_{0}, frozen_below_{0};  // connection ids
  std::mutex mu_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

// Compacts etcd at its current revision; the error says what failed.
expected<ok_t, std::string> compact_etcd(const cluster_info& c);

}  // namespace octorun::test
