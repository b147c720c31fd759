// The manager's reads in a tenant namespace (pod_resources.hpp,
// manager_reads) as plan() decides them: its binding is applied first, the
// API server is asked whether it grants them, and nothing of the namespace
// (credentials, references, runners' JIT Secrets) is read before it does.
#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "common/json.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace plan_fixtures;

const manager_reads reads{"octorun-manager-reads", "octorun-system", "octorun-manager"};

// A set whose class admits it, nothing read yet; `proxy`: its pods' proxy
// names a credentials Secret (a reference to check).
set_observation unread_set(bool proxy = false) {
  auto o = ready_set();
  o.set->metadata.namespace_ = "team-a";
  o.set->metadata.uid = "u";
  o.credentials_loaded = false;
  o.applied_objects.clear();
  o.reads = reads;
  o.tenant_credentials = true;
  if (proxy) {
    model::proxy_endpoint login;
    login.url = "http://proxy:3128";
    login.credentials_secret_name = "proxy-login";
    o.set->spec.pod.proxy.emplace();
    o.set->spec.pod.proxy->https = login;
  }
  plan_fixtures::demand(o, 2);
  return o;
}

void applied(set_observation& o) {
  for (const auto& obj : desired_pod_resources(*o.set, "", o.reads)) o.applied_objects[obj.key] = obj.body;
}

TEST(ManagerReads, TheBindingNamesOnlyTheManagerAndComesFirst) {
  auto set = unread_set().set;
  auto objects = desired_pod_resources(*set, "", reads);
  ASSERT_EQ(objects.size(), 3u);
  EXPECT_EQ(objects[0].key, "RoleBinding/octorun-reads-linux");
  EXPECT_EQ(objects[0].key, manager_reads_key("linux"));
  rapidjson::Document b;
  b.Parse(objects[0].body.c_str());
  ASSERT_FALSE(b.HasParseError());
  EXPECT_EQ(json::str(b["roleRef"], "kind"), "ClusterRole");
  EXPECT_EQ(json::str(b["roleRef"], "name"), "octorun-manager-reads");
  ASSERT_EQ(b["subjects"].Size(), 1u);
  EXPECT_EQ(json::str(b["subjects"][0], "kind"), "ServiceAccount");
  EXPECT_EQ(json::str(b["subjects"][0], "name"), "octorun-manager");
  EXPECT_EQ(json::str(b["subjects"][0], "namespace"), "octorun-system");
  EXPECT_EQ(json::str(b["metadata"], "namespace"), "team-a");
  EXPECT_EQ(json::str(b["metadata"]["labels"], "octorun.io/runnerset"), "linux");
  EXPECT_EQ(json::str(b["metadata"]["ownerReferences"][0], "uid"), "u");
  // None without a ClusterRole to bind; not among the objects a deletion
  // removes with the others (the set reads its credentials until the end).
  EXPECT_EQ(desired_pod_resources(*set).size(), 2u);
  for (const auto& key : pod_resource_keys("linux")) EXPECT_NE(key, manager_reads_key("linux"));
}

// The garbage collector takes a foreground deletion's dependents at once,
// while the deletion still reads the set's credentials (after a restart):
// the binding drops its owner as the deletion begins, and the deletion
// removes it last, before the set's finalizer. On main at 8ce8119 it kept
// its owner and was never deleted by the manager.
TEST(ManagerReads, ADeletionHoldsItsBindingWithoutAnOwnerAndRemovesItLast) {
  auto o = unread_set();
  applied(o);
  o.reads_granted = true;
  o.credentials_loaded = true;
  o.set->metadata.deleting = true;
  o.runners.clear();
  auto p = plan(o);
  auto applies = of(p, action_kind::apply_object);
  ASSERT_EQ(applies.size(), 1u);
  EXPECT_EQ(applies[0].subject, manager_reads_key("linux"));
  rapidjson::Document b;
  b.Parse(applies[0].text.c_str());
  ASSERT_FALSE(b.HasParseError());
  EXPECT_FALSE(b["metadata"].HasMember("ownerReferences")) << applies[0].text;
  EXPECT_EQ(json::str(b["metadata"]["labels"], "octorun.io/runnerset"), "linux");
  EXPECT_FALSE(has(p, action_kind::confirm_reads)) << "granted already: applied again only to drop its owner";
  EXPECT_FALSE(has(p, action_kind::delete_object)) << "removed only once the others are";

  applied(o);
  o.no_runners_confirmed = true;
  for (const auto& key : pod_resource_keys("linux")) o.deleted_objects.insert(key);
  p = plan(o);
  auto deletes = of(p, action_kind::delete_object);
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].subject, manager_reads_key("linux"));
  EXPECT_FALSE(has(p, action_kind::patch_finalizer)) << "the set outlives its reads binding";

  o.applied_objects.erase(manager_reads_key("linux"));
  o.deleted_objects.insert(manager_reads_key("linux"));
  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_object)) << "bound again after its removal";
  ASSERT_TRUE(has(p, action_kind::patch_finalizer));
  EXPECT_FALSE(of(p, action_kind::patch_finalizer)[0].on);
}

