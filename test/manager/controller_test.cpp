#include "actors/controller/controller.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/controller/job_routing.hpp"
#include "actors/controller/owned_routing.hpp"
#include "actors/controller/unrouted.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "model/naming.hpp"
#include "test/support/caf_test_system.hpp"

namespace octorun::controller {
namespace {

const std::string dotcom = "https://github.com";

// A set's scope is parsed when the set is decoded: so here.
bool scope_serves(const std::string& scope_url, const std::string& server, const std::string& repository) {
  model::runnerset_spec spec;
  spec.set_scope_url(scope_url);
  return controller::scope_serves(spec.scope, server, repository);
}

TEST(ScopeServes, OrganisationRepositoryAndEnterpriseScopes) {
  EXPECT_TRUE(scope_serves("https://github.com/acme", dotcom, "acme/app"));
  EXPECT_TRUE(scope_serves("https://github.com/Acme", dotcom, "ACME/app"))
      << "owners compare case-insensitively";
  EXPECT_FALSE(scope_serves("https://github.com/acme", dotcom, "other/app"));
  EXPECT_TRUE(scope_serves("https://github.com/acme/app", dotcom, "acme/app"));
  EXPECT_FALSE(scope_serves("https://github.com/acme/app", dotcom, "acme/lib"));
  EXPECT_TRUE(scope_serves("https://github.com/enterprises/big", dotcom, "anyone/anything"));
  EXPECT_TRUE(scope_serves("http://127.0.0.1:8080/acme", "http://127.0.0.1:8080", "acme/app"))
      << "GHES hosts";
  EXPECT_FALSE(scope_serves("not a url", dotcom, "acme/app"));
  EXPECT_FALSE(scope_serves("https://github.com/acme", dotcom, "no-slash"));
}

// Issue 32: a scope serves only its own server's repositories. acme on a
// GHES and acme on github.com are two accounts, often two owners.
TEST(ScopeServes, OnlyOnItsOwnServer) {
  EXPECT_FALSE(scope_serves("https://ghes.example/acme", dotcom, "acme/app"));
  EXPECT_FALSE(scope_serves("https://github.com/acme", "https://ghes.example", "acme/app"));
  EXPECT_FALSE(scope_serves("https://github.com/enterprises/big", "https://big.ghe.com", "acme/app"))
      << "an enterprise scope serves every repository of its own server only";
  EXPECT_FALSE(scope_serves("http://127.0.0.1:8080/acme", "http://127.0.0.1:8081", "acme/app"))
      << "another port is another server";
  EXPECT_TRUE(scope_serves("https://GitHub.com:443/acme", dotcom, "acme/app")) << "as GitHub compares hosts";
  EXPECT_FALSE(scope_serves("https://github.com/acme", "", "acme/app")) << "a job of no server: none";
}

model::runnerset set_for(const std::string& scope) {
  model::runnerset s;
  s.metadata.name = "linux";
  s.spec.set_scope_url(scope);
  s.spec.runner_labels = {"linux"};
  return s;
}

messages::job_info job_of(const std::string& repository, std::vector<std::string> labels) {
  messages::job_info j;
  j.job_id = 7;
  j.repository = repository;
  j.server = dotcom;
  j.labels = std::move(labels);
  return j;
}

// Routes over `sets` by key, each admitted by its class.
job_routes routes_of(std::map<std::string, model::runnerset> sets) {
  job_routes r;
  for (auto& [key, set] : sets) {
    r.admitted.insert(key);
    r.sets[key] = std::make_shared<const model::runnerset>(std::move(set));
  }
  return r;
}

// A queued job no RunnerSet takes is bad input; the reason says which kind.
TEST(Unrouted, SaysWhetherTheRepositoryOrTheLabelsFoundNoSet) {
  auto linux_set = set_for("https://github.com/acme");
  auto r = routes_of({{"ci/linux", linux_set}});
  EXPECT_EQ(why_unrouted(r, job_of("other/app", {"self-hosted"})), unrouted::unserved_repository);
  EXPECT_EQ(why_unrouted(r, job_of("acme/app", {"self-hosted", "gpu"})), unrouted::no_matching_variant);
  EXPECT_STREQ(reason_label(unrouted::unserved_repository), "unserved_repository");
  EXPECT_NE(describe(unrouted::no_matching_variant, job_of("acme/app", {"self-hosted", "gpu"})).find("gpu"),
            std::string::npos);
  auto app_job = job_of("acme/app", {});
  app_job.installation_id = 42;
  EXPECT_EQ(describe(unrouted::unserved_repository, app_job),
            "no RunnerSet serves the repository acme/app on https://github.com with the credentials of App "
            "installation 42 (sets serve only what their RunnerClass admits)");
  EXPECT_EQ(why_unrouted(r, app_job), unrouted::unserved_repository) << "a PAT's set serves no installation";
  r.admitted.clear();
  EXPECT_EQ(why_unrouted(r, job_of("acme/app", {"self-hosted"})), unrouted::unserved_repository)
      << "a set its class does not admit serves nothing";
  linux_set.metadata.deleting = true;
  r = routes_of({{"ci/linux", linux_set}});
  EXPECT_EQ(why_unrouted(r, job_of("acme/app", {"self-hosted"})), unrouted::unserved_repository)
      << "a set being deleted serves nothing";
  EXPECT_EQ(why_unrouted({}, job_of("acme/app", {})), unrouted::unserved_repository);
}

// Which sets get each job message (job_routing.hpp), from the sets and the
// Runners the controller watched.
TEST(JobRouting, EachMessageGoesToTheSetsItsRuleNames) {
  auto acme = set_for("https://github.com/acme");
  auto other = set_for("https://github.com/other");
  acme.metadata.name = "acme";
  other.metadata.name = "other";
  auto leaving = set_for("https://github.com/acme");
  leaving.metadata.name = "leaving";
  leaving.metadata.deleting = true;
  // "ci/0-leaving" sorts first: demand skips a set being deleted.
  auto r = routes_of({{"ci/0-leaving", leaving}, {"ci/acme", acme}, {"ci/other", other}});
  r.runner_sets = {{"seen-runner", {{"ci", "ci/acme"}}}};
  using keys = std::vector<std::string>;

  EXPECT_EQ(destinations(r, messages::job_available{job_of("acme/app", {"self-hosted", "linux"})}),
            keys{"ci/acme"});
  EXPECT_EQ(destinations(r, messages::job_assigned{job_of("other/app", {"linux"})}), keys{"ci/other"});
  EXPECT_TRUE(destinations(r, messages::job_available{job_of("acme/app", {"gpu"})}).empty())
      << "no variant takes the labels";
  EXPECT_TRUE(destinations(r, messages::job_available{job_of("nobody/app", {"linux"})}).empty());

  EXPECT_EQ(destinations(r, messages::job_started{job_of("acme/app", {}), "seen-runner", 1}), keys{"ci/acme"})
      << "a watched Runner's owner";
  auto unseen = model::runner_name("other", "", "ab12c");
  EXPECT_EQ(destinations(r, messages::job_started{job_of("acme/app", {}), unseen, 2}), keys{"ci/other"})
      << "not watched yet: the set whose runner names have its prefix, whatever the repository";
  EXPECT_EQ(destinations(r, messages::job_started{job_of("acme/app", {}),
                                                  model::runner_name("leaving", "", "x1y2z"), 5}),
            keys{"ci/0-leaving"})
      << "a set being deleted still owns its runners";
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("acme/app", {}), unseen + "x", 3}).empty())
      << "a name of the right prefix but not of our length is not ours";
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("acme/app", {}), "hosted-runner", 4}).empty());

  EXPECT_EQ(destinations(r, messages::job_completed{job_of("acme/app", {}), "hosted-runner", 4, "success"}),
            (keys{"ci/0-leaving", "ci/acme", "ci/other"}))
      << "every set drops a completed job from its demand";

  messages::session_message session{"ci/acme", {}, std::nullopt};
  EXPECT_EQ(destinations(r, session), keys{"ci/acme"});
  session.runner_set = "ci/gone";
  EXPECT_TRUE(destinations(r, session).empty()) << "a listener whose set is gone reaches nobody";
}

