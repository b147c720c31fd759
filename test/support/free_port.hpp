// A port for a process the test starts later (a proxy, Prometheus, the
// chart's listeners), by the rule test/controlplane/free_port.sh gives the
// scripts: free now, below the kernel's ephemeral range. A port from
// bind(0) comes from that range, where every outgoing connection also takes
// its local port, so a long-lived connection of another test could hold it
// by the time the process binds it; below the range only listeners
// compete, and the bind test sees those.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>

namespace octorun::test {

namespace free_port_detail {
// Binds `port` (0: any) on `ipv4` and releases it; the port bound, or 0.
inline std::uint16_t bind_once(const std::string& ipv4, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ipv4.c_str(), &a.sin_addr);
  socklen_t len = sizeof a;
  std::uint16_t bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    bound = ntohs(a.sin_port);
  ::close(fd);
  return bound;
}
}  // namespace free_port_detail

// 0 only when no port can be bound on `ipv4` at all.
inline std::uint16_t free_port(const std::string& ipv4 = "127.0.0.1") {
  int low = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low;
  if (low > 2048) {
    std::random_device seed;
    std::mt19937 pick(seed());
    std::uniform_int_distribution<int> below(std::max(1024, low - 12000), low - 1);
    for (int attempt = 0; attempt < 200; ++attempt)
      if (auto port = free_port_detail::bind_once(ipv4, static_cast<std::uint16_t>(below(pick)))) return port;
  }
  return free_port_detail::bind_once(ipv4, 0);
}

}  // namespace octorun::test
