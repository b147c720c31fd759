#include "bench/chaos/replicas.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "bench/manager/harness.hpp"

namespace octorun::chaos {

using namespace std::chrono_literals;

replicas::replicas(replica_options o, timeline& tl) : o_(std::move(o)), tl_(tl) {
  slots_.resize(2);
  slots_[0].base_identity = "replica-0";
  slots_[1].base_identity = "replica-1";
}

replicas::~replicas() {
  stop_ = true;
  if (supervisor_.joinable()) supervisor_.join();
  std::lock_guard l(mu_);
  for (auto& s : slots_)
    if (s.proc) s.proc->stop(SIGKILL);
}

void replicas::start() {
  {
    std::lock_guard l(mu_);
    for (auto& s : slots_) spawn(s);
  }
  supervisor_ = std::thread([this] { supervise(); });
}

void replicas::spawn(slot& s) {
  s.identity = s.base_identity + (s.generation > 0 ? "-g" + std::to_string(s.generation) : "");
  const auto files = o_.log_dir + "/" + s.identity + "." + std::to_string(s.incarnation++);
  s.log_path = files + ".log";
  s.log_offset = 0;
  s.intake.clear();
  s.serving.clear();
  s.harness_killed = false;
  s.restart_at.reset();
  std::vector<std::string> args = {"--kubeconfig=" + o_.kubeconfig,
                                   "--namespaces=" + o_.namespaces,
                                   "--lease-namespace=" + o_.lease_namespace,
                                   "--identity=" + s.identity,
                                   "--webhook-bind=127.0.0.1",
                                   "--webhook-port=0",
                                   "--health-bind=127.0.0.1",
                                   "--health-port=0",
                                   "--metrics-bind=127.0.0.1",
                                   "--metrics-port=0",
                                   "--log-format=text",
                                   "--log-level=" + o_.log_level,
                                   "--scheduler.max-threads=2",
                                   "--github-http-hosts=127.0.0.1",
                                   "--allow-sets-without-class"};
  // Where it tells the URLs it listens on (observe() reads them there, and
  // asks its /readyz whether it leads): never its log.
  args.push_back("--endpoints-file=" + files + ".endpoints.json");
  s.proc = std::make_unique<test::octorun_process>(o_.binary, args, o_.webhook_secret, s.log_path);
  tl_.add("manager",
          s.identity + " started (pid " + std::to_string(s.proc->pid()) + ", log " + s.log_path + ")");
}

void replicas::observe(slot& s) {
  if (s.serving.empty()) s.serving = s.proc->wait_intake(0ms);
  // A leader never turns standby (it exits when it loses the Lease): asked
  // until it leads.
  if (!s.serving.empty() && s.intake.empty()) {
    s.intake = s.proc->wait_leading(0ms);
    if (!s.intake.empty()) tl_.add("manager", s.identity + " leads: webhook intake " + s.intake);
  }
}

void replicas::scan_log(slot& s) {
  std::ifstream in(s.log_path);
  in.seekg(static_cast<std::streamoff>(s.log_offset));
  for (std::string line; std::getline(in, line);) {
    if (in.eof()) break;  // a partial last line: read it whole next time
    s.log_offset += line.size() + 1;
    if (line.find("lost leadership") != std::string::npos || line.find(" critical") != std::string::npos ||
        line.find("CRITICAL") != std::string::npos || line.find(" error ") != std::string::npos) {
      tl_.add("manager", s.identity + ": " + line.substr(0, 300));
    }
  }
}

void replicas::supervise() {
  while (!stop_) {
    {
      std::lock_guard l(mu_);
      auto now = std::chrono::steady_clock::now();
      for (auto& s : slots_) {
        if (s.proc && s.proc->running()) {
          scan_log(s);
          if (auto status = s.proc->exited(); !status) {
            observe(s);
          } else {
            scan_log(s);
            std::string how = WIFSIGNALED(*status) ? "signal " + std::to_string(WTERMSIG(*status))
                                                   : "status " + std::to_string(WEXITSTATUS(*status));
            if (WIFSIGNALED(*status) && !s.harness_killed) {
              ++crashes_;
              tl_.add("VIOLATION", s.identity + " CRASHED (" + how + "); log " + s.log_path);
            } else {
              tl_.add("manager", s.identity + " exited on its own (" + how + "); restarting in 2 s");
            }
            s.intake.clear();
            s.restart_at = now + 2s;
          }
        }
        if (s.restart_at && *s.restart_at <= now && !stop_) {
          ++restarts_;
          spawn(s);
        }
      }
    }
    // The supervisor's period: exits, endpoints files and /readyz offer no event.
    std::this_thread::sleep_for(200ms);
  }
}

replicas::leader_info replicas::leader() const {
  std::lock_guard l(mu_);
  if (retiring_ && !retiring_->intake.empty()) return {retiring_->intake, retiring_->log_path};
  for (const auto& s : slots_)
    if (s.proc && s.proc->running() && !s.intake.empty()) return {s.intake, s.log_path};
  return {};
}

std::vector<replicas::leader_info> replicas::serving() const {
  std::lock_guard l(mu_);
  std::vector<leader_info> out;
  auto add = [&](const slot& s) {
    if (s.proc && s.proc->running() && !s.serving.empty()) out.push_back({s.serving, s.log_path});
  };
  if (retiring_) add(*retiring_);  // until its SIGTERM takes its process
  for (const auto& s : slots_) add(s);
  return out;
}

int replicas::leader_slot() const {
  std::lock_guard l(mu_);
  if (retiring_ && !retiring_->intake.empty()) return 2;
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].proc && slots_[i].proc->running() && !slots_[i].intake.empty()) return static_cast<int>(i);
  return -1;
}

