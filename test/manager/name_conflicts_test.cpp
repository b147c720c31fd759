// Names never cross namespaces or sets (issue 32), against the actors on
// CAF's deterministic coordinator with fake Kubernetes and GitHub:
// - a Runner whose JIT request GitHub refuses because a runner of its name
//   exists deletes that runner only when it is shown to be its own (the id
//   its status records); an equal name alone (another namespace's set of
//   the same name) is never enough: the Runner gives the name up instead;
// - under the Webhook intake the set registers every runner with its own
//   label, and a runner found under a Runner's name (a lookup at its
//   deletion, the holder of a conflict) is the set's only with that label:
//   another namespace's runner of the same name is never deleted;
// - a Listener set whose scale-set name an older set in the same scope
//   holds (the controller's scale_set_names_taken) registers, updates,
//   deletes and listens to no scale set under it, says so, and takes the
//   name once the holder is gone.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/events.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/json.hpp"
#include "messages/scale_sets.hpp"
#include "model/naming.hpp"
#include "test/support/caf_test_system.hpp"
#include "test/support/credentials_secret.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

std::string set_json(const std::string& intake, int min_runners = 0, const std::string& extra_meta = "",
                     const std::string& status = "") {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet",)"
         R"("metadata":{"name":"linux","namespace":"team-b","uid":"set-uid","resourceVersion":"1",)"
         R"("creationTimestamp":"2026-01-02T00:00:00Z",)" +
         extra_meta +
         R"("finalizers":["octorun.io/runnerset"]},)"
         R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh","intake":")" +
         intake + R"(","minRunners":)" + std::to_string(min_runners) +
         R"(,"maxRunners":5,)"
         R"("template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}})" +
         (status.empty() ? std::string() : R"(,"status":)" + status) + "}";
}

// A Runner the set made (its controller reference), registered as
// `runner_id` per its status (0: nothing recorded), with no JIT Secret;
// `deleting`: being deleted, its finalizer still held or (`held` false) released.
std::string runner_json(const std::string& name, std::int64_t runner_id, const std::string& phase = "",
                        bool deleting = false, bool held = true) {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":")" + name +
         R"(","namespace":"team-b","uid":"uid-)" + name +
         R"(","resourceVersion":"5","labels":{"octorun.io/runnerset":"linux","octorun.io/variant":""},)" +
         (deleting ? R"("deletionTimestamp":"2026-01-03T00:00:00Z",)" : "") + R"("finalizers":)" +
         (held ? R"(["octorun.io/runner"])" : "[]") +
         R"(,"ownerReferences":[{"apiVersion":"octorun.io/v1alpha1",)"
         R"("kind":"RunnerSet","name":"linux","uid":"set-uid","controller":true}]},)"
         R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh",)"
         R"("runnerLabels":["linux"],"runnerSetName":"linux","variant":"",)"
         R"("template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}},)"
         R"("status":{"phase":")" +
         phase + R"(","runnerId":)" + std::to_string(runner_id) + "}}";
}

struct seen {
  std::string set;               // the RunnerSet as the apiserver holds it
  std::string conflicting_name;  // the Runner name GitHub says `holder` holds
  std::vector<std::string> created_runners;
  std::vector<std::string> jit_names;
  std::vector<std::string> looked_up;                // names looked up on GitHub
  std::vector<std::int64_t> deleted_runners;         // GitHub runner ids
  std::int64_t holder = 0;                           // the runner GitHub says holds every name (0: none)
  std::vector<std::string> holder_labels;            // its labels
  bool runners_deleting = false;                     // the Runners are being deleted
  std::vector<std::vector<std::string>> jit_labels;  // each JIT request's
  std::vector<std::string> scale_set_calls;          // "find NAME", "create NAME", "update ID", "delete ID"
  std::vector<std::string> listeners;                // variants a listener was spawned for
  std::vector<std::string> runner_patches;           // bodies
  std::vector<std::string> set_patches;              // bodies
  std::vector<kube::event_spec> events;
};

kube::api_error not_found() { return kube::api_error{404, "NotFound", "not found", {}, false}; }

