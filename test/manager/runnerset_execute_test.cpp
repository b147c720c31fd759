// The RunnerSet actor on CAF's deterministic coordinator, against fake
// Kubernetes and GitHub pools: what it records in flight is released on
// every path (a reply with an error, a caf::error, a timeout), and the busy
// re-check and the scale-down window follow the actor's clock.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <vector>

#include "actors/kinds.hpp"
#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/watched.hpp"
#include "adapters/common/base64.hpp"
#include "adapters/common/json.hpp"
#include "adapters/kube/protocol.hpp"
#include "messages/jobs.hpp"
#include "test/support/caf_test_system.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

enum class answer { ok, reply_error, actor_error, silence };

// What the fake apiserver and GitHub saw, and how they answer.
struct script {
  answer create = answer::ok, remove = answer::ok, status = answer::ok, github_delete = answer::ok;
  bool github_busy = false;
  std::vector<std::string> created;  // bodies of the Runner creates
  int deletes = 0, status_patches = 0, finalizer_patches = 0, secret_reads = 0, github_deletes = 0;
  std::vector<caf::response_promise> held;  // requests never answered (they time out)
};

// Asks the fake apiserver to answer the oldest request it held.
using release_atom = caf::atom_constant<caf::atom("release")>;

kube::api_error server_error() { return kube::api_error{500, "InternalError", "boom", {}, false}; }

const char* set_json = R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet",)"
                       R"("metadata":{"name":"linux","namespace":"ns","uid":"u","resourceVersion":"1",)"
                       R"("finalizers":["octorun.io/runnerset"]},)"
                       R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh",)"
                       R"("minRunners":0,"maxRunners":5,)"
                       R"("template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}}})";

template <class Reply>
caf::result<Reply> respond(caf::event_based_actor* self, std::shared_ptr<script> s, answer a, Reply ok,
                           Reply failed) {
  switch (a) {
    case answer::ok:
      return ok;
    case answer::reply_error:
      return failed;
    case answer::actor_error:
      return caf::make_error(caf::sec::runtime_error);
    case answer::silence:
      s->held.push_back(self->make_response_promise());
      return s->held.back();
  }
  return failed;
}

caf::behavior fake_kube(caf::event_based_actor* self, std::shared_ptr<script> s) {
  return {
      [=](kube::get_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural != "secrets") return kube::object_result{unexpected{server_error()}};
        ++s->secret_reads;
        return *kube::parse_object(R"({"kind":"Secret","metadata":{"name":"gh","resourceVersion":"3"},)"
                                   R"("data":{"github_token":")" +
                                   base64_encode("ghp_x") + R"("}})");
      },
      [=](kube::create_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural != "runners") return kube::object_result{unexpected{server_error()}};
        s->created.push_back(r.body);
        return respond<kube::object_result>(self, s, s->create, *kube::parse_object(r.body),
                                            unexpected{server_error()});
      },
      [=](kube::delete_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural != "runners") return kube::object_result{unexpected{server_error()}};
        ++s->deletes;
        return respond<kube::object_result>(self, s, s->remove, kube::object{}, unexpected{server_error()});
      },
      [=](kube::patch_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural != "runnersets") return kube::object_result{unexpected{server_error()}};
        if (r.subresource != "status") {
          ++s->finalizer_patches;
          return *kube::parse_object(set_json);
        }
        ++s->status_patches;
        return respond<kube::object_result>(self, s, s->status, *kube::parse_object(set_json),
                                            unexpected{server_error()});
      },
      [=](kube::list_request&) -> kube::list_result { return kube::object_list{}; },
      [=](kube::update_request&) -> kube::object_result { return unexpected{server_error()}; },
      [=](release_atom) {
        auto rp = s->held.front();
        s->held.erase(s->held.begin());
        rp.deliver(kube::object_result{*kube::parse_object(set_json)});
      },
  };
}

caf::behavior fake_github(caf::event_based_actor* self, std::shared_ptr<script> s) {
  return {
      [=](github::delete_runner_atom, std::int64_t) -> caf::result<github::delete_reply> {
        ++s->github_deletes;
        github::delete_reply ok{s->github_busy ? github::delete_outcome::busy
                                               : github::delete_outcome::deleted};
        github::delete_reply failed{
            unexpected{github::error{github::error_kind::server_error, 502, "bad", {}, 0}}};
        return respond<github::delete_reply>(self, s, s->github_delete, ok, failed);
      },
      [=](github::jit_config_atom, github::jit_request&) -> github::jit_reply {
        return unexpected{github::error{github::error_kind::server_error, 502, "not in this test", {}, 0}};
      },
  };
}

