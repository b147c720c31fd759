// A TCP client that sends exactly the bytes a test chooses, when it chooses:
// for requests no well-behaved client sends (a body a route refuses, a body
// that stalls, headers a byte at a time). Loopback only.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace octorun::test {

class raw_connection {
 public:
  // Not connected when the server did not take the connection within
  // `within` (its accept queue full).
  explicit raw_connection(std::uint16_t port, std::chrono::milliseconds within = std::chrono::seconds(10)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool connected = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (!connected && errno == EINPROGRESS) {
      pollfd p{fd_, POLLOUT, 0};
      int error = 0;
      socklen_t len = sizeof error;
      connected = ::poll(&p, 1, static_cast<int>(within.count())) == 1 &&
                  ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
    }
    if (!connected) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  }
  ~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  struct reply {
    std::string bytes;    // everything the server sent
    bool closed = false;  // the server closed (or reset) the connection
  };
  // What the server sends until it closes the connection, or `within` passes.
  reply read_until_closed(std::chrono::milliseconds within) {
    reply r;
    const auto end = std::chrono::steady_clock::now() + within;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return r;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        r.closed = true;
        return r;
      }
      r.bytes.append(buf, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

// The status code of the HTTP response at the start of `bytes`; 0: none.
inline int status_of(std::string_view bytes) {
  if (!bytes.starts_with("HTTP/1.") || bytes.size() < 12) return 0;
  return std::stoi(std::string(bytes.substr(9, 3)));
}

}  // namespace octorun::test
