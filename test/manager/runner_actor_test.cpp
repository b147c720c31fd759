// The Runner actor against the real apiserver (kwok runs its pod) and the
// GitHub simulator: provisioning, the job path, the runner's exit, and
// deletion of idle and busy runners.
#include "actors/runner/runner_actor.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "actors/kinds.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "adapters/github/auth.hpp"
#include "adapters/github/github_workers.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/informer.hpp"
#include "messages/jobs.hpp"
#include "model/parse.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"
#include "test/support/wiring.hpp"

namespace octorun::runner {
namespace {

using namespace std::chrono_literals;

class RunnerActor : public test::actor_test_base {
 protected:
  RunnerActor() : actor_test_base("runner") {
    github::rest_options gh;
    gh.api_base = sim_->api_url();
    gh.where = {github::scope_kind::organization, "acme", ""};
    gh.auth = github::pat_auth("ghp_simulator");
    github_ = github::spawn_rest_pool(sys_, gh, 1);
    events_ = kube::spawn_event_recorder(sys_, kube_cfg_, {}, "octorun.io/manager", "runner-actor-test");
  }

  ~RunnerActor() override {
    caf::anon_send_exit(github_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(events_, caf::exit_reason::user_shutdown);
    if (runner_) caf::anon_send_exit(runner_, caf::exit_reason::user_shutdown);
  }

  // Creates a RunnerSet (nothing reconciles it here) and one of its Runners,
  // and starts the Runner actor with informers on the Runner, its Pod and Secret.
  // `readable`: whether its set may read the namespace yet (none: always).
  void start(std::chrono::milliseconds busy_recheck = 30s,
             std::shared_ptr<const std::atomic<bool>> readable = nullptr) {
    auto set_json = test::create_runnerset(c_, ns_, "https://github.com/acme", 0, 10);
    auto set = model::parse_runnerset(set_json);
    ASSERT_TRUE(set);
    auto variants = model::effective_variants(set->spec);
    name_ = "linux-t3st1";
    test::kubectl(c_, "-n " + ns_ + " create -f - >/dev/null <<'EOF'\n" +
                          runnerset::runner_json(*set, variants[0], "t3st1") + "\nEOF");

    runner_actor_config cfg;
    cfg.ns = ns_;
    cfg.name = name_;
    cfg.kube = kube_;
    cfg.github = caf::actor_cast<protocols::runner_github_api>(github_);  // a REST pool answers the same API
    cfg.events = events_;
    cfg.busy_recheck = busy_recheck;
    cfg.retry_initial = 100ms;
    cfg.namespace_readable = std::move(readable);
    runner_ = caf::actor_cast<caf::actor>(spawn_runner(sys_, cfg));
    const std::string selector = "octorun.io/runner=" + name_;
    informers_ = test::forward_informers(
        sys_, kube_cfg_, ns_,
        {{kinds::runners(), "", "metadata.name=" + name_}, {kinds::pods(), selector, ""}}, runner_);
  }

  // Polls `jsonpath` of the Runner (or another object) until it equals `want`.
  bool eventually(const std::string& what, const std::string& jsonpath, const std::string& want,
                  std::chrono::seconds within = 60s) {
    return bool(test::wait_for_value(
        [&] { return get(what + " -o jsonpath='" + jsonpath + "'"); }, want, within, what + " " + jsonpath,
        [&] {
          return test::kubectl(c_, "-n " + ns_ + " get runners,pods,secrets -o wide 2>&1 || true") +
                 test::kubectl(c_, "-n " + ns_ + " get pods -o yaml 2>&1 || true");
        }));
  }

  // Polls the events.k8s.io Events regarding the Runner until one of each
  // `type/reason` in `want` is there.
  bool eventually_events(const std::vector<std::string>& want, std::chrono::seconds within = 30s) {
    return bool(test::wait_for(
        [&] {
          return test::kubectl(
              c_, "-n " + ns_ +
                      R"( get events.events.k8s.io -o jsonpath='{range .items[*]}{.type}/{.reason} )"
                      R"([{.regarding.kind}/{.regarding.name} {.reportingController}] {.note}{"\n"}{end}')");
        },
        [&](const std::string& got) {
          return std::all_of(want.begin(), want.end(), [&](const std::string& w) {
            return got.find(w + " [Runner/" + name_ + " octorun.io/manager] ") != std::string::npos;
          });
        },
        within, "the events regarding " + name_));
  }

  bool gone(const std::string& what, std::chrono::seconds within = 30s) {
    return test::kubectl(c_, "-n " + ns_ + " wait --for=delete " + what +
                                 " --timeout=" + std::to_string(within.count()) +
                                 "s >/dev/null 2>&1 && echo gone || echo present") == "gone\n";
  }

  void job_started(std::int64_t job_id) {
    messages::job_started js;
    js.job.job_id = job_id;
    js.job.repository = "acme/app";
    js.job.workflow_ref = "acme/app/.github/workflows/ci.yml@refs/heads/main";
    js.job.run_id = 99;
    js.job.display_name = "build";
    js.runner_name = name_;
    caf::anon_send(runner_, js);
  }

  // The runner container exits with `code`.
  void runner_exits(int code) { test::runner_pod_exits(c_, ns_, name_, code); }

  caf::actor github_, events_, runner_;
  std::string name_;
};

TEST_F(RunnerActor, ProvisionsRunsAJobAndSucceeds) {
  start();
  const std::string runner = "runner/" + name_;
  // JIT config from GitHub into the Secret, a pod that kwok runs, Pending + ready.
  EXPECT_TRUE(eventually(runner, "{.status.phase} {.status.podReady}", "Pending true"));
  EXPECT_TRUE(eventually(runner, "{.metadata.finalizers[0]}", "octorun.io/runner"));
  EXPECT_TRUE(eventually("secret/" + name_ + "-jit", "{.metadata.ownerReferences[0].name}", name_));
  EXPECT_NE(test::kubectl(c_, "-n " + ns_ + " get " + runner + " -o jsonpath='{.status.runnerId}'"), "");
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 1);

