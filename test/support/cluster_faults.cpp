#include "test/support/cluster_faults.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "adapters/http/http_client.hpp"
#include "common/json.hpp"

namespace octorun::test {

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
    threads_.emplace_back([this, in, out, id = next_id_++] { pump(in, out, id); });
  }
}

void tcp_proxy::pump(int a, int b, uint64_t id) {
  char buf[16384];
  pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
  bool open = true;
  while (open && !stop_) {
    if (id < frozen_below_) {  // held open, carrying nothing
      ::poll(nullptr, 0, 50);
      continue;
    }
    if (::poll(fds, 2, 50) <= 0) continue;
    if (id < frozen_below_) continue;  // frozen while polling: what came stays unread
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

expected<ok_t, std::string> compact_etcd(const cluster_info& c) {
  http::client etcd;
  etcd.set_plain_http(true);
  auto range = etcd.perform({"POST",
                             c.etcd + "/v3/kv/range",
                             {{"Content-Type", "application/json"}},
                             R"({"key":"AA==","limit":1})"});
  if (!range) return unexpected{"etcd range: " + range.error().message};
  rapidjson::Document d;
  d.Parse(range->body.c_str());
  const auto* header = d.HasParseError() ? nullptr : json::member(d, "header");
  std::string revision = header != nullptr ? json::str(*header, "revision") : std::string{};
  if (revision.empty()) return unexpected{"etcd range: no header.revision in " + range->body};
  auto compacted = etcd.perform({"POST",
                                 c.etcd + "/v3/kv/compaction",
                                 {{"Content-Type", "application/json"}},
                                 R"({"revision":")" + revision + R"(","physical":true})"});
  if (!compacted) return unexpected{"etcd compaction: " + compacted.error().message};
  if (compacted->status != 200) return unexpected{"etcd compaction: " + compacted->body};
  return ok_t{};
}

}  // namespace octorun::test
