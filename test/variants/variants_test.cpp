// Variants under the Listener intake, on the real apiserver (kwok runs the
// pods) against the GitHub simulator: one scale set and one message session
// per variant, jobs routed by labels to the variant's pod template, variants
// added and removed (drained, busy runners kept) while the others serve, the
// whole set deleted (the simulator shows its scale sets gone), and one
// variant's failing session restarting without touching its siblings.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

#include "actors/kinds.hpp"
#include "actors/runnerset/runnerset_actor.hpp"
#include "model/naming.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

const std::string variant_small =
    R"({"name":"small","runnerLabels":["small"],"template":{"spec":{"containers":[{"name":"runner","image":"runner-small"}]}}})";
const std::string variant_large =
    R"({"name":"large","runnerLabels":["large"],"minRunners":1,"maxRunners":3,"template":{"spec":{"containers":[{"name":"runner","image":"runner-large"}]}}})";
const std::string variant_gpu =
    R"({"name":"gpu","runnerLabels":["gpu"],"template":{"spec":{"containers":[{"name":"runner","image":"runner-gpu"}]}}})";

class Variants : public test::actor_test_base {
 protected:
  Variants() : actor_test_base("variants") {
    sim::simulator_options o;
    // A JIT runner connects as its configuration is generated, so a job can
    // start (the Runner Running) before its pod exists: pod checks wait.
    o.auto_online = true;
    o.long_poll = 1s;  // so retired sessions close promptly
    o.pats = {"ghp_simulator"};
    auto sim = sim::simulator::start(o);
    if (!sim) ADD_FAILURE() << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
  }

  ~Variants() override {
    if (set_) caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
  }

  void start(const std::vector<std::string>& variants) {
    test::kubectl(
        c_,
        "-n " + ns_ + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
    std::string list;
    for (const auto& v : variants) list += (list.empty() ? "" : ",") + v;
    test::kubectl(
        c_, "-n " + ns_ + " create -f - >/dev/null <<'EOF'\n" +
                R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"ci"},"spec":{)"
                R"("scopeURL":")" +
                sim_->ghes_url() + "/acme" +
                R"(","credentialsSecretName":"github","intake":"Listener","runnerLabels":["linux"],)"
                R"("minRunners":0,"maxRunners":5,"variants":[)" +
                list +
                R"(],"template":{"spec":{"containers":[{"name":"runner","image":"runner-default"}]}}}})"
                "\nEOF");
    start_actor();
  }

  // As a manager stopping: the RunnerSet actor and its watches go.
  void stop_actor() {
    caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
    for (auto& i : informers_) caf::anon_send_exit(i, caf::exit_reason::user_shutdown);
    informers_.clear();
  }

  // The RunnerSet actor and the watches that feed it (what the controller does).
  void start_actor() {
    runnerset::runnerset_actor_config cfg;
    cfg.ns = ns_;
    cfg.name = "ci";
    cfg.kube = kube_;
    cfg.scopes.http_hosts = {"127.0.0.1"};  // the GitHub simulator
    cfg.resync = 2s;
    cfg.busy_recheck = 200ms;
    cfg.request_timeout = 10s;
    cfg.runner_defaults.busy_recheck = 200ms;
    cfg.runner_defaults.retry_initial = 100ms;
    set_ = caf::actor_cast<caf::actor>(runnerset::spawn_runnerset(sys_, cfg));
    const std::string mine = "octorun.io/runnerset=ci";
    informers_ = test::forward_informers(sys_, kube_cfg_, ns_,
                                         {{kinds::runnersets(), "", "metadata.name=ci"},
                                          {kinds::runners(), mine, ""},
                                          {kinds::pods(), mine, ""}},
                                         set_);
  }

  std::string diagnostics() override {
    return get("runnerset ci -o yaml") + get("runners,pods -o wide") + sim_->state_json();
  }

  // The simulator's scale sets as "name:session?" words, sorted by name.
  std::string scale_sets() {
    std::map<std::string, bool> by_name;
    for (const auto& s : sim_->scale_sets()) by_name[s.name] = !s.session_id.empty();
    std::string out;
    for (const auto& [name, session] : by_name)
      out += (out.empty() ? "" : " ") + name + (session ? ":on" : ":off");
    return out;
  }
  bool eventually_scale_sets(const std::string& want, std::chrono::seconds within = 60s) {
    return bool(test::wait_for_value([&] { return scale_sets(); }, want, within, "the scale sets",
                                     [&] { return sim_->state_json(); }));
  }
  sim::simulator::scale_set_info scale_set(const std::string& name) {
    for (const auto& s : sim_->scale_sets())
      if (s.name == name) return s;
    return {};
  }
  // The labels a variant's scale set carries: its own, then the set's label.
  std::vector<std::string> labels_with_mark(std::vector<std::string> labels) {
    labels.push_back(model::registering_set_label(
        test::kubectl(c_, "-n " + ns_ + " get runnerset ci -o jsonpath='{.metadata.uid}'")));
    return labels;
  }

  std::int64_t job(const std::string& variant_label, std::chrono::milliseconds duration = -1ms) {
    sim::job_spec j;
    j.repository = "acme/app";
    j.labels = {"self-hosted", "linux", variant_label};
    j.duration = duration;
    return sim_->add_job(j);
  }

  // Names of the runners of `variant` in `phase` ("" for any), space-separated.
  std::string runners(const std::string& variant, const std::string& phase = "") {
    auto out = get("runners -l octorun.io/variant=" + variant +
                   " -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase}{\"\\n\"}{end}'");
    std::istringstream in(out);
    std::string names, name, p;
    while (in >> name) {
      std::getline(in, p);
      p.erase(0, p.find_first_not_of(' '));
      if (phase.empty() || p == phase) names += (names.empty() ? "" : " ") + name;
    }
    return names;
  }
  std::string eventually_runner(const std::string& variant, const std::string& phase,
                                std::chrono::seconds within = 60s) {
    auto single =
        test::wait_for([&] { return runners(variant, phase); },
                       [](const std::string& r) { return !r.empty() && r.find(' ') == std::string::npos; },
                       within, "a single " + phase + " runner of variant " + variant,
                       [&] { return get("runners -o wide") + sim_->state_json(); });
    return single ? single.last : std::string{};
  }

  caf::actor set_;
};

