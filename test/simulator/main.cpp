// github-simulator: the GitHub simulator as a process, for the demo and the bench.
//   github-simulator [--port N] [--bind ADDR] [--tls-pem FILE] [--app-public-key FILE]
//                    [--webhook-url URL] [--webhook-secret S] [--pat TOKEN]... [--repo o/r]... [--org o]...
//                    [--long-poll-ms N] [--token-ttl-s N] [--admin-token-ttl-s N]
//                    [--session-idle-timeout-ms N] [--rate-limit N] [--rate-limit-window-s N]
//                    [--auto-online] [--auto-scopes]
// Prints "listening on <base url>" and serves until SIGINT/SIGTERM.
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "test/simulator/simulator.hpp"

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

int main(int argc, char** argv) {
  octorun::sim::simulator_options o;
  std::vector<std::string> repos, orgs;
  struct installation {
    std::int64_t id;
    std::string account;
    std::vector<std::string> granted;
  };
  std::vector<installation> installations;
  bool pats_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "missing value for " << a << "\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--port")
      o.http.port = static_cast<std::uint16_t>(std::atoi(next().c_str()));
    else if (a == "--bind")
      o.http.bind_address = next();
    else if (a == "--tls-pem")
      o.http.tls_pem_file = next();
    else if (a == "--app-public-key")
      o.app_public_key_pem = read_file(next());
    else if (a == "--app-installation") {  // ID:ACCOUNT[:REPO,REPO...]
      auto spec = next();
      auto colon = spec.find(':');
      auto rest = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
      auto account = rest.substr(0, rest.find(':'));
      std::vector<std::string> granted;
      if (rest.find(':') != std::string::npos) {
        std::stringstream list(rest.substr(rest.find(':') + 1));
        for (std::string r; std::getline(list, r, ',');) granted.push_back(r);
      }
      installations.push_back({std::atoll(spec.substr(0, colon).c_str()), account, granted});
    } else if (a == "--webhook-url")
      o.webhook_url = next();
    else if (a == "--webhook-secret")
      o.webhook_secret = next();
    else if (a == "--pat") {
      if (!pats_given) o.pats.clear();
      pats_given = true;
      o.pats.push_back(next());
    } else if (a == "--repo")
      repos.push_back(next());
    else if (a == "--org")
      orgs.push_back(next());
    else if (a == "--long-poll-ms")
      o.long_poll = std::chrono::milliseconds(std::atoll(next().c_str()));
    else if (a == "--token-ttl-s")
      o.installation_token_ttl = std::chrono::seconds(std::atoll(next().c_str()));
    else if (a == "--admin-token-ttl-s")
      o.admin_token_ttl = std::chrono::seconds(std::atoll(next().c_str()));
    else if (a == "--session-idle-timeout-ms")
      o.session_idle_timeout = std::chrono::milliseconds(std::atoll(next().c_str()));
    else if (a == "--rate-limit")
      o.rate_limit = std::atoll(next().c_str());
    else if (a == "--rate-limit-window-s")
      o.rate_limit_window = std::chrono::seconds(std::atoll(next().c_str()));
    else if (a == "--auto-online")
      o.auto_online = true;
    else if (a == "--auto-scopes")
      o.auto_scopes = true;
    else if (a == "--help" || a == "-h") {
      std::cout << "see test/simulator/README.md\n";
      return 0;
    } else {
      std::cerr << "unknown option " << a << "\n";
      return 2;
    }
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts
  auto sim = octorun::sim::simulator::start(o);
  if (!sim) {
    std::cerr << "github-simulator: " << sim.error() << "\n";
    return 1;
  }
  for (const auto& r : repos) (*sim)->add_repository(r);
  for (const auto& org : orgs) (*sim)->add_organization(org);
  for (const auto& [id, account, granted] : installations) (*sim)->add_app_installation(id, account, granted);
  std::cout << "listening on " << (*sim)->base_url() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
