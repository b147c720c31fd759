// Hostile tenants against RunnerClasses, on the real control plane with the
// octorun binary and two GitHub simulators: GitHub, and a tenant's sink. A
// platform namespace holds a class's credentials; a tenant namespace's sets
// name the class. Each attack must fail and leak nothing: the sink is never
// called (so no credential reaches it), the set says why in ClassAdmitted
// and one Warning Event, and a class narrowed under a running set stops it
// from sending anything (docs/runner-classes.md, docs/security.md).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "test/manager/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

class HostileTenant : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  HostileTenant() : c_(test::cluster()) {
    for (auto* s : {&github_, &sink_}) {
      auto sim = sim::simulator::start({});
      if (!sim) ADD_FAILURE() << sim.error();
      *s = std::move(*sim);
      (*s)->add_organization("acme");
    }
    platform_ = test::make_namespace(c_, "platform");
    tenant_ = test::make_namespace(c_, "tenant");
    class_ = "hostile-" + tenant_;
  }

  ~HostileTenant() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    test::kubectl(c_, "delete runnerclass " + class_ + " --wait=false >/dev/null 2>&1");
    for (const auto& ns : {tenant_, platform_})
      test::kubectl(c_, "delete namespace " + ns + " --wait=false >/dev/null");
  }

  // The class admits the tenant's namespace on `servers`, with the
  // platform's PAT for GitHub.
  void apply_class(const std::string& servers) {
    test::kubectl(c_,
                  "apply -f - >/dev/null <<'EOF'\n"
                  R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerClass","metadata":{"name":")" +
                      class_ +
                      R"("},"spec":{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":")" +
                      tenant_ + R"("}},"github":{"servers":[)" + servers +
                      R"(],"credentialsSecretName":"platform-pat"}}})"
                      "\nEOF");
  }

  void start() {
    test::kubectl(
        c_, "-n " + platform_ +
                " create secret generic platform-pat --from-literal=github_token=ghp_simulator >/dev/null");
    apply_class("\"" + github_->ghes_url() + "\"");
    auto args = test::octorun_args(c_.kubeconfig, tenant_, "classes");
    args.push_back("--platform-namespace=" + platform_);
    args.push_back("--resync-seconds=1");
    // No --allow-sets-without-class from here on: the harness's is dropped.
    std::erase(args, std::string("--allow-sets-without-class"));
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), "s3cret",
                                                       "/tmp/octorun-manager-" + tenant_ + ".log");
    ASSERT_TRUE(manager_->wait_leads(60s)) << manager_->log_tail();
  }

  // A Webhook set of `scope`, minRunners 1, naming the class; `extra`: more spec fields.
  void create_set(const std::string& name, const std::string& scope, const std::string& extra = "") {
    test::kubectl(c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" +
                          R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" +
                          name + R"("},"spec":{"runnerClassName":")" + class_ + R"(","scopeURL":")" + scope +
                          R"(","intake":"Webhook","runnerLabels":["linux"],"minRunners":1,"maxRunners":2,)" +
                          extra +
                          R"("template":{"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})"
                          "\nEOF");
  }

  std::string get(const std::string& what) { return test::kubectl(c_, "-n " + tenant_ + " get " + what); }

  // "status|reason|message" of the set's ClassAdmitted condition.
  std::string class_admitted(const std::string& set) {
    const std::string c = "{.status.conditions[?(@.type==\"ClassAdmitted\")]";
    return get("runnerset " + set + " -o jsonpath='" + c + ".status}|" + c + ".reason}|" + c + ".message}'");
  }

  std::string wait_class(const std::string& set, const std::string& status_reason) {
    return test::poll([&] { return class_admitted(set); },
                      [&](const std::string& s) { return s.starts_with(status_reason + "|"); }, 90s)
        .last;
  }

  std::string warnings(const std::string& set) {
    return get("events.events.k8s.io --field-selector regarding.kind=RunnerSet,regarding.name=" + set +
               ",type=Warning -o jsonpath='{range .items[*]}{.reason}|{.note}{\"\\n\"}{end}'");
  }

  std::int64_t sink_calls() const {
    std::int64_t n = 0;
    for (const auto& [endpoint, count] : sink_->call_counts()) n += count;
    return n;
  }

  const test::cluster_info& c_;
  std::unique_ptr<sim::simulator> github_, sink_;
  std::string platform_, tenant_, class_;
  std::unique_ptr<test::octorun_process> manager_;
};

TEST_F(HostileTenant, ASetPointedAtItsOwnSinkSendsNothingThereAndSaysWhy) {
  start();
  // The tenant's own proxy and CA would have carried the manager's calls
  // before classes; under a class they shape its pods only.
  create_set("exfil", sink_->ghes_url() + "/acme");
  create_set("honest", github_->ghes_url() + "/acme");
  auto got = wait_class("exfil", "False|Refused");
  ASSERT_TRUE(got.starts_with("False|Refused|")) << got << "\n" << manager_->log_tail();
  EXPECT_NE(got.find("spec.scopeURL: \"" + sink_->ghes_url() +
                     "/acme\" is not on a GitHub server RunnerClass \"" + class_ + "\" allows"),
            std::string::npos)
      << got;
  auto honest = wait_class("honest", "True|Admitted");
  ASSERT_TRUE(honest.starts_with("True|Admitted|")) << honest << "\n" << manager_->log_tail();
  // The honest set runs on the platform's credentials, read from the platform's namespace.
  auto runners = test::poll([&] { return get("runners -l octorun.io/runnerset=honest -o name"); },
                            [](const std::string& r) { return !r.empty(); }, 60s);
  EXPECT_FALSE(runners.last.empty()) << manager_->log_tail();
  auto warned =
      test::poll([&] { return warnings("exfil"); },
                 [](const std::string& w) { return w.find("ClassRefused|") != std::string::npos; }, 30s);
  EXPECT_NE(warned.last.find("ClassRefused|Nothing is sent to GitHub for this set"), std::string::npos)
      << warned.last;
  EXPECT_TRUE(get("runners -l octorun.io/runnerset=exfil -o name").empty()) << "a refused set starts nothing";
  EXPECT_EQ(sink_calls(), 0) << "a credential reached the tenant's sink";
}

TEST_F(HostileTenant, AClassNarrowedUnderARunningSetStopsItsCalls) {
  start();
  create_set("ci", github_->ghes_url() + "/acme");
  ASSERT_TRUE(wait_class("ci", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  ASSERT_FALSE(test::poll([&] { return get("runners -l octorun.io/runnerset=ci -o name"); },
                          [](const std::string& r) { return !r.empty(); }, 60s)
                   .last.empty());
  apply_class("\"https://github.com\"");
  auto got = wait_class("ci", "False|Refused");
  ASSERT_TRUE(got.starts_with("False|Refused|")) << got << "\n" << manager_->log_tail();
  // Once refused, the set calls GitHub no more: none of its next three
  // resyncs (one a second) may (a check that something does not happen
  // needs a window).
  github_->reset_counts();
  const auto before = std::chrono::steady_clock::now();
  test::poll([&] { return std::chrono::steady_clock::now() - before; },
             [](auto waited) { return waited > 3s; }, 10s);
  std::int64_t calls = 0;
  for (const auto& [endpoint, count] : github_->call_counts()) calls += count;
  EXPECT_EQ(calls, 0) << "the refused set still calls GitHub";
}

}  // namespace
}  // namespace octorun
