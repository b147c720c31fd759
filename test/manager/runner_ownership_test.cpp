// A Runner belongs to its RunnerSet by the set's uid, not by its label
// (issue 32). The attack: someone who may create Runners in a namespace
// writes one by hand with a set's label and labels or a pod of their own;
// the manager used to give it a JIT configuration from the set's
// credentials. The RunnerSet actor on CAF's deterministic coordinator,
// against fake Kubernetes and GitHub, shows that such a Runner gets no
// actor, no GitHub registration and one Warning Event, whoever it claims to
// be, while a Runner the set made is served.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/events.hpp"
#include "adapters/kube/protocol.hpp"
#include "messages/jobs.hpp"
#include "test/support/caf_test_system.hpp"
#include "test/support/credentials_secret.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

const char* set_json = R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet",)"
                       R"("metadata":{"name":"linux","namespace":"ns","uid":"set-uid","resourceVersion":"1",)"
                       R"("finalizers":["octorun.io/runnerset"]},)"
                       R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh",)"
                       R"("minRunners":0,"maxRunners":5,)"
                       R"("template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}}})";

// A Runner labelled for the set "linux" with `owner` as its ownerReferences
// ("" for none) and labels the set never declared.
std::string runner_json(const std::string& name, const std::string& uid, const std::string& owner) {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":")" + name +
         R"(","namespace":"ns","uid":")" + uid +
         R"(","resourceVersion":"5","labels":{"octorun.io/runnerset":"linux","octorun.io/variant":""},)"
         R"("finalizers":["octorun.io/runner"])" +
         (owner.empty() ? std::string() : R"(,"ownerReferences":[)" + owner + "]") +
         R"(},"spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh",)"
         R"("runnerLabels":["linux","gpu","prod-deploy"],"runnerSetName":"linux","variant":"",)"
         R"("template":{"spec":{"containers":[{"name":"runner","image":"evil"}]}}}})";
}

std::string set_owner(const std::string& kind, const std::string& uid) {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":")" + kind + R"(","name":"linux","uid":")" + uid +
         R"(","controller":true})";
}

// What fake Kubernetes, GitHub and the Event recorder saw.
struct seen {
  std::vector<std::string> jit_names;  // JIT configurations GitHub generated
  std::vector<kube::event_spec> events;
  int secret_creates = 0;
  bool no_secret = false;  // the credentials Secret is never read: the set waits on it
  std::vector<caf::response_promise> unanswered;
  std::map<std::string, std::string> stored_runners;  // what a GET of a Runner answers
  std::vector<std::string> runner_writes;             // Runners patched or updated, by name
  std::vector<std::string> listed_runners;            // what a LIST of Runners answers
  std::vector<std::string> set_patches;               // patches of the RunnerSet (its finalizer)
};

kube::api_error not_found() { return kube::api_error{404, "NotFound", "not found", {}, false}; }

caf::behavior fake_kube(caf::event_based_actor* self, std::shared_ptr<seen> s) {
  return {
      [=](kube::get_request& r) -> caf::result<kube::object_result> {
        if (s->no_secret && r.res.plural == "secrets") {  // never answered: the set waits on it
          s->unanswered.push_back(self->make_response_promise<kube::object_result>());
          return s->unanswered.back();
        }
        if (auto stored = s->stored_runners.find(r.name);
            r.res.plural == "runners" && stored != s->stored_runners.end())
          return kube::object_result{*kube::parse_object(stored->second)};
        if (r.res.plural != "secrets" || r.name != "gh") return kube::object_result{unexpected{not_found()}};
        return kube::object_result{test::pat_credentials_secret("ghp_CANARY")};
      },
      [=](kube::create_request& r) -> kube::object_result {
        if (r.res.plural == "secrets") ++s->secret_creates;
        return *kube::parse_object(r.body);
      },
      [=](kube::delete_request&) -> kube::object_result { return kube::object{}; },
      [=](kube::patch_request& r) -> kube::object_result {
        if (r.res.plural == "runners") s->runner_writes.push_back(r.name);
        if (r.res.plural == "runnersets") {
          s->set_patches.push_back(r.body);
          return *kube::parse_object(set_json);
        }
        return *kube::parse_object(r.body);
      },
      [=](kube::list_request& r) -> kube::list_result {
        kube::object_list out;
        if (r.res.plural == "runners")
          for (const auto& body : s->listed_runners) out.items.push_back(*kube::parse_object(body));
        return out;
      },
      [=](kube::update_request& r) -> kube::object_result {
        if (r.res.plural == "runners") s->runner_writes.push_back(r.name);
        return *kube::parse_object(r.body);
      },
  };
}

