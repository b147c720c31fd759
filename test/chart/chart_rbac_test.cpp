// The chart's namespaced RBAC mode (rbac.namespaced=true: a Role and
// RoleBinding per watched namespace, no cluster-wide access to pods or
// Secrets) with the octorun binary running on the manager's own
// ServiceAccount token: it scales 0 -> N -> 0 in both of its namespaces,
// and the same credentials are refused in a namespace it does not watch.
// With the default cluster-wide RBAC, the chart's write policy refuses the
// token's writes outside the namespaces the platform admitted, and inside
// them to anything it did not make, and the manager reads Secrets and
// ConfigMaps only in the tenant namespaces where its sets bound its reads.
// The chart's Deployment is pinned to a node that does not exist (the
// binary runs here instead, with the release's RBAC).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "adapters/kube/config.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/chart/helm.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"

namespace octorun::test {
namespace {

using namespace std::chrono_literals;

class ChartRbac : public ::testing::Test {
 protected:
  void SetUp() override {
    install_crds(cluster());
    ns_ = make_namespace(cluster(), "rbac");
    a_ = make_namespace(cluster(), "rbac-a");
    b_ = make_namespace(cluster(), "rbac-b");
    other_ = make_namespace(cluster(), "rbac-other");
    release_ = "rbac-" + std::to_string(getpid());
    auto sim = sim::simulator::start({});
    ASSERT_TRUE(sim) << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
  }
  void TearDown() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    watches_.clear();
    helm("uninstall " + release_ + " -n " + ns_ + kube() + " --ignore-not-found");
    kubectl(cluster(), "delete namespace " + ns_ + " " + a_ + " " + b_ + " " + other_ +
                           " --wait=false --ignore-not-found >/dev/null");
    std::remove(kubeconfig_.c_str());
  }

  std::string kube() const { return " --kubeconfig " + shell_quote(cluster().kubeconfig); }

  // A kubeconfig with the release's manager ServiceAccount token.
  std::string manager_kubeconfig() {
    const auto sa = release_ + "-octorun-manager";
    auto token = kubectl(cluster(), "-n " + ns_ + " create token " + sa + " --duration=1h");
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    kubeconfig_ = "/tmp/octorun-rbac-" + ns_ + ".kubeconfig";
    std::ofstream(kubeconfig_)
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " << cluster().server
        << "\n    certificate-authority: " << cluster().ca_file
        << "\nusers:\n- name: u\n  user:\n    token: " << token
        << "\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n";
    return kubeconfig_;
  }

  // A Listener RunnerSet in `ns` for runner label `label`, with its credentials Secret.
  void create_set(const std::string& ns, const std::string& label) {
    kubectl(
        cluster(),
        "-n " + ns + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
    kubectl(
        cluster(),
        "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
            R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + label +
            R"("},"spec":{"scopeURL":")" + sim_->ghes_url() +
            R"(/acme","credentialsSecretName":"github","intake":"Listener","runnerLabels":[")" + label +
            R"("],"minRunners":0,"maxRunners":3,"template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}}})"
            "\nEOF");
  }

  // The octorun binary on the release's manager token, serving `namespaces`
  // (comma-separated), with `extra` arguments; false when it does not lead.
  bool start_manager(const std::string& namespaces, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--kubeconfig=" + manager_kubeconfig(),
                                     "--namespaces=" + namespaces,
                                     "--lease-namespace=" + ns_,
                                     "--lease-name=" + release_ + "-octorun-manager",
                                     "--identity=m",
                                     "--webhook-intake=false",
                                     "--health-bind=127.0.0.1",
                                     "--health-port=0",
                                     "--metrics-bind=127.0.0.1",
                                     "--metrics-port=0",
                                     "--log-format=text",
                                     "--scheduler.max-threads=2",
                                     "--github-http-hosts=127.0.0.1",
                                     "--endpoints-file=/tmp/octorun-endpoints-" + ns_ + ".json"};
    args.insert(args.end(), extra.begin(), extra.end());
    manager_ =
        std::make_unique<octorun_process>(OCTORUN_BINARY, args, "", "/tmp/octorun-manager-" + ns_ + ".log");
    return manager_->wait_leads(60s);
  }

  // Stops the manager: it exits cleanly, and nothing it asked for was refused.
  void expect_no_refusal() {
    EXPECT_EQ(manager_->stop(SIGTERM), 0) << manager_->log_tail();
    auto log = manager_->log();
    for (const char* refused : {"forbidden", "Forbidden", " 403 "})
      EXPECT_EQ(log.find(refused), std::string::npos) << refused << " in:\n" << manager_->log_tail();
  }

