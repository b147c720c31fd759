// A runner GitHub refuses as deprecated, end to end on the real apiserver:
// the GitHub simulator holds a minimum runner version, the test plays the
// runner process (it connects with its image's version, is refused, prints
// the runner's line and exits 0 as run.sh does), and the RunnerSet actor
// recognises the exit (Outdated, not a crash loop of new runners), says so
// in RunnerVersionCurrent and a Warning Event naming the version to move to,
// and makes runners again once the template names a newer image.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "actors/kinds.hpp"
#include "actors/runnerset/runnerset_actor.hpp"
#include "adapters/kube/events.hpp"
#include "messages/jobs.hpp"
#include "model/runner_version.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wiring.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

class RunnerVersionActor : public test::actor_test_base {
 protected:
  RunnerVersionActor() : actor_test_base("rver") {}
  ~RunnerVersionActor() override {
    if (set_) caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
    if (events_) caf::anon_send_exit(events_, caf::exit_reason::user_shutdown);
  }

  void start() {
    test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 1, 5);  // image actions-runner:2.330.0
    runnerset_actor_config cfg;
    cfg.ns = ns_;
    cfg.name = "linux";
    cfg.kube = kube_;
    cfg.scopes.http_hosts = {"127.0.0.1"};
    cfg.runner_defaults.retry_initial = 100ms;
    events_ = kube::spawn_event_recorder(sys_, kube_cfg_, {}, "octorun.io/manager", "test");
    cfg.events = events_;
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(sys_, cfg));
    informers_ = test::forward_set_informers(sys_, kube_cfg_, ns_, set_);
  }

  // The one runner of the set once its pod runs and GitHub registered it.
  std::string running_runner() {
    std::string name;
    test::wait_for(
        [&] {
          name = get("runners -o jsonpath='{.items[*].metadata.name}'");
          return name.find(' ') == std::string::npos && !name.empty() &&
                 get("pod " + name + " -o jsonpath='{.status.phase}'") == "Running";
        },
        60s, "one runner with a running pod", [&] { return diagnostics(); });
    sim_->wait_until(
        [&](const sim::simulator& s) {
          auto names = s.runner_names();
          return std::find(names.begin(), names.end(), name) != names.end();
        },
        60s);
    return name;
  }

  // What the runner process does: it connects with its image's version;
  // refused as deprecated, it prints the runner's line and exits 0 (run.sh
  // hides Runner.Listener's exit code), which the kubelet keeps as the
  // container's termination message (FallbackToLogsOnError).
  sim::connect_answer run_runner(const std::string& name) {
    const auto image = get("pod " + name + " -o jsonpath='{.spec.containers[0].image}'");
    const auto version = model::version_of_image(image);
    const auto answer = sim_->connect_runner(name, version ? version->to_string() : "");
    if (answer != sim::connect_answer::deprecated) return answer;
    std::string message;
    for (char c : sim::simulator::deprecation_message(version->to_string()))
      message += c == '\n' ? std::string("\\n") : std::string(1, c);
    test::kubectl(c_, "-n " + ns_ + " annotate pod/" + name + " kwok.x-k8s.io/status=custom >/dev/null");
    test::kubectl(
        c_,
        "-n " + ns_ + " patch pod/" + name + " --subresource=status --type=merge -p '" +
            R"({"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False"}],)"
            R"("containerStatuses":[{"name":"runner","image":"r","imageID":"","ready":false,"restartCount":0,)"
            R"("state":{"terminated":{"exitCode":0,"message":")" +
            message + R"("}}}]}}' >/dev/null)");
    return answer;
  }

  std::string diagnostics() override {
    std::string calls;
    for (const auto& [endpoint, n] : sim_->call_counts()) calls += endpoint + "=" + std::to_string(n) + " ";
    return "GitHub calls: " + calls + "\n" + actor_test_base::diagnostics();
  }

  static std::string condition(const std::string& field) {
    return R"(runnerset linux -o jsonpath='{.status.conditions[?(@.type=="RunnerVersionCurrent")].)" + field +
           "}'";
  }

  caf::actor set_, events_;
};

TEST_F(RunnerVersionActor, ADeprecatedRunnerStopsNewRunnersUntilTheTemplateNamesANewerImage) {
  sim_->set_minimum_runner_version("2.331.0");  // the latest release the simulator serves
  start();
  // Before anything exits: an update is available (v2.331.0, published a day ago).
  EXPECT_TRUE(eventually(condition("reason"), "UpdateAvailable"));
  const auto first = running_runner();
  ASSERT_EQ(run_runner(first), sim::connect_answer::deprecated);
  EXPECT_EQ(sim_->calls("runner.deprecated"), 1);

  // Recognised: Outdated, then gone, and the set says why and what to do.
  const std::string c = R"(.status.conditions[?(@.type=="RunnerVersionCurrent")])";
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{" + c + ".status} {" + c + ".reason}'",
                         "False RunnerDeprecated"));
  const auto message = get(condition("message"));
  EXPECT_NE(message.find("v2.331.0"), std::string::npos) << message;
  EXPECT_NE(message.find("v2.330.0"), std::string::npos) << message;
  EXPECT_TRUE(
      eventually("events.events.k8s.io --field-selector regarding.kind=RunnerSet,type=Warning -o "
                 "jsonpath='{.items[*].reason}'",
                 "RunnerDeprecated"));
  // The exited Runner stays as the record of why, and no other is made.
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].metadata.name} {.items[*].status.phase}'",
                         first + " Outdated"));
  // Demand does not bring a runner back: the plan that counted the job
  // (its status says so) made none.
  caf::anon_send(set_, messages::job_available{[] {
                   messages::job_info j;
                   j.job_id = 1;
                   j.repository = "acme/app";
                   j.labels = {"self-hosted", "linux"};
                   return j;
                 }()});
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.assignedJobs} {.status.desiredReplicas}'", "1 2"));
  EXPECT_EQ(get("runners -o jsonpath='{.items[*].metadata.name}'"), first) << "a crash loop of new runners";

  // The template names the latest image: runners again, and they connect.
  test::kubectl(
      c_,
      "-n " + ns_ + " patch runnerset linux --type=merge -p " +
          R"('{"spec":{"template":{"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.331.0"}]}}}}')" +
          " >/dev/null");
  EXPECT_TRUE(eventually(condition("reason"), "Current"));
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].spec.template.spec.containers[0].image}'",
                         "ghcr.io/actions/actions-runner:2.331.0 ghcr.io/actions/actions-runner:2.331.0"));
  auto names = get("runners -o jsonpath='{.items[*].metadata.name}'");
  std::istringstream in(names);
  std::string one;
  in >> one;
  EXPECT_TRUE(sim_->wait_until(
      [&](const sim::simulator& s) {
        auto registered = s.runner_names();
        return std::find(registered.begin(), registered.end(), one) != registered.end();
      },
      60s));
  EXPECT_EQ(sim_->connect_runner(one, "2.331.0"), sim::connect_answer::online);
}

}  // namespace
}  // namespace octorun::runnerset