// Issue 32: routing keyed on the runner name alone, so of two namespaces
// with a set "ci" and a Runner "ci-ab12c" each, the later watched took the
// other's job starts (its Runner went Running on a job it never ran, the
// other's demand leaked). A start reaches only the namespace whose set
// serves the job's repository.
TEST(JobRouting, AStartNeverCrossesNamespaces) {
  auto team_a = set_for("https://github.com/team-a");
  auto team_b = set_for("https://github.com/team-b");
  team_a.metadata.name = team_b.metadata.name = "ci";
  auto r = routes_of({{"a/ci", team_a}, {"b/ci", team_b}});
  const auto name = model::runner_name("ci", "", "ab12c");
  r.runner_sets = {{name, {{"a", "a/ci"}, {"b", "b/ci"}}}};
  using keys = std::vector<std::string>;
  EXPECT_EQ(destinations(r, messages::job_started{job_of("team-a/app", {}), name, 1}), keys{"a/ci"});
  EXPECT_EQ(destinations(r, messages::job_started{job_of("team-b/app", {}), name, 2}), keys{"b/ci"});
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("team-c/app", {}), name, 3}).empty())
      << "neither namespace's set serves it";
  // Not watched yet: the name's prefix fits both sets; the repository decides.
  r.runner_sets.clear();
  EXPECT_EQ(destinations(r, messages::job_started{job_of("team-b/app", {}), name, 4}), keys{"b/ci"});
  // Both serve it (one GitHub scope, two namespaces): neither gets it.
  auto shared = set_for("https://github.com/team-a");
  shared.metadata.name = "ci";
  r.sets["b/ci"] = std::make_shared<const model::runnerset>(shared);
  r.runner_sets = {{name, {{"a", "a/ci"}, {"b", "b/ci"}}}};
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("team-a/app", {}), name, 5}).empty());
  // Two namespaces' sets of one name on two servers: the job's server decides.
  auto ghes = set_for("https://ghes.example/team-a");
  ghes.metadata.name = "ci";
  r.sets["b/ci"] = std::make_shared<const model::runnerset>(ghes);
  auto on_ghes = job_of("team-a/app", {});
  on_ghes.server = "https://ghes.example";
  EXPECT_EQ(destinations(r, messages::job_started{on_ghes, name, 6}), keys{"b/ci"});
  EXPECT_EQ(destinations(r, messages::job_started{job_of("team-a/app", {}), name, 7}), keys{"a/ci"});
}