bool replicas::wait_leader(std::chrono::seconds within) const {
  return test::poll([&] { return leader_slot(); }, [](int s) { return s >= 0; }, within).met;
}

bool replicas::kill_leader(std::chrono::seconds restart_after) {
  std::lock_guard l(mu_);
  for (auto& s : slots_) {
    if (!s.proc || !s.proc->running() || s.intake.empty()) continue;
    s.harness_killed = true;
    tl_.add("fault", "kill -9 " + s.identity + " (the leader); restart in " +
                         std::to_string(restart_after.count()) + " s");
    s.proc->stop(SIGKILL);
    s.intake.clear();
    s.restart_at = std::chrono::steady_clock::now() + restart_after;
    return true;
  }
  return false;
}

void replicas::kill_all(std::chrono::seconds restart_after) {
  std::lock_guard l(mu_);
  for (auto& s : slots_) {
    if (s.proc && s.proc->running()) {
      s.harness_killed = true;
      s.proc->stop(SIGKILL);
    }
    s.intake.clear();
    s.restart_at = std::chrono::steady_clock::now() + restart_after;
  }
  tl_.add("fault", "kill -9 both replicas; restart in " + std::to_string(restart_after.count()) + " s");
}

bool replicas::terminate(std::unique_ptr<test::octorun_process>& p, const std::string& who) {
  if (!p || !p->running()) return true;
  ::kill(p->pid(), SIGTERM);
  auto exited =
      test::poll([&] { return p->exited(); }, [](const std::optional<int>& s) { return s.has_value(); }, 30s);
  if (!exited.met) {
    tl_.add("VIOLATION", who + " did not exit within 30 s of SIGTERM; killed");
    ++crashes_;
    p->stop(SIGKILL);
    return false;
  }
  int st = *exited.last;
  bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  std::string how =
      WIFEXITED(st) ? "status " + std::to_string(WEXITSTATUS(st)) : "signal " + std::to_string(WTERMSIG(st));
  if (!clean) ++crashes_;
  tl_.add(clean ? "manager" : "VIOLATION", who + " exited after SIGTERM (" + how + ")");
  return clean;
}

void replicas::rollout() {
  for (std::size_t i = 0; i < 2; ++i) {
    {
      // The new pod comes up before the old one goes (maxSurge); the old
      // one keeps serving (and leading) until its SIGTERM.
      std::lock_guard l(mu_);
      retiring_ = std::move(slots_[i]);
      slots_[i] = slot{};
      slots_[i].base_identity = retiring_->base_identity;
      slots_[i].generation = retiring_->generation + 1;
      spawn(slots_[i]);
    }
    // Until the new one serves (its --endpoints-file names its servers once
    // they all listen; bounded), then SIGTERM the old.
    test::poll(
        [&] {
          std::lock_guard l(mu_);
          return slots_[i].proc && !slots_[i].proc->wait_health(0ms).empty();
        },
        [](bool up) { return up; }, 30s);
    std::unique_ptr<test::octorun_process> old;
    std::string who;
    {
      std::lock_guard l(mu_);
      old = std::move(retiring_->proc);
      who = retiring_->identity;
    }
    tl_.add("fault", "rollout: SIGTERM " + who);
    terminate(old, who);
    std::lock_guard l(mu_);
    retiring_.reset();
  }
}

bool replicas::stop_all() {
  stop_ = true;
  if (supervisor_.joinable()) supervisor_.join();
  bool clean = true;
  std::lock_guard l(mu_);
  for (auto& s : slots_) clean = terminate(s.proc, s.identity) && clean;
  return clean;
}

std::vector<replicas::memory> replicas::rss() const {
  std::lock_guard l(mu_);
  std::vector<memory> out;
  for (const auto& s : slots_)
    if (s.proc && s.proc->running())
      out.push_back({bench::memory_of(s.proc->pid()).rss_kib, s.proc->pid(), s.identity});
  return out;
}

}  // namespace octorun::chaos