  // `kubectl auth can-i` as the release's manager ServiceAccount.
  bool manager_can(const std::string& call, const std::string& ns) {
    auto out =
        run_shell(shell_quote(cluster().bin + "/kubectl") +
                  " --kubeconfig=" + shell_quote(cluster().kubeconfig) + " auth can-i " + call + " -n " + ns +
                  " --as=system:serviceaccount:" + ns_ + ":" + release_ + "-octorun-manager 2>/dev/null");
    return out.output.rfind("yes", 0) == 0;
  }

  std::vector<std::int64_t> queue(const std::string& label, int n) {
    return test::queue_jobs(*sim_, n, 500ms, label);
  }

  std::string ns_, a_, b_, other_, release_, kubeconfig_;
  std::unique_ptr<sim::simulator> sim_;
  std::vector<std::unique_ptr<namespace_watch>> watches_;
  std::unique_ptr<octorun_process> manager_;
};

TEST_F(ChartRbac, TheManagerScalesInItsNamespacesOnItsOwnTokenAndIsRefusedElsewhere) {
  auto installed =
      helm("install " + release_ + " " + shell_quote(chart_dir()) + " -n " + ns_ + kube() +
           " --timeout 2m --set watchNamespaces={" + a_ + "," + b_ +
           "} --set rbac.namespaced=true --set nodeSelector.octorun-chart-test=no-such-node"
           // Its Job would wait for that node: helm uninstall for its timeout.
           " --set uninstallHook.enabled=false"
           " --set githubWebhook.enabled=false --set admission.enabled=false"
           // The chart's default RunnerClass, for these two
           // namespaces alone (classes are cluster-wide) and the
           // simulator's GitHub: the manager reads it, and the
           // namespaces' labels, on its own token.
           " --set runnerClasses.default.name=" +
           release_ +
           " --set-json 'runnerClasses.default.namespaceSelector={\"matchExpressions\":[{\"key\":"
           "\"kubernetes.io/metadata.name\",\"operator\":\"In\",\"values\":[\"" +
           a_ + "\",\"" + b_ + "\"]}]}' --set runnerClasses.default.servers={" + sim_->ghes_url() + "}");
  ASSERT_EQ(installed.status, 0) << installed.all();
  auto admin = kube::load_kubeconfig(cluster().kubeconfig);
  ASSERT_TRUE(admin) << admin.error();
  for (const auto& ns : {a_, b_}) watches_.push_back(std::make_unique<namespace_watch>(*admin, ns, *sim_));
  ASSERT_TRUE(start_manager(a_ + "," + b_)) << manager_->log_tail();
  const auto config = kubeconfig_;
  create_set(a_, "rbac-a");
  create_set(b_, "rbac-b");
  auto jobs = queue("rbac-a", 3);
  auto more = queue("rbac-b", 3);
  jobs.insert(jobs.end(), more.begin(), more.end());
  // 0 -> N: runners appear in both namespaces and run every job.
  EXPECT_TRUE(all_completed(*sim_, jobs, 120s)) << sim_->state_json() << manager_->log_tail();
  for (const auto& w : watches_) EXPECT_GE(w->runners_seen(), 1u);
  // N -> 0: nothing left in either namespace, nor on GitHub.
  for (const auto& w : watches_)
    EXPECT_TRUE(w->wait([](const namespace_watch& n) { return n.runners() == 0 && n.pods() == 0; }, 60s))
        << manager_->log_tail();
  EXPECT_TRUE(sim_->wait_until(
      [](const sim::simulator& s) { return s.state_json().find("\"runners\":[]") != std::string::npos; },
      30s))
      << sim_->state_json();
  for (const auto& ns : {a_, b_})
    EXPECT_EQ(kubectl(cluster(), "-n " + ns + " get secrets -l octorun.io/runner -o name"), "") << ns;
  // The same token elsewhere: refused (no cluster-wide pods or Secrets).
  const auto as_manager = shell_quote(cluster().bin + "/kubectl") + " --kubeconfig=" + shell_quote(config);
  for (const auto& call : {"get pods -n " + other_, "get secrets -n " + other_, std::string("get pods -A"),
                           "get runnersets.octorun.io -n " + other_, "create secret generic x -n " + other_})
    EXPECT_NE(run_shell(as_manager + " " + call + " 2>&1").output.find("forbidden"), std::string::npos)
        << call;
  expect_no_refusal();
}

// The chart's default cluster-wide RBAC reads no Secret and no ConfigMap
// anywhere: the manager reads them only in a tenant namespace where a set
// of its bound its reads (a RoleBinding of <fullname>-manager-reads to its
// own ServiceAccount), and the write policy lets its token bind that role to
// no one else and nowhere else. The binary on that token still scales a
// set with a tenant's own credentials 0 -> N, and nothing it asks is
// refused. On main at fcacfb4 (issue 32) the token could get every Secret
// and ConfigMap of every namespace, kube-system's included.
TEST_F(ChartRbac, TheManagerReadsOnlyInTheTenantNamespacesWhereItsSetsBoundItsReads) {
  kubectl(cluster(), "label namespace " + a_ + " octorun.io/tenant=true >/dev/null");
  kubectl(cluster(), "label namespace " + b_ + " octorun.io/tenant=true >/dev/null");
  auto installed = helm(
      "install " + release_ + " " + shell_quote(chart_dir()) + " -n " + ns_ + kube() +
      " --timeout 2m --set nodeSelector.octorun-chart-test=no-such-node --set uninstallHook.enabled=false"
      " --set githubWebhook.enabled=false --set admission.enabled=false"
      " --set runnerClasses.default.name=" +
      release_ +
      " --set-json 'runnerClasses.default.namespaceSelector={\"matchExpressions\":[{\"key\":"
      "\"kubernetes.io/metadata.name\",\"operator\":\"In\",\"values\":[\"" +
      a_ + "\"]}]}' --set runnerClasses.default.servers={" + sim_->ghes_url() + "}");
  ASSERT_EQ(installed.status, 0) << installed.all();
  const auto reads_role = release_ + "-octorun-manager-reads";
  const auto account = release_ + "-octorun-manager";
  for (const auto& ns : {std::string("kube-system"), a_, b_, other_})
    for (const auto* call : {"get secrets", "get configmaps", "list secrets"})
      EXPECT_FALSE(manager_can(call, ns)) << call << " in " << ns << " before any set";

  // Its token binds the reads role to itself in a tenant namespace, and to
  // no one else, nor outside the tenant namespaces (server-side dry runs).
  const auto as_manager =
      shell_quote(cluster().bin + "/kubectl") + " --kubeconfig=" + shell_quote(manager_kubeconfig());
  auto bind = [&](const std::string& ns, const std::string& subject) {
    const auto body = R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",)"
                      R"("metadata":{"name":"attack","labels":{"octorun.io/runnerset":"linux"}},)"
                      R"("roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":")" +
                      reads_role + R"("},"subjects":[)" + subject + "]}";
    return run_shell("printf '%s' " + shell_quote(body) + " | " + as_manager + " -n " + ns +
                     " create --dry-run=server -f - 2>&1");
  };
  const auto itself = R"({"kind":"ServiceAccount","name":")" + account + R"(","namespace":")" + ns_ + R"("})";
  // The API server learns of the policy through its informer.
  command_result probe;
  for (auto deadline = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < deadline;) {
    probe = bind("kube-system", itself);
    if (probe.output.find("ValidatingAdmissionPolicy") != std::string::npos) break;
  }
  EXPECT_NE(probe.output.find("namespace kube-system is not admitted"), std::string::npos) << probe.all();
  auto own = bind(a_, itself);
  EXPECT_EQ(own.status, 0) << own.all();
  for (const auto& subject :
       {R"({"kind":"ServiceAccount","name":"default","namespace":")" + a_ + R"("})",
        R"({"kind":"ServiceAccount","name":")" + account + R"(","namespace":")" + a_ + R"("})",
        std::string(
            R"({"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:authenticated"})")}) {
    auto refused = bind(a_, subject);
    EXPECT_NE(refused.status, 0) << subject << ": " << refused.all();
    EXPECT_NE(refused.output.find("and " + reads_role + ", to itself"), std::string::npos)
        << subject << ": " << refused.all();
  }

  auto admin = kube::load_kubeconfig(cluster().kubeconfig);
  ASSERT_TRUE(admin) << admin.error();
  watches_.push_back(std::make_unique<namespace_watch>(*admin, a_, *sim_));
  ASSERT_TRUE(start_manager(a_ + "," + b_, {"--tenant-reads-cluster-role=" + reads_role,
                                            "--runner-creator=system:serviceaccount:" + ns_ + ":" + account}))
      << manager_->log_tail();
  create_set(a_, "rbac-a");
  EXPECT_TRUE(all_completed(*sim_, queue("rbac-a", 3), 120s)) << sim_->state_json() << manager_->log_tail();
  EXPECT_GE(watches_.back()->runners_seen(), 1u);
  EXPECT_EQ(
      kubectl(cluster(), "-n " + a_ + " get rolebinding octorun-reads-rbac-a -o jsonpath={.roleRef.name}"),
      reads_role);
  EXPECT_TRUE(manager_can("get secrets", a_));
  EXPECT_FALSE(manager_can("list secrets", a_));
  // A set no class admits (b is a tenant namespace, but the class selects a alone) gets no binding.
  create_set(b_, "rbac-b");
  // (wait_for_value reports a timeout itself.)
  wait_for_value(
      [&] {
        return kubectl(cluster(), "-n " + b_ +
                                      " get runnerset rbac-b -o "
                                      "jsonpath='{.status.conditions[?(@.type==\"ClassAdmitted\")].status}'");
      },
      std::string("False"), 60s, "the set no class admits to be refused");
  for (const auto& ns : {std::string("kube-system"), b_, other_})
    EXPECT_FALSE(manager_can("get secrets", ns)) << ns;

  // Deleted with --cascade=foreground while a runner is busy and the
  // manager is down: the garbage collector takes the set's dependents, its
  // owned reads binding among them, at once. The next manager's deletion
  // reads the tenant's credentials to remove the runner and the scale set
  // from GitHub: it binds again without an owner, and removes the binding
  // last. (At 8ce8119 the binding it made again was owned by the set, which
  // the collector could take while the busy Runner held the deletion open.)
  auto busy = queue("rbac-a", 1);
  ASSERT_TRUE(
      sim_->wait_until([&](const sim::simulator& s) { return s.job_state(busy.front()) == "running"; }, 60s))
      << sim_->state_json();
  expect_no_refusal();
  kubectl(cluster(), "-n " + a_ + " delete runnerset rbac-a --cascade=foreground --wait=false >/dev/null");
  wait_for_value(
      [&] {
        return kubectl(cluster(),
                       "-n " + a_ + " get rolebinding octorun-reads-rbac-a --ignore-not-found -o name");
      },
      std::string(""), 60s, "the garbage collector to take the owned reads binding");
  ASSERT_TRUE(start_manager(a_ + "," + b_, {"--tenant-reads-cluster-role=" + reads_role,
                                            "--runner-creator=system:serviceaccount:" + ns_ + ":" + account}))
      << manager_->log_tail();
  EXPECT_TRUE(all_completed(*sim_, busy, 120s)) << sim_->state_json() << manager_->log_tail();
  wait_for_value(
      [&] { return kubectl(cluster(), "-n " + a_ + " get runnerset rbac-a --ignore-not-found -o name"); },
      std::string(""), 120s, "the set's foreground deletion to finish");
  EXPECT_EQ(
      kubectl(cluster(), "-n " + a_ + " get rolebinding octorun-reads-rbac-a --ignore-not-found -o name"), "")
      << "the deletion left its reads binding";
  for (const auto& ss : sim_->scale_sets()) ADD_FAILURE() << "scale set " << ss.name << " left on GitHub";
  EXPECT_TRUE(sim_->runner_names().empty()) << sim_->state_json();
  expect_no_refusal();
}