TEST_F(Variants, TwoVariantsGetOneScaleSetEachAndJobsGoToTheMatchingTemplate) {
  start({variant_small, variant_large});
  ASSERT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  // The ids are recorded per variant; the sessions belong to this set.
  auto small = scale_set("ci-small"), large = scale_set("ci-large");
  EXPECT_TRUE(
      eventually("runnerset ci -o jsonpath='{.status.variants[?(@.name==\"small\")].scaleSetId} "
                 "{.status.variants[?(@.name==\"large\")].scaleSetId}'",
                 std::to_string(small.id) + " " + std::to_string(large.id)));
  EXPECT_NE(small.session_owner.find(ns_ + "/ci"), std::string::npos) << small.session_owner;
  EXPECT_EQ(large.labels, labels_with_mark({"linux", "large", "ci-large"}));

  // large keeps one idle runner (minRunners 1); a large job brings a second.
  auto idle_large = eventually_runner("large", "Pending");
  ASSERT_FALSE(idle_large.empty());
  auto j = job("large");
  // The idle runner or a new one takes it; either way it runs the large template.
  auto busy = eventually_runner("large", "Running");
  ASSERT_FALSE(busy.empty());
  EXPECT_TRUE(eventually("pod " + busy + " -o jsonpath='{.spec.containers[0].image}'", "runner-large"));
  EXPECT_EQ(runners("small"), "") << "a large job must not start a small runner";

  auto s = job("small");
  auto small_runner = eventually_runner("small", "Running");
  ASSERT_FALSE(small_runner.empty());
  EXPECT_TRUE(
      eventually("pod " + small_runner + " -o jsonpath='{.spec.containers[0].image}'", "runner-small"));
  EXPECT_EQ(get("runner " + small_runner + " -o jsonpath='{.status.job.id}'"), std::to_string(s));

  // Both jobs end: their runners go, large's idle buffer stays.
  ASSERT_TRUE(sim_->complete_job(j));
  ASSERT_TRUE(sim_->complete_job(s));
  EXPECT_TRUE(eventually("runners -l octorun.io/variant=small -o name", ""));
  EXPECT_TRUE(
      eventually("runnerset ci -o jsonpath='{.status.variants[?(@.name==\"large\")].replicas}'", "1"));
  EXPECT_EQ(sim_->calls("scaleset.create_session"), 2) << "one session per variant, never reopened";
}

