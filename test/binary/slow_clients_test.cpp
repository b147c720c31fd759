// The manager's endpoints under slow clients: 100 connections against each
// of its ports at once (probes, metrics, the admission webhook over TLS, the
// GitHub webhook intake), each a header trickle, a body trickle, a TLS
// handshake that never completes, or an idle keep-alive connection, held for
// longer than the liveness budget. Meanwhile every probe must answer within
// the probe timeout and every review within the webhook timeout; and each
// endpoint must let the slow connections go (the header trickles) so that
// they are reopened, as an attacker would.
//
// The endpoints are the manager's own (manager::start with the options
// cmd/octorun/endpoints.cpp gives them), on loopback and port 0. The attack
// lasts OCTORUN_SLOW_CLIENTS_SECONDS (default: a test-sized budget longer
// than every server-side limit; the chart's liveness budget, 30, also works).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>
#include <tuple>

#include "actors/metrics/manager_metrics.hpp"
#include "adapters/http/http_client.hpp"
#include "cmd/octorun/manager.hpp"
#include "test/admission/fixtures.hpp"
#include "test/support/raw_socket.hpp"

namespace octorun::manager {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

constexpr int connections_per_port = 100;
// Within the chart's probe timeout (3 s), which also pays for starting
// `octorun probe` in the container: the listener's share is far less.
constexpr auto probe_timeout = 1s;
constexpr auto webhook_timeout = 10s;  // the chart's webhook configurations: timeoutSeconds
constexpr auto trickle_every = 500ms;  // one byte per connection per tick

enum class slow_kind { header_trickle, body_trickle, handshake_stall, idle_keep_alive };
constexpr std::array kinds{slow_kind::header_trickle, slow_kind::body_trickle, slow_kind::handshake_stall,
                           slow_kind::idle_keep_alive};

struct target {
  std::string name;
  std::uint16_t port = 0;
  bool tls = false;
  std::string get_path;   // a route without a body
  std::string body_path;  // a route that takes one (or the GET route: refused at once)
};

std::uint16_t port_of(const std::string& url) {
  auto colon = url.rfind(':');
  return static_cast<std::uint16_t>(std::stoi(url.substr(colon + 1)));
}

// One slow connection: what it sends, and when the server let it go.
struct slow_connection {
  const target* to = nullptr;
  slow_kind kind = slow_kind::header_trickle;
  int fd = -1;
  SSL* ssl = nullptr;
  std::string opening;  // sent whole when it opens
  char trickle = 'a';   // then this byte each tick (none for idle keep-alive)

  bool open(SSL_CTX* tls) {
    test::raw_connection c(to->port, 200ms);
    if (!c.connected()) return false;
    fd = ::dup(c.fd());
    // Bounded blocking: a server too busy to answer a handshake must not
    // hold up the other connections; this one is tried again next tick.
    timeval tv{0, 200'000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (to->tls && kind != slow_kind::handshake_stall) {
      ssl = SSL_new(tls);
      SSL_set_fd(ssl, fd);
      if (SSL_connect(ssl) != 1) {
        close();
        return false;
      }
    }
    return write(opening);
  }
  bool write(std::string_view bytes) {
    if (bytes.empty()) return true;
    if (ssl != nullptr) return SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size())) > 0;
    return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // After poll() said readable: false when the server closed it.
  bool drain() {
    char buf[4096];
    auto n = ssl != nullptr ? SSL_read(ssl, buf, sizeof buf) : ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) return true;
    if (ssl != nullptr) {
      const int e = SSL_get_error(ssl, static_cast<int>(n));
      return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  void close() {
    if (ssl != nullptr) SSL_free(ssl);
    ssl = nullptr;
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string opening_of(slow_kind kind, const target& t) {
  switch (kind) {
    case slow_kind::header_trickle:
      return "GET " + t.get_path + " HTTP/1.1\r\nHost: octorun\r\nX-Slow: ";
    case slow_kind::body_trickle:
      return "POST " + t.body_path +
             " HTTP/1.1\r\nHost: octorun\r\nContent-Type: application/json\r\nContent-Length: "
             "100000\r\n\r\n[";
    case slow_kind::handshake_stall:
      return std::string("\x16\x03\x01\x02\x00\x01", 6);  // a ClientHello's first bytes
    case slow_kind::idle_keep_alive:
      return "GET " + t.get_path + " HTTP/1.1\r\nHost: octorun\r\nConnection: keep-alive\r\n\r\n";
  }
  return {};
}

// Holds connections_per_port slow connections against every target until
// stopped, reopening each one the server lets go.
class slow_clients {
 public:
  explicit slow_clients(const std::vector<target>& targets) : tls_(SSL_CTX_new(TLS_client_method())) {
    SSL_CTX_set_verify(tls_, SSL_VERIFY_NONE, nullptr);
    for (const auto& t : targets)
      for (int i = 0; i < connections_per_port; ++i) {
        slow_connection c;
        c.to = &t;
        c.kind = kinds[static_cast<std::size_t>(i) % kinds.size()];
        c.opening = opening_of(c.kind, t);
        c.trickle = c.kind == slow_kind::body_trickle ? ' ' : 'a';
        connections_.push_back(std::move(c));
      }
    thread_ = std::thread([this] { run(); });
  }
  ~slow_clients() {
    stop_ = true;
    thread_.join();
    for (auto& c : connections_) c.close();
    SSL_CTX_free(tls_);
  }

  // Blocks until the first round of connections was opened (or `within` passed).
  bool wait_all_open(std::chrono::milliseconds within) {
    std::unique_lock l(mu_);
    return opened_cv_.wait_for(l, within, [&] { return all_open_; });
  }
  // How often the server let a connection of `kind` on `port` go.
  int let_go(const std::string& target_name, slow_kind kind) const {
    std::lock_guard l(mu_);
    int n = 0;
    for (const auto& [name, k, count] : let_go_)
      if (name == target_name && k == kind) n += count;
    return n;
  }

 private:
  // Each tick reopens what the server let go and sends every trickle its
  // next byte; between ticks it reads what the server sends.
  void run() {
    auto next_tick = clock::now();
    while (!stop_) {
      if (clock::now() >= next_tick) {
        next_tick += trickle_every;
        for (auto& c : connections_) {
          if (stop_) return;
          if (c.fd < 0) {
            c.open(tls_);
          } else if (c.kind != slow_kind::idle_keep_alive && !c.write(std::string(1, c.trickle))) {
            let_go(c);
          }
        }
        std::lock_guard l(mu_);
        if (!all_open_) {
          all_open_ = true;
          opened_cv_.notify_all();
        }
      }
      std::vector<pollfd> fds;
      for (auto& c : connections_) fds.push_back({c.fd, POLLIN, 0});
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - clock::now());
      ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long>(0, wait.count())));
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && !connections_[i].drain())
          let_go(connections_[i]);
    }
  }
  void let_go(slow_connection& c) {
    c.close();
    std::lock_guard l(mu_);
    for (auto& [name, k, count] : let_go_)
      if (name == c.to->name && k == c.kind) {
        ++count;
        return;
      }
    let_go_.emplace_back(c.to->name, c.kind, 1);
  }

  SSL_CTX* tls_;
  std::vector<slow_connection> connections_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable opened_cv_;
  bool all_open_ = false;
  std::vector<std::tuple<std::string, slow_kind, int>> let_go_;
  std::thread thread_;
};

