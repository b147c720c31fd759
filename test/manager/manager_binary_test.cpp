// The octorun binary as users run it: against the real apiserver (kwok runs
// the pods) and the GitHub simulator, which delivers signed webhooks to it.
// Scale 0 -> N -> 0 from job demand, a clean SIGTERM that releases the
// Lease, and a kill -9 in the middle of scaling after which a restarted
// manager converges with nothing leaked.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "test/manager/wiring.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"

extern char** environ;

namespace octorun {
namespace {

using namespace std::chrono_literals;

class ManagerBinary : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  ManagerBinary() : c_(test::cluster()), ns_(test::make_namespace(c_, "mgr")) {
    auto sim = sim::simulator::start({});
    if (!sim) ADD_FAILURE() << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
    log_ = "/tmp/octorun-manager-" + ns_ + ".log";
    // What the runner process in each pod would do: connect to GitHub once
    // its pod runs (kwok runs pods, the simulator plays GitHub).
    bridge_ = std::thread([this] {
      std::set<std::string> online;
      while (!stop_bridge_) {
        std::istringstream running(test::kubectl(
            c_, "-n " + ns_ +
                    " get pods --field-selector=status.phase=Running -o jsonpath='{.items[*].metadata.name}' "
                    "2>/dev/null || true"));
        for (std::string name; running >> name;)
          if (online.insert(name).second) sim_->runner_online(name);
        std::this_thread::sleep_for(100ms);
      }
    });
  }

  ~ManagerBinary() override {
    stop_bridge_ = true;
    bridge_.join();
    stop(SIGKILL);
    test::kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
    if (!HasFailure()) std::remove(log_.c_str());
  }

  // Starts the manager; returns the URL of its webhook intake.
  std::string start_manager() {
    std::vector<std::string> args = {OCTORUN_BINARY,
                                     "--kubeconfig=" + c_.kubeconfig,
                                     "--namespace=" + ns_,
                                     "--lease-namespace=" + ns_,
                                     "--identity=replica-0",
                                     "--webhook-bind=127.0.0.1",
                                     "--webhook-port=0",
                                     "--health-bind=127.0.0.1",
                                     "--health-port=0",
                                     "--log-format=text",
                                     "--scheduler.max-threads=2"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::string secret = "OCTORUN_WEBHOOK_SECRET=" + secret_;
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    env.push_back(secret.data());
    env.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, OCTORUN_BINARY, &fa, nullptr, argv.data(), env.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    // The manager logs its intake URL once it leads.
    std::regex url(R"(webhook intake listening on (http://[0-9.:]+/webhook))");
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(log_);
      std::stringstream text;
      text << in.rdbuf();
      auto all = text.str();
      std::smatch m;
      // The last match: after a restart, the new process's URL.
      std::string found;
      for (auto it = std::sregex_iterator(all.begin(), all.end(), url); it != std::sregex_iterator(); ++it)
        found = (*it)[1];
      if (!found.empty() && found != last_url_) {
        last_url_ = found;
        sim_->set_webhook(found, secret_);
        return found;
      }
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << "the manager did not start leading; log:\n" << log_tail();
    return {};
  }

  // Sends `sig` and waits for the process; returns its exit status.
  int stop(int sig) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

  std::string log_tail() {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    auto t = s.str();
    return t.size() > 4000 ? t.substr(t.size() - 4000) : t;
  }

  void apply_runnerset(int max_runners) {
    test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, max_runners);
  }

  std::vector<std::int64_t> queue_jobs(int n, std::chrono::milliseconds duration) {
    std::vector<std::int64_t> ids;
    for (int i = 0; i < n; ++i) {
      sim::job_spec j;
      j.repository = "acme/app";
      j.labels = {"self-hosted", "linux"};
      j.duration = duration;
      ids.push_back(sim_->add_job(j));
    }
    return ids;
  }

  bool all_completed(const std::vector<std::int64_t>& ids, std::chrono::seconds within) {
    return sim_->wait_until(
        [&](const sim::simulator& s) {
          return std::all_of(ids.begin(), ids.end(), [&](auto id) { return s.job_state(id) == "completed"; });
        },
        within);
  }

  std::string count(const std::string& kind) {
    auto out = test::kubectl(c_, "-n " + ns_ + " get " + kind + " -o name | wc -l");
    return out.substr(0, out.find_first_of(" \n"));
  }

  bool eventually_none(const std::string& kind, std::chrono::seconds within = 60s) {
    auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      if (count(kind) == "0") return true;
      std::this_thread::sleep_for(200ms);
    }
    ADD_FAILURE() << kind << " left: " << test::kubectl(c_, "-n " + ns_ + " get " + kind)
                  << "\nmanager log:\n"
                  << log_tail();
    return false;
  }

  const test::cluster_info& c_;
  std::string ns_;
  std::unique_ptr<sim::simulator> sim_;
  std::string secret_ = "It's a Secret to Everybody";
  std::string log_;
  std::string last_url_;
  pid_t pid_ = -1;
  std::atomic<bool> stop_bridge_{false};
  std::thread bridge_;
};

TEST_F(ManagerBinary, ScalesFromZeroWithDemandAndBackThenStopsCleanly) {
  start_manager();
  apply_runnerset(3);
  auto jobs = queue_jobs(5, 1500ms);
  EXPECT_TRUE(all_completed(jobs, 120s)) << log_tail();
  EXPECT_TRUE(eventually_none("runners"));
  EXPECT_TRUE(eventually_none("pods"));
  EXPECT_TRUE(eventually_none("secrets -l octorun.io/runner"));
  // Frugality: about one runner per job. Not exactly: with more jobs than
  // maxRunners, demand can briefly run ahead of the runners GitHub has
  // assigned, and the extra idle runner is scaled down again (seen: 7 JIT
  // calls for 5 jobs in 1 of ~10 runs; to be tightened, see the issue note).
  EXPECT_LE(sim_->calls("rest.generate_jitconfig"), 5 + 3);
  EXPECT_EQ(sim_->state_json().find("\"ephemeral\":true"), std::string::npos) << "a GitHub runner leaked";

  auto status = stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log_tail();
  EXPECT_EQ(
      test::kubectl(c_, "-n " + ns_ + " get lease octorun-manager -o jsonpath='{.spec.holderIdentity}'"), "")
      << "the Lease was not released";
}

TEST_F(ManagerBinary, AKilledManagerRestartsAndConvergesWithNothingLeaked) {
  start_manager();
  apply_runnerset(4);
  auto jobs = queue_jobs(4, 8000ms);
  // Kill it while its runners run their jobs.
  ASSERT_TRUE(sim_->wait_until(
      [&](const sim::simulator& s) {
        return std::all_of(jobs.begin(), jobs.end(), [&](auto id) { return s.job_state(id) == "running"; });
      },
      60s))
      << log_tail();
  auto status = stop(SIGKILL);
  EXPECT_TRUE(WIFSIGNALED(status));
  // The same identity takes the Lease back at once; the watches rebuild its
  // state; the jobs' completions end the runners.
  start_manager();
  EXPECT_TRUE(all_completed(jobs, 120s)) << log_tail();
  EXPECT_TRUE(eventually_none("runners"));
  EXPECT_TRUE(eventually_none("pods"));
  EXPECT_TRUE(eventually_none("secrets -l octorun.io/runner"));
  EXPECT_EQ(sim_->state_json().find("\"ephemeral\":true"), std::string::npos) << "a GitHub runner leaked";
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 4) << "a runner was created twice";
}

}  // namespace
}  // namespace octorun
