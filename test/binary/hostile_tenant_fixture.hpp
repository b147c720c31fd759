// The hostile-tenant fixture against RunnerClasses, on the real control
// plane with the octorun binary and two GitHub simulators: GitHub, and a
// tenant's sink. A platform namespace holds a class's credentials; a tenant
// namespace's sets name the class. The tests: manager_class_test.cpp (where
// a set's calls and credentials go) and manager_class_admission_test.cpp
// (what admission and the manager let a set run).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>

#include "adapters/admission/ca_injection.hpp"
#include "adapters/admission/identity.hpp"
#include "adapters/admission/platform_lookup.hpp"
#include "adapters/admission/webhook_configuration.hpp"
#include "adapters/admission/webhook_server.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::test {

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
    // The configurations before their server: a webhook that does not answer refuses.
    if (!configurations_.empty())
      test::kubectl(c_, "delete " + configurations_ + " --ignore-not-found >/dev/null");
    webhook_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    test::kubectl(c_, "delete runnerclass " + class_ + " --ignore-not-found --wait=false >/dev/null 2>&1");
    for (const auto& ns : {tenant_, platform_})
      test::kubectl(c_, "delete namespace " + ns + " --wait=false >/dev/null");
  }

  // The class admits the tenant's namespace on `servers`, with the
  // platform's PAT for GitHub; `extra`: more spec fields; `github`: more
  // spec.github fields (each with a leading comma).
  void apply_class(const std::string& servers, const std::string& extra = "",
                   const std::string& github = "") {
    test::kubectl(c_,
                  "apply -f - >/dev/null <<'EOF'\n"
                  R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerClass","metadata":{"name":")" +
                      class_ +
                      R"("},"spec":{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":")" +
                      tenant_ + R"("}},"github":{"servers":[)" + servers +
                      R"(],"credentialsSecretName":"platform-pat")" + github + "}" + extra + "}}\nEOF");
  }

  // The admission webhooks, in-process as the manager serves them, for the
  // tenant's namespace only (its label): other tests' sets are not judged.
  void start_webhook() {
    char tmpl[] = "/tmp/octorun-class-admission-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    test::kubectl(c_, "label namespace " + tenant_ + " octorun.io/class-test=" + tenant_ + " >/dev/null");
    auto cfg = kube::load_kubeconfig(c_.kubeconfig);
    ASSERT_TRUE(cfg) << cfg.error();
    kube::client api(*cfg);
    admission::webhook_server_options o;
    o.bind_address = "127.0.0.1";
    auto me = admission::own_username(api);
    ASSERT_TRUE(me) << me.error();
    o.policy.runner_creator = *me;  // the manager runs as the test's user
    o.policy.scopes.http_hosts = {"127.0.0.1"};
    o.policy.classes = admission::read_platform(*cfg, {"octorun.io", "v1alpha1", "runnerclasses", false},
                                                {"octorun.io", "v1alpha1", "runnersets", true});
    admission::self_signed_config certs;
    certs.dir = dir_ + "/certs";
    certs.ip_addresses = {"127.0.0.1"};
    auto server = admission::webhook_server::start(o, admission::certificate_source::self_signed(certs));
    ASSERT_TRUE(server) << server.error();
    webhook_ = std::move(*server);
    admission::webhook_configuration_options config;
    config.name = "octorun-" + tenant_;
    config.target.url_base = "https://127.0.0.1:" + std::to_string(webhook_->port());
    config.namespace_selector = {{"octorun.io/class-test", tenant_}};
    const auto mutating = dir_ + "/mutating.json", validating = dir_ + "/validating.json";
    std::ofstream(mutating) << admission::mutating_webhook_configuration(config);
    std::ofstream(validating) << admission::validating_webhook_configuration(config);
    test::kubectl(c_, "create -f " + mutating + " -f " + validating + " >/dev/null");
    configurations_ =
        "mutatingwebhookconfiguration/" + config.name + " validatingwebhookconfiguration/" + config.name;
    auto injected = admission::inject_ca_bundle(api, config.name, webhook_->ca_bundle());
    ASSERT_TRUE(injected) << injected.error();
    // In effect once the apiserver's informer has it: a set naming no
    // organization is refused.
    auto probe = test::poll(
        [&] { return refusal(set_json("probe", "https://github.com"), true); },
        [](const std::string& out) { return out.find("names no organization") != std::string::npos; }, 60s);
    ASSERT_TRUE(probe) << probe.last;
  }

  // `class_github`: more spec.github fields of the class (a leading comma);
  // `extra_args`: more of the manager's arguments.
  void start(const std::string& class_github = "", const std::vector<std::string>& extra_args = {}) {
    test::kubectl(
        c_, "-n " + platform_ +
                " create secret generic platform-pat --from-literal=github_token=ghp_simulator >/dev/null");
    apply_class("\"" + github_->ghes_url() + "\"", "", class_github);
    auto args = test::octorun_args(c_.kubeconfig, tenant_, "classes");
    args.push_back("--platform-namespace=" + platform_);
    args.push_back("--resync-seconds=1");
    // No --allow-sets-without-class from here on: the harness's is dropped.
    std::erase(args, std::string("--allow-sets-without-class"));
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), "s3cret",
                                                       "/tmp/octorun-manager-" + tenant_ + ".log");
    ASSERT_TRUE(manager_->wait_leads(60s)) << manager_->log_tail();
  }

  // A Webhook set of `scope`, minRunners 1 and maxRunners 2, naming the
  // class; `extra`: more spec fields.
  std::string set_json(const std::string& name, const std::string& scope, const std::string& extra = "") {
    return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
           R"("},"spec":{"runnerClassName":")" + class_ + R"(","scopeURL":")" + scope +
           R"(","intake":"Webhook","runnerLabels":["linux"],"minRunners":1,"maxRunners":2,)" + extra +
           R"("template":{"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})";
  }
  void create_set(const std::string& name, const std::string& scope, const std::string& extra = "") {
    test::kubectl(
        c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" + set_json(name, scope, extra) + "\nEOF");
  }
  // Why the apiserver refuses to create `json` (or, `dry_run`, to judge it)
  // in the tenant's namespace: kubectl's error; empty when it admits it.
  std::string refusal(const std::string& json, bool dry_run = false) {
    try {
      test::kubectl(c_, "-n " + tenant_ + " create" + (dry_run ? " --dry-run=server" : "") +
                            " -f - 2>&1 <<'EOF'\n" + json + "\nEOF");
      return {};
    } catch (const std::runtime_error& e) {
      return e.what();
    }
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

  std::size_t runners_of(const std::string& set) {
    auto names = get("runners -l octorun.io/runnerset=" + set + " -o name");
    return static_cast<std::size_t>(std::count(names.begin(), names.end(), '\n'));
  }

  std::string warnings(const std::string& set) {
    return get("events.events.k8s.io --field-selector regarding.kind=RunnerSet,regarding.name=" + set +
               ",type=Warning -o jsonpath='{range .items[*]}{.reason}|{.note}{\"\\n\"}{end}'");
  }

  // A set of `intake` with two runners, one of which GitHub calls busy;
  // the class stops admitting the namespace: the idle runner leaves GitHub
  // and goes, the busy one stays, and no runner is registered after.
  void drains_its_idle_runners_once_withdrawn(const std::string& intake) {
    start();
    auto two = set_json("ci", github_->ghes_url() + "/acme");
    for (const auto& [from, to] : {std::pair<std::string, std::string>{R"("minRunners":1,"maxRunners":2)",
                                                                       R"("minRunners":2,"maxRunners":2)"},
                                   {R"("intake":"Webhook")", R"("intake":")" + intake + "\""}})
      two.replace(two.find(from), from.size(), to);
    test::kubectl(c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" + two + "\nEOF");
    ASSERT_TRUE(wait_class("ci", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
    auto registered = test::poll([&] { return github_->runner_names(); },
                                 [](const std::vector<std::string>& r) { return r.size() == 2; }, 60s);
    ASSERT_EQ(registered.last.size(), 2u) << manager_->log_tail();
    const auto busy = registered.last[0];
    ASSERT_TRUE(github_->set_runner_busy(busy, true));
    test::kubectl(c_, "patch runnerclass " + class_ +
                          R"( --type=merge -p '{"spec":{"namespaceSelector":{"matchLabels":)"
                          R"({"kubernetes.io/metadata.name":"elsewhere"}}}}' >/dev/null)");
    auto got = wait_class("ci", "False|Refused");
    ASSERT_TRUE(got.starts_with("False|Refused|No new runners start; idle ones are removed from GitHub"))
        << got << "\n"
        << manager_->log_tail();
    EXPECT_NE(got.find("does not admit namespace \"" + tenant_ + "\""), std::string::npos) << got;
    github_->reset_counts();
    auto left = test::poll(
        [&] { return github_->runner_names(); },
        [&](const std::vector<std::string>& r) { return r == std::vector<std::string>{busy}; }, 60s);
    EXPECT_EQ(left.last, std::vector<std::string>{busy}) << manager_->log_tail();
    auto runners =
        test::poll([&] { return get("runners -l octorun.io/runnerset=ci -o name"); },
                   [&](const std::string& r) { return r == "runner.octorun.io/" + busy + "\n"; }, 60s);
    EXPECT_EQ(runners.last, "runner.octorun.io/" + busy + "\n") << "the busy runner keeps its job";
    std::int64_t jit = 0;
    for (const auto& [endpoint, count] : github_->call_counts())
      if (endpoint.find("jit") != std::string::npos) jit += count;
    EXPECT_EQ(jit, 0) << "a refused set registers no runner";
  }

  std::int64_t sink_calls() const {
    std::int64_t n = 0;
    for (const auto& [endpoint, count] : sink_->call_counts()) n += count;
    return n;
  }

  const test::cluster_info& c_;
  std::unique_ptr<sim::simulator> github_, sink_;
  std::string platform_, tenant_, class_;
  std::string dir_, configurations_;
  std::unique_ptr<admission::webhook_server> webhook_;
  std::unique_ptr<test::octorun_process> manager_;
};

}  // namespace octorun::test
