// The octorun binary as users run it: against the real apiserver (kwok runs
// the pods) and the GitHub simulator, which delivers signed webhooks to it.
// Scale 0 -> N -> 0 from job demand, a clean SIGTERM that releases the
// Lease, and a kill -9 in the middle of scaling after which a restarted
// manager converges with nothing leaked. Every replica serves /metrics (the
// state metrics filled on the leader) and the admission webhook (called by
// the apiserver, with the CA the replicas share); the manager runs on the
// RBAC of deploy/ alone.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "adapters/admission/webhook_configuration.hpp"
#include "adapters/http/http_client.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"
#include "test/support/wiring.hpp"

#ifndef OCTORUN_DEPLOY_DIR
#error "OCTORUN_DEPLOY_DIR must name deploy/"
#endif

namespace octorun {
namespace {

using namespace std::chrono_literals;

// One line of the Prometheus text format, e.g. `name{labels} value`.
bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

class ManagerBinary : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  ManagerBinary() : c_(test::cluster()), ns_(test::make_namespace(c_, "mgr")) {
    auto sim = sim::simulator::start({});
    if (!sim) ADD_FAILURE() << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
    log_ = "/tmp/octorun-manager-" + ns_ + ".log";
    follower_log_ = "/tmp/octorun-manager-" + ns_ + "-follower.log";
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
    follower_.reset();
    for (const auto& d : cert_dirs_) std::filesystem::remove_all(d);
    if (!HasFailure()) std::remove(follower_log_.c_str());
    test::kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
    if (!HasFailure()) std::remove(log_.c_str());
  }