// The chart's defaults (the ClusterRole: Pods, Secrets, RoleBindings... in
// every namespace) with rbac.containerModeKubernetes, attacked with the
// manager's own token, as whoever stole it would: a Pod, a Secret, and a
// RoleBinding of the hooks' ClusterRole (pods/exec, Secrets) in kube-system
// and in a namespace the platform has not admitted are refused by the
// chart's ValidatingAdmissionPolicy, naming it; the same in a namespace
// labelled octorun.io/tenant=true are made. The token can neither remove the
// policy nor admit a namespace. On main at 7bb40ab (issue 32) every one of
// these writes was made (also here with tenantNamespaces.admissionPolicy=false).
TEST_F(ChartRbac, TheManagersTokenWritesOnlyInTheNamespacesThePlatformAdmitted) {
  kubectl(cluster(), "label namespace " + a_ + " octorun.io/tenant=true >/dev/null");
  auto installed =
      helm("install " + release_ + " " + shell_quote(chart_dir()) + " -n " + ns_ + kube() +
           " --timeout 2m --set rbac.containerModeKubernetes=true"
           " --set nodeSelector.octorun-chart-test=no-such-node --set uninstallHook.enabled=false"
           " --set githubWebhook.enabled=false --set admission.enabled=false"
           // A default RunnerClass is cluster-wide: it would
           // become the class of every other test's RunnerSets.
           " --set runnerClasses.default.create=false");
  ASSERT_EQ(installed.status, 0) << installed.all();
  const auto policy = release_ + "-octorun-manager-writes";
  const auto hooks_role = release_ + "-octorun-runner-kubernetes-mode";
  const auto as_manager =
      shell_quote(cluster().bin + "/kubectl") + " --kubeconfig=" + shell_quote(manager_kubeconfig());
  // A Pod, Secret or RoleBinding named attack, as the manager; `labels`:
  // its metadata.labels (JSON), as the manager's own objects carry them;
  // `subjects`: a RoleBinding's (by default the runner ServiceAccount of
  // the set named linux, as the manager binds it).
  auto runner_account = [](const std::string& ns) {
    return R"({"kind":"ServiceAccount","name":"octorun-runner-linux","namespace":")" + ns + R"("})";
  };
  auto write = [&](const std::string& ns, const std::string& what, const std::string& labels = "{}",
                   std::string subjects = "") {
    if (subjects.empty()) subjects = "[" + runner_account(ns) + "]";
    const std::string meta = R"("metadata":{"name":"attack","labels":)" + labels + "}";
    std::string body;
    if (what == "pod")
      body = R"({"apiVersion":"v1","kind":"Pod",)" + meta +
             R"(,"spec":{"nodeSelector":{"octorun-chart-test":"no-such-node"},)"
             R"("containers":[{"name":"c","image":"r"}]}})";
    else if (what == "secret")
      body = R"({"apiVersion":"v1","kind":"Secret",)" + meta + R"(,"stringData":{"a":"b"}})";
    else
      body = R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",)" + meta +
             R"(,"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":")" +
             hooks_role + R"("},"subjects":)" + subjects + "}";
    return run_shell("printf '%s' " + shell_quote(body) + " | " + as_manager + " -n " + ns +
                     " create -f - 2>&1");
  };
  // The API server learns of a new policy through its informer: observe it
  // refusing (a server-side dry run writes nothing either way).
  command_result probe;
  for (auto deadline = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < deadline;) {
    probe = run_shell(as_manager + " -n " + other_ + " create secret generic probe --dry-run=server 2>&1");
    if (probe.output.find(policy) != std::string::npos) break;
  }
  EXPECT_NE(probe.output.find(policy), std::string::npos) << probe.all();

  for (const auto& ns : {std::string("kube-system"), other_})
    for (const auto* what : {"pod", "secret", "rolebinding"}) {
      auto refused = write(ns, what);
      EXPECT_NE(refused.status, 0) << ns << " " << what << ": " << refused.all();
      EXPECT_NE(refused.output.find("ValidatingAdmissionPolicy '" + policy + "'"), std::string::npos)
          << ns << " " << what << ": " << refused.all();
      EXPECT_NE(refused.output.find("namespace " + ns + " is not admitted"), std::string::npos)
          << refused.all();
      EXPECT_EQ(
          kubectl(cluster(), "-n " + ns + " get " + std::string(what) + " attack --ignore-not-found -o name"),
          "")
          << ns << " " << what;
    }
  // In a namespace the platform admitted, only objects of the manager's
  // kind: those labelled octorun.io/runnerset.
  const std::string not_made = "may write in a tenant namespace only what it made";
  for (const auto* what : {"pod", "secret", "rolebinding"}) {
    auto refused = write(a_, what);
    EXPECT_NE(refused.status, 0) << what << ": " << refused.all();
    EXPECT_NE(refused.output.find(not_made), std::string::npos) << what << ": " << refused.all();
    auto made = write(a_, what, R"({"octorun.io/runnerset":"linux"})");
    EXPECT_EQ(made.status, 0) << what << ": " << made.all();
  }
  auto removed = run_shell(as_manager + " -n " + a_ + " delete pod attack --wait=false 2>&1");
  EXPECT_EQ(removed.status, 0) << removed.all();
  // Its RoleBindings bind the hooks' role to its set's runner
  // ServiceAccount alone, not to a tenant's account, another namespace's,
  // or every user (RBAC's `bind` would let it name any subject).
  const std::string binds_only = "may bind in a tenant namespace only " + hooks_role;
  for (const auto& subjects :
       {std::string(R"([{"kind":"ServiceAccount","name":"default","namespace":")") + a_ + R"("}])",
        "[" + runner_account(b_) + "]",
        std::string(
            R"([{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:authenticated"}])"),
        "[" + runner_account(a_) +
            R"(,{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"mallory"}])"}) {
    auto refused = write(a_, "rolebinding", R"({"octorun.io/runnerset":"linux"})", subjects);
    EXPECT_NE(refused.status, 0) << subjects << ": " << refused.all();
    EXPECT_NE(refused.output.find(binds_only), std::string::npos) << subjects << ": " << refused.all();
  }
  // (Applied server-side: a PATCH, with no read first; the token may not read RoleBindings.)
  const auto relabel = R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",)"
                       R"("metadata":{"name":"attack","labels":{"octorun.io/runnerset":"other"}}})";
  auto relabelled = run_shell("printf '%s' " + shell_quote(relabel) + " | " + as_manager + " -n " + a_ +
                              " apply --server-side --force-conflicts -f - 2>&1");
  EXPECT_NE(relabelled.status, 0) << relabelled.all();
  EXPECT_NE(relabelled.output.find(binds_only), std::string::npos) << relabelled.all();
  // A tenant's own objects: the manager may hold a finalizer on its Secret
  // (its credentials, say) and let it go, and do nothing else to them: not
  // label them into its reach, change or delete them. (Its RBAC has no
  // delete on Secrets at all: the JIT Secrets go with their Runners.)
  // The token reads the namespace as where a set of the manager's is: its
  // reads bound there (kubectl reads an object before it changes it).
  const auto reads = R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",)"
                     R"("metadata":{"name":"octorun-reads-linux","labels":{"octorun.io/runnerset":"linux"}},)"
                     R"("roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":")" +
                     release_ + R"(-octorun-manager-reads"},"subjects":[{"kind":"ServiceAccount","name":")" +
                     release_ + R"(-octorun-manager","namespace":")" + ns_ + R"("}]})";
  auto bound =
      run_shell("printf '%s' " + shell_quote(reads) + " | " + as_manager + " -n " + a_ + " create -f - 2>&1");
  ASSERT_EQ(bound.status, 0) << bound.all();
  ASSERT_TRUE(
      wait_for([&] { return manager_can("get secrets", a_); }, 30s, "the reads binding to take effect"));
  kubectl(cluster(), "-n " + a_ + " create secret generic tenant --from-literal=token=t >/dev/null");
  kubectl(cluster(),
          "-n " + a_ +
              " run tenant --image=r --restart=Never --overrides="
              "'{\"spec\":{\"nodeSelector\":{\"octorun-chart-test\":\"no-such-node\"}}}' >/dev/null");
  auto tenant_secret = [&](const std::string& call) {
    return run_shell(as_manager + " -n " + a_ + " " + call + " 2>&1");
  };
  for (const auto& call :
       {std::string("label secret tenant octorun.io/runnerset=linux"),
        std::string("patch secret tenant --type=merge -p '{\"data\":{\"token\":\"eA==\"}}'"),
        std::string("annotate secret tenant a=b"), std::string("label pod tenant octorun.io/runnerset=linux"),
        std::string("delete pod tenant --wait=false")}) {
    auto refused = tenant_secret(call);
    EXPECT_NE(refused.status, 0) << call << ": " << refused.all();
    EXPECT_NE(refused.output.find(not_made), std::string::npos) << call << ": " << refused.all();
  }
  for (const auto& finalizers : {"[\"runnerset.octorun.io/linux\"]", "null"}) {
    auto held = tenant_secret("patch secret tenant --type=merge -p '{\"metadata\":{\"finalizers\":" +
                              std::string(finalizers) + "}}'");
    EXPECT_EQ(held.status, 0) << finalizers << ": " << held.all();
  }
  EXPECT_EQ(kubectl(cluster(), "-n " + a_ + " get secret tenant -o jsonpath='{.data.token}'"), "dA==");
  // Neither the policy nor a namespace's labels are the manager's to change.
  for (const auto& call :
       {"delete validatingadmissionpolicy " + policy, "delete validatingadmissionpolicybinding " + policy,
        "label namespace " + other_ + " octorun.io/tenant=true"}) {
    auto refused = run_shell(as_manager + " " + call + " 2>&1");
    EXPECT_NE(refused.status, 0) << call << ": " << refused.all();
    EXPECT_NE(refused.output.find("forbidden"), std::string::npos) << call << ": " << refused.all();
  }
}

}  // namespace
}  // namespace octorun::test
