// Running the octorun binary as users do, for the binary tests and
// bench/manager: the process (spawned with its log in a file, stopped by
// signal) and a watch of the pods and Runners in its namespace that brings
// each runner pod's GitHub runner online once kwok runs the pod (what the
// runner process in the pod would do) and timestamps what it sees.
// Header-only and free of GoogleTest so that the benchmark can use it.
#pragma once

#include <fcntl.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/http/http_client.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/informer.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"

extern char** environ;

namespace octorun::test {

// The options every test and bench run gives the manager: one namespace,
// its Lease there, loopback and free ports, text logs, two CAF threads, and
// the GitHub simulator's plain-http loopback host allowed as a scope.
//
// It also writes the URLs it listens on to a file of its own
// (--endpoints-file), which octorun_process reads: tests wait on that and on
// /readyz, never on the log.
inline std::vector<std::string> octorun_args(const std::string& kubeconfig, const std::string& ns,
                                             const std::string& identity) {
  static std::atomic<int> started{0};
  const auto endpoints_file = "/tmp/octorun-endpoints-" + std::to_string(getpid()) + "-" + ns + "-" +
                              identity + "-" + std::to_string(started++) + ".json";
  return {"--endpoints-file=" + endpoints_file, "--kubeconfig=" + kubeconfig, "--namespace=" + ns,
          "--lease-namespace=" + ns, "--identity=" + identity, "--webhook-bind=127.0.0.1", "--webhook-port=0",
          "--health-bind=127.0.0.1", "--health-port=0", "--metrics-bind=127.0.0.1", "--metrics-port=0",
          "--log-format=text", "--scheduler.max-threads=2", "--github-http-hosts=127.0.0.1",
          // The tests' sets name no RunnerClass (manager_class_integration drops this).
          "--allow-sets-without-class"};
}

class octorun_process {
 public:
  // Starts `binary args...` with OCTORUN_WEBHOOK_SECRET=secret (and
  // `extra_env`, NAME=value each); stdout and stderr go to `log` (truncated).
  octorun_process(const std::string& binary, std::vector<std::string> args, const std::string& secret,
                  std::string log, std::vector<std::string> extra_env = {})
      : log_(std::move(log)) {
    for (const auto& a : args)
      if (a.starts_with("--endpoints-file="))
        endpoints_file_ = a.substr(std::string_view("--endpoints-file=").size());
    if (!endpoints_file_.empty()) std::remove(endpoints_file_.c_str());  // a file left by an earlier run
    args.insert(args.begin(), binary);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::string secret_env = "OCTORUN_WEBHOOK_SECRET=" + secret;
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    env.push_back(secret_env.data());
    for (auto& e : extra_env) env.push_back(e.data());
    env.push_back(nullptr);
    if (posix_spawn(&pid_, binary.c_str(), &fa, nullptr, argv.data(), env.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~octorun_process() {
    stop(SIGKILL);
    if (!endpoints_file_.empty()) std::remove(endpoints_file_.c_str());
  }
  octorun_process(const octorun_process&) = delete;
  octorun_process& operator=(const octorun_process&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // Its wait status once it has exited on its own (reaped then; running()
  // turns false), else nullopt. Never blocks.
  std::optional<int> exited() {
    if (pid_ <= 0) return std::nullopt;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    pid_ = -1;
    return status;
  }

  // Sends `sig` and reaps the process; its wait status (-1 if not running).
  int stop(int sig) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

  // The wait status once the process exits by itself within `within`
  // (nullopt: still running; stop() it). A process offers no event to wait
  // on here: it is polled.
  std::optional<int> wait_exit(std::chrono::milliseconds within) {
    if (pid_ <= 0) return std::nullopt;
    int status = 0;
    auto reaped =
        test::poll([&] { return waitpid(pid_, &status, WNOHANG); }, [](pid_t r) { return r != 0; }, within);
    if (!reaped || reaped.last != pid_) return std::nullopt;
    pid_ = -1;
    return status;
  }

  std::string log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string log_tail(std::size_t n = 4000) const {
    auto t = log();
    return t.size() > n ? t.substr(t.size() - n) : t;
  }
  const std::string& log_path() const { return log_; }

  // The first capture of the first match of `pattern` in the log, once it
  // appears; empty when it does not within `within` (or the process exits).
  std::string wait_for_log(const std::regex& pattern, std::chrono::milliseconds within) const {
    // A log file offers no event to wait on: poll it (until the process exits).
    auto capture = [&]() -> std::optional<std::string> {
      auto text = log();
      std::smatch m;
      if (std::regex_search(text, m, pattern)) return m[1].str();
      return std::nullopt;
    };
    return test::poll(
               capture, [&](const std::optional<std::string>& c) { return c || !alive(); }, within)
        .last.value_or("");
  }
  // What the manager wrote to its --endpoints-file once every server
  // listens ("health", "metrics", "admission", "webhookIntake": URLs), or
  // nothing if it does not within `within` (or exits, or was started
  // without the flag).
  std::map<std::string, std::string> wait_endpoints(std::chrono::milliseconds within) const {
    if (endpoints_file_.empty()) return {};
    // A file offers no event to wait on: poll it. The manager renames it
    // into place whole.
    auto read = [&]() -> std::map<std::string, std::string> {
      std::ifstream in(endpoints_file_);
      if (!in) return {};
      std::stringstream text;
      text << in.rdbuf();
      rapidjson::Document d;
      if (d.Parse(text.str().c_str()).HasParseError() || !d.IsObject()) return {};
      std::map<std::string, std::string> urls;
      for (const auto& m : d.GetObject())
        if (m.value.IsString()) urls[m.name.GetString()] = m.value.GetString();
      return urls;
    };
    return test::poll(
               read, [&](const auto& urls) { return !urls.empty() || !alive(); }, within)
        .last;
  }
  // One endpoint's URL once the servers listen ("" if it is off).
  std::string wait_endpoint(const std::string& name, std::chrono::milliseconds within) const {
    auto urls = wait_endpoints(within);
    auto it = urls.find(name);
    return it == urls.end() ? std::string() : it->second;
  }
  // Whether this replica leads within `within`: its /readyz says "leading".
  bool wait_leads(std::chrono::milliseconds within) const {
    const auto deadline = std::chrono::steady_clock::now() + within;
    auto health = wait_endpoint("health", within);
    if (health.empty()) return false;
    http::client client;
    client.set_plain_http(true);
    auto leads = [&] {
      http::request req;
      req.url = health + "/readyz";
      req.timeout = std::chrono::seconds(2);
      auto got = client.perform(req);
      return got && got->status == 200 && got->body == "leading";
    };
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return test::poll(
               leads, [&](bool led) { return led || !alive(); }, std::max(left, std::chrono::milliseconds(0)))
        .last;
  }
  // The webhook intake URL once this replica leads ("" if it does not, or
  // serves no intake).
  std::string wait_leading(std::chrono::milliseconds within) const {
    return wait_leads(within) ? wait_endpoint("webhookIntake", within) : std::string();
  }
  // The URL of this replica's webhook intake once it serves (every replica).
  std::string wait_intake(std::chrono::milliseconds within) const {
    return wait_endpoint("webhookIntake", within);
  }
  // The base URL of /healthz and /readyz once they serve.
  std::string wait_health(std::chrono::milliseconds within) const { return wait_endpoint("health", within); }
  // The base URL of /metrics (a listener of its own) once it serves.
  std::string wait_metrics(std::chrono::milliseconds within) const {
    auto url = wait_endpoint("metrics", within);
    const std::string_view path = "/metrics";
    return url.ends_with(path) ? url.substr(0, url.size() - path.size()) : url;
  }

 private:
  // Whether it still runs, without reaping it (WNOWAIT): a process that
  // exited during a wait keeps its status for exited() and stop(), and its
  // pid stays its own until then.
  bool alive() const {
    if (pid_ <= 0) return false;
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
  }

  std::string log_;
  std::string endpoints_file_;  // --endpoints-file, when given
  pid_t pid_ = -1;
};

// The value of the first series of metric `name` on `metrics_base`/metrics
// whose labels include every `labels` pair (`key="value"`); "" if none.
inline std::string scrape_metric(const std::string& metrics_base, const std::string& name,
                                 const std::vector<std::string>& labels) {
  http::client client;
  client.set_plain_http(true);
  auto r = client.perform({"GET", metrics_base + "/metrics", {}, {}, std::chrono::seconds(5)});
  if (!r || r->status != 200) return "";
  std::istringstream lines(r->body);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(name + "{")) continue;
    const auto close = line.find("} ");
    if (close == std::string::npos) continue;
    const auto series = line.substr(0, close);
    if (std::all_of(labels.begin(), labels.end(),
                    [&](const std::string& l) { return series.find(l) != std::string::npos; }))
      return line.substr(close + 2);
  }
  return "";
}

// Waits up to `within` for every phase of octorun_job_phase_seconds
// (docs/monitoring.md, "Job timeline") to have a sample for the RunnerSet
// "linux" in `ns` (those at a Runner's end come once its deletion is
// seen); the phases still without one, space-separated ("" when none).
inline std::string job_phases_without_sample(const std::string& metrics_url, const std::string& ns,
                                             std::chrono::seconds within) {
  auto missing = [&] {
    std::string out;
    for (const char* phase : {"runner_created", "pod_scheduled", "containers_started", "runner_online",
                              "job_started", "job_completed", "runner_gone"}) {
      const auto count = scrape_metric(metrics_url, "octorun_job_phase_seconds_count",
                                       {"namespace=\"" + ns + "\"", "phase=\"" + std::string(phase) + "\"",
                                        "runnerset=\"linux\"", "variant=\"\""});
      if (count.empty() || count == "0") out += std::string(out.empty() ? "" : " ") + phase;
    }
    return out;
  };
  return poll(
             missing, [](const std::string& m) { return m.empty(); }, within)
      .last;
}

// Queues `n` jobs of `duration` for runs-on [self-hosted, `label`] in acme/app.
inline std::vector<std::int64_t> queue_jobs(sim::simulator& sim, int n, std::chrono::milliseconds duration,
                                            const std::string& label = "linux") {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < n; ++i) {
    sim::job_spec j;
    j.repository = "acme/app";
    j.labels = {"self-hosted", label};
    j.duration = duration;
    ids.push_back(sim.add_job(j));
  }
  return ids;
}

// Waits until every job in `ids` has completed on the simulator.
inline bool all_completed(const sim::simulator& sim, const std::vector<std::int64_t>& ids,
                          std::chrono::milliseconds within) {
  return sim.wait_until(
      [&](const sim::simulator& s) {
        return std::all_of(ids.begin(), ids.end(), [&](auto id) { return s.job_state(id) == "completed"; });
      },
      within);
}

// Pods and Runners of one namespace through the project's reflector
// (list+watch). The first sighting of each runner pod and each Runner's
// deletion are timestamped; a pod that reaches Running has its runner come
// online on the simulator once.
class namespace_watch {
  template <typename F>
  auto locked(F f) const {
    std::lock_guard l(mu_);
    return f();
  }