// The credentials Secret as a patch of its finalizers leaves it.
kube::object credentials_with_finalizers_of(const std::string& patch) {
  rapidjson::Document p, secret;
  p.Parse(patch.c_str());
  secret.Parse(test::pat_credentials_secret("ghp_x").json().c_str());
  if (!p.HasParseError() && p.IsObject() && p.HasMember("metadata") && p["metadata"].HasMember("finalizers"))
    secret["metadata"].AddMember("finalizers",
                                 rapidjson::Value(p["metadata"]["finalizers"], secret.GetAllocator()),
                                 secret.GetAllocator());
  return *kube::parse_object(json::write(secret));
}

caf::behavior fake_kube(caf::event_based_actor*, std::shared_ptr<seen> s) {
  return {
      [=](kube::get_request& r) -> kube::object_result {
        if (r.res.plural != "secrets" || r.name != "gh") return unexpected{not_found()};
        return test::pat_credentials_secret("ghp_x");
      },
      [=](kube::create_request& r) -> kube::object_result {
        auto o = kube::parse_object(r.body);
        if (r.res.plural == "runners") s->created_runners.emplace_back(o->name);
        return *o;
      },
      [=](kube::delete_request&) -> kube::object_result { return kube::object{}; },
      [=](kube::patch_request& r) -> kube::object_result {
        if (r.type == kube::patch_type::apply) return *kube::parse_object(r.body);
        if (r.res.plural == "secrets") return credentials_with_finalizers_of(r.body);
        if (r.res.plural == "runners") {
          // As the apiserver answers: the Runner with the phase written.
          s->runner_patches.push_back(r.body);
          const bool failed = r.body.find(R"("phase":"Failed")") != std::string::npos;
          const bool released =
              r.type == kube::patch_type::json && r.body.find(R"("op":"remove")") != std::string::npos;
          return *kube::parse_object(
              runner_json(r.name, 0, failed ? "Failed" : "", s->runners_deleting, !released));
        }
        if (r.res.plural == "runnersets") {
          s->set_patches.push_back(r.body);
          // Its status written: the apiserver holds the set with it.
          rapidjson::Document set, patch;
          set.Parse(s->set.c_str());
          patch.Parse(r.body.c_str());
          if (!patch.HasParseError() && patch.IsObject() && patch.HasMember("status")) {
            set.RemoveMember("status");
            set.AddMember("status", rapidjson::Value(patch["status"], set.GetAllocator()),
                          set.GetAllocator());
            s->set = json::write(set);
          }
          // Its finalizer released: the apiserver holds the set without it.
          if (r.body.find(R"("finalizers":[])") != std::string::npos)
            if (auto at = s->set.find(R"(["octorun.io/runnerset"])"); at != std::string::npos)
              s->set.replace(at, std::string(R"(["octorun.io/runnerset"])").size(), "[]");
          return *kube::parse_object(s->set);
        }
        return *kube::parse_object(r.body);
      },
      [=](kube::list_request&) -> kube::list_result { return kube::object_list{}; },
      [=](kube::update_request& r) -> kube::object_result { return *kube::parse_object(r.body); },
  };
}

github::error conflict() {
  return github::error{github::error_kind::conflict, 409, "a runner of that name exists", {}, 0};
}

// GitHub: a JIT request for a name conflicts while `holder` holds it (the
// REST client names the holder and its labels), a lookup of the name finds
// it; deleting it frees the name.
caf::behavior fake_github(caf::event_based_actor*, std::shared_ptr<seen> s) {
  return {
      [=](github::jit_config_atom, github::jit_request& req) -> github::jit_reply {
        s->jit_names.push_back(req.name);
        s->jit_labels.push_back(req.labels);
        if (s->holder != 0 && req.name == s->conflicting_name) {
          auto e = conflict();
          e.holder = github::name_holder{s->holder, false, false, s->holder_labels, false};
          return unexpected{e};
        }
        github::jit_config c;
        c.registered.id = 500;
        c.registered.name = req.name;
        c.encoded_jit_config = "e30";
        return c;
      },
      // The REST list by name: the holder, with its labels (no scale set).
      [=](github::find_runner_atom, std::string& name) -> github::maybe_reference_reply {
        s->looked_up.push_back(name);
        if (s->holder == 0 || name != s->conflicting_name) return std::optional<github::runner_reference>{};
        return std::optional<github::runner_reference>{
            github::runner_reference{s->holder, name, 0, s->holder_labels}};
      },
      [=](github::delete_runner_atom, std::int64_t id) -> github::delete_reply {
        s->deleted_runners.push_back(id);
        if (id == s->holder) s->holder = 0;
        return github::delete_outcome::deleted;
      },
      [](github::runner_group_atom, std::string&) -> github::group_reply {
        return github::runner_group{1, "Default", true};
      },
      [=](github::find_scale_set_atom, std::int64_t, std::string& name) -> github::maybe_scale_set_reply {
        s->scale_set_calls.push_back("find " + name);
        return std::optional<github::scale_set>{};
      },
      [=](github::create_scale_set_atom, github::scale_set& ss) -> github::scale_set_reply {
        s->scale_set_calls.push_back("create " + ss.name);
        ss.id = 9;
        return ss;
      },
      [=](github::update_scale_set_atom, std::int64_t id, github::scale_set& ss) -> github::scale_set_reply {
        s->scale_set_calls.push_back("update " + std::to_string(id));
        ss.id = id;
        return ss;
      },
      [=](github::delete_scale_set_atom, std::int64_t id) -> github::ok_reply {
        s->scale_set_calls.push_back("delete " + std::to_string(id));
        return ok_t{};
      },
  };
}