TEST(ManagerReads, AServiceAccountIsTheOnlyUserABindingCanName) {
  EXPECT_EQ(service_account_of("system:serviceaccount:octorun-system:octorun-manager"),
            (std::pair<std::string, std::string>{"octorun-system", "octorun-manager"}));
  for (const char* other : {"kubernetes-admin", "system:serviceaccount:ns", "system:serviceaccount::name",
                            "system:serviceaccount:ns:", "system:serviceaccount:a:b:c", "system:node:n1"})
    EXPECT_FALSE(service_account_of(other)) << other;
}

TEST(ManagerReads, NothingOfTheNamespaceIsReadBeforeTheApiServerGrantsIt) {
  auto o = unread_set(true);
  auto p = plan(o);
  ASSERT_TRUE(has(p, action_kind::apply_object));
  EXPECT_EQ(of(p, action_kind::apply_object).front().subject, manager_reads_key("linux"));
  EXPECT_FALSE(has(p, action_kind::read_credentials));
  EXPECT_FALSE(has(p, action_kind::check_reference));
  EXPECT_FALSE(has(p, action_kind::confirm_reads)) << "not applied yet";
  EXPECT_FALSE(has(p, action_kind::publish_status)) << "the first answers come first";

  applied(o);
  p = plan(o);
  EXPECT_TRUE(has(p, action_kind::confirm_reads));
  EXPECT_FALSE(has(p, action_kind::read_credentials));
  EXPECT_FALSE(has(p, action_kind::check_reference));
  o.in_flight.insert({action_kind::confirm_reads, ""});
  EXPECT_FALSE(has(plan(o), action_kind::confirm_reads)) << "asked twice";
  o.in_flight.erase({action_kind::confirm_reads, ""});

  o.reads_granted = true;
  p = plan(o);
  EXPECT_TRUE(has(p, action_kind::read_credentials));
  EXPECT_TRUE(has(p, action_kind::check_reference));
  EXPECT_FALSE(has(p, action_kind::confirm_reads));
  // Runners wait for the credentials like any set's; once loaded they come.
  o.credentials_loaded = true;
  o.reference_problems["Secret/proxy-login"] = "";
  o.references_checked_at = o.now;
  EXPECT_TRUE(has(plan(o), action_kind::create_runners));
}

TEST(ManagerReads, RunnersWaitForTheReadsTheirJitSecretsNeed) {
  auto o = unread_set();
  o.tenant_credentials = false;  // a class's, read from the platform's namespace before the grant
  o.credentials_loaded = true;
  applied(o);
  EXPECT_FALSE(has(plan(o), action_kind::create_runners));
  o.reads_granted = true;
  EXPECT_TRUE(has(plan(o), action_kind::create_runners));
}

TEST(ManagerReads, ARefusalIsAskedAgainSoonThenLessOftenAndSaidOnceItLasts) {
  auto o = unread_set();
  applied(o);
  o.reads_refusals = 1;
  o.reads_refused_at = o.now;
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::confirm_reads));
  auto wakes = of(p, action_kind::wake);
  ASSERT_FALSE(wakes.empty());
  auto wake =
      std::find_if(wakes.begin(), wakes.end(), [](const action& a) { return a.subject == reads_wake; });
  ASSERT_NE(wake, wakes.end());
  EXPECT_EQ(wake->at, o.now + 100ms);
  o.now += 100ms;
  EXPECT_TRUE(has(plan(o), action_kind::confirm_reads));

  o.reads_refusals = 3;
  o.reads_refused_at = o.now;
  o.now += 399ms;
  EXPECT_FALSE(has(plan(o), action_kind::confirm_reads));
  o.now += 1ms;
  EXPECT_TRUE(has(plan(o), action_kind::confirm_reads));
  EXPECT_EQ(reads_problem(o), "") << "RBAC may not have seen the binding yet";

  auto next_question = [&] {
    auto all = of(plan(o), action_kind::wake);
    auto w = std::find_if(all.begin(), all.end(), [](const action& a) { return a.subject == reads_wake; });
    return w == all.end() ? time_point{} : w->at;
  };
  o.reads_refusals = 30;
  o.reads_refused_at = o.now;
  EXPECT_EQ(next_question(), o.now + o.reference_recheck) << "never longer than reference_recheck";
  o.reads_refusals = reads_refusals_reported;
  EXPECT_EQ(next_question(), o.now + 1600ms);
  o.now += 1600ms;
  p = plan(o);
  EXPECT_TRUE(has(p, action_kind::confirm_reads));
  EXPECT_NE(reads_problem(o).find("ClusterRole octorun-manager-reads"), std::string::npos)
      << reads_problem(o);
  // Said in PodConfigReady, with the status written.
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  auto c = std::find_if(status[0].conditions.begin(), status[0].conditions.end(),
                        [](const model::condition& c) { return c.type == "PodConfigReady"; });
  ASSERT_NE(c, status[0].conditions.end());
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "ApplyFailed");
  EXPECT_NE(c->message.find("RoleBinding/octorun-reads-linux"), std::string::npos) << c->message;
  EXPECT_FALSE(has(p, action_kind::read_credentials));
}

