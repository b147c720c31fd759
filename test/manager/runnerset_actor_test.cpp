// The RunnerSet actor with its Runner actors, on the real apiserver (kwok
// runs the pods) against the GitHub simulator as a GHES host: scaling from
// job demand up and back to zero, and scale-down that never takes a busy runner.
#include "actors/runnerset/runnerset_actor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "actors/kinds.hpp"
#include "adapters/http/http_client.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/informer.hpp"
#include "messages/jobs.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wiring.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

class RunnerSetActor : public test::actor_test_base {
 protected:
  RunnerSetActor() : actor_test_base("rset") {}

  ~RunnerSetActor() override {
    if (set_) caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
  }

  // The ClusterRole kubernetes-mode sets are bound to (the chart's
  // <fullname>-runner-kubernetes-mode, with its rules: one object for every test).
  static constexpr const char* hooks_cluster_role = "octorun-test-runner-kubernetes-mode";
  void apply_hooks_cluster_role() {
    test::kubectl(c_,
                  std::string("apply -f - >/dev/null <<'EOF'\n") +
                      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " +
                      hooks_cluster_role +
                      "}\nrules:\n"
                      "- {apiGroups: [''], resources: [pods], verbs: [get, list, create, delete]}\n"
                      "- {apiGroups: [''], resources: [pods/exec], verbs: [get, create]}\n"
                      "- {apiGroups: [''], resources: [pods/log], verbs: [get, list, watch]}\n"
                      "- {apiGroups: [batch], resources: [jobs], verbs: [get, list, create, delete]}\n"
                      "- {apiGroups: [''], resources: [secrets], verbs: [get, list, create, delete]}\nEOF");
  }

  runnerset_actor_config config(std::chrono::milliseconds resync = 30s) {
    runnerset_actor_config cfg;
    cfg.ns = ns_;
    cfg.name = "linux";
    cfg.kube = kube_;
    cfg.scopes.http_hosts = {"127.0.0.1"};  // the GitHub simulator
    cfg.hooks_cluster_role = hooks_cluster_role;
    cfg.resync = resync;
    cfg.busy_recheck = 200ms;
    cfg.runner_defaults.busy_recheck = 200ms;
    cfg.runner_defaults.retry_initial = 100ms;
    return cfg;
  }

  // `extra_spec`: more RunnerSet spec members (wiring.hpp create_runnerset).
  void start(int min_runners, int max_runners, const std::string& extra_spec = "",
             std::chrono::milliseconds resync = 30s) {
    test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", min_runners, max_runners,
                           {.extra_spec = extra_spec});
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(sys_, config(resync)));
    watch();
  }

  // The set's informers, as the controller runs them.
  void watch() { informers_ = test::forward_set_informers(sys_, kube_cfg_, ns_, set_); }

  std::vector<std::string> runner_names() {
    std::vector<std::string> out;
    std::istringstream in(get("runners -o jsonpath='{.items[*].metadata.name}'"));
    for (std::string n; in >> n;) out.push_back(n);
    return out;
  }

  messages::job_info job(std::int64_t id) {
    messages::job_info j;
    j.job_id = id;
    j.repository = "acme/app";
    j.labels = {"self-hosted", "linux"};
    return j;
  }
  void available(std::int64_t id) { caf::anon_send(set_, messages::job_available{job(id)}); }
  void started(std::int64_t id, const std::string& runner) {
    caf::anon_send(set_, messages::job_started{job(id), runner, 0});
  }
  void completed(std::int64_t id, const std::string& runner) {
    caf::anon_send(set_, messages::job_completed{job(id), runner, 0, "succeeded"});
  }

  caf::actor set_;
};

TEST_F(RunnerSetActor, ScalesFromZeroToDemandAndBackToZero) {
  start(0, 5);
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas}'", "0"));
  for (int id = 1; id <= 3; ++id) available(id);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "3 3"));
  auto names = runner_names();
  ASSERT_EQ(names.size(), 3u);
  for (int i = 0; i < 3; ++i) started(i + 1, names[i]);
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.runningRunners} {.status.assignedJobs}'", "3 3"));
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].status.phase}'", "Running Running Running"));

  // Each ephemeral runner is done once its job completes (its pod is about
  // to exit): finished runners are deleted through their finalizers and
  // none replace them.
  for (int i = 0; i < 3; ++i) completed(i + 1, names[i]);
  EXPECT_TRUE(eventually("runners -o name", ""));
  EXPECT_TRUE(eventually("pods -o name", ""));
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.assignedJobs}'", "0 0"));
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 3);
}