  // Starts a manager process logging to `log`; `extra` replaces defaults of
  // the same option (e.g. --kubeconfig=...).
  std::unique_ptr<test::octorun_process> launch(const std::string& identity, const std::string& log,
                                                const std::vector<std::string>& extra = {}) {
    const std::string certs = "/tmp/octorun-certs-" + ns_ + "-" + identity;
    cert_dirs_.push_back(certs);
    auto args = test::octorun_args(c_.kubeconfig, ns_, identity);
    for (const auto& a : {std::string("--admission"), std::string("--admission-bind=127.0.0.1"),
                          std::string("--admission-port=0"), "--admission-cert-dir=" + certs,
                          std::string("--admission-ip-addresses=127.0.0.1")})
      args.push_back(a);
    for (const auto& e : extra) {
      auto key = e.substr(0, e.find('='));
      std::erase_if(args, [&](const std::string& a) { return a.substr(0, a.find('=')) == key; });
      args.push_back(e);
    }
    return std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), secret_, log);
  }

  // Starts the manager (replica-0); returns the URL of its webhook intake.
  std::string start_manager(const std::vector<std::string>& extra = {}) {
    manager_ = launch("replica-0", log_, extra);
    auto url = manager_->wait_leading(60s);
    if (url.empty()) {
      ADD_FAILURE() << "the manager did not start leading; log:\n" << log_tail();
      return {};
    }
    sim_->set_webhook(url, secret_);
    return url;
  }

  // Sends `sig` and waits for the process; returns its exit status.
  int stop(int sig) { return manager_ ? manager_->stop(sig) : -1; }

  std::string log_tail() { return manager_ ? manager_->log_tail() : std::string{}; }

  // GET `url` (plain HTTP); the body, or "" on failure.
  static std::string http_get(const std::string& url) {
    http::client client;
    client.set_plain_http(true);
    auto r = client.perform({"GET", url, {}, {}, 5s});
    return r && r->status == 200 ? r->body : std::string{};
  }

  // Polls `url` until `pred(body)` holds; returns the last body seen.
  template <class Pred>
  static std::string scrape_until(const std::string& url, Pred pred, std::chrono::seconds within = 60s) {
    return test::poll([&] { return http_get(url); }, pred, within).last;
  }

  static std::string admission_port(const test::octorun_process& p) {
    auto url = p.wait_endpoint("admission", 60s);  // https://bind:port
    auto colon = url.rfind(':');
    return colon == std::string::npos || url.find("https://") != 0 ? std::string() : url.substr(colon + 1);
  }

  // Deliveries that come before the manager knows the set are turned away (no
  // RunnerSet serves the repository yet): returns once the set has a status.
  void apply_runnerset(int max_runners) {
    test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, max_runners);
    test::wait_for_value(
        [&] {
          return test::kubectl(c_, "-n " + ns_ + " get runnerset linux -o jsonpath='{.status.selector}'");
        },
        std::string("octorun.io/runnerset=linux"), 60s, "the RunnerSet's first status",
        [&] { return log_tail(); });
  }

  std::vector<std::int64_t> queue_jobs(int n, std::chrono::milliseconds duration) {
    return test::queue_jobs(*sim_, n, duration);
  }
  bool all_completed(const std::vector<std::int64_t>& ids, std::chrono::seconds within) {
    return test::all_completed(*sim_, ids, within);
  }

  // Every phase of the jobs' way has a sample, none of their timestamps was
  // a problem (GitHub's clock is the cluster's here), and the runners' cost
  // is counted busy for the jobs' repository (docs/monitoring.md).
  void expect_job_timeline_and_cost() {
    const auto metrics = manager_->wait_metrics(10s);
    EXPECT_EQ(test::job_phases_without_sample(metrics, ns_, 30s), "") << log_tail();
    const std::string in_ns = "namespace=\"" + ns_ + "\"";
    EXPECT_EQ(test::scrape_metric(metrics, "octorun_job_phase_timestamp_problems_total", {in_ns}), "");
    EXPECT_NE(test::scrape_metric(metrics, "octorun_runner_seconds_total",
                                  {in_ns, "repository=\"acme/app\"", "state=\"busy\""}),
              "");
    // (Busy, not idle: times are whole seconds, and a runner here may take
    // its job within the second it came online, so idle may be 0 s.)
    EXPECT_NE(test::scrape_metric(metrics, "octorun_runner_cpu_request_core_seconds_total",
                                  {in_ns, "state=\"busy\""}),
              "");
  }

  std::string count(const std::string& kind) {
    auto out = test::kubectl(c_, "-n " + ns_ + " get " + kind + " -o name | wc -l");
    return out.substr(0, out.find_first_of(" \n"));
  }

  bool eventually_none(const std::string& kind, std::chrono::seconds within = 60s) {
    return bool(
        test::wait_for_value([&] { return count(kind); }, std::string("0"), within, "the count of " + kind,
                             [&] {
                               return kind + " left: " + test::kubectl(c_, "-n " + ns_ + " get " + kind) +
                                      "\nmanager log:\n" + log_tail();
                             }));
  }

  const test::cluster_info& c_;
  std::string ns_;
  std::unique_ptr<sim::simulator> sim_;
  std::string secret_ = "It's a Secret to Everybody";
  std::string log_;
  std::unique_ptr<test::octorun_process> manager_;
  std::string follower_log_;
  std::unique_ptr<test::octorun_process> follower_;
  std::vector<std::string> cert_dirs_;
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
  // Frugality: one runner, one JIT configuration and no other GitHub call per
  // job (GitHub removes a JIT runner after its job).
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 5);
  EXPECT_EQ(sim_->calls("rest.delete_runner"), 0);
  EXPECT_EQ(sim_->state_json().find("\"ephemeral\":true"), std::string::npos) << "a GitHub runner leaked";
  expect_job_timeline_and_cost();

  auto status = stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log_tail();
  EXPECT_EQ(
      test::kubectl(c_, "-n " + ns_ + " get lease octorun-manager -o jsonpath='{.spec.holderIdentity}'"), "")
      << "the Lease was not released";
}