TEST_F(Variants, AddingAVariantRegistersItWithoutDisturbingTheOthers) {
  start({variant_small, variant_large});
  ASSERT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  auto idle_large = eventually_runner("large", "Pending");
  auto before_small = scale_set("ci-small"), before_large = scale_set("ci-large");

  test::kubectl(
      c_,
      "-n " + ns_ +
          " patch runnerset ci --type=json -p '[{\"op\":\"add\",\"path\":\"/spec/variants/-\",\"value\":" +
          variant_gpu + "}]' >/dev/null");
  ASSERT_TRUE(eventually_scale_sets("ci-gpu:on ci-large:on ci-small:on"));
  auto gpu_job = job("gpu");
  auto gpu = eventually_runner("gpu", "Running");
  ASSERT_FALSE(gpu.empty());
  EXPECT_TRUE(eventually("pod " + gpu + " -o jsonpath='{.spec.containers[0].image}'", "runner-gpu"));

  // The others kept their scale sets, their sessions and their runners.
  EXPECT_EQ(scale_set("ci-small").session_id, before_small.session_id);
  EXPECT_EQ(scale_set("ci-large").session_id, before_large.session_id);
  EXPECT_EQ(scale_set("ci-large").id, before_large.id);
  EXPECT_EQ(runners("large", "Pending"), idle_large);
  ASSERT_TRUE(sim_->complete_job(gpu_job));
}

TEST_F(Variants, RemovingAVariantDrainsItAndNeverKillsABusyRunner) {
  start({variant_small, variant_large});
  ASSERT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  auto idle = eventually_runner("large", "Pending");
  auto j = job("large");
  // The idle runner takes the job; min 1 brings a new idle one.
  auto busy = eventually_runner("large", "Running");
  ASSERT_FALSE(busy.empty());
  ASSERT_TRUE(
      eventually("runnerset ci -o jsonpath='{.status.variants[?(@.name==\"large\")].replicas}'", "2"));

  test::kubectl(c_, "-n " + ns_ +
                        " patch runnerset ci --type=json -p "
                        "'[{\"op\":\"remove\",\"path\":\"/spec/variants/1\"}]' >/dev/null");
  // The idle runner goes; the busy one stays with its pod; so does the scale set.
  EXPECT_TRUE(
      eventually("runners -l octorun.io/variant=large -o jsonpath='{.items[*].metadata.name}'", busy));
  EXPECT_EQ(get("runner " + busy + " -o jsonpath='{.status.phase}'"), "Running");
  EXPECT_TRUE(eventually("pod " + busy + " -o jsonpath='{.metadata.name}'", busy));
  EXPECT_TRUE(eventually_scale_sets("ci-large:off ci-small:on"));
  EXPECT_EQ(get("runnerset ci -o jsonpath='{.status.variants[*].name}'"), "small large");

  // Its job ends, the runner exits: then the runner and the scale set go.
  ASSERT_TRUE(sim_->complete_job(j));
  test::runner_pod_exits(c_, ns_, busy, 0);
  EXPECT_TRUE(eventually("runners -l octorun.io/variant=large -o name", ""));
  EXPECT_TRUE(eventually_scale_sets("ci-small:on"));
  EXPECT_TRUE(eventually("runnerset ci -o jsonpath='{.status.variants[*].name}'", "small"));
}