TEST_F(RunnerSetActor, ScaleDownTakesIdleRunnersAndNeverABusyOne) {
  start(0, 5);
  available(1);
  available(2);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "2 2"));
  auto names = runner_names();
  ASSERT_EQ(names.size(), 2u);
  const auto busy = names[0], idle = names[1];
  started(1, busy);
  ASSERT_TRUE(sim_->set_runner_busy(busy, true));
  ASSERT_TRUE(eventually("runner " + busy + " -o jsonpath='{.status.phase}'", "Running"));

  // Job 2 is cancelled before a runner takes it: demand falls to job 1, so
  // the idle runner goes. Then an operator scales the set to zero through
  // the scale subresource (as an HPA would) while job 1 still runs:
  // replicas are a floor, so the job's runner is still wanted.
  completed(2, "");
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].metadata.name}'", busy));
  test::kubectl(c_, "-n " + ns_ + " scale runnerset/linux --replicas=0 >/dev/null");
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{.spec.replicas}'", "0"));
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.desiredReplicas} {.status.runningRunners}'", "1 1"));
  // The idle runner was removed from GitHub once (its finalizer knows it is
  // gone); the busy one was never a candidate and is still registered.
  EXPECT_EQ(sim_->calls("rest.delete_runner"), 1);
  EXPECT_NE(sim_->state_json().find("\"" + busy + "\""), std::string::npos);
  EXPECT_EQ(sim_->state_json().find("\"" + idle + "\""), std::string::npos);
  EXPECT_EQ(get("pod/" + busy + " -o jsonpath='{.status.phase}{.metadata.deletionTimestamp}'"), "Running");
  EXPECT_EQ(get("runner/" + busy + " -o jsonpath='{.metadata.deletionTimestamp}'"), "");

  // The job ends: the runner is finished, cleaned up, and nothing replaces it.
  ASSERT_TRUE(sim_->set_runner_busy(busy, false));
  completed(1, busy);
  EXPECT_TRUE(eventually("runners -o name", ""));
  EXPECT_TRUE(eventually("pods -o name", ""));
}

// Regression (bench/chaos, phase-truth and busy-runner after every leader
// change): a new leader's informers list in any order, and the Pod and
// Secret events of a Runner not seen yet were dropped, so its actor took the
// running pod of a busy runner for a vanished one and marked it Failed (and
// the set then deleted it while its job ran, and lost its JIT Secret's id).
TEST_F(RunnerSetActor, ANewLeaderThatHearsOfPodsBeforeRunnersKeepsABusyRunnerRunning) {
  start(0, 5);
  available(1);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "1 1"));
  const auto busy = runner_names().at(0);
  started(1, busy);
  ASSERT_TRUE(sim_->set_runner_busy(busy, true));
  ASSERT_TRUE(
      eventually("runner " + busy + " -o jsonpath='{.status.phase} {.status.podReady}'", "Running true"));

  // The leader goes; the next one hears of the Pod first (its Runner's actor
  // reads the JIT Secret itself: Secrets are not watched).
  for (auto& i : informers_) caf::anon_send_exit(i, caf::exit_reason::user_shutdown);
  informers_.clear();
  caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
  set_ = caf::actor_cast<caf::actor>(spawn_runnerset(sys_, config()));
  kube::client api(kube_cfg_);
  auto hear = [&](const kube::resource& r, const std::string& name) {
    auto obj = api.get(r, ns_, name);
    ASSERT_TRUE(obj) << kube::to_string(obj.error());
    test::send_as_watched(set_, r, *obj);
  };
  hear(kinds::pods(), busy);
  hear(kinds::runnersets(), "linux");
  hear(kinds::runners(), busy);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.runningRunners}'", "1"));
  // Its job still runs: the runner must stay Running (it was Failed within
  // a few hundred milliseconds before the fix).
  auto phase = test::poll([&] { return get("runner " + busy + " -o jsonpath='{.status.phase}'"); },
                          [](const std::string& p) { return p != "Running"; }, 5s);
  EXPECT_FALSE(phase.met) << "the busy runner became " << phase.last;

  // Its watches catch up. GitHub sees it idle again and the set is deleted
  // before its job's end arrives: it is removed from GitHub by the id its
  // JIT Secret gave it (the new leader lost that Secret before the fix, and
  // with it the id: the registration leaked). A runner that ran its job to
  // the end is not removed again (GitHub does that), so its end cannot show it.
  watch();
  ASSERT_TRUE(sim_->set_runner_busy(busy, false));
  test::kubectl(c_, "-n " + ns_ + " delete runnerset linux --wait=false >/dev/null");
  EXPECT_TRUE(eventually("runners -o name", ""));
  EXPECT_EQ(sim_->state_json().find("\"" + busy + "\""), std::string::npos) << "its GitHub runner leaked";
}