// A listed namespace that does not exist (yet): the manager starts and says
// so by name, serves the other namespaces, and serves it once it is created.
TEST_F(ManagerBinary, ANamespaceThatDoesNotExistIsLoggedTheOthersServedAndItOnceCreated) {
  const std::string later = ns_ + "-later";
  start_manager({"--namespaces=" + ns_ + "," + later});
  EXPECT_NE(manager_->wait_for_log(std::regex("(namespace " + later + " does not exist)"), 30s), "")
      << log_tail();
  apply_runnerset(2);
  auto jobs = queue_jobs(1, 500ms);
  EXPECT_TRUE(all_completed(jobs, 120s)) << log_tail();
  test::kubectl(c_, "create namespace " + later + " >/dev/null");
  test::create_runnerset(c_, later, sim_->ghes_url() + "/acme", 1, 2);
  EXPECT_TRUE(bool(test::wait_for_value(
      [&] {
        return test::kubectl(c_, "-n " + later + " get runnerset linux -o jsonpath='{.status.replicas}'");
      },
      std::string("1"), 60s, "the RunnerSet in the namespace created later", [&] { return log_tail(); })));
  EXPECT_EQ(manager_->log().find("cannot check"), std::string::npos) << log_tail();
  stop(SIGKILL);  // its Runner's finalizer stays: the namespace goes with the test cluster
  test::kubectl(c_, "delete namespace " + later + " --wait=false >/dev/null");
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

TEST_F(ManagerBinary, ServesStateMetricsOnEveryReplicaWithTheControllerStateOnTheLeader) {
  start_manager();
  follower_ = launch("replica-1", follower_log_);
  auto leader = manager_->wait_metrics(60s);
  auto follower = follower_->wait_metrics(60s);
  ASSERT_FALSE(leader.empty()) << log_tail();
  ASSERT_FALSE(follower.empty()) << follower_->log_tail();
  apply_runnerset(3);
  auto jobs = queue_jobs(2, 10000ms);
  ASSERT_TRUE(sim_->wait_until(
      [&](const sim::simulator& s) {
        return std::all_of(jobs.begin(), jobs.end(), [&](auto id) { return s.job_state(id) == "running"; });
      },
      60s))
      << log_tail();
  // Both runners run a job: counted per phase and per set.
  const std::string set = R"(namespace=")" + ns_ + R"(",runnerset="linux",variant="")";
  const std::string running = "octorun_runnerset_runners{" + set + R"(,state="running"} 2)";
  auto is_running = [&](const std::string& line) {
    return line.find(R"(phase="Running"} 1)") != std::string::npos;
  };
  auto text = scrape_until(leader + "/metrics", [&](const std::string& t) {
    std::istringstream in(t);
    int phase_running = 0;
    for (std::string l; std::getline(in, l);)
      phase_running +=
          l.starts_with("octorun_runner_status_phase{namespace=\"" + ns_ + "\"") && is_running(l);
    return has_line(t, running) && phase_running == 2;
  });
  EXPECT_TRUE(has_line(text, running)) << text;
  EXPECT_TRUE(has_line(text, "octorun_runnerset_spec_max_runners{" + set + "} 3")) << text;
  EXPECT_TRUE(has_line(text, R"(octorun_manager_leader{identity="replica-0"} 1)")) << text;
  // A running Runner's timeline (kubectl describe runner shows it): its
  // pod's way up and GitHub's times of its job.
  const auto timeline =
      test::kubectl(c_, "-n " + ns_ + " get runners -o jsonpath='{.items[0].status.timeline}'");
  for (const char* point : {"created", "podScheduled", "containersStarted", "online", "queued", "started"})
    EXPECT_NE(timeline.find(std::string("\"") + point + "\":\""), std::string::npos)
        << point << ": " << timeline;
  // The follower serves the same families, without the controller's state.
  auto standby = http_get(follower + "/metrics");
  EXPECT_TRUE(has_line(standby, R"(octorun_manager_leader{identity="replica-1"} 0)")) << standby;
  EXPECT_NE(standby.find("# TYPE octorun_runner_status_phase gauge"), std::string::npos) << standby;
  EXPECT_EQ(standby.find("runnerset=\"linux\""), std::string::npos) << standby;
  EXPECT_EQ(http_get(follower_->wait_health(10s) + "/readyz"), "standby");

  // The jobs end, the runners go, and so do their series.
  EXPECT_TRUE(all_completed(jobs, 120s)) << log_tail();
  EXPECT_TRUE(eventually_none("runners"));
  const std::string none = "octorun_runnerset_runners{" + set + R"(,state="running"} 0)";
  text = scrape_until(leader + "/metrics", [&](const std::string& t) {
    return has_line(t, none) && t.find("octorun_runner_info{namespace=\"" + ns_) == std::string::npos;
  });
  EXPECT_TRUE(has_line(text, none)) << text;
  EXPECT_EQ(text.find("octorun_runner_info{namespace=\"" + ns_), std::string::npos) << text;
}

TEST_F(ManagerBinary, ServesTheAdmissionWebhookOnEveryReplica) {
  // Webhook configurations for this namespace only, without a caBundle: the
  // manager injects the CA it shares with its other replicas through a Secret.
  test::kubectl(c_, "label namespace " + ns_ + " octorun.io/admission-test=" + ns_ + " >/dev/null");
  admission::webhook_configuration_options wc;
  wc.name = "octorun-" + ns_;
  wc.target.url_base = "https://127.0.0.1:1";  // replaced below, once the port is known
  wc.namespace_selector = {{"octorun.io/admission-test", ns_}};
  test::kubectl(c_,
                "create -f - >/dev/null <<'EOF'\n" + admission::mutating_webhook_configuration(wc) + "\nEOF");
  test::kubectl(
      c_, "create -f - >/dev/null <<'EOF'\n" + admission::validating_webhook_configuration(wc) + "\nEOF");
  struct cleanup {
    const test::cluster_info& c;
    std::string name;
    ~cleanup() {
      test::kubectl(c, "delete mutatingwebhookconfiguration/" + name + " validatingwebhookconfiguration/" +
                           name + " --ignore-not-found >/dev/null");
    }
  } remove_configurations{c_, wc.name};
  const std::vector<std::string> shared = {"--admission-ca-secret=" + ns_ + "/octorun-webhook-ca",
                                           "--admission-inject-ca=" + wc.name};
  start_manager(shared);
  follower_ = launch("replica-1", follower_log_, shared);
  auto leader_port = admission_port(*manager_);
  auto follower_port = admission_port(*follower_);
  ASSERT_FALSE(leader_port.empty()) << log_tail();
  ASSERT_FALSE(follower_port.empty()) << follower_->log_tail();
  for (const char* kind : {"mutatingwebhookconfiguration", "validatingwebhookconfiguration"})
    ASSERT_TRUE(test::wait_for(
        [&] {
          return !test::kubectl(c_, std::string("get ") + kind + "/" + wc.name +
                                        " -o jsonpath='{.webhooks[0].clientConfig.caBundle}'")
                      .empty();
        },
        60s, std::string("the caBundle of ") + kind + "/" + wc.name, [&] { return log_tail(); }));

  // The apiserver calls the webhook on one replica ...
  for (const char* kind : {"mutatingwebhookconfiguration", "validatingwebhookconfiguration"}) {
    auto count = test::kubectl(
        c_, std::string("get ") + kind + "/" + wc.name + " -o jsonpath='{range .webhooks[*]}x{end}'");
    std::string ops;
    for (std::size_t i = 0; i < count.size(); ++i) {
      auto path = test::kubectl(c_, std::string("get ") + kind + "/" + wc.name + " -o jsonpath='{.webhooks[" +
                                        std::to_string(i) + "].clientConfig.url}'");
      path = path.substr(path.find('/', std::string("https://").size()));
      ops += std::string(ops.empty() ? "" : ",") + R"({"op":"replace","path":"/webhooks/)" +
             std::to_string(i) + R"(/clientConfig/url","value":"https://127.0.0.1:)" + leader_port + path +
             R"("})";
    }
    test::kubectl(
        c_, std::string("patch ") + kind + "/" + wc.name + " --type=json -p '[" + ops + "]' >/dev/null");
  }
  // Bad: a name whose Runners' names would be too long, which only the webhook checks.
  auto set_yaml = [&](const std::string& name, const std::string& scope) {
    return "apiVersion: octorun.io/v1alpha1\nkind: RunnerSet\nmetadata: {name: " + name +
           ", namespace: " + ns_ + "}\nspec:\n  scopeURL: " + scope +
           "\n  credentialsSecretName: github\n  template: {spec: {containers: [{name: runner, image: "
           "r}]}}\n";
  };
  // Configurations reach the apiserver through its informer: observe their effect.
  auto too_long = [](const std::string& out) {
    return out.find("shorten the RunnerSet name by 3") != std::string::npos;
  };
  auto denial = test::poll(
                    [&] {
                      auto out = test::kubectl(
                          c_, "create -f - 2>&1 <<'EOF' || true\n" +
                                  set_yaml(std::string(60, 'b'), "https://github.com/acme") + "EOF");
                      if (!too_long(out))  // admitted before the webhook took effect: try again
                        test::kubectl(c_, "-n " + ns_ + " delete runnerset " + std::string(60, 'b') +
                                              " --ignore-not-found >/dev/null");
                      return out;
                    },
                    too_long, 60s)
                    .last;
  // The webhook's 422 Status, passed on by the apiserver.
  EXPECT_NE(denial.find("The request is invalid: metadata.name: is 3 characters too long"), std::string::npos)
      << denial << log_tail();
  EXPECT_NE(denial.find("shorten the RunnerSet name by 3"), std::string::npos) << denial;
  // ... which defaults what was left out.
  test::kubectl(c_, "create -f - >/dev/null <<'EOF'\n" + set_yaml("good", "https://github.com/acme") + "EOF");
  EXPECT_EQ(test::kubectl(
                c_, "-n " + ns_ + " get runnerset good -o jsonpath='{.spec.template.spec.restartPolicy}'"),
            "Never");

  // ... and the other replica, a follower, answers too, trusted through the same caBundle.
  auto bundle = test::kubectl(c_, "get validatingwebhookconfiguration/" + wc.name +
                                      " -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d");
  ASSERT_NE(bundle.find("BEGIN CERTIFICATE"), std::string::npos) << bundle;
  http::tls_options trust;
  trust.ca_pem = bundle;
  http::client tls(trust);
  auto review = [&](const std::string& scope) {
    std::string object = R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"x",)"
                         R"("namespace":"ci"},"spec":{"scopeURL":")" +
                         scope +
                         R"(","credentialsSecretName":"github")"
                         R"(,"template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}}})";
    return tls.perform(
        {"POST",
         "https://127.0.0.1:" + follower_port + "/validate-runnerset",
         {{"Content-Type", "application/json"}},
         R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",)"
         R"("operation":"CREATE","object":)" +
             object + "}}"});
  };
  auto allowed = review("https://github.com/acme");
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_NE(allowed->body.find(R"("allowed":true)"), std::string::npos) << allowed->body;
  auto denied = review("ftp://github.com/acme");
  ASSERT_TRUE(denied) << denied.error().message;
  EXPECT_NE(denied->body.find(R"("allowed":false)"), std::string::npos) << denied->body;
}