// Issue 32: demand went to the first set (by namespace/name) whose scope
// served the repository, whatever its server, class or credentials: tenant
// B's set claiming all of acme, or another App's, took tenant A's jobs. It
// goes only to a set that serves the job (set_serves).
TEST(JobRouting, DemandGoesOnlyToASetWhoseClassCredentialsAndScopeServeTheJob) {
  using keys = std::vector<std::string>;
  auto org = set_for("https://github.com/acme");      // tenant B: the broader scope, first by name
  auto pat = set_for("https://github.com/acme/app");  // tenant B: a PAT
  auto other_app = set_for("https://github.com/acme/app");
  auto ghes = set_for("https://ghes.example/acme/app");
  auto refused = set_for("https://github.com/acme/app");
  auto tenant = set_for("https://github.com/acme/app");  // tenant A: App installation 42
  auto r = routes_of({{"a-b/org", org},
                      {"a-b/pat", pat},
                      {"a-b/other-app", other_app},
                      {"a-c/ghes", ghes},
                      {"a-d/refused", refused},
                      {"z-a/app", tenant}});
  r.admitted.erase("a-d/refused");
  r.installations = {{"a-b/org", 43},  {"a-b/pat", 0},      {"a-b/other-app", 43},
                     {"a-c/ghes", 42}, {"a-d/refused", 42}, {"z-a/app", 42}};
  auto job = job_of("acme/app", {"linux"});
  job.installation_id = 42;
  EXPECT_EQ(destinations(r, messages::job_available{job}), keys{"z-a/app"})
      << "not another installation's, a PAT's, another server's or a refused set";
  EXPECT_EQ(destinations(r, messages::job_assigned{job}), keys{"z-a/app"});
  EXPECT_FALSE(set_serves(r, "a-b/org", job));
  EXPECT_FALSE(set_serves(r, "a-b/pat", job)) << "a PAT's set serves no App's delivery";
  EXPECT_FALSE(set_serves(r, "a-c/ghes", job)) << "the same installation id on another server";
  EXPECT_FALSE(set_serves(r, "a-d/refused", job)) << "demand never goes to a set its class refused";
  EXPECT_TRUE(set_serves(r, "z-a/app", job));
  r.installations.erase("z-a/app");
  EXPECT_TRUE(destinations(r, messages::job_available{job}).empty())
      << "a set whose credentials are not loaded yet serves no installation (the sweep finds the job)";

  // A delivery of a repository's or organisation's hook names no
  // installation: the first set of any credentials its class admits.
  auto hook = job_of("acme/app", {"linux"});
  EXPECT_EQ(destinations(r, messages::job_available{hook}), keys{"a-b/org"});
  hook.server = "https://ghes.example";
  EXPECT_EQ(destinations(r, messages::job_available{hook}), keys{"a-c/ghes"});
  hook.server = "https://ghes.other";
  EXPECT_TRUE(destinations(r, messages::job_available{hook}).empty());
  auto refused_only = routes_of({{"a-d/refused", refused}});
  refused_only.admitted.clear();
  EXPECT_TRUE(destinations(refused_only, messages::job_available{job_of("acme/app", {"linux"})}).empty());
}