// Regression (bench/chaos, phase-truth after every leader change): a runner
// whose process exited 0 after its job, while no leader served (its pod
// Succeeded, its Runner still Running), was marked Failed by the next leader
// ("the runner's pod ended while it was running a job").
TEST_F(RunnerSetActor, ANewLeaderFindsARunnerThatFinishedItsJobWhileNoneLedSucceeded) {
  start(0, 5);
  available(1);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "1 1"));
  const auto done = runner_names().at(0);
  started(1, done);
  ASSERT_TRUE(
      eventually("runner " + done + " -o jsonpath='{.status.phase} {.status.podReady}'", "Running true"));

  // The leader goes; the runner's process exits 0 after its job meanwhile.
  for (auto& i : informers_) caf::anon_send_exit(i, caf::exit_reason::user_shutdown);
  informers_.clear();
  caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
  test::runner_pod_exits(c_, ns_, done, 0);
  ASSERT_TRUE(eventually("pod " + done + " -o jsonpath='{.status.phase}'", "Succeeded"));

  // The next leader hears of the Pod first (the controller watches Runners
  // once Pods have listed), then of the set and the Runner.
  set_ = caf::actor_cast<caf::actor>(spawn_runnerset(sys_, config()));
  kube::client api(kube_cfg_);
  for (const auto& [res, name] :
       {std::pair{kinds::pods(), done}, std::pair{kinds::runnersets(), std::string("linux")},
        std::pair{kinds::runners(), done}}) {
    auto obj = api.get(res, ns_, name);
    ASSERT_TRUE(obj) << kube::to_string(obj.error());
    test::send_as_watched(set_, res, *obj);
  }
  auto phase = test::poll([&] { return get("runner " + done + " -o jsonpath='{.status.phase}'"); },
                          [](const std::string& p) { return p != "Running"; }, 20s);
  EXPECT_EQ(phase.last, "Succeeded") << "the finished runner became " << phase.last;
  watch();
  completed(1, done);
  EXPECT_TRUE(eventually("runners -o name", ""));
}

TEST_F(RunnerSetActor, DeletingTheSetRemovesEveryRunnerHereAndOnGitHub) {
  start(2, 5);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "2 2"));
  EXPECT_EQ(get("runnerset linux -o jsonpath='{.metadata.finalizers[0]}'"), "octorun.io/runnerset");
  EXPECT_NE(sim_->state_json().find("\"ephemeral\":true"), std::string::npos);

  test::kubectl(c_, "-n " + ns_ + " delete runnerset linux --wait=false >/dev/null");
  EXPECT_TRUE(eventually("runnersets -o name", ""));
  EXPECT_TRUE(eventually("runners -o name", ""));
  EXPECT_TRUE(eventually("pods -o name", ""));
  EXPECT_TRUE(eventually("secrets -l octorun.io/runner -o name", ""));
  EXPECT_EQ(sim_->state_json().find("\"ephemeral\":true"), std::string::npos) << "a GitHub runner leaked";
}

// ---- runner pods: identity, drains, rollouts, container modes, references ----------

// POSTs a policy/v1 Eviction for `pod` (what kubectl drain and the cluster
// autoscaler do); the HTTP status: 201 evicted, 429 refused by a PodDisruptionBudget.
int evict(const test::cluster_info& c, const std::string& ns, const std::string& pod) {
  http::tls_options tls;
  tls.ca_file = c.ca_file;
  http::client api(tls);
  auto resp =
      api.perform({"POST",
                   c.server + "/api/v1/namespaces/" + ns + "/pods/" + pod + "/eviction",
                   {{"Authorization", "Bearer " + c.admin_token}, {"Content-Type", "application/json"}},
                   R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":")" + pod +
                       R"(","namespace":")" + ns + R"("}})"});
  EXPECT_TRUE(resp) << resp.error().message;
  return resp ? resp->status : 0;
}

