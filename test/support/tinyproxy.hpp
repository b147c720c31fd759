// A real HTTP proxy on loopback for the tests: Debian's tinyproxy, started
// with a generated configuration on a free port (optionally demanding Basic
// credentials), its log read back to see what passed through it. tinyproxy
// serves one request per client connection, so every proxied plain-HTTP
// request is one "Request (file descriptor N): METHOD URL" line (an https://
// request is one CONNECT line per tunnel). Free of GoogleTest so that
// benchmarks can use it.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/free_port.hpp"
#include "test/support/poll.hpp"

extern char** environ;

namespace octorun::test {

class tinyproxy {
 public:
  struct options {
    std::string username;  // both set: Basic credentials are required (407 without them)
    std::string password;
  };

  // The binary's path, or "" when tinyproxy is not installed.
  static std::string binary() {
    for (const char* p : {"/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"})
      if (access(p, X_OK) == 0) return p;
    return {};
  }

  // A running proxy, or nullptr with `why` set (not installed, or it did not
  // start listening within 10 s).
  static std::unique_ptr<tinyproxy> start(const options& o, std::string& why) {
    const auto bin = binary();
    if (bin.empty()) {
      why = "tinyproxy is not installed (scripts/install-deps.sh installs Debian's package)";
      return nullptr;
    }
    // A free port can be taken by another process between the probe and
    // tinyproxy's bind (it cannot bind port 0 and say which it got): retry.
    for (int attempt = 0; attempt < 5; ++attempt) {
      std::unique_ptr<tinyproxy> p(new tinyproxy());
      if (p->launch(bin, o, free_port())) return p;
      why = "tinyproxy did not listen: " + p->log();
    }
    return nullptr;
  }

  ~tinyproxy() {
    if (pid_ > 0) {
      // tinyproxy joins its connections' threads before it exits, each up
      // to its Timeout: a test's teardown waits for it a few seconds, not
      // for a stuck connection.
      kill(pid_, SIGTERM);
      auto gone = poll([&] { return waitpid(pid_, nullptr, WNOHANG) == pid_; }, [](bool g) { return g; },
                       std::chrono::seconds(5));
      if (!gone.met) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  tinyproxy(const tinyproxy&) = delete;
  tinyproxy& operator=(const tinyproxy&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::uint16_t port() const { return port_; }

  std::string log() const {
    std::ifstream in(dir_ + "/tinyproxy.log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // The request lines ("GET http://... HTTP/1.1", "CONNECT host:443 HTTP/1.1")
  // of every request that reached the proxy, in order.
  std::vector<std::string> requests() const {
    std::vector<std::string> out;
    std::istringstream lines(log());
    static const std::string marker = "]: Request (file descriptor ";
    for (std::string line; std::getline(lines, line);) {
      auto at = line.find(marker);
      if (at == std::string::npos) continue;
      auto colon = line.find("): ", at);
      if (colon != std::string::npos) out.push_back(line.substr(colon + 3));
    }
    return out;
  }

 private:
  tinyproxy() {
    char tmpl[] = "/tmp/octorun-tinyproxy-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) dir_ = tmpl;
  }

  static bool accepts(std::uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    return ok;
  }

  bool launch(const std::string& bin, const options& o, std::uint16_t port) {
    port_ = port;
    const auto conf = dir_ + "/tinyproxy.conf";
    {
      std::ofstream c(conf);
      c << "Port " << port << "\nListen 127.0.0.1\nTimeout 600\nMaxClients 200\nAllow 127.0.0.1\n"
        << "DisableViaHeader Yes\nLogLevel Connect\nLogFile \"" << dir_ << "/tinyproxy.log\"\n";
      // No ConnectPort line: CONNECT to any port (the tests' servers use free ports).
      if (!o.username.empty()) c << "BasicAuth " << o.username << " " << o.password << "\n";
    }
    std::vector<std::string> args = {bin, "-d", "-c", conf};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const auto out = dir_ + "/stdout";
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    const int rc = posix_spawn(&pid_, bin.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      pid_ = -1;
      return false;
    }
    // Listening, or exited (the port was taken): a process offers no event to wait on.
    auto up = poll([&] { return accepts(port) ? 1 : (waitpid(pid_, nullptr, WNOHANG) == pid_ ? -1 : 0); },
                   [](int s) { return s != 0; }, std::chrono::seconds(10));
    if (up.last == 1) return true;
    if (up.last == -1) pid_ = -1;  // reaped
    return false;
  }

  std::string dir_;
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace octorun::test