// Issue 32: with one webhook secret for the whole platform, every team that
// configured a repository's hook held the key that signs every other
// team's deliveries, and a forged `queued` for another team's repository
// went to the first set serving it (by namespace/name). A delivery taken on
// a RunnerClass's own path (signed with that class's secret) names its
// class, and every message of it goes only to that class's sets.
TEST(JobRouting, AClassPathsDeliveryReachesOnlyTheClassesSets) {
  using keys = std::vector<std::string>;
  auto a_app = set_for("https://github.com/acme/a-app");
  auto b_app = set_for("https://github.com/acme/b-app");
  auto b_org = set_for("https://github.com/acme");  // class b, serves a-app too
  a_app.metadata.name = "a-app";
  b_app.metadata.name = "b-app";
  b_org.metadata.name = "org";
  auto r = routes_of({{"a/a-app", a_app}, {"b/b-app", b_app}, {"b/org", b_org}});
  r.classes = {{"a/a-app", "class-a"}, {"b/b-app", "class-b"}, {"b/org", "class-b"}};

  auto forged = job_of("acme/b-app", {"linux"});
  forged.runner_class = "class-a";
  EXPECT_TRUE(destinations(r, messages::job_available{forged}).empty())
      << "class a's secret makes no demand for class b's sets";
  EXPECT_FALSE(set_serves(r, "b/b-app", forged));
  EXPECT_TRUE(destinations(r, messages::job_assigned{forged}).empty());
  EXPECT_EQ(why_unrouted(r, forged), unrouted::unserved_repository);
  EXPECT_NE(describe(unrouted::unserved_repository, forged).find("RunnerClass class-a"), std::string::npos);

  auto genuine = forged;
  genuine.runner_class = "class-b";
  EXPECT_EQ(destinations(r, messages::job_available{genuine}), keys{"b/b-app"});
  auto unclassed = forged;
  unclassed.runner_class.clear();
  EXPECT_EQ(destinations(r, messages::job_available{unclassed}), keys{"b/b-app"})
      << "the manager's own path keeps today's routing";

  // Within its class, the first set by namespace/name that serves the job.
  auto a_job = job_of("acme/a-app", {"linux"});
  a_job.runner_class = "class-a";
  EXPECT_EQ(destinations(r, messages::job_available{a_job}), keys{"a/a-app"})
      << "class b's broader scope sorts first but is of another class";
  a_job.runner_class = "class-b";
  EXPECT_EQ(destinations(r, messages::job_available{a_job}), keys{"b/org"})
      << "a class's secret steers within its class";
  a_job.runner_class = "class-c";
  EXPECT_TRUE(destinations(r, messages::job_available{a_job}).empty()) << "a class with no sets";

  // Starts and completions stay within the class too.
  const auto b_runner = model::runner_name("b-app", "", "ab12c");
  r.runner_sets = {{b_runner, {{"b", "b/b-app"}}}};
  EXPECT_TRUE(destinations(r, messages::job_started{forged, b_runner, 1}).empty());
  EXPECT_EQ(destinations(r, messages::job_started{genuine, b_runner, 1}), keys{"b/b-app"});
  r.runner_sets.clear();
  EXPECT_TRUE(destinations(r, messages::job_started{forged, b_runner, 1}).empty()) << "not watched yet";
  EXPECT_EQ(destinations(r, messages::job_started{genuine, b_runner, 1}), keys{"b/b-app"});
  EXPECT_EQ(destinations(r, messages::job_completed{forged, b_runner, 1, "success"}), keys{"a/a-app"});
  EXPECT_EQ(destinations(r, messages::job_completed{genuine, b_runner, 1, "success"}),
            (keys{"b/b-app", "b/org"}));
  r.classes.erase("b/b-app");
  EXPECT_EQ(destinations(r, messages::job_available{genuine}), keys{"b/org"})
      << "a set judged by no class is of no class's path";
}