TEST_F(RunnerSetActor, ABusyRunnerCannotBeEvictedAnIdleOneIsEvictedAndReplaced) {
  start(2, 5);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.idleRunners}'", "2"));
  // Its pods run as the set's own ServiceAccount, which mounts no token.
  EXPECT_EQ(get("serviceaccount octorun-runner-linux -o jsonpath='{.automountServiceAccountToken}'"),
            "false");
  EXPECT_EQ(get("pods -o jsonpath='{.items[*].spec.serviceAccountName}'"),
            "octorun-runner-linux octorun-runner-linux");
  EXPECT_EQ(get("pdb octorun-busy-linux -o jsonpath='{.spec.selector.matchLabels}'"),
            R"({"octorun.io/busy":"true","octorun.io/runnerset":"linux"})");
  auto names = runner_names();
  ASSERT_EQ(names.size(), 2u);
  const auto busy = names[0], idle = names[1];
  started(1, busy);
  ASSERT_TRUE(sim_->set_runner_busy(busy, true));
  ASSERT_TRUE(eventually("pod " + busy +
                             R"( -o jsonpath='{.metadata.labels.octorun\.io/busy} )"
                             R"({.metadata.annotations.cluster-autoscaler\.kubernetes\.io/safe-to-evict} )"
                             R"({.metadata.annotations.karpenter\.sh/do-not-disrupt}')",
                         "true false true"));
  // Karpenter may still consolidate the idle runner's node.
  EXPECT_EQ(get("pod/" + idle + R"( -o jsonpath='{.metadata.annotations.karpenter\.sh/do-not-disrupt}')"),
            "");
  // The disruption controller has counted it: the budget allows nothing.
  ASSERT_TRUE(eventually(
      "pdb octorun-busy-linux -o jsonpath='{.status.expectedPods} {.status.disruptionsAllowed}'", "1 0"));

  EXPECT_EQ(evict(c_, ns_, busy), 429) << "a drain must wait for the job";
  EXPECT_EQ(get("pod/" + busy + " -o jsonpath='{.status.phase}{.metadata.deletionTimestamp}'"), "Running");

  const auto idle_pod = get("pod/" + idle + " -o jsonpath='{.metadata.uid}'");
  EXPECT_EQ(evict(c_, ns_, idle), 201);
  // The idle runner gets a new pod and is idle again; nothing was lost.
  EXPECT_TRUE(test::wait_for(
      [&] {
        const auto uid = get("pod/" + idle + " -o jsonpath='{.metadata.uid}'");
        return !uid.empty() && uid != idle_pod;
      },
      60s, "a new pod for " + idle, [&] { return diagnostics(); }));
  EXPECT_TRUE(
      eventually("runner " + idle + " -o jsonpath='{.status.phase} {.status.podReady}'", "Pending true"));
  EXPECT_EQ(get("runner/" + busy + " -o jsonpath='{.status.phase} {.status.job.id}'"), "Running 1");
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 3) << "the evicted runner kept its registration";
}

TEST_F(RunnerSetActor, ATemplateChangeReplacesIdleRunnersAndLetsBusyOnesFinish) {
  start(2, 5);
  ASSERT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.idleRunners} {.status.outdatedRunners}'", "2 0"));
  auto before = runner_names();
  ASSERT_EQ(before.size(), 2u);
  const auto busy = before[0];
  started(1, busy);
  ASSERT_TRUE(sim_->set_runner_busy(busy, true));
  ASSERT_TRUE(eventually("runner " + busy + " -o jsonpath='{.status.phase}'", "Running"));
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas}'", "3"));  // min 2 + one job

  test::kubectl(
      c_,
      "-n " + ns_ + " patch runnerset linux --type=merge -p " +
          R"('{"spec":{"template":{"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.331.0"}]}}}}')" +
          " >/dev/null");
  // Every idle runner is replaced by one on the new template; the busy one stays.
  const std::string images =
      R"(runners -o jsonpath='{range .items[*]}{.metadata.name}={.spec.template.spec.containers[0].image} {end}')";
  EXPECT_TRUE(test::wait_for(
      [&] {
        std::istringstream in(get(images));
        int current = 0;
        bool busy_kept = false;
        for (std::string item; in >> item;) {
          if (item == busy + "=ghcr.io/actions/actions-runner:2.330.0")
            busy_kept = true;
          else if (item.ends_with("=ghcr.io/actions/actions-runner:2.331.0"))
            ++current;
          else
            return false;  // an outdated idle runner is left
        }
        return busy_kept && current == 2;
      },
      90s, "idle runners on the new template, the busy one on its own", [&] { return get(images); }));
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{.status.outdatedRunners}'", "1"));
  EXPECT_EQ(get("runner/" + busy + " -o jsonpath='{.status.phase}{.metadata.deletionTimestamp}'"), "Running");

  // Its job ends: nothing outdated is left.
  ASSERT_TRUE(sim_->set_runner_busy(busy, false));
  completed(1, busy);
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.outdatedRunners}'", "2 0"));
}

