// Our libcurl client honours the proxy environment (HTTPS_PROXY, http_proxy,
// NO_PROXY): nothing in http_client.cpp sets CURLOPT_PROXY, so libcurl reads
// them per transfer. A loopback "proxy" records what reaches it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "adapters/http/http_client.hpp"

namespace octorun::http {
namespace {

// Accepts connections on 127.0.0.1 until destroyed; records each request's
// first line and answers 200 "via proxy" (a CONNECT gets 403: no tunnel).
class recording_proxy {
 public:
  recording_proxy() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 8);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~recording_proxy() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> seen() const {
    std::lock_guard l(mu_);
    return lines_;
  }

 private:
  void serve() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[4096];
      while (req.find("\r\n\r\n") == std::string::npos) {
        auto n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<std::size_t>(n));
      }
      auto line = req.substr(0, req.find("\r\n"));
      {
        std::lock_guard l(mu_);
        lines_.push_back(line);
      }
      const std::string reply =
          line.starts_with("CONNECT ")
              ? "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"
              : "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nvia proxy";
      (void)!write(c, reply.data(), reply.size());
      close(c);
    }
  }
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

class ProxyEnvironment : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"http_proxy", "HTTPS_PROXY", "https_proxy", "no_proxy", "NO_PROXY"}) unsetenv(v);
  }
  recording_proxy proxy_;
};

TEST_F(ProxyEnvironment, PlainHttpGoesThroughHttpProxy) {
  setenv("http_proxy", proxy_.url().c_str(), 1);
  client c;
  auto r =
      c.perform({"GET", "http://github.octorun-test.invalid/api/v3/meta", {}, {}, std::chrono::seconds(5)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "via proxy");
  ASSERT_EQ(proxy_.seen().size(), 1u);
  EXPECT_EQ(proxy_.seen()[0], "GET http://github.octorun-test.invalid/api/v3/meta HTTP/1.1");
}

TEST_F(ProxyEnvironment, HttpsTunnelsThroughHttpsProxy) {
  setenv("HTTPS_PROXY", proxy_.url().c_str(), 1);
  client c;
  auto r =
      c.perform({"GET", "https://github.octorun-test.invalid/api/v3/meta", {}, {}, std::chrono::seconds(5)});
  EXPECT_FALSE(r && r->status == 200) << "the proxy refused the tunnel";
  ASSERT_EQ(proxy_.seen().size(), 1u);
  EXPECT_EQ(proxy_.seen()[0], "CONNECT github.octorun-test.invalid:443 HTTP/1.1");
}

TEST_F(ProxyEnvironment, NoProxyHostsBypassIt) {
  setenv("http_proxy", proxy_.url().c_str(), 1);
  setenv("NO_PROXY", "octorun-test.invalid", 1);
  client c;
  auto r = c.perform({"GET", "http://github.octorun-test.invalid/", {}, {}, std::chrono::seconds(5)});
  EXPECT_FALSE(r) << "went direct, and .invalid does not resolve";
  EXPECT_TRUE(proxy_.seen().empty());
}

}  // namespace
}  // namespace octorun::http