caf::behavior fake_recorder(caf::event_based_actor*, std::shared_ptr<seen> s) {
  return {[=](kube::event_spec& e) { s->events.push_back(std::move(e)); }};
}

// Spawned with an argument: CAF 0.17 dereferences the empty argument tuple
// of an actor spawned without one, which UBSan refuses.
caf::behavior idle_listener(caf::event_based_actor*, const std::string&) {
  return {[](const std::string&) {}};
}

class NameConflicts : public ::testing::Test {
 protected:
  void start(const std::string& set) {
    s_->set = set;
    cfg_.ns = "team-b";
    cfg_.name = "linux";
    cfg_.kube = t_.sys.spawn(fake_kube, s_);
    cfg_.github = t_.sys.spawn(fake_github, s_);
    cfg_.events = t_.sys.spawn(fake_recorder, s_);
    cfg_.request_timeout = 5s;
    cfg_.resync = 1h;
    cfg_.webhook_sweep = 0ms;
    cfg_.runner_defaults.request_timeout = 5s;
    cfg_.runner_defaults.resync = 1h;
    auto s = s_;
    cfg_.spawn_listener = [s](caf::local_actor* parent, listener::listener_config c) {
      s->listeners.push_back(c.variant);
      return caf::actor(parent->spawn(idle_listener, c.variant));
    };
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(t_.sys, cfg_));
  }
  ~NameConflicts() override {
    for (const auto& a : {set_, cfg_.kube, cfg_.github, cfg_.events})
      if (a) caf::anon_send_exit(a, caf::exit_reason::kill);
    t_.run();
  }
  void set_seen() {
    caf::anon_send(set_, watched::runnerset_event{"rs", kube::event_type::added,
                                                  watched::read_runnerset(*kube::parse_object(s_->set))});
    t_.run();
  }
  void runner_seen(const std::string& body) {
    caf::anon_send(set_, watched::runner_event{"runners", kube::event_type::added,
                                               watched::read_runner(*kube::parse_object(body))});
    t_.run();
  }
  void told_taken(std::map<std::string, messages::scale_set_taken> taken) {
    caf::anon_send(set_, messages::scale_set_names_taken{std::move(taken)});
    t_.run();
  }
  bool patched_with(const std::vector<std::string>& bodies, const std::string& text) const {
    for (const auto& b : bodies)
      if (b.find(text) != std::string::npos) return true;
    return false;
  }
  int events(const std::string& reason) const {
    int n = 0;
    for (const auto& e : s_->events) n += e.reason == reason;
    return n;
  }

  test::caf_test_system t_;
  std::shared_ptr<seen> s_ = std::make_shared<seen>();
  runnerset_actor_config cfg_;
  caf::actor set_;
};