 public:
  using clock_type = std::chrono::steady_clock;

  namespace_watch(const kube::config& cfg, const std::string& ns, sim::simulator& sim) : sim_(sim) {
    threads_.push_back(reflect(cfg, ns, {"", "v1", "pods", true}, true));
    threads_.push_back(reflect(cfg, ns, {"octorun.io", "v1alpha1", "runners", true}, false));
  }
  ~namespace_watch() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  namespace_watch(const namespace_watch&) = delete;
  namespace_watch& operator=(const namespace_watch&) = delete;

  std::size_t runners() const {
    return locked([&] { return runners_.size(); });
  }  // that exist now
  std::size_t runners_seen() const {
    return locked([&] { return runners_seen_; });
  }
  // Runners that are not terminal (no phase yet, Pending or Running; being
  // deleted or not) now, and the most there were at once: maxRunners bounds it.
  std::size_t not_terminal() const {
    return locked([&] { return not_terminal_.size(); });
  }
  std::size_t most_not_terminal() const {
    return locked([&] { return most_not_terminal_; });
  }
  std::size_t pods() const {
    return locked([&] { return pods_.size(); });
  }
  std::size_t online() const {
    return locked([&] { return online_; });
  }                                                                    // runners brought online
  std::map<std::string, clock_type::time_point> pod_created() const {  // by runner name
    return locked([&] { return pod_created_; });
  }
  std::map<std::string, clock_type::time_point> runner_deleted() const {
    return locked([&] { return runner_deleted_; });
  }