std::chrono::seconds attack_duration() {
  const char* s = std::getenv("OCTORUN_SLOW_CLIENTS_SECONDS");
  return std::chrono::seconds(s != nullptr ? std::atoi(s) : 12);
}

class SlowClients : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/octorun-slow-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    options o;
    o.health_bind = o.metrics_bind = o.webhook_bind = o.admission_bind = "127.0.0.1";
    o.health_port = o.metrics_port = o.webhook_port = o.admission_port = 0;
    o.admission = true;
    o.admission_cert_dir = dir_;
    o.admission_ip_addresses = "127.0.0.1";
    o.runner_creator = "system:serviceaccount:octorun-system:octorun";
    settings s;
    s.identity = "slow-clients";
    s.metrics = metrics::manager_metrics::make({"slow-clients", "test", "test"});
    s.webhook_secret = "secret";
    auto started = manager::start(sys_, o, std::move(s));
    ASSERT_TRUE(started) << started.error();
    manager_ = std::move(*started);
  }
  void TearDown() override {
    if (manager_) manager_->stop();
    std::filesystem::remove_all(dir_);
  }

  caf::actor_system_config cfg_;
  caf::actor_system sys_{cfg_};
  std::string dir_;
  std::unique_ptr<manager> manager_;
};

TEST_F(SlowClients, HoldingEveryPortLeavesTheProbesAndAdmissionAnswering) {
  const std::vector<target> targets{
      {"probes", port_of(manager_->probes_url()), false, "/healthz", "/healthz"},
      {"metrics", port_of(manager_->metrics_url()), false, "/metrics", "/metrics"},
      {"admission", manager_->admission_port(), true, "/healthz", "/validate-runnerset"},
      {"intake", port_of(manager_->intake_url()), false, "/webhook", "/webhook"},
  };
  slow_clients attack(targets);
  ASSERT_TRUE(attack.wait_all_open(60s)) << "the slow connections could not all be opened";

  http::client probe;
  probe.set_plain_http(true);
  http::tls_options trust;
  trust.ca_file = dir_ + "/ca.crt";
  http::client reviewer(trust);
  const std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x",)"
      R"("operation":"CREATE","object":)" +
      std::string(test::valid_runnerset_json()) + "}}";
  const auto admission_url =
      "https://127.0.0.1:" + std::to_string(manager_->admission_port()) + "/validate-runnerset";

  int probes = 0, reviews = 0;
  const auto end = clock::now() + attack_duration();
  while (clock::now() < end) {
    for (const char* path : {"/healthz", "/readyz"}) {
      auto answer = probe.perform({"GET", manager_->probes_url() + path, {}, {}, probe_timeout});
      ASSERT_TRUE(answer) << path << " did not answer within the probe timeout after " << probes
                          << " probes: " << answer.error().message;
      ASSERT_EQ(answer->status, 200) << path;
      ++probes;
    }
    auto reviewed = reviewer.perform(
        {"POST", admission_url, {{"Content-Type", "application/json"}}, review, webhook_timeout});
    ASSERT_TRUE(reviewed) << "a review did not answer within the webhook timeout after " << reviews
                          << " reviews: " << reviewed.error().message;
    ASSERT_EQ(reviewed->status, 200) << reviewed->body;
    ++reviews;
  }
  EXPECT_GT(probes, 0);
  EXPECT_GT(reviews, 0);
  // Every endpoint let the header trickles go (and they came back).
  for (const auto& t : targets)
    EXPECT_GT(attack.let_go(t.name, slow_kind::header_trickle), 0) << t.name << " held a header trickle";
  // The admission webhook let go of the handshakes that never completed,
  // of the body trickles and of the idle keep-alive connections.
  EXPECT_GT(attack.let_go("admission", slow_kind::handshake_stall), 0);
  EXPECT_GT(attack.let_go("admission", slow_kind::body_trickle), 0);
  EXPECT_GT(attack.let_go("admission", slow_kind::idle_keep_alive), 0);
  EXPECT_GT(attack.let_go("intake", slow_kind::body_trickle), 0);
}

}  // namespace
}  // namespace octorun::manager