// The manager on deploy/'s RBAC alone: a token of the octorun-manager
// ServiceAccount, bound to nothing but the manager's roles.
TEST_F(ManagerBinary, RunsWithOnlyItsOwnRbac) {
  const std::string deploy = OCTORUN_DEPLOY_DIR;
  test::kubectl(c_, "apply -f " + deploy + "/namespace.yaml -f " + deploy + "/manager-rbac.yaml -f " +
                        deploy + "/webhook-rbac.yaml >/dev/null");
  auto token = test::kubectl(c_, "-n octorun-system create token octorun-manager --duration=1h");
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  ASSERT_FALSE(token.empty());
  const std::string kubeconfig = "/tmp/octorun-manager-" + ns_ + ".kubeconfig";
  std::ofstream(kubeconfig)
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " << c_.server
      << "\n    certificate-authority: " << c_.ca_file << "\nusers:\n- name: u\n  user:\n    token: " << token
      << "\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n";
  const std::string lease = "octorun-rbac-" + ns_;
  // As deploy/manager-deployment.yaml passes it: the ClusterRole reads no
  // Secret, each set binds the manager's reads in its namespace.
  start_manager({"--kubeconfig=" + kubeconfig, "--lease-namespace=octorun-system", "--lease-name=" + lease,
                 "--admission-ca-secret=octorun-system/octorun-webhook-ca",
                 "--tenant-reads-cluster-role=octorun-manager-reads"});
  apply_runnerset(2);
  auto jobs = queue_jobs(2, 1500ms);
  EXPECT_TRUE(all_completed(jobs, 120s)) << log_tail();
  EXPECT_TRUE(eventually_none("runners"));
  EXPECT_TRUE(eventually_none("pods"));
  EXPECT_TRUE(eventually_none("secrets -l octorun.io/runner"));
  // Its Events were written under the same identity.
  auto reasons =
      test::kubectl(c_, "-n " + ns_ + " get events.events.k8s.io -o jsonpath='{.items[*].reason}'");
  EXPECT_NE(reasons.find("Running"), std::string::npos) << reasons;
  auto status = stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log_tail();
  auto log = manager_->log();
  for (const char* refused : {"forbidden", "Forbidden", " 403 "})
    EXPECT_EQ(log.find(refused), std::string::npos) << refused << " in:\n" << log_tail();
  test::kubectl(c_, "-n octorun-system delete lease " + lease + " --ignore-not-found >/dev/null");
  std::remove(kubeconfig.c_str());
}

// Every option deploy/manager-deployment.yaml passes is one the binary has
// (CAF stops at an unknown option).
TEST(ManagerBinaryOptions, TheDeploymentPassesOnlyDeclaredOptions) {
  auto args =
      test::kubectl(test::cluster(), std::string("create --dry-run=client -f ") + OCTORUN_DEPLOY_DIR +
                                         R"(/manager-deployment.yaml -o jsonpath='{range )"
                                         R"(.spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}')");
  std::string cmd = OCTORUN_BINARY;
  std::istringstream in(args);
  int n = 0;
  for (std::string a; std::getline(in, a); ++n) cmd += " '" + a + "'";
  EXPECT_GE(n, 10) << args;
  cmd += " --help >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
}  // namespace octorun