caf::behavior fake_github(caf::event_based_actor*, std::shared_ptr<seen> s) {
  return {
      [=](github::jit_config_atom, github::jit_request& req) -> github::jit_reply {
        s->jit_names.push_back(req.name);
        github::jit_config c;
        c.registered.id = 1000 + static_cast<std::int64_t>(s->jit_names.size());
        c.registered.name = req.name;
        c.encoded_jit_config = "e30";
        return c;
      },
      [=](github::find_runner_atom, std::string&) -> github::maybe_reference_reply {
        return std::optional<github::runner_reference>{};
      },
      [=](github::delete_runner_atom, std::int64_t) -> github::delete_reply {
        return github::delete_outcome::not_found;
      },
  };
}

caf::behavior fake_recorder(caf::event_based_actor*, std::shared_ptr<seen> s) {
  return {[=](kube::event_spec& e) { s->events.push_back(std::move(e)); }};
}

// Asks the set for a JIT configuration as a Runner actor would.
using ask_atom = caf::atom_constant<caf::atom("askjit")>;
caf::behavior runner_stub(caf::event_based_actor* self, caf::actor set,
                          std::shared_ptr<std::vector<github::jit_reply>> out) {
  return {[=](ask_atom, std::string& name) {
    github::jit_request req;
    req.name = name;
    self->request(set, 5s, github::jit_config_atom::value, req)
        .then([=](github::jit_reply& r) { out->push_back(r); }, [](caf::error&) {});
  }};
}

class RunnerOwnership : public ::testing::Test {
 protected:
  RunnerOwnership() {
    cfg_.ns = "ns";
    cfg_.name = "linux";
    cfg_.kube = t_.sys.spawn(fake_kube, s_);
    cfg_.github = t_.sys.spawn(fake_github, s_);
    cfg_.events = t_.sys.spawn(fake_recorder, s_);
    cfg_.request_timeout = 5s;
    cfg_.resync = 1h;
    cfg_.runner_defaults.request_timeout = 5s;
    cfg_.runner_defaults.resync = 1h;
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(t_.sys, cfg_));
  }
  ~RunnerOwnership() override {
    for (const auto& a : {set_, cfg_.kube, cfg_.github, cfg_.events})
      caf::anon_send_exit(a, caf::exit_reason::kill);
    t_.run();
  }
  void set_seen(const std::string& body = set_json) {
    caf::anon_send(set_, watched::runnerset_event{"rs", kube::event_type::added,
                                                  watched::read_runnerset(*kube::parse_object(body))});
    t_.run();
  }
  bool set_finalizer_released() const {
    for (const auto& p : s_->set_patches)
      if (p.find(R"("finalizers":[])") != std::string::npos) return true;
    return false;
  }
  void runner_seen(const std::string& body) {
    caf::anon_send(set_, watched::runner_event{"runners", kube::event_type::added,
                                               watched::read_runner(*kube::parse_object(body))});
    t_.run();
  }
  int warnings_about(const std::string& runner) const {
    int n = 0;
    for (const auto& e : s_->events)
      n += e.type == "Warning" && e.reason == "NotMadeByRunnerSet" && e.regarding.name == runner;
    return n;
  }

  test::caf_test_system t_;
  std::shared_ptr<seen> s_ = std::make_shared<seen>();
  runnerset_actor_config cfg_;
  caf::actor set_;
};