// The reported attack: team-a and team-b both run a set "linux" in one
// scope; team-b's Runner draws a name team-a's idle runner 77 holds. Before,
// team-b's Runner deleted runner 77 (idle, so GitHub let it) and took the
// name. Now it is left alone: the Runner fails, saying why, and its set
// makes another under a new name.
TEST_F(NameConflicts, AnotherNamespacesRunnerOfTheSameNameIsNeverDeleted) {
  s_->holder = 77;
  s_->conflicting_name = "linux-abcde";
  s_->holder_labels = {"linux", model::registering_set_label("team-a-set-uid")};
  start(set_json("Webhook", 1));
  runner_seen(runner_json("linux-abcde", 0));
  set_seen();
  EXPECT_FALSE(s_->jit_names.empty()) << "the Runner never asked for its JIT configuration";
  EXPECT_TRUE(s_->deleted_runners.empty()) << "deleted GitHub runner " << s_->deleted_runners.front()
                                           << ", which nothing showed was this Runner's";
  EXPECT_TRUE(patched_with(s_->runner_patches, R"("phase":"Failed")"));
  EXPECT_TRUE(patched_with(s_->runner_patches, R"("reason":"NameTaken")"));
  EXPECT_TRUE(patched_with(s_->runner_patches, "GitHub runner 77 holds the name linux-abcde"));
  // The watch shows it Failed: its set makes another, under a new name.
  caf::anon_send(set_,
                 watched::runner_event{
                     "runners", kube::event_type::modified,
                     watched::read_runner(*kube::parse_object(runner_json("linux-abcde", 0, "Failed")))});
  t_.run();
  ASSERT_EQ(s_->created_runners.size(), 1u) << "its set made another in its stead";
  EXPECT_NE(s_->created_runners[0], "linux-abcde");
}

// The name held by the Runner's own earlier registration (the id its
// status records: its JIT Secret was lost): deleted, and the name
// registered again.
TEST_F(NameConflicts, TheRunnersOwnEarlierRegistrationIsDeletedAndTheNameRegisteredAgain) {
  s_->holder = 77;
  s_->conflicting_name = "linux-abcde";
  start(set_json("Webhook", 1));
  runner_seen(runner_json("linux-abcde", 77));
  set_seen();
  EXPECT_EQ(s_->deleted_runners, std::vector<std::int64_t>{77});
  EXPECT_EQ(s_->jit_names.size(), 2u) << "asked again once the name was free";
  EXPECT_FALSE(patched_with(s_->runner_patches, "NameTaken"));
}

// Every runner the set registers through the REST API carries the set's
// label beside its own, so a job's runs-on still matches.
TEST_F(NameConflicts, AWebhookSetRegistersEachRunnerWithItsOwnLabel) {
  start(set_json("Webhook", 1));
  runner_seen(runner_json("linux-abcde", 0));
  set_seen();
  ASSERT_FALSE(s_->jit_labels.empty()) << "the Runner never asked for its JIT configuration";
  EXPECT_EQ(s_->jit_labels[0], (std::vector<std::string>{"linux", model::registering_set_label("set-uid")}));
}

// The reported hole: team-b's Runner "linux-abcde" is deleted while nothing
// records a registration of it (a JIT answer lost in transit, or a Runner an
// earlier leader made), so it looks its name up on GitHub; at that moment
// team-a's set "linux" has an idle runner 77 of that very name. Before, the
// lookup found it and team-b's Runner removed it (REST runners have no
// scale set to show whose they are). Now it carries team-a's label, not
// team-b's: left alone, and the Runner's deletion goes on as when nothing
// holds the name.
TEST_F(NameConflicts, ADeletedRunnersLookUpLeavesAnotherNamespacesRunnerOfTheSameName) {
  s_->holder = 77;
  s_->conflicting_name = "linux-abcde";
  s_->holder_labels = {"linux", model::registering_set_label("team-a-set-uid")};
  s_->runners_deleting = true;
  start(set_json("Webhook"));
  set_seen();
  runner_seen(runner_json("linux-abcde", 0, "", true));
  EXPECT_EQ(s_->looked_up, std::vector<std::string>{"linux-abcde"}) << "nothing recorded: looked up";
  EXPECT_TRUE(s_->deleted_runners.empty())
      << "deleted team-a's GitHub runner " << s_->deleted_runners.front();
  EXPECT_TRUE(patched_with(s_->runner_patches, R"("op":"remove","path":"/metadata/finalizers/0")"))
      << "its deletion did not go on";
  // A runner without any set's label (registered outside Octorun, or by a
  // manager before runners carried it: an upgrade) is left alone too.
  s_->holder_labels = {"linux"};
  s_->runner_patches.clear();
  s_->looked_up.clear();
  s_->conflicting_name = "linux-fghij";
  runner_seen(runner_json("linux-fghij", 0, "", true));
  EXPECT_EQ(s_->looked_up, std::vector<std::string>{"linux-fghij"});
  EXPECT_TRUE(s_->deleted_runners.empty())
      << "deleted unlabelled GitHub runner " << s_->deleted_runners.front();
  EXPECT_TRUE(patched_with(s_->runner_patches, R"("op":"remove","path":"/metadata/finalizers/0")"));
}