TEST_F(RunnerSetActor, KubernetesModeBindsTheHooksClusterRoleWhichGoesWithTheModeAndEverythingWithTheSet) {
  apply_hooks_cluster_role();
  start(1, 5, R"("containerMode":{"type":"kubernetes"},)");
  ASSERT_TRUE(eventually("roles,rolebindings,serviceaccounts,pdb -l octorun.io/runnerset=linux -o name",
                         "rolebinding.rbac.authorization.k8s.io/octorun-hooks-linux\n"
                         "serviceaccount/octorun-runner-linux\n"
                         "poddisruptionbudget.policy/octorun-busy-linux\n"));
  EXPECT_EQ(get("rolebinding octorun-hooks-linux -o jsonpath='{.metadata.ownerReferences[0].kind} "
                "{.roleRef.kind}/{.roleRef.name}'"),
            std::string("RunnerSet ClusterRole/") + hooks_cluster_role);
  // The runner pod mounts the token its hooks need.
  ASSERT_TRUE(eventually("runners -o jsonpath='{.items[*].spec.containerMode.type}'", "kubernetes"));
  const auto runner = runner_names().at(0);
  ASSERT_TRUE(eventually("pod " + runner + " -o jsonpath='{.spec.automountServiceAccountToken}'", "true"));
  // The kube-mode ServiceAccount may do what the hooks do, and no more.
  const auto as = " --as=system:serviceaccount:" + ns_ + ":octorun-runner-linux -n " + ns_;
  EXPECT_EQ(test::kubectl(c_, "auth can-i create pods --subresource=exec" + as + " 2>/dev/null || true"),
            "yes\n");
  EXPECT_EQ(test::kubectl(c_, "auth can-i create deployments.apps" + as + " 2>/dev/null || true"), "no\n");

  // The mode goes: the runner is replaced, then the RoleBinding goes.
  test::kubectl(
      c_,
      "-n " + ns_ + R"( patch runnerset linux --type=merge -p '{"spec":{"containerMode":null}}' >/dev/null)");
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].spec.containerMode.type}'", ""));
  EXPECT_TRUE(eventually("roles,rolebindings -o name", ""));

  test::kubectl(c_, "-n " + ns_ + " delete runnerset linux --wait=false >/dev/null");
  EXPECT_TRUE(eventually("runnersets -o name", ""));
  EXPECT_TRUE(eventually("serviceaccounts/octorun-runner-linux pdb/octorun-busy-linux -o name", ""));
}

TEST_F(RunnerSetActor, AWrongCaBundleIsReportedByFieldUntilItIsFixed) {
  start(0, 5, R"("caBundle":{"configMapKeyRef":{"name":"corp-ca","key":"ca.crt"}},)", 1s);
  const std::string condition =
      R"(runnerset linux -o jsonpath='{.status.conditions[?(@.type=="PodConfigReady")].message}')";
  EXPECT_TRUE(eventually(
      condition, "spec.caBundle.configMapKeyRef: ConfigMap \"corp-ca\" not found in namespace " + ns_));
  test::kubectl(c_, "-n " + ns_ + " create configmap corp-ca --from-literal=ca.crt=hello >/dev/null");
  EXPECT_TRUE(eventually(condition,
                         "spec.caBundle.configMapKeyRef: key \"ca.crt\" of ConfigMap \"corp-ca\" holds no "
                         "PEM certificate (-----BEGIN CERTIFICATE-----)"));
  test::kubectl(c_, "-n " + ns_ + " delete configmap corp-ca >/dev/null");
  test::kubectl(c_,
                "-n " + ns_ + " create configmap corp-ca --from-file=ca.crt=" + c_.ca_file + " >/dev/null");
  EXPECT_TRUE(eventually(
      R"(runnerset linux -o jsonpath='{.status.conditions[?(@.type=="PodConfigReady")].status} {.status.conditions[?(@.type=="PodConfigReady")].reason}')",
      "True Applied"));
}