// The Runner `body` (as created) as its watch shows it once its runner is
// online and idle.
kube::object online(const std::string& body, std::int64_t runner_id) {
  rapidjson::Document d;
  d.Parse(body.c_str());
  auto& a = d.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("phase", "Pending", a);
  status.AddMember("podReady", true, a);
  status.AddMember("runnerId", runner_id, a);
  d.AddMember("status", status, a);
  return *kube::parse_object(json::write(d));
}

class RunnerSetExecute : public ::testing::Test {
 protected:
  RunnerSetExecute() {
    kube_ = t_.sys.spawn(fake_kube, s_);
    github_ = t_.sys.spawn(fake_github, s_);
    cfg_.ns = "ns";
    cfg_.name = "linux";
    cfg_.kube = kube_;
    cfg_.github = github_;
    cfg_.request_timeout = 5s;
    cfg_.busy_recheck = 30s;
    cfg_.scale_down_window = 10s;
    cfg_.resync = 1h;  // no tick during a test
  }
  ~RunnerSetExecute() override {
    s_->held.clear();  // never answered
    for (auto* a : {&set_, &kube_, &github_})
      if (*a) caf::anon_send_exit(*a, caf::exit_reason::kill);
    t_.run();
  }
  void start() {
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(t_.sys, cfg_));
    poke();
  }
  // The RunnerSet's watch event again: the set plans on what it knows.
  void poke() {
    caf::anon_send(set_, watched::runnerset_event{"rs", kube::event_type::modified,
                                                  watched::read_runnerset(*kube::parse_object(set_json))});
    t_.run();
  }
  void demand(std::int64_t job) {
    messages::job_info j;
    j.job_id = job;
    j.labels = {"self-hosted"};
    caf::anon_send(set_, messages::job_available{j});
    t_.run();
  }
  void complete(std::int64_t job) {
    messages::job_info j;
    j.job_id = job;
    caf::anon_send(set_, messages::job_completed{j, "", 0, "succeeded"});
    t_.run();
  }
  void watched(const kube::object& runner) {
    caf::anon_send(set_,
                   watched::runner_event{"runners", kube::event_type::added, watched::read_runner(runner)});
    t_.run();
  }

  // A create that fails `how` releases its placeholder: the next plan creates again.
  void create_fails(answer how) {
    s_->create = how;
    start();
    demand(1);
    ASSERT_EQ(s_->created.size(), 1u);
    if (how == answer::silence) {
      poke();
      EXPECT_EQ(s_->created.size(), 1u) << "created again while the first is in flight";
      t_.advance(cfg_.request_timeout + 1s);
    }
    poke();
    EXPECT_EQ(s_->created.size(), 2u) << "a failed create stuck in flight";
  }
  // A status write that fails `how` leaves nothing in flight: the next plan writes again.
  void status_write_fails(answer how) {
    s_->status = how;
    start();
    ASSERT_EQ(s_->status_patches, 1);
    if (how == answer::silence) {
      poke();
      EXPECT_EQ(s_->status_patches, 1) << "written again while the first is in flight";
      t_.advance(cfg_.request_timeout + 1s);
    }
    poke();
    EXPECT_EQ(s_->status_patches, 2) << "a failed status write stuck in flight";
  }

  test::caf_test_system t_;
  std::shared_ptr<script> s_ = std::make_shared<script>();
  runnerset_actor_config cfg_;
  caf::actor kube_, github_, set_;
};

TEST_F(RunnerSetExecute, ACreateHoldsItsPlaceholderUntilTheWatchShowsIt) {
  start();
  EXPECT_EQ(s_->secret_reads, 1);
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "created again while the first is in flight";
  watched(online(s_->created[0], 0));
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "the watched Runner is counted";
}

TEST_F(RunnerSetExecute, ACreateAnsweredWithAnErrorIsRetried) { create_fails(answer::reply_error); }
TEST_F(RunnerSetExecute, ACreateFailingInTheActorIsRetried) { create_fails(answer::actor_error); }
TEST_F(RunnerSetExecute, ACreateThatTimesOutIsRetried) { create_fails(answer::silence); }