// Where an object labelled for a RunnerSet goes (owned_routing.hpp): to a
// set the controller has seen, else nowhere.
TEST(OwnedRouting, OnlyASetSeenTakesItsObjects) {
  model::owned_object_meta pod;
  pod.name = "p";
  pod.namespace_ = "ci";
  EXPECT_EQ(owning_set(pod), std::nullopt);
  pod.labels[model::label_runnerset] = "";
  EXPECT_EQ(owning_set(pod), std::nullopt) << "an empty label names no set";
  pod.labels[model::label_runnerset] = "linux";
  EXPECT_EQ(owning_set(pod), "ci/linux") << "the label names a set of the object's own namespace";
  std::map<std::string, std::shared_ptr<const model::runnerset>> sets{
      {"ci/linux", std::make_shared<const model::runnerset>(set_for("https://github.com/acme"))}};
  EXPECT_EQ(route_of_owned(sets, owning_set(pod)), owned_route::to_set);
  EXPECT_EQ(route_of_owned(sets, std::nullopt), owned_route::no_set);
  EXPECT_EQ(route_of_owned(sets, "ci/ghost"), owned_route::unknown_set);
  EXPECT_EQ(route_of_owned(sets, "other/linux"), owned_route::unknown_set) << "another namespace's set";
  EXPECT_EQ(route_of_owned({}, "ci/linux"), owned_route::unknown_set);
}

// What the Pod informer keeps (owned_routing.hpp): a Runner's Pod of a set
// the controller knows; nothing else is cached.
TEST(PodIntake, KeepsOnlyARunnersPodOfAKnownSet) {
  known_sets known;
  known.insert("ci/linux");
  model::owned_object_meta pod;
  pod.name = "p";
  pod.namespace_ = "ci";
  pod.owner_is_runner = true;
  EXPECT_EQ(intake_of_pod(pod, known), pod_intake::no_set) << "no label: not the manager's";
  pod.labels[model::label_runnerset] = "ghost";
  EXPECT_EQ(intake_of_pod(pod, known), pod_intake::unknown_set);
  pod.labels[model::label_runnerset] = "linux";
  EXPECT_EQ(intake_of_pod(pod, known), pod_intake::keep);
  pod.namespace_ = "other";
  EXPECT_EQ(intake_of_pod(pod, known), pod_intake::unknown_set) << "a set of the Pod's own namespace only";
  pod.namespace_ = "ci";
  pod.owner_is_runner = false;
  EXPECT_EQ(intake_of_pod(pod, known), pod_intake::not_a_runners_pod) << "labelled, but made by another";
  pod.owner_is_runner = true;
  known.erase("ci/linux");
  EXPECT_EQ(intake_of_pod(pod, known), pod_intake::unknown_set) << "its set deleted";
}

