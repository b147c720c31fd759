// Our libcurl client honours the proxy environment (HTTPS_PROXY, http_proxy,
// NO_PROXY): nothing in http_client.cpp sets CURLOPT_PROXY, so libcurl reads
// them per transfer. A loopback "proxy" records what reaches it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
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
  c.set_plain_http(true);
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
  c.set_plain_http(true);
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
  c.set_plain_http(true);
  auto r = c.perform({"GET", "http://github.octorun-test.invalid/", {}, {}, std::chrono::seconds(5)});
  EXPECT_FALSE(r) << "went direct, and .invalid does not resolve";
  EXPECT_TRUE(proxy_.seen().empty());
}

// The explicit reading the manager uses for GitHub (proxy.hpp).
proxy_options from(std::map<std::string, std::string> env) {
  return proxy_from_environment([env = std::move(env)](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(ProxyFromEnvironment, HonoursUpperCaseHttpProxyWhichLibcurlIgnores) {
  auto p = from({{"HTTP_PROXY", "http://proxy.corp:3128"}, {"NO_PROXY", ".svc,10.0.0.0/8"}});
  ASSERT_TRUE(p.http);
  EXPECT_EQ(p.http->url, "http://proxy.corp:3128");
  EXPECT_FALSE(p.https);
  EXPECT_EQ(p.no_proxy, ".svc,10.0.0.0/8");
  EXPECT_EQ(proxy_for(p, "http://ghes.corp/api/v3"), &*p.http);
  EXPECT_EQ(proxy_for(p, "https://api.github.com"), nullptr);
}

TEST(ProxyFromEnvironment, LowerCaseWinsAsInLibcurl) {
  auto p = from({{"https_proxy", "http://lower:1"},
                 {"HTTPS_PROXY", "http://upper:2"},
                 {"no_proxy", "a"},
                 {"NO_PROXY", "b"}});
  ASSERT_TRUE(p.https);
  EXPECT_EQ(p.https->url, "http://lower:1");
  EXPECT_EQ(p.no_proxy, "a");
  EXPECT_EQ(from({{"https_proxy", ""}, {"HTTPS_PROXY", "http://upper:2"}}).https->url, "http://upper:2")
      << "an empty variable counts as unset";
}

TEST(ProxyFromEnvironment, CredentialsLeaveTheUrlDecoded) {
  auto p = from({{"HTTPS_PROXY", "http://svc%40corp:p%3Ass+w%25rd@proxy.corp:3128/"}});
  ASSERT_TRUE(p.https);
  EXPECT_EQ(p.https->url, "http://proxy.corp:3128/");
  EXPECT_EQ(p.https->username, "svc@corp");
  EXPECT_EQ(p.https->password, "p:ss+w%rd") << "'+' is literal in userinfo";
  auto bare = from({{"HTTPS_PROXY", "proxy.corp:3128"}});
  EXPECT_EQ(bare.https->url, "http://proxy.corp:3128") << "no scheme: http://, as libcurl and Go read it";
  EXPECT_FALSE(from({}).http);
}

// An explicit choice overrides the environment: a client with proxy_options
// and no proxy for the scheme goes direct even when https_proxy is set.
TEST_F(ProxyEnvironment, AnExplicitChoiceIgnoresTheEnvironment) {
  setenv("http_proxy", "http://127.0.0.1:1", 1);
  client c;
  c.set_plain_http(true);
  proxy_options p;
  p.http = proxy_endpoint{proxy_.url(), {}, {}};
  c.set_proxy(p);
  auto r = c.perform({"GET", "http://github.octorun-test.invalid/x", {}, {}, std::chrono::seconds(5)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "via proxy");
  c.set_proxy(proxy_options{});
  auto direct = c.perform({"GET", "http://github.octorun-test.invalid/x", {}, {}, std::chrono::seconds(5)});
  EXPECT_FALSE(direct) << "went direct (no proxy for http), and .invalid does not resolve";
  EXPECT_EQ(proxy_.seen().size(), 1u);
}

}  // namespace
}  // namespace octorun::http
