// Hostile tenants and scale-set names (issue 32), on the real control plane
// with the octorun binary and the GitHub simulator: two namespaces each
// declare a Listener RunnerSet "linux" in one organisation. The scale set
// "linux" is the older set's: the younger one registers nothing under it,
// starts no runner, says why, and its deletion leaves the older set's scale
// set and runner alone (before, both sets used one scale set, and either's
// deletion deleted it under the other). The same with two managers, each
// watching one of the namespaces: the set's label on the scale set tells
// the second that the name is not its set's.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "test/binary/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

class ScaleSetNames : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  ScaleSetNames() : c_(test::cluster()) {
    sim::simulator_options o;
    o.long_poll = 5s;
    auto sim = sim::simulator::start(o);
    if (!sim) ADD_FAILURE() << sim.error();
    github_ = std::move(*sim);
    github_->add_organization("acme");
    first_ = test::make_namespace(c_, "names-a");
    second_ = test::make_namespace(c_, "names-b");
  }

  ~ScaleSetNames() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    for (const auto& ns : {first_, second_})
      test::kubectl(c_, "delete namespace " + ns + " --wait=false >/dev/null");
  }

  void start() {
    auto args = test::octorun_args(c_.kubeconfig, first_, "names");
    std::erase(args, "--namespace=" + first_);
    args.push_back("--namespaces=" + first_ + "," + second_);
    args.push_back("--resync-seconds=1");
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), "s3cret",
                                                       "/tmp/octorun-manager-" + first_ + ".log");
    ASSERT_FALSE(manager_->wait_leading(60s).empty()) << manager_->log_tail();
  }

  // The Secret "github" and the Listener set "linux" (minRunners 1) of acme in `ns`.
  void create_set(const std::string& ns) {
    test::kubectl(
        c_,
        "-n " + ns + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
    test::kubectl(
        c_, "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
                R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"linux"},)"
                R"("spec":{"scopeURL":")" +
                github_->ghes_url() +
                R"(/acme","credentialsSecretName":"github","intake":"Listener","runnerLabels":["linux"],)"
                R"("minRunners":1,"maxRunners":2,)"
                R"("template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}}})"
                "\nEOF");
  }

  std::string get(const std::string& ns, const std::string& what) {
    return test::kubectl(c_, "-n " + ns + " get " + what);
  }

  std::string runners(const std::string& ns) {
    return get(ns, "runners -l octorun.io/runnerset=linux -o jsonpath='{.items[*].metadata.name}'");
  }

  // "reason|message" of the set's IntakeReady condition ("|" without one).
  std::string intake_ready(const std::string& ns) {
    const std::string c = "{.status.conditions[?(@.type==\"IntakeReady\")]";
    return get(ns, "runnerset linux -o jsonpath='" + c + ".reason}|" + c + ".message}'");
  }

  std::vector<sim::simulator::scale_set_info> scale_sets() const { return github_->scale_sets(); }

  // The first namespace's set: its scale set (the one GitHub holds) once
  // its listener's session is open and its runner is made; `runner` its name.
  sim::simulator::scale_set_info first_holds_the_name(std::string& runner) {
    create_set(first_);
    EXPECT_TRUE(github_->wait_until([](const sim::simulator& s) { return s.session_open("linux"); }, 60s))
        << manager_->log_tail();
    runner = test::poll([&] { return runners(first_); }, [](const std::string& r) { return !r.empty(); }, 60s)
                 .last;
    EXPECT_FALSE(runner.empty()) << manager_->log_tail();
    EXPECT_EQ(scale_sets().size(), 1u);
    return scale_sets().empty() ? sim::simulator::scale_set_info{} : scale_sets()[0];
  }

  // The second namespace's set goes: the first's scale set, session and
  // runner stay.
  void second_goes_leaving(const sim::simulator::scale_set_info& held, const std::string& runner) {
    test::kubectl(c_, "-n " + second_ + " delete runnerset linux --wait=true --timeout=60s >/dev/null");
    ASSERT_EQ(scale_sets().size(), 1u) << "the second set's deletion deleted the first's scale set";
    EXPECT_EQ(scale_sets()[0].id, held.id);
    EXPECT_TRUE(github_->session_open("linux"));
    EXPECT_EQ(runners(first_), runner);
  }

  const test::cluster_info& c_;
  std::unique_ptr<sim::simulator> github_;
  std::string first_, second_;
  std::unique_ptr<test::octorun_process> manager_;
};