double rejected(const std::string& reason) {
  for (const auto& f : metrics::event_registry().Collect())
    if (f.name == "octorun_rejected_input_total")
      for (const auto& m : f.metric)
        for (const auto& l : m.label)
          if (l.name == "reason" && l.value == reason) return m.counter.value;
  return 0;
}

watched::pod_event pod_labelled_for(const std::string& ns, const std::string& set, const std::string& name) {
  auto pod = std::make_shared<model::runner_pod>();
  pod->metadata.name = name;
  pod->metadata.namespace_ = ns;
  pod->metadata.labels[model::label_runnerset] = set;
  return {"pods", kube::event_type::added, std::move(pod)};
}

// Issue 32: the controller routed every Pod and Runner to the actor of the
// set its label names, through the supervisor, which spawns one for a key it
// does not know: each distinct label value on a Pod anyone wrote cost an
// actor, kept for good. The controller on CAF's deterministic coordinator
// (its Kubernetes unreachable: the events are sent to it by the test): a
// thousand Pods labelled for sets that do not exist spawn no actor and are
// counted; a Pod of a set it has seen reaches that set's actor.
TEST(OwnedRouting, PodsLabelledForSetsThatDoNotExistSpawnNoActor) {
  test::caf_test_system t;
  controller_config cfg;
  cfg.kube.server = "https://127.0.0.1:1";
  cfg.namespaces = {"ci"};
  cfg.kube_workers = 1;
  cfg.record_events = false;
  auto controller = spawn_controller(t.sys, cfg);
  t.run();
  const auto actors_before = t.sys.registry().running();
  const auto rejected_before = rejected(unknown_set_reason);
  for (int i = 0; i < 1000; ++i)
    caf::anon_send(controller,
                   pod_labelled_for("ci", "ghost-" + std::to_string(i), "pod-" + std::to_string(i)));
  auto gone = pod_labelled_for("ci", "ghost-0", "pod-0");
  gone.type = kube::event_type::deleted;
  caf::anon_send(controller, gone);
  t.run();
  EXPECT_EQ(t.sys.registry().running(), actors_before) << "no actor for a set that does not exist";
  EXPECT_EQ(rejected(unknown_set_reason), rejected_before + 1000) << "counted; a deletion is not";

  auto set = std::make_shared<model::runnerset>(set_for("https://github.com/acme"));
  set->metadata.namespace_ = "ci";
  caf::anon_send(controller, watched::runnerset_event{"runnersets", kube::event_type::added, set});
  caf::anon_send(controller, pod_labelled_for("ci", "linux", "pod-of-linux"));
  t.run();
  EXPECT_GT(t.sys.registry().running(), actors_before) << "the set seen gets its actor";
  EXPECT_EQ(rejected(unknown_set_reason), rejected_before + 1000);
  caf::anon_send_exit(controller, caf::exit_reason::user_shutdown);
  t.run();
}

// Every rejected input is counted; each distinct one is logged once.
TEST(RejectedInput, CountedEveryTimeLoggedOnce) {
  EXPECT_TRUE(metrics::reject_input("webhook", "unserved_repository", "test/once"));
  EXPECT_FALSE(metrics::reject_input("webhook", "unserved_repository", "test/once"));
  EXPECT_TRUE(metrics::reject_input("webhook", "unserved_repository", "test/twice"));
  double count = -1;
  for (const auto& f : metrics::event_registry().Collect())
    if (f.name == "octorun_rejected_input_total")
      for (const auto& m : f.metric)
        for (const auto& l : m.label)
          if (l.name == "reason" && l.value == "unserved_repository") count = m.counter.value;
  EXPECT_EQ(count, 3);
}

}  // namespace
}  // namespace octorun::controller