TEST(ManagerReads, AClassesCredentialsAreReadBeforeTheGrantATenantsAfter) {
  auto o = unread_set();
  o.tenant_credentials = false;
  EXPECT_TRUE(has(plan(o), action_kind::read_credentials)) << "the platform's namespace needs no grant";
  o.tenant_credentials = true;
  EXPECT_FALSE(has(plan(o), action_kind::read_credentials));
}

// A new leader's first plan of a set being deleted: nothing applied this
// run, nothing loaded. Its deletion removes runners from GitHub with a
// tenant's credentials: it binds and asks first, then reads them.
TEST(ManagerReads, ASetBeingDeletedBindsAndAsksBeforeItReadsItsCredentials) {
  auto o = unread_set();
  o.set->metadata.deleting = true;
  auto p = plan(o);
  auto applies = of(p, action_kind::apply_object);
  ASSERT_EQ(applies.size(), 1u) << "the reads binding alone: nothing else is made for a set that goes";
  EXPECT_EQ(applies[0].subject, manager_reads_key("linux"));
  EXPECT_FALSE(has(p, action_kind::read_credentials));
  applied(o);
  p = plan(o);
  EXPECT_TRUE(has(p, action_kind::confirm_reads));
  EXPECT_FALSE(has(p, action_kind::read_credentials));
  o.reads_granted = true;
  p = plan(o);
  EXPECT_TRUE(has(p, action_kind::read_credentials));
  EXPECT_FALSE(has(p, action_kind::confirm_reads));
}

// A set its class no longer admits in its namespace drains on the
// tenant's credentials: a new leader, which applied no binding, asks
// whether the one the set made while admitted still grants the reads, and
// reads the credentials once it does; it writes nothing there.
TEST(ManagerReads, ARefusedSetThatDrainsAsksForItsReadsWithoutBinding) {
  auto o = unread_set();
  o.class_verdict = model::class_verdict{.class_name = "team-a",
                                         .classless = false,
                                         .refused = {{"spec.runnerClassName", "does not admit namespace"}},
                                         .limits = {},
                                         .pod_security = {},
                                         .drains = true};
  auto p = plan(o);
  EXPECT_TRUE(has(p, action_kind::confirm_reads));
  EXPECT_FALSE(has(p, action_kind::apply_object)) << "nothing is written where no class admits it";
  EXPECT_FALSE(has(p, action_kind::read_credentials)) << "not before the reads are granted";
  o.reads_granted = true;
  p = plan(o);
  EXPECT_TRUE(has(p, action_kind::read_credentials));
  EXPECT_FALSE(has(p, action_kind::confirm_reads));
  o.reads_granted = false;
  o.class_verdict->drains = false;
  EXPECT_FALSE(has(plan(o), action_kind::confirm_reads)) << "a set that sends nothing reads nothing";
}

TEST(ManagerReads, WithoutAClusterRoleToBindItsRbacGrantsTheReads) {
  auto o = unread_set();
  o.reads = {};
  for (const auto& obj : desired_pod_resources(*o.set)) o.applied_objects[obj.key] = obj.body;
  auto p = plan(o);
  EXPECT_TRUE(has(p, action_kind::read_credentials));
  EXPECT_FALSE(has(p, action_kind::confirm_reads));
  EXPECT_TRUE(reads_granted(o));
}

}  // namespace
}  // namespace octorun::runnerset
