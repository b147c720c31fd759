// github-simulator: the GitHub simulator as a process, for the demo and the bench.
//   github-simulator [--port N] [--bind ADDR] [--tls-pem FILE] [--app ID:CLIENT_ID:PUBLIC_KEY_FILE]...
//                    [--app-installation APP_ID:ID:ACCOUNT[:REPO,...]]... [--webhook-url URL]
//                    [--webhook-secret S] [--pat TOKEN]... [--repo o/r]... [--org o]...
//                    [--long-poll-ms N] [--token-ttl-s N] [--admin-token-ttl-s N]
//                    [--session-idle-timeout-ms N] [--rate-limit N] [--rate-limit-window-s N]
//                    [--assignment-timeout-ms N] [--max-requeues N] [--auto-online] [--auto-scopes]
//                    [--endpoints-file PATH]
// Prints "listening on <base url>" once it listens (a parent reading the pipe
// takes the address from it) and serves until SIGINT/SIGTERM. With
// --endpoints-file, also writes {"baseURL": "<base url>"} to PATH, replaced
// whole (as the manager's --endpoints-file), for scripts that start it in
// the background with its output in a log: they wait on that file.
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "adapters/files/whole_file.hpp"
#include "common/json_writer.hpp"
#include "test/simulator/simulator.hpp"

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "a:b:rest" -> {"a", "b", "rest"}: at most `n` parts, the last keeps its colons.
std::vector<std::string> split_colons(const std::string& s, std::size_t n) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (out.size() + 1 < n) {
    auto colon = s.find(':', from);
    if (colon == std::string::npos) break;
    out.push_back(s.substr(from, colon - from));
    from = colon + 1;
  }
  out.push_back(s.substr(from));
  return out;
}

std::int64_t positive(const std::string& s) {
  char* end = nullptr;
  auto v = std::strtoll(s.c_str(), &end, 10);
  return end != s.c_str() && *end == '\0' && v > 0 ? v : 0;
}

// Writes {"baseURL": url} to `path`, whole (files::write_whole). The
// error names the path and why.
std::string write_endpoints_file(const std::string& path, const std::string& url) {
  octorun::json::writer w;
  auto written = octorun::files::write_whole(path, w.open().field("baseURL", url).close().str() + "\n");
  return written ? "" : written.error();
}

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "github-simulator: " << message << "\n";
  std::exit(2);
}
}  // namespace

int main(int argc, char** argv) {
  octorun::sim::simulator_options o;
  std::vector<std::string> repos, orgs;
  std::vector<octorun::sim::github_app> apps;
  struct installation {
    std::int64_t app_id;
    std::int64_t id;
    std::string account;
    std::vector<std::string> granted;
  };
  std::vector<installation> installations;
  bool pats_given = false;
  std::string endpoints_file;
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
    else if (a == "--app") {  // ID:CLIENT_ID:PUBLIC_KEY_FILE
      auto parts = split_colons(next(), 3);
      if (parts.size() != 3 || positive(parts[0]) == 0 || parts[1].empty())
        usage_error("--app wants ID:CLIENT_ID:PUBLIC_KEY_FILE");
      auto key = read_file(parts[2]);
      if (key.empty()) usage_error("--app: cannot read a public key from " + parts[2]);
      apps.push_back({positive(parts[0]), parts[1], key});
    } else if (a == "--app-installation") {  // APP_ID:ID:ACCOUNT[:REPO,REPO...]
      auto parts = split_colons(next(), 4);
      if (parts.size() < 3 || positive(parts[0]) == 0 || positive(parts[1]) == 0 || parts[2].empty())
        usage_error("--app-installation wants APP_ID:ID:ACCOUNT[:REPO,...]");
      std::vector<std::string> granted;
      if (parts.size() == 4) {
        std::stringstream list(parts[3]);
        for (std::string r; std::getline(list, r, ',');) granted.push_back(r);
      }
      installations.push_back({positive(parts[0]), positive(parts[1]), parts[2], granted});
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
    else if (a == "--assignment-timeout-ms")
      o.assignment_timeout = std::chrono::milliseconds(std::atoll(next().c_str()));
    else if (a == "--max-requeues")
      o.max_requeues = std::atoi(next().c_str());
    else if (a == "--auto-online")
      o.auto_online = true;
    else if (a == "--auto-scopes")
      o.auto_scopes = true;
    else if (a == "--endpoints-file")
      endpoints_file = next();
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
  for (const auto& app : apps) (*sim)->add_app(app);
  for (const auto& [app_id, id, account, granted] : installations)
    (*sim)->add_app_installation(app_id, id, account, granted);
  // Written once the organisations, repositories and Apps above are in
  // place: a reader of the file may use them at once.
  if (!endpoints_file.empty())
    if (auto failed = write_endpoints_file(endpoints_file, (*sim)->base_url()); !failed.empty()) {
      std::cerr << "github-simulator: --endpoints-file: " << failed << "\n";
      return 1;
    }
  std::cout << "listening on " << (*sim)->base_url() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