  // Waits until `pred` holds (checked on every event) or the deadline passes.
  bool wait(const std::function<bool(const namespace_watch&)>& pred, std::chrono::milliseconds within) const {
    auto deadline = clock_type::now() + within;
    for (;;) {
      if (pred(*this)) return true;
      if (clock_type::now() >= deadline) return false;
      std::unique_lock l(mu_);
      // Woken by every event; the bound only covers an event that came
      // between the check and the wait.
      changed_.wait_until(l, std::min(deadline, clock_type::now() + std::chrono::milliseconds(200)));
    }
  }

 private:
  std::thread reflect(const kube::config& cfg, const std::string& ns, kube::resource res, bool pods) {
    kube::informer_options o;
    o.res = std::move(res);
    o.ns = ns;
    o.watch_timeout_min = o.watch_timeout_max = 2;  // the stop flag is read between watches
    kube::reflector_callbacks cb;
    cb.replaced = [this, pods](kube::object_list l) {
      for (auto& item : l.items) pods ? on_pod(item, false) : on_runner(item, false);
    };
    cb.event = [this, pods](kube::watch_event ev) {
      if (ev.type == kube::event_type::error) return;
      bool deleted = ev.type == kube::event_type::deleted;
      pods ? on_pod(ev.obj, deleted) : on_runner(ev.obj, deleted);
    };
    return std::thread([this, cfg, o, cb] {
      kube::client c(cfg);
      kube::run_reflector(c, o, stop_, cb);
    });
  }