// The reported attack: a Runner with the set's label and template, made by
// hand, registered on GitHub with labels the set never declared.
TEST_F(RunnerOwnership, AHandMadeRunnerWithTheSetsLabelGetsNoJitConfiguration) {
  set_seen();
  runner_seen(runner_json("linux-hand1", "hand-uid", ""));
  runner_seen(runner_json("linux-hand1", "hand-uid", ""));  // a resync: still one Event
  EXPECT_TRUE(s_->jit_names.empty()) << "the set's credentials registered a hand-made Runner";
  EXPECT_EQ(s_->secret_creates, 0);
  ASSERT_EQ(warnings_about("linux-hand1"), 1);
  for (const auto& e : s_->events) {
    if (e.reason == "NotMadeByRunnerSet") {
      EXPECT_NE(e.note.find("no controller ownerReference"), std::string::npos) << e.note;
    }
  }
}

// The label and an ownerReference to the set's name are not enough: the
// reference must carry the uid the set has (a deleted and recreated set, or
// a forged reference, has another).
TEST_F(RunnerOwnership, AReferenceToAnotherUidOrKindIsNotTheSets) {
  set_seen();
  runner_seen(runner_json("linux-forg1", "f1", set_owner("RunnerSet", "other-uid")));
  runner_seen(runner_json("linux-forg2", "f2", set_owner("Deployment", "set-uid")));
  EXPECT_TRUE(s_->jit_names.empty());
  EXPECT_EQ(warnings_about("linux-forg1"), 1);
  EXPECT_EQ(warnings_about("linux-forg2"), 1);
}

// Before the set is read (a new leader's informers list in any order) a
// Runner cannot be judged: it waits, and is judged once the set is.
TEST_F(RunnerOwnership, RunnersSeenBeforeTheSetAreJudgedOnceItIs) {
  runner_seen(runner_json("linux-hand1", "hand-uid", ""));
  runner_seen(runner_json("linux-ownd1", "own-uid", set_owner("RunnerSet", "set-uid")));
  EXPECT_TRUE(s_->jit_names.empty()) << "provisioned before the set was read";
  set_seen();
  EXPECT_EQ(s_->jit_names, std::vector<std::string>{"linux-ownd1"}) << "the set's own Runner is served";
  EXPECT_EQ(warnings_about("linux-hand1"), 1);
  EXPECT_EQ(warnings_about("linux-ownd1"), 0);
}

// At use: a JIT request naming a Runner the set did not make is refused,
// whoever asks (an actor spawned for a job message that names it).
TEST_F(RunnerOwnership, TheSetRefusesAJitRequestForARunnerItDidNotMake) {
  set_seen();
  runner_seen(runner_json("linux-hand1", "hand-uid", ""));
  auto replies = std::make_shared<std::vector<github::jit_reply>>();
  auto stub = t_.sys.spawn(runner_stub, set_, replies);
  caf::anon_send(stub, ask_atom::value, std::string("linux-hand1"));
  t_.run();
  caf::anon_send(stub, ask_atom::value, std::string("linux-unseen"));  // not judged at all
  t_.run();
  runner_seen(runner_json("linux-ownd1", "own-uid", set_owner("RunnerSet", "set-uid")));
  const auto served = s_->jit_names.size();  // its own actor asked already
  caf::anon_send(stub, ask_atom::value, std::string("linux-ownd1"));
  t_.run();
  ASSERT_EQ(replies->size(), 3u);
  ASSERT_FALSE((*replies)[0]);
  EXPECT_EQ((*replies)[0].error().kind, github::error_kind::rejected);
  ASSERT_FALSE((*replies)[1]) << "a name the set has not judged its own is refused";
  EXPECT_EQ((*replies)[1].error().kind, github::error_kind::rejected);
  EXPECT_TRUE((*replies)[2]) << "the set's own Runner is served";
  EXPECT_EQ(s_->jit_names.size(), served + 1);
  for (const auto& name : s_->jit_names) EXPECT_EQ(name, "linux-ownd1");
  caf::anon_send_exit(stub, caf::exit_reason::kill);
}