TEST_F(Variants, DeletingTheSetRemovesEverythingHereAndOnGitHub) {
  start({variant_small, variant_large});
  ASSERT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  auto idle = eventually_runner("large", "Pending");
  auto j = job("small");
  auto busy = eventually_runner("small", "Running");
  ASSERT_FALSE(busy.empty());

  // Deleting the set takes the idle runner at once and waits for the busy one.
  test::kubectl(c_, "-n " + ns_ + " delete runnerset ci --wait=false >/dev/null");
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].metadata.name}'", busy));
  EXPECT_TRUE(eventually("pod " + busy + " -o jsonpath='{.metadata.name}'", busy));
  EXPECT_EQ(sim_->job_state(j), "running");

  // The job ends and its ephemeral runner leaves GitHub: the Runner's
  // finalizer (asking GitHub again) lets it go, then the scale sets go.
  ASSERT_TRUE(sim_->complete_job(j));
  EXPECT_TRUE(eventually("runnersets,runners -o name", ""));
  EXPECT_TRUE(eventually("pods,secrets -l octorun.io/runnerset=ci -o name", ""));
  EXPECT_TRUE(eventually_scale_sets(""));
  EXPECT_TRUE(sim_->wait_until(
      [](const sim::simulator& s) { return s.state_json().find("\"runners\":[]") != std::string::npos; },
      30s))
      << sim_->state_json();
}

TEST_F(Variants, OneVariantsFailingSessionRestartsWithoutStoppingTheOthers) {
  start({variant_small, variant_large});
  ASSERT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  auto small_session = scale_set("ci-small").session_id;

  // GitHub drops large's session and refuses the next two attempts with 409
  // (as when another listener still holds it): large's listener restarts
  // with backoff; small's session is never touched and keeps serving.
  sim::fault conflict;
  conflict.endpoint = "scaleset.create_session";
  conflict.status = 409;
  conflict.count = 2;
  conflict.type_name = "GitHub.DistributedTask.WebApi.TaskAgentSessionConflictException";
  conflict.message = "The actions runner scaleset ci-large already has an active session.";
  sim_->add_fault(conflict);
  ASSERT_TRUE(sim_->drop_session(scale_set("ci-large").id));
  auto s = job("small", 200ms);
  EXPECT_TRUE(
      sim_->wait_until([&](const sim::simulator& sim) { return sim.job_state(s) == "completed"; }, 30s))
      << sim_->state_json();
  EXPECT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  EXPECT_EQ(scale_set("ci-small").session_id, small_session);
  EXPECT_EQ(sim_->calls("scaleset.create_session"), 2 + 3) << "two refused, then one that worked";

  // And a 5xx storm on polling recovers the same way: both serve afterwards.
  sim::fault storm;
  storm.endpoint = "scaleset.get_message";
  storm.status = 503;
  storm.count = 12;
  sim_->add_fault(storm);
  auto l = job("large", 200ms);
  auto s2 = job("small", 200ms);
  EXPECT_TRUE(sim_->wait_until(
      [&](const sim::simulator& sim) {
        return sim.job_state(l) == "completed" && sim.job_state(s2) == "completed";
      },
      90s))
      << sim_->state_json();
}

TEST_F(Variants, EditedLabelsUpdateTheScaleSetInPlace) {
  start({variant_small, variant_large});
  ASSERT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  const auto before = scale_set("ci-small");
  test::kubectl(
      c_,
      "-n " + ns_ +
          " patch runnerset ci --type=json -p "
          "'[{\"op\":\"add\",\"path\":\"/spec/variants/0/runnerLabels/-\",\"value\":\"fast\"}]' >/dev/null");
  const auto want = labels_with_mark({"linux", "small", "fast", "ci-small"});
  EXPECT_TRUE(
      sim_->wait_until([&](const sim::simulator&) { return scale_set("ci-small").labels == want; }, 30s))
      << sim_->state_json();
  EXPECT_EQ(scale_set("ci-small").id, before.id);
  EXPECT_EQ(scale_set("ci-small").session_id, before.session_id) << "its session carries on";
}