  job_started(4242);
  EXPECT_TRUE(eventually(runner, "{.status.phase} {.status.job.id} {.status.job.repository}",
                         "Running 4242 acme/app"));
  // A duplicate delivery changes nothing.
  job_started(4242);

  runner_exits(0);
  EXPECT_TRUE(eventually(runner, "{.status.phase}", "Succeeded"));
  EXPECT_EQ(test::kubectl(c_, "-n " + ns_ + " get " + runner + " -o jsonpath='{.status.job.id}'"), "4242");
  // One Event per transition the actor wrote but the end of the Running
  // runner (the Running Event named the job; actors/runner/events.hpp).
  EXPECT_TRUE(eventually_events({"Normal/Pending", "Normal/Running"}));
  EXPECT_NE(test::kubectl(c_, "-n " + ns_ + " get events.events.k8s.io -o jsonpath='{.items[*].note}'")
                .find(R"(GitHub assigned job 4242 "build" of acme/app)"),
            std::string::npos);

  // Deleting it: pod and Secret deleted, finalizer released; GitHub is not
  // asked (it removes a JIT runner itself once its job is done).
  test::kubectl(c_, "-n " + ns_ + " delete " + runner + " --wait=false >/dev/null");
  EXPECT_TRUE(gone(runner));
  EXPECT_TRUE(gone("pod/" + name_));
  EXPECT_TRUE(gone("secret/" + name_ + "-jit"));
  EXPECT_EQ(sim_->calls("rest.delete_runner"), 0);
  // The Succeeded was written long before: no Event was recorded for it.
  EXPECT_EQ(test::kubectl(c_, "-n " + ns_ + " get events.events.k8s.io -o jsonpath='{.items[*].reason}'")
                .find("Succeeded"),
            std::string::npos);
}

// After a restart the set binds its reads in the namespace again before
// the manager may read there: until its set says it may, the actor reads
// no JIT Secret and makes nothing; then it provisions as ever. At 8ce8119
// it read at once and was refused (403) until the binding came.
TEST_F(RunnerActor, ReadsItsJitSecretOnlyOnceItsSetMayReadTheNamespace) {
  auto readable = std::make_shared<std::atomic<bool>>(false);
  start(30s, readable);
  const std::string runner = "runner/" + name_;
  // A window: nothing may appear within it (no sleep stands in for an event).
  const auto made = test::poll([&] { return get("secret/" + name_ + "-jit pod/" + name_ + " -o name"); },
                               [](const std::string& objects) { return !objects.empty(); }, 1500ms);
  EXPECT_EQ(made.last, "") << "made before its set may read the namespace";
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 0);
  readable->store(true);
  EXPECT_TRUE(eventually(runner, "{.status.phase} {.status.podReady}", "Pending true"));
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 1);
}