// The same lookup finding the set's own registration (its label) removes it
// before the Runner lets go: no GitHub runner outlives its Runner.
TEST_F(NameConflicts, ADeletedRunnersLookUpRemovesTheSetsOwnUnrecordedRegistration) {
  s_->holder = 77;
  s_->conflicting_name = "linux-abcde";
  s_->holder_labels = {"linux", model::registering_set_label("set-uid")};
  s_->runners_deleting = true;
  start(set_json("Webhook"));
  set_seen();
  runner_seen(runner_json("linux-abcde", 0, "", true));
  EXPECT_EQ(s_->looked_up, std::vector<std::string>{"linux-abcde"});
  EXPECT_EQ(s_->deleted_runners, std::vector<std::int64_t>{77});
  EXPECT_TRUE(patched_with(s_->runner_patches, R"("op":"remove","path":"/metadata/finalizers/0")"));
}

// A JIT answer lost in transit: GitHub registered the name, and the retry
// conflicts with a holder no id records. Its label shows it is the set's,
// and no other Runner of the set has the name: the Runner's own, deleted
// and the name registered again (before, the Runner gave the name up and
// the registration stayed on GitHub).
TEST_F(NameConflicts, AHolderWithTheSetsOwnLabelIsTheRunnersLostRegistration) {
  s_->holder = 77;
  s_->conflicting_name = "linux-abcde";
  s_->holder_labels = {"linux", model::registering_set_label("set-uid")};
  start(set_json("Webhook", 1));
  runner_seen(runner_json("linux-abcde", 0));
  set_seen();
  EXPECT_EQ(s_->deleted_runners, std::vector<std::int64_t>{77});
  EXPECT_EQ(s_->jit_names.size(), 2u) << "asked again once the name was free";
  EXPECT_FALSE(patched_with(s_->runner_patches, "NameTaken"));
}

// team-a's set "linux" is older and holds scale set "linux" in this scope:
// team-b's registers nothing under it, starts no listener, and says so;
// once team-a's set is gone, team-b's takes the name.
TEST_F(NameConflicts, AScaleSetNameAnOlderSetHoldsIsLeftAloneUntilItIsGone) {
  start(set_json("Listener"));
  told_taken({{"", {"linux", "team-a/linux"}}});
  set_seen();
  EXPECT_TRUE(s_->scale_set_calls.empty()) << s_->scale_set_calls.front();
  EXPECT_TRUE(s_->listeners.empty());
  EXPECT_TRUE(patched_with(s_->set_patches, R"("reason":"ScaleSetNameTaken")"));
  EXPECT_TRUE(patched_with(s_->set_patches, "is held by RunnerSet team-a/linux"));
  EXPECT_EQ(events("ScaleSetNameTaken"), 1);

  told_taken({});
  EXPECT_EQ(s_->scale_set_calls, (std::vector<std::string>{"find linux", "create linux"}));
  EXPECT_EQ(s_->listeners, std::vector<std::string>{""});
  EXPECT_EQ(events("ScaleSetNameFree"), 1);
}

// Before the names were judged, both sets shared scale set 9, and team-b's
// status records it. Told it is team-a's, team-b stops its listener; being
// deleted, it deletes no scale set (the one it recorded is team-a's).
TEST_F(NameConflicts, ASetLeavesTheScaleSetItSharedToItsHolderAlsoWhenDeleted) {
  start(set_json("Listener"));
  set_seen();
  ASSERT_EQ(s_->listeners, std::vector<std::string>{""});
  told_taken({{"", {"linux", "team-a/linux"}}});
  s_->set = set_json("Listener", 0, R"("deletionTimestamp":"2026-01-03T00:00:00Z",)", R"({"scaleSetId":9})");
  set_seen();
  for (const auto& call : s_->scale_set_calls) EXPECT_NE(call, "delete 9") << "deleted team-a's scale set";
  EXPECT_TRUE(patched_with(s_->set_patches, R"("finalizers":[])")) << "its deletion waited on it";
}

}  // namespace
}  // namespace octorun::runnerset