TEST_F(Variants, ARestartedSetKeepsItsIdleRunnersUntilItKnowsTheDemand) {
  start({variant_small, variant_large});
  auto idle = eventually_runner("large", "Pending");
  ASSERT_FALSE(idle.empty());
  // The manager restarts: a new RunnerSet actor that has yet to find its
  // scale sets and hear from their sessions must not take the warm runner
  // for surplus.
  stop_actor();
  EXPECT_TRUE(sim_->wait_until(
      [&](const sim::simulator&) { return scale_sets() == "ci-large:off ci-small:off"; }, 30s));
  start_actor();
  EXPECT_TRUE(eventually_scale_sets("ci-large:on ci-small:on"));
  EXPECT_TRUE(
      eventually("runnerset ci -o jsonpath='{.status.variants[?(@.name==\"large\")].replicas}'", "1"));
  EXPECT_EQ(runners("large", "Pending"), idle) << "the same warm runner, never replaced";
  EXPECT_EQ(sim_->calls("scaleset.generate_jitconfig"), 1);
}

// As in `kubectl delete namespace` while the manager restarts: the Secret is
// deleted with the set, and the set's finalizer on it keeps it until the
// set's runners and scale sets are removed from GitHub with it.
TEST_F(Variants, ADeletionWithItsSecretRemovesEverythingFromGitHubFirst) {
  start({variant_small, variant_large});
  ASSERT_FALSE(eventually_runner("large", "Pending").empty());
  ASSERT_TRUE(eventually("secret github -o jsonpath='{.metadata.finalizers[*]}'", "runnerset.octorun.io/ci"));
  stop_actor();
  test::kubectl(c_, "-n " + ns_ + " delete secret github --wait=false >/dev/null");
  test::kubectl(c_, "-n " + ns_ + " delete runnerset ci --wait=false >/dev/null");
  start_actor();
  EXPECT_TRUE(eventually("runnersets,runners,pods,secrets -o name", ""));
  EXPECT_EQ(scale_sets(), "") << "its scale sets are deleted on GitHub";
  EXPECT_EQ(sim_->runner_names(), std::vector<std::string>{}) << "its runners are removed from GitHub";
}

// The same with the Secret gone for good (its finalizer removed by hand):
// GitHub cannot be reached for the set any more; the set and its runners
// still go (GitHub drops the offline runners itself).
TEST_F(Variants, ADeletionWhoseCredentialsAreGoneDoesNotHang) {
  start({variant_small, variant_large});
  ASSERT_FALSE(eventually_runner("large", "Pending").empty());
  stop_actor();
  test::kubectl(c_, "-n " + ns_ + " delete secret github --wait=false >/dev/null");
  test::kubectl(
      c_,
      "-n " + ns_ + " patch secret github --type=merge -p '{\"metadata\":{\"finalizers\":null}}' >/dev/null");
  test::kubectl(c_, "-n " + ns_ + " delete runnerset ci --wait=false >/dev/null");
  start_actor();
  EXPECT_TRUE(eventually("runnersets,runners,pods -o name", ""));
}

TEST_F(Variants, TheIntakeAndWhereItsScaleSetsLiveCannotChange) {
  start({variant_small});
  ASSERT_TRUE(eventually_scale_sets("ci-small:on"));
  auto refused = [&](const std::string& patch) {
    return test::kubectl(c_,
                         "-n " + ns_ + " patch runnerset ci --type=merge -p '" + patch + "' 2>&1 || true");
  };
  EXPECT_NE(refused(R"({"spec":{"intake":"Webhook"}})").find("spec.intake is immutable"), std::string::npos);
  EXPECT_NE(refused(R"({"spec":{"scopeURL":"https://github.com/other"}})").find("spec.scopeURL is immutable"),
            std::string::npos);
  EXPECT_NE(refused(R"({"spec":{"runnerGroup":"elsewhere"}})").find("immutable under the Listener"),
            std::string::npos);
  // Everything else still changes, and the scale set stays where it is.
  EXPECT_EQ(refused(R"({"spec":{"maxRunners":7}})").find("immutable"), std::string::npos);
  EXPECT_EQ(scale_sets(), "ci-small:on");
}

}  // namespace
}  // namespace octorun
