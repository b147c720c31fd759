// octorun-loadtest end to end, as a platform team runs it: the tool binary
// against the test cluster with an Octorun manager running (the octorun
// binary as a host process watching one namespace; README.md shows the same
// against the chart on the real node), the GitHub simulator started by the
// tool. Its summary, its report, its exit status on a missed target, its
// refusals, and Ctrl-C: nothing is left behind.
//
// The namespaces of this test carry the test-suite label (make_namespace), so
// runs meant to load pass --allow-test-suite; the refusal test does not.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/common/lifecycle.hpp"
#include "common/json.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"

#ifndef OCTORUN_LOADTEST_BINARY
#error "OCTORUN_LOADTEST_BINARY must name the octorun-loadtest binary"
#endif
#ifndef OCTORUN_BINARY
#error "OCTORUN_BINARY must name the octorun binary"
#endif

namespace octorun {
namespace {

using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The tool as a child process (test/binary/binary_harness.hpp runs any
// binary); its stdout and stderr go to one file.
class tool_run {
 public:
  explicit tool_run(std::vector<std::string> args)
      : process_(OCTORUN_LOADTEST_BINARY, std::move(args), "",
                 "/tmp/octorun-loadtest-test-" + std::to_string(getpid()) + "-" +
                     std::to_string(counter()++) + ".out") {}
  ~tool_run() { std::remove(process_.log_path().c_str()); }

  // The exit status, or -1 (and the process killed) after `within`.
  int wait(std::chrono::seconds within) {
    auto status = process_.wait_exit(within);
    if (!status) {
      ADD_FAILURE() << "octorun-loadtest did not finish within " << within.count() << " s:\n" << output();
      process_.stop(SIGKILL);
      return -1;
    }
    return WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
  }
  void interrupt() { kill(process_.pid(), SIGINT); }
  std::string output() const { return process_.log(); }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  test::octorun_process process_;
};

class Loadtest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  Loadtest() : c_(test::cluster()), ns_(test::make_namespace(c_, "loadtest")) {
    report_ = "/tmp/octorun-loadtest-report-" + ns_;
    manager_ =
        std::make_unique<test::octorun_process>(OCTORUN_BINARY, test::octorun_args(c_.kubeconfig, ns_, "lt"),
                                                secret_, "/tmp/octorun-loadtest-manager-" + ns_ + ".log");
    webhook_ = manager_->wait_leading(30s);
    EXPECT_FALSE(webhook_.empty()) << manager_->log_tail();
  }
  ~Loadtest() override {
    if (!HasFailure()) {
      std::remove(manager_->log_path().c_str());
      std::filesystem::remove_all(report_);
    }
    manager_.reset();
    test::kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
  }

  // The flags every run here gives: this cluster, the namespace the manager
  // watches, kwok's node for runner pods, the test suite allowed.
  std::vector<std::string> base_args() {
    return {"--kubeconfig=" + c_.kubeconfig,
            "--namespace=" + ns_,
            "--node-selector=type=kwok",
            "--report=" + report_,
            "--allow-test-suite",
            "--manager-pid=" + std::to_string(manager_->pid())};
  }
  std::vector<std::string> with(std::vector<std::string> extra) {
    auto args = base_args();
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  rapidjson::Document summary_json() {
    rapidjson::Document d;
    auto text = read_file(report_ + "/summary.json");
    d.Parse(text.c_str());
    EXPECT_FALSE(d.HasParseError()) << text;
    return d;
  }

  std::string in_namespace(const std::string& what) {
    return test::kubectl(c_, "-n " + ns_ + " get " + what + " -o name");
  }
  // What the tool created in the namespace is gone: its RunnerSet, its
  // Secret, every Runner and runner pod.
  void expect_nothing_left() {
    EXPECT_EQ(in_namespace("runnersets,runners"), "");
    EXPECT_EQ(in_namespace("pods -l octorun.io/runner"), "");
    EXPECT_EQ(in_namespace("secrets -l app.kubernetes.io/managed-by=octorun-loadtest"), "");
    EXPECT_EQ(test::kubectl(c_, "get flowschemas -o name | grep octorun-loadtest || true"), "");
  }

  const test::cluster_info& c_;
  std::string ns_, report_, webhook_;
  const std::string secret_ = "loadtest-webhook-secret";
  std::unique_ptr<test::octorun_process> manager_;
};

TEST_F(Loadtest, ABurstThroughTheWebhookIntakeMeetsItsTargetsAndWritesAReport) {
  tool_run run(with({"--intake=Webhook", "--webhook-url=" + webhook_, "--webhook-secret=" + secret_,
                     "--jobs=12", "--max-runners=4", "--job-duration=uniform:100ms:500ms",
                     "--max-queue-p99=60s", "--min-jobs-per-s=0.05", "--max-github-calls-per-job=3",
                     "--max-rss-mib=512", "--manager-metrics=" + manager_->wait_metrics(10s) + "/metrics"}));
  ASSERT_EQ(run.wait(80s), 0) << run.output();
  auto out = run.output();
  // What the run cost, read off the manager's counters (their sums:
  // LoadtestCost; sub-second jobs on kwok round to a few seconds here).
  EXPECT_NE(out.find("cost         "), std::string::npos) << out;
  EXPECT_NE(out.find(" core-s, "), std::string::npos) << out;
  EXPECT_EQ(out.find("cannot read the manager's metrics"), std::string::npos) << out;
  EXPECT_NE(out.find("12 planned, 12 queued, 12 started, 12 completed"), std::string::npos) << out;
  EXPECT_NE(out.find("result       PASSED: every target met"), std::string::npos) << out;
  EXPECT_NE(out.find("removed: nothing is left behind"), std::string::npos) << out;

  auto s = summary_json();
  EXPECT_EQ(json::i64(s["jobs"], "completed"), 12);
  // Runners at once, as the watch saw them (reported, not judged here: a
  // Runner whose job completed may linger while its replacement starts).
  EXPECT_GE(json::i64(s, "maxRunnersSeen"), 1);
  EXPECT_GE(json::i64(s, "maxPods"), 1);
  EXPECT_NE(out.find("runners      at most "), std::string::npos) << out;
  EXPECT_GT(s["jobsPerSecond"].GetDouble(), 0.05);
  EXPECT_GT(s["rssMiB"]["max"].GetDouble(), 1);  // the manager's, sampled over the run
  EXPECT_TRUE(s["passed"].GetBool());
  // One line per job, samples over time, and the plots.
  std::ifstream jobs(report_ + "/jobs.tsv");
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(jobs), {}, '\n'), 13);
  for (auto f : {"summary.txt", "timeline.tsv", "runners.png", "jobs.png", "latency.png", "rss.png"})
    EXPECT_GT(std::filesystem::exists(report_ + "/" + f) ? std::filesystem::file_size(report_ + "/" + f) : 0,
              100u)
        << f << "\n"
        << read_file(report_ + "/gnuplot.log");
  expect_nothing_left();
}

TEST_F(Loadtest, AMissedTargetExitsOneThroughTheListenerIntake) {
  tool_run run(
      with({"--intake=Listener", "--jobs=6", "--max-runners=3", "--max-queue-p99=1ms", "--no-plots"}));
  ASSERT_EQ(run.wait(80s), 1) << run.output();
  auto out = run.output();
  EXPECT_NE(out.find("6 completed"), std::string::npos) << out;
  EXPECT_NE(out.find("queue time p99 <= 1 ms: "), std::string::npos) << out;
  EXPECT_NE(out.find("MISSED"), std::string::npos) << out;
  EXPECT_NE(out.find("result       FAILED: 1 target(s) missed"), std::string::npos) << out;
  EXPECT_FALSE(summary_json()["passed"].GetBool());
  expect_nothing_left();
}

TEST_F(Loadtest, ARunThatCannotWorkStopsAtOnceAndLeavesNothing) {
  // No cluster behind the kubeconfig.
  const std::string bad_kubeconfig = "/tmp/octorun-loadtest-" + ns_ + ".kubeconfig";
  std::ofstream(bad_kubeconfig)
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
         "https://127.0.0.1:1\ncontexts:\n- name: c\n  context: {cluster: c}\n"
         "current-context: c\n";
  tool_run no_cluster({"--kubeconfig=" + bad_kubeconfig, "--namespace=" + ns_});
  EXPECT_EQ(no_cluster.wait(20s), 2);
  EXPECT_NE(no_cluster.output().find("cannot reach the cluster at https://127.0.0.1:1"), std::string::npos)
      << no_cluster.output();
  std::remove(bad_kubeconfig.c_str());

  // No simulator at the URL given.
  tool_run no_simulator(with({"--simulator-url=http://127.0.0.1:1"}));
  EXPECT_EQ(no_simulator.wait(20s), 2);
  EXPECT_NE(no_simulator.output().find("cannot reach the GitHub simulator"), std::string::npos)
      << no_simulator.output();

  // A cluster where Octorun's test suite runs: this one (its namespaces are labelled).
  tool_run tests_running({"--kubeconfig=" + c_.kubeconfig, "--namespace=" + ns_});
  EXPECT_EQ(tests_running.wait(20s), 2);
  EXPECT_NE(tests_running.output().find("refusing to run: Octorun's test suite is running on this cluster"),
            std::string::npos)
      << tests_running.output();

  // A namespace no manager watches (the tool makes its own): the RunnerSet is
  // never taken up; the run stops and removes it and the namespace.
  tool_run unwatched({"--kubeconfig=" + c_.kubeconfig, "--allow-test-suite", "--manager-timeout=3s"});
  EXPECT_EQ(unwatched.wait(60s), 2);
  auto out = unwatched.output();
  EXPECT_NE(out.find("the manager did not take up RunnerSet"), std::string::npos) << out;
  EXPECT_NE(out.find("removed: nothing is left behind"), std::string::npos) << out;
  EXPECT_EQ(test::kubectl(c_,
                          "get namespaces -l app.kubernetes.io/managed-by=octorun-loadtest "
                          "--field-selector=status.phase=Active -o name"),
            "");
  for (auto* run : {&no_cluster, &no_simulator, &tests_running})
    EXPECT_EQ(run->output().find("removing"), std::string::npos) << "nothing was created: " << run->output();
  expect_nothing_left();
}

TEST_F(Loadtest, CtrlCStopsTheRunAndRemovesWhatItMadeEvenWithJobsRunning) {
  auto cfg = kube::load_kubeconfig(c_.kubeconfig);
  ASSERT_TRUE(cfg) << cfg.error();
  bench::lifecycle_watch watch(*cfg, ns_, {});
  tool_run run(with({"--profile=steady", "--rate=2", "--duration=60s", "--job-duration=fixed:60s",
                     "--max-runners=3", "--no-plots"}));
  // Jobs are running (their runners busy) when the signal comes.
  EXPECT_TRUE(watch.wait([](const bench::lifecycle_watch& w) { return w.counts().busy >= 1; }, 40s))
      << run.output() << manager_->log_tail();
  run.interrupt();
  EXPECT_EQ(run.wait(60s), 130) << run.output();
  auto out = run.output();
  EXPECT_NE(out.find("stopping: cleaning up"), std::string::npos) << out;
  EXPECT_NE(out.find("removed: nothing is left behind"), std::string::npos) << out;
  expect_nothing_left();
}

}  // namespace
}  // namespace octorun