TEST_F(RunnerActor, ABusyRunnerIsNotKilledWhenDeleted) {
  start(200ms);
  const std::string runner = "runner/" + name_;
  ASSERT_TRUE(eventually(runner, "{.status.phase} {.status.podReady}", "Pending true"));
  job_started(7);
  ASSERT_TRUE(eventually(runner, "{.status.phase}", "Running"));
  ASSERT_TRUE(sim_->set_runner_busy(name_, true));

  test::kubectl(c_, "-n " + ns_ + " delete " + runner + " --wait=false >/dev/null");
  // GitHub says busy: several re-checks later the pod still runs.
  ASSERT_TRUE(
      sim_->wait_until([](const sim::simulator& s) { return s.calls("rest.delete_runner") >= 3; }, 30s));
  EXPECT_EQ(test::kubectl(c_, "-n " + ns_ + " get pod/" + name_ + " -o jsonpath='{.status.phase}'"),
            "Running");
  EXPECT_EQ(
      test::kubectl(c_, "-n " + ns_ + " get pod/" + name_ + " -o jsonpath='{.metadata.deletionTimestamp}'"),
      "");

  // The job ends; GitHub lets go; only now does the pod go.
  ASSERT_TRUE(sim_->set_runner_busy(name_, false));
  EXPECT_TRUE(gone(runner));
  EXPECT_TRUE(gone("pod/" + name_));
}

// GitHub registers the runner but every answer is lost on its way back (a
// 503 after the work was done): the Runner, deleted before it ever knew its
// registration, looks its name up on GitHub and removes what it finds
// before it lets go.
TEST_F(RunnerActor, ARunnerWhoseRegistrationAnswerWasLostLeavesNoGitHubRunner) {
  sim::fault lost;
  lost.endpoint = "rest.generate_jitconfig";
  lost.status = 503;
  lost.count = -1;
  lost.after_handling = true;
  sim_->add_fault(lost);
  start();
  auto registered = [&](const sim::simulator& s) {
    auto names = s.runner_names();
    return std::find(names.begin(), names.end(), name_) != names.end();
  };
  ASSERT_TRUE(sim_->wait_until(registered, 30s)) << sim_->state_json();
  ASSERT_TRUE(
      sim_->wait_until([](const sim::simulator& s) { return s.calls("rest.generate_jitconfig") >= 2; }, 30s));
  const std::string runner = "runner/" + name_;
  EXPECT_EQ(get(runner + " -o jsonpath='{.status.runnerId}'"), "") << "its registration is unknown here";

  test::kubectl(c_, "-n " + ns_ + " delete " + runner + " --wait=false >/dev/null");
  EXPECT_TRUE(gone(runner));
  EXPECT_FALSE(registered(*sim_)) << sim_->state_json();
  EXPECT_GE(sim_->calls("rest.list_runners"), 1);
  EXPECT_EQ(sim_->calls("rest.delete_runner"), 1);
}