// A job message naming the hand-made Runner spawns nothing that provisions it.
TEST_F(RunnerOwnership, AJobStartedOnAForeignRunnerProvisionsNothing) {
  set_seen();
  runner_seen(runner_json("linux-hand1", "hand-uid", ""));
  messages::job_info job;
  job.job_id = 7;
  job.labels = {"self-hosted"};
  caf::anon_send(set_, messages::job_started{job, "linux-hand1", 0});
  t_.run();
  runner_seen(runner_json("linux-hand1", "hand-uid", ""));
  EXPECT_TRUE(s_->jit_names.empty());
  EXPECT_EQ(s_->secret_creates, 0);
}

// While the set's credentials are not loaded (a new leader still reading
// them), a JIT request is answered "not ready",
// never as GitHub refusing it: the Runner gets no RegistrationFailed.
TEST_F(RunnerOwnership, ARequestBeforeTheCredentialsAreLoadedIsNotARefusal) {
  s_->no_secret = true;
  set_seen();
  runner_seen(runner_json("linux-ownd1", "own-uid", set_owner("RunnerSet", "set-uid")));
  auto replies = std::make_shared<std::vector<github::jit_reply>>();
  auto stub = t_.sys.spawn(runner_stub, set_, replies);
  caf::anon_send(stub, ask_atom::value, std::string("linux-ownd1"));
  t_.run();
  ASSERT_EQ(replies->size(), 1u);
  ASSERT_FALSE((*replies)[0]);
  EXPECT_EQ((*replies)[0].error().kind, github::error_kind::not_ready) << (*replies)[0].error().describe();
  EXPECT_TRUE(s_->jit_names.empty());
  for (const auto& e : s_->events) EXPECT_NE(e.reason, "RegistrationFailed") << e.note;
  caf::anon_send_exit(stub, caf::exit_reason::kill);
}

// A job message that comes before the set is read (a new leader's webhook
// delivery) and names a Runner the set did not make spawns nothing for it.
TEST_F(RunnerOwnership, AJobStartedBeforeTheSetIsReadGivesAForeignRunnerNoActor) {
  messages::job_info job;
  job.job_id = 7;
  job.labels = {"self-hosted"};
  const auto hand_made = runner_json("linux-hand1", "hand-uid", "");
  s_->stored_runners["linux-hand1"] = hand_made;
  caf::anon_send(set_, messages::job_started{job, "linux-hand1", 0});
  t_.run();
  runner_seen(hand_made);
  set_seen();
  EXPECT_EQ(warnings_about("linux-hand1"), 1);
  EXPECT_TRUE(s_->runner_writes.empty()) << "a job message gave a Runner the set did not make an actor, "
                                         << "which wrote it";
  EXPECT_TRUE(s_->jit_names.empty());
  EXPECT_EQ(s_->secret_creates, 0);
}

// A hand-made Runner with the set's label is left alone: it does not hold
// the set's deletion (the apiserver still lists it by the label).
TEST_F(RunnerOwnership, AForeignRunnerDoesNotHoldTheSetsDeletion) {
  const auto hand_made = runner_json("linux-hand1", "hand-uid", "");
  s_->listed_runners.push_back(hand_made);
  std::string deleting = set_json;
  deleting.replace(deleting.find(R"("finalizers")"), 0, R"("deletionTimestamp":"2026-01-01T00:00:00Z",)");
  set_seen(deleting);
  runner_seen(hand_made);
  t_.advance(1min);
  EXPECT_TRUE(set_finalizer_released()) << "the set waits for a Runner it did not make";
  EXPECT_TRUE(s_->jit_names.empty());
}

}  // namespace
}  // namespace octorun::runnerset
