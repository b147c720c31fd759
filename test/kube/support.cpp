#include "test/kube/support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "test/support/poll.hpp"

namespace octorun::kube::testing {

config admin_config(const test::cluster_info& c) {
  auto cfg = load_kubeconfig(c.kubeconfig);
  if (!cfg) {
    ADD_FAILURE() << cfg.error();
    std::abort();
  }
  return *cfg;
}

config config_with_token(const test::cluster_info& c, std::shared_ptr<token_source> token) {
  config cfg;
  cfg.server = c.server;
  cfg.tls.ca_file = c.ca_file;
  cfg.token = std::move(token);
  return cfg;
}

std::string configmap_json(const std::string& ns, const std::string& name, const std::string& value,
                           const std::string& labels_json) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","labels":)" + labels_json + R"(},"data":{"value":")" + value + R"("}})";
}

void create_configmaps(const config& cfg, const std::string& ns, const std::string& prefix, int count,
                       int parallel, const std::string& labels_json) {
  std::vector<std::thread> workers;
  std::atomic<int> next{0};
  for (int w = 0; w < parallel; ++w) {
    workers.emplace_back([&] {
      client api(cfg);
      for (int i = next++; i < count; i = next++) {
        auto name = prefix + "-" + std::to_string(i);
        for (int attempt = 0;; ++attempt) {
          auto r = api.create(configmaps(), ns, configmap_json(ns, name, std::to_string(i), labels_json));
          if (r || r.error().already_exists()) break;
          if (attempt > 20) {
            ADD_FAILURE() << "create " << name << ": " << to_string(r.error());
            break;
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds deadline) {
  auto held = [](bool h) { return h; };
  return bool(test::poll(done, held, deadline));
}

void mirror::apply(const informer_event& e) {
  auto key = e.obj.key();
  auto rv = std::string(e.obj.resource_version);
  auto it = rv_by_key.find(key);
  switch (e.type) {
    case event_type::added:
      EXPECT_TRUE(it == rv_by_key.end()) << "duplicate ADDED for " << key;
      rv_by_key[key] = rv;
      ++added;
      break;
    case event_type::modified:
      EXPECT_TRUE(it != rv_by_key.end()) << "MODIFIED of unknown " << key;
      if (it != rv_by_key.end()) {
        EXPECT_NE(it->second, rv) << "MODIFIED without change for " << key;
      }
      rv_by_key[key] = rv;
      ++modified;
      break;
    case event_type::deleted:
      EXPECT_TRUE(it != rv_by_key.end()) << "DELETED of unknown " << key;
      rv_by_key.erase(key);
      deleted_keys.push_back(key);
      ++deleted;
      break;
    default:
      ADD_FAILURE() << "unexpected event type " << to_string(e.type);
  }
}

bool mirror::run_until(caf::scoped_actor& self, const std::function<bool()>& done,
                       std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    self->receive([&](informer_event& e) { apply(e); }, [&](informer_synced&) { ++synced; },
                  caf::after(std::min(left, std::chrono::milliseconds(100))) >> [] {});
  }
  return true;
}

std::map<std::string, std::string> truth(client& api, const resource& r, const std::string& ns) {
  std::map<std::string, std::string> out;
  auto listed = api.list(r, ns);
  EXPECT_TRUE(listed) << (listed ? "" : to_string(listed.error()));
  if (listed)
    for (const auto& o : listed->items) out[o.key()] = std::string(o.resource_version);
  return out;
}

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

tcp_proxy::tcp_proxy(int target_port) : target_port_(target_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0)
    std::abort();
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

tcp_proxy::~tcp_proxy() {
  stop_ = true;
  cut();
  acceptor_.join();
  for (auto& t : threads_) t.join();
  ::close(listen_fd_);
}

void tcp_proxy::cut() {
  std::lock_guard lock(mu_);  // no connection registers between the flag and the shutdowns
  cut_ = true;
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
}

void tcp_proxy::resume() { cut_ = false; }

void tcp_proxy::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int in = ::accept(listen_fd_, nullptr, nullptr);
    if (in < 0) continue;
    if (cut_) {
      ::close(in);
      continue;
    }
    int out = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(target_port_));
    if (::connect(out, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(in);
      ::close(out);
      continue;
    }
    std::lock_guard lock(mu_);
    if (cut_) {  // cut while connecting
      ::close(in);
      ::close(out);
      continue;
    }
    open_fds_.push_back(in);
    open_fds_.push_back(out);
    threads_.emplace_back([this, in, out] { pump(in, out); });
  }
}

void tcp_proxy::pump(int a, int b) {
  char buf[16384];
  pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
  bool open = true;
  while (open && !stop_) {
    if (::poll(fds, 2, 50) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        open = false;
        break;
      }
      int to = fds[1 - i].fd;
      for (ssize_t sent = 0; sent < n;) {
        ssize_t w = ::send(to, buf + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);  // no SIGPIPE
        if (w <= 0) {
          open = false;
          break;
        }
        sent += w;
      }
    }
  }
  std::lock_guard lock(mu_);
  open_fds_.erase(
      std::remove_if(open_fds_.begin(), open_fds_.end(), [&](int fd) { return fd == a || fd == b; }),
      open_fds_.end());
  ::close(a);
  ::close(b);
}

void restart_apiserver(const test::cluster_info& c) {
  try {
    test::cluster_control(c, "restart-apiserver");
  } catch (const std::exception& e) {
    std::ifstream log(c.dir + "/logs/kube-apiserver.log");
    std::string text((std::istreambuf_iterator<char>(log)), {});
    FAIL() << e.what() << "\n--- end of kube-apiserver.log ---\n"
           << text.substr(text.size() > 6000 ? text.size() - 6000 : 0);
  }
}

void compact_etcd(const test::cluster_info& c) {
  http::client etcd;
  auto range = etcd.perform({"POST",
                             c.etcd + "/v3/kv/range",
                             {{"Content-Type", "application/json"}},
                             R"({"key":"AA==","limit":1})"});
  ASSERT_TRUE(range) << range.error().message;
  rapidjson::Document d;
  d.Parse(range->body.c_str());
  ASSERT_TRUE(d.IsObject() && d.HasMember("header") && d["header"].HasMember("revision")) << range->body;
  std::string revision = d["header"]["revision"].GetString();
  auto compacted = etcd.perform({"POST",
                                 c.etcd + "/v3/kv/compaction",
                                 {{"Content-Type", "application/json"}},
                                 R"({"revision":")" + revision + R"(","physical":true})"});
  ASSERT_TRUE(compacted) << compacted.error().message;
  ASSERT_EQ(compacted->status, 200) << compacted->body;
}

}  // namespace octorun::kube::testing