// Events on transitions, not per reconcile; zeros in the printer columns
// while nothing is counted yet.
class RunnerSetEvents : public RunnerSetActor {
 protected:
  ~RunnerSetEvents() override {
    if (events_) caf::anon_send_exit(events_, caf::exit_reason::user_shutdown);
  }
  // The query of the set's Events of `type`: "reason|note|series count"
  // each, oldest first.
  static std::string events(const std::string& type) {
    return "events.events.k8s.io --field-selector regarding.kind=RunnerSet,regarding.name=linux,type=" +
           type +
           " --sort-by=.metadata.creationTimestamp -o "
           "jsonpath='{range .items[*]}{.reason}|{.note}|{.series.count};{end}'";
  }
  caf::actor events_;
};

TEST_F(RunnerSetEvents, AMissingSecretIsOneWarningNamingItAndAScaleUpANormalEvent) {
  test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, 5);
  test::kubectl(c_, "-n " + ns_ + " delete secret github >/dev/null");
  auto cfg = config(200ms);  // a resync every 200 ms: many reconciles while the Secret is missing
  events_ = kube::spawn_event_recorder(sys_, kube_cfg_, {}, "octorun.io/manager", "test");
  cfg.events = events_;
  set_ = caf::actor_cast<caf::actor>(spawn_runnerset(sys_, cfg));
  watch();
  const std::string warning =
      "CredentialsInvalid|The GitHub credentials of Secret github cannot be used: 404 NotFound: secrets "
      "\"github\" not found|;";
  EXPECT_TRUE(eventually(
      R"(runnerset linux -o jsonpath='{.status.conditions[?(@.type=="CredentialsReady")].status}')",
      "False"));
  // `kubectl get rset` shows zeros, not empty columns.
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.desiredReplicas} {.status.replicas} "
                 "{.status.idleRunners} {.status.runningRunners}'",
                 "0 0 0 0"));
  // The printer columns: NAME DESIRED CURRENT IDLE BUSY AGE.
  std::istringstream columns(get("runnerset linux --no-headers"));
  std::string name, desired, current, idle, busy;
  columns >> name >> desired >> current >> idle >> busy;
  EXPECT_EQ(name + " " + desired + " " + current + " " + idle + " " + busy, "linux 0 0 0 0");
  // Two spec changes, each planned with the Secret still missing (the status
  // says which generation it saw): still the one Warning, not counted again.
  for (int max : {6, 7}) {
    test::kubectl(c_, "-n " + ns_ + " patch runnerset linux --type=merge -p '{\"spec\":{\"maxRunners\":" +
                          std::to_string(max) + "}}' >/dev/null");
    EXPECT_TRUE(
        eventually("runnerset linux -o jsonpath='{.status.observedGeneration}'", std::to_string(max - 4)));
  }
  EXPECT_TRUE(eventually(events("Warning"), warning));
  EXPECT_EQ(get(events("Warning")), warning);

  // The Secret appears: the credentials load (one Normal Event), and demand scales the set up.
  test::kubectl(
      c_, "-n " + ns_ + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
  EXPECT_TRUE(
      eventually(events("Normal"), "CredentialsLoaded|Loaded the GitHub credentials from Secret github|;"));
  available(1);  // (two jobs may come in one plan or two: the Event would say 0 to 2, or 0 to 1 and count)
  EXPECT_TRUE(eventually(
      events("Normal"),
      "CredentialsLoaded|Loaded the GitHub credentials from Secret github|;ScaledUp|Scaled up from 0 to 1 "
      "runner|;"));
  EXPECT_EQ(get(events("Warning")), warning);
}

TEST_F(RunnerSetEvents, AnUnknownContainerModeIsRefusedNamingTheFieldAndTheSetStillServes) {
  start(1, 5);
  auto refused = test::kubectl(
      c_, "-n " + ns_ +
              " patch runnerset linux --type=merge -p '{\"spec\":{\"containerMode\":{\"type\":\"podman\"}}}' "
              "2>&1 || true");
  EXPECT_NE(refused.find("spec.containerMode.type"), std::string::npos) << refused;
  EXPECT_NE(refused.find("podman"), std::string::npos) << refused;
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas}'", "1"));
}

}  // namespace
}  // namespace octorun::runnerset