TEST_F(ScaleSetNames, ASecondNamespacesSetOfTheSameNameNeverTouchesTheFirstsScaleSetOrRunners) {
  start();
  std::string first_runner;
  const auto held = first_holds_the_name(first_runner);
  ASSERT_FALSE(HasFailure());

  create_set(second_);
  auto said = test::poll([&] { return intake_ready(second_); },
                         [](const std::string& s) { return s.starts_with("ScaleSetNameTaken|"); }, 60s);
  ASSERT_TRUE(said.last.starts_with("ScaleSetNameTaken|")) << said.last << "\n" << manager_->log_tail();
  EXPECT_NE(said.last.find("is held by RunnerSet " + first_ + "/linux"), std::string::npos) << said.last;
  auto warned = test::poll(
      [&] {
        return get(second_,
                   "events.events.k8s.io --field-selector regarding.kind=RunnerSet,type=Warning "
                   "-o jsonpath='{.items[*].reason}'");
      },
      [](const std::string& w) { return w.find("ScaleSetNameTaken") != std::string::npos; }, 30s);
  EXPECT_NE(warned.last.find("ScaleSetNameTaken"), std::string::npos) << warned.last;
  EXPECT_EQ(intake_ready(first_), "|") << "the holder is not told anything";
  EXPECT_TRUE(runners(second_).empty()) << "the second set started a runner without a scale set of its own";
  EXPECT_EQ(get(second_, "runnerset linux -o jsonpath='{.status.scaleSetId}'"), "");
  ASSERT_EQ(scale_sets().size(), 1u);
  EXPECT_EQ(scale_sets()[0].id, held.id);
  EXPECT_EQ(scale_sets()[0].session_owner, held.session_owner) << "the second set took the session over";

  second_goes_leaving(held, first_runner);
}

// Two managers (two installs, or one beside another controller) in one
// organisation: each watches its own namespace, where a set "linux" lives.
// The second finds the scale set "linux" registered, not by its set (no
// record, not the set's label): it registers, listens to and deletes
// nothing under the name, starts no runner, and says why in a Warning
// Event; its deletion leaves the first's scale set, session and runner
// alone. Before, the second took the scale set over (updated its labels,
// raced for its session) and deleted it with its set.
TEST_F(ScaleSetNames, AnotherManagersScaleSetOfTheSameNameIsNeverTakenOver) {
  auto args = test::octorun_args(c_.kubeconfig, first_, "names-a");
  args.push_back("--resync-seconds=1");
  manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), "s3cret",
                                                     "/tmp/octorun-manager-" + first_ + ".log");
  ASSERT_FALSE(manager_->wait_leading(60s).empty()) << manager_->log_tail();
  args = test::octorun_args(c_.kubeconfig, second_, "names-b");
  args.push_back("--resync-seconds=1");
  test::octorun_process other(OCTORUN_BINARY, std::move(args), "s3cret",
                              "/tmp/octorun-manager-" + second_ + ".log");
  ASSERT_FALSE(other.wait_leading(60s).empty()) << other.log_tail();
  std::string first_runner;
  const auto held = first_holds_the_name(first_runner);
  ASSERT_FALSE(HasFailure());

  create_set(second_);
  auto warned = test::poll(
      [&] {
        return get(second_,
                   "events.events.k8s.io --field-selector regarding.kind=RunnerSet,type=Warning "
                   "-o jsonpath='{range .items[*]}{.reason}|{.note}{\"\\n\"}{end}'");
      },
      [](const std::string& w) { return w.find("RegistrationFailed|") != std::string::npos; }, 60s);
  EXPECT_NE(warned.last.find("that this RunnerSet did not register (another controller's"), std::string::npos)
      << warned.last << "\n"
      << other.log_tail();
  EXPECT_TRUE(runners(second_).empty()) << "the second set started a runner in another's scale set";
  EXPECT_EQ(get(second_, "runnerset linux -o jsonpath='{.status.scaleSetId}'"), "");
  ASSERT_EQ(scale_sets().size(), 1u);
  EXPECT_EQ(scale_sets()[0].id, held.id);
  EXPECT_EQ(scale_sets()[0].labels, held.labels) << "the second manager updated the first's scale set";
  EXPECT_EQ(scale_sets()[0].session_owner, held.session_owner) << "the second manager took the session";
  second_goes_leaving(held, first_runner);
}

}  // namespace
}  // namespace octorun