// One idle runner, online, after a job that came and went.
class RunnerSetScaleDown : public RunnerSetExecute {
 protected:
  void idle_runner() {
    start();
    demand(1);
    ASSERT_EQ(s_->created.size(), 1u);
    watched(online(s_->created[0], 77));
    complete(1);
  }
  // The GitHub removal of the idle runner fails `how`: nothing is deleted,
  // and the next plan asks GitHub again.
  void removal_fails(answer how) {
    s_->github_delete = how;
    idle_runner();
    t_.advance(cfg_.scale_down_window + 1s);
    ASSERT_EQ(s_->github_deletes, 1);
    if (how == answer::silence) {
      poke();
      EXPECT_EQ(s_->github_deletes, 1) << "asked again while the first is in flight";
      t_.advance(cfg_.request_timeout + 1s);
    }
    poke();
    EXPECT_EQ(s_->github_deletes, 2) << "a failed removal stuck in flight";
    EXPECT_EQ(s_->deletes, 0);
  }
  // GitHub removed it, the Runner's DELETE fails `how`: the next plan removes it again.
  void delete_fails(answer how) {
    s_->remove = how;
    idle_runner();
    t_.advance(cfg_.scale_down_window + 1s);
    ASSERT_EQ(s_->github_deletes, 1);
    ASSERT_EQ(s_->deletes, 1);
    if (how == answer::silence) {
      poke();
      EXPECT_EQ(s_->github_deletes, 1) << "removed again while the DELETE is in flight";
      t_.advance(cfg_.request_timeout + 1s);
    }
    poke();
    EXPECT_EQ(s_->github_deletes, 2) << "a failed DELETE stuck in flight";
  }
};

TEST_F(RunnerSetScaleDown, IdleRunnersGoOnlyOnceTheWindowEndsByTheClock) {
  idle_runner();
  EXPECT_EQ(s_->github_deletes, 0) << "removed within the scale-down window";
  t_.advance(cfg_.scale_down_window + 1s);  // the wake-up plan() scheduled
  EXPECT_EQ(s_->github_deletes, 1);
  EXPECT_EQ(s_->deletes, 1) << "GitHub first, then the Runner";
}

TEST_F(RunnerSetScaleDown, ARunnerGitHubCallsBusyIsKeptUntilTheRecheck) {
  s_->github_busy = true;
  idle_runner();
  t_.advance(cfg_.scale_down_window + 1s);
  ASSERT_EQ(s_->github_deletes, 1);
  EXPECT_EQ(s_->deletes, 0) << "a busy runner was deleted";
  poke();
  EXPECT_EQ(s_->github_deletes, 1) << "asked again before busy_recheck";
  t_.advance(cfg_.busy_recheck);
  poke();
  EXPECT_EQ(s_->github_deletes, 2) << "not asked again once busy_recheck passed";
}

TEST_F(RunnerSetScaleDown, AGitHubRemovalAnsweredWithAnErrorIsRetried) { removal_fails(answer::reply_error); }
TEST_F(RunnerSetScaleDown, AGitHubRemovalFailingInTheActorIsRetried) { removal_fails(answer::actor_error); }
TEST_F(RunnerSetScaleDown, AGitHubRemovalThatTimesOutIsRetried) { removal_fails(answer::silence); }

TEST_F(RunnerSetScaleDown, ARunnerDeleteAnsweredWithAnErrorIsRetried) { delete_fails(answer::reply_error); }
TEST_F(RunnerSetScaleDown, ARunnerDeleteFailingInTheActorIsRetried) { delete_fails(answer::actor_error); }
TEST_F(RunnerSetScaleDown, ARunnerDeleteThatTimesOutIsRetried) { delete_fails(answer::silence); }

TEST_F(RunnerSetExecute, AStatusWriteAnsweredWithAnErrorIsRetried) {
  status_write_fails(answer::reply_error);
}
TEST_F(RunnerSetExecute, AStatusWriteFailingInTheActorIsRetried) { status_write_fails(answer::actor_error); }
TEST_F(RunnerSetExecute, AStatusWriteThatTimesOutIsRetried) { status_write_fails(answer::silence); }

TEST_F(RunnerSetExecute, AStatusComputedWhileOneIsInFlightIsWrittenAfterIt) {
  s_->status = answer::silence;
  start();
  ASSERT_EQ(s_->status_patches, 1);
  demand(1);  // new counts while the first write is in flight
  EXPECT_EQ(s_->status_patches, 1);
  s_->status = answer::ok;
  caf::anon_send(kube_, release_atom::value);
  t_.run();
  EXPECT_EQ(s_->status_patches, 2);
}

}  // namespace
}  // namespace octorun::runnerset