TEST_F(RunnerActor, AFailedPodIsRecordedAndRecreated) {
  start();
  const std::string runner = "runner/" + name_;
  ASSERT_TRUE(eventually(runner, "{.status.phase} {.status.podReady}", "Pending true"));
  auto first_uid = test::kubectl(c_, "-n " + ns_ + " get pod/" + name_ + " -o jsonpath='{.metadata.uid}'");
  runner_exits(3);
  EXPECT_TRUE(eventually(runner, "{.status.failures[0].exitCode}", "3"));
  EXPECT_TRUE(eventually_events({"Normal/Pending", "Warning/PodFailed"}));
  // A new pod (new uid) comes up after the first backoff step (0 s for the first failure).
  auto uid = test::poll([&] { return get("pod/" + name_ + " -o jsonpath='{.metadata.uid}'"); },
                        [&](const std::string& u) { return u != first_uid && !u.empty(); }, 30s)
                 .last;
  EXPECT_NE(uid, first_uid);
  EXPECT_FALSE(uid.empty());
  EXPECT_TRUE(eventually(runner, "{.status.phase}", "Pending"));
  EXPECT_EQ(
      test::kubectl(c_, "-n " + ns_ + " get " + runner + " -o jsonpath='{.status.failures[*].exitCode}'"),
      "3");
}

// The set may give a Runner the name of an earlier one whose Pod and Secret
// are still on their way out (the garbage collector removes them after their
// Runner). They are not its own: it neither takes their state nor their JIT
// configuration, and makes its own, with the one registration it got, once
// they are gone.
TEST_F(RunnerActor, AnEarlierRunnersChildrenOfTheSameNameAreNotItsOwn) {
  const std::string earlier_uid = "0d1e2a3d-0000-4000-8000-000000000001";
  const std::string meta = R"("labels":{"octorun.io/runnerset":"linux","octorun.io/runner":"linux-t3st1"},)"
                           R"("finalizers":["test.octorun.io/hold"],)"
                           R"("ownerReferences":[{"apiVersion":"octorun.io/v1alpha1","kind":"Runner",)"
                           R"("name":"linux-t3st1","uid":")" +
                           earlier_uid + R"(","controller":true}])";
  test::kubectl(
      c_, "-n " + ns_ + " create -f - >/dev/null <<'EOF'\n" +
              R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"linux-t3st1-jit",)" + meta +
              R"(},"data":{"jitConfig":"ZWFybGllcg==","runnerId":"OTk5","runnerName":"bGludXgtdDNzdDE="}})" +
              "\nEOF");
  test::kubectl(c_, "-n " + ns_ + " create -f - >/dev/null <<'EOF'\n" +
                        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"linux-t3st1",)" + meta +
                        R"(},"spec":{"containers":[{"name":"runner","image":"earlier"}]}})" + "\nEOF");
  start();
  const std::string runner = "runner/" + name_;
  // Registered once; its JIT Secret waits for the earlier one to go.
  ASSERT_TRUE(
      sim_->wait_until([](const sim::simulator& s) { return s.calls("rest.generate_jitconfig") >= 1; }, 30s));
  ASSERT_TRUE(eventually(runner, "{.metadata.finalizers[0]}", "octorun.io/runner"));
  EXPECT_NE(get(runner + " -o jsonpath='{.status.runnerId}'"), "999") << "the earlier Runner's registration";
  EXPECT_NE(get(runner + " -o jsonpath='{.status.podReady}'"), "true") << "the earlier Runner's pod";

  for (const auto* child : {"secret/linux-t3st1-jit", "pod/linux-t3st1"}) {
    test::kubectl(c_, "-n " + ns_ + " delete " + std::string(child) + " --wait=false >/dev/null");
    test::kubectl(c_, "-n " + ns_ + " patch " + std::string(child) +
                          R"( --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null)");
  }
  const auto uid = get(runner + " -o jsonpath='{.metadata.uid}'");
  EXPECT_TRUE(eventually("secret/" + name_ + "-jit", "{.metadata.ownerReferences[0].uid}", uid));
  EXPECT_TRUE(eventually("pod/" + name_, "{.metadata.ownerReferences[0].uid}", uid));
  EXPECT_TRUE(eventually(runner, "{.status.phase} {.status.podReady}", "Pending true"));
  EXPECT_NE(get(runner + " -o jsonpath='{.status.runnerId}'"), "999");
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 1)
      << "the registration made while it waited is the one stored";
}

}  // namespace
}  // namespace octorun::runner