  void on_pod(const kube::object& o, bool deleted) {
    auto now = clock_type::now();
    std::string runner(o.label("octorun.io/runner")), name(o.name);
    bool running = false;
    if (const auto* status = o.member("status"); status != nullptr && status->IsObject()) {
      auto phase = status->FindMember("phase");
      running = phase != status->MemberEnd() && phase->value.IsString() &&
                std::string_view(phase->value.GetString()) == "Running";
    }
    bool go_online = false;
    {
      std::lock_guard l(mu_);
      if (!runner.empty()) pod_created_.try_emplace(runner, now);
      if (deleted) {
        pods_.erase(name);
      } else {
        auto& online = pods_[name];
        go_online = running && !online && o.deletion_timestamp.empty();
        online = online || go_online;
      }
    }
    // The pod is named after its Runner, whose GitHub runner has that name.
    if (go_online && sim_.runner_online(name)) locked([&] { return ++online_; });
    changed_.notify_all();
  }

  void on_runner(const kube::object& o, bool deleted) {
    auto now = clock_type::now();
    std::string name(o.name);
    std::string phase;
    if (const auto* status = o.member("status"); status != nullptr && status->IsObject())
      if (auto p = status->FindMember("phase"); p != status->MemberEnd() && p->value.IsString())
        phase = p->value.GetString();
    const bool terminal = phase == "Succeeded" || phase == "Failed" || phase == "Outdated";
    {
      std::lock_guard l(mu_);
      if (deleted) {
        runners_.erase(name);
        runner_deleted_.try_emplace(name, now);
      } else if (runners_.insert(name).second) {
        ++runners_seen_;
      }
      if (deleted || terminal)
        not_terminal_.erase(name);
      else
        not_terminal_.insert(name);
      most_not_terminal_ = std::max(most_not_terminal_, not_terminal_.size());
    }
    changed_.notify_all();
  }

  sim::simulator& sim_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::map<std::string, clock_type::time_point> pod_created_, runner_deleted_;
  std::map<std::string, bool> pods_;    // existing pods: online already sent
  std::set<std::string> runners_;       // existing Runners
  std::set<std::string> not_terminal_;  // existing Runners without a terminal phase
  std::size_t runners_seen_ = 0, online_ = 0, most_not_terminal_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace octorun::test
