// The RunnerSet actor on CAF's deterministic coordinator, against fake
// Kubernetes and GitHub pools: what it records in flight is released on
// every path (a reply with an error, a caf::error, a timeout), and the busy
// re-check and the scale-down window follow the actor's clock.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/kinds.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"
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
  // GitHub answers with a spent rate limit (retry after `retry_after`) while set.
  bool rate_limited = false;
  std::chrono::seconds retry_after{60};
  std::vector<std::string> created;   // bodies of the Runner creates
  std::vector<std::string> statuses;  // bodies of the status patches
  std::vector<std::int64_t> github_deleted;
  int deletes = 0, status_patches = 0, finalizer_patches = 0, secret_reads = 0, github_deletes = 0, jits = 0;
  int applies = 0;  // the set's ServiceAccount and PodDisruptionBudget (server-side apply)
  // How a create answered with an error fails (reply_error), and which
  // Runners the apiserver holds whatever it answered (a GET finds them).
  kube::api_error create_error{500, "InternalError", "boom", {}, false};
  std::set<std::string> stored;
  int runner_gets = 0;
  std::vector<caf::response_promise> held;  // requests never answered (they time out)
  // JIT Secrets the apiserver holds, by name (others: 404), and how often one was read.
  std::map<std::string, std::string> jit_secrets;
  int jit_secret_reads = 0;
};

github::error rate_limit_error(const script& s) {
  return github::error{github::error_kind::rate_limited, 403, "API rate limit exceeded", s.retry_after, 0};
}

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
        if (r.res.plural == "runners") {
          ++s->runner_gets;
          for (const auto& body : s->created)
            if (s->stored.count(r.name) > 0 && body.find("\"" + r.name + "\"") != std::string::npos)
              return *kube::parse_object(body);
          return kube::object_result{unexpected{kube::api_error{404, "NotFound", "not found", {}, false}}};
        }
        if (r.res.plural != "secrets") return kube::object_result{unexpected{server_error()}};
        if (r.name.ends_with("-jit")) {
          ++s->jit_secret_reads;
          auto it = s->jit_secrets.find(r.name);
          if (it == s->jit_secrets.end())
            return kube::object_result{unexpected{kube::api_error{404, "NotFound", "not found", {}, false}}};
          return *kube::parse_object(it->second);
        }
        ++s->secret_reads;
        return *kube::parse_object(R"({"kind":"Secret","metadata":{"name":"gh","resourceVersion":"3"},)"
                                   R"("data":{"github_token":")" +
                                   base64_encode("ghp_x") + R"("}})");
      },
      [=](kube::create_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural != "runners") return kube::object_result{unexpected{server_error()}};
        s->created.push_back(r.body);
        return respond<kube::object_result>(self, s, s->create, *kube::parse_object(r.body),
                                            unexpected{s->create_error});
      },
      [=](kube::delete_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural != "runners") return kube::object_result{unexpected{server_error()}};
        ++s->deletes;
        return respond<kube::object_result>(self, s, s->remove, kube::object{}, unexpected{server_error()});
      },
      [=](kube::patch_request& r) -> caf::result<kube::object_result> {
        if (r.type == kube::patch_type::apply) {
          ++s->applies;
          return *kube::parse_object(r.body);
        }
        if (r.res.plural != "runnersets") return kube::object_result{unexpected{server_error()}};
        if (r.subresource != "status") {
          ++s->finalizer_patches;
          return *kube::parse_object(set_json);
        }
        ++s->status_patches;
        s->statuses.push_back(r.body);
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
      [=](github::delete_runner_atom, std::int64_t id) -> caf::result<github::delete_reply> {
        ++s->github_deletes;
        if (s->rate_limited) return github::delete_reply{unexpected{rate_limit_error(*s)}};
        if (!s->github_busy) s->github_deleted.push_back(id);
        github::delete_reply ok{s->github_busy ? github::delete_outcome::busy
                                               : github::delete_outcome::deleted};
        github::delete_reply failed{
            unexpected{github::error{github::error_kind::server_error, 502, "bad", {}, 0}}};
        return respond<github::delete_reply>(self, s, s->github_delete, ok, failed);
      },
      [=](github::jit_config_atom, github::jit_request& req) -> github::jit_reply {
        ++s->jits;
        if (s->rate_limited) return unexpected{rate_limit_error(*s)};
        github::jit_config c;
        c.registered.id = 1000 + s->jits;
        c.registered.name = req.name;
        c.encoded_jit_config = "e30";
        return c;
      },
  };
}

// Plays a Runner actor: asks the set (its runner_github_api) and keeps the answers.
struct runner_asks {
  std::vector<github::jit_reply> jits;
  std::vector<github::delete_reply> removals;
  std::vector<std::int64_t> deferred;  // ids the set took over
  std::string name = "linux-abcde";    // the Runner the JIT requests name
};
using ask_jit_atom = caf::atom_constant<caf::atom("askjit")>;
using ask_remove_atom = caf::atom_constant<caf::atom("askrm")>;
using ask_defer_atom = caf::atom_constant<caf::atom("askdefer")>;

caf::behavior runner_stub(caf::event_based_actor* self, caf::actor set, std::shared_ptr<runner_asks> out) {
  return {
      [=](ask_jit_atom) {
        github::jit_request req;
        req.name = out->name;
        self->request(set, 5s, github::jit_config_atom::value, req)
            .then([=](github::jit_reply& r) { out->jits.push_back(r); }, [](caf::error&) {});
      },
      [=](ask_remove_atom, std::int64_t id) {
        self->request(set, 5s, github::delete_runner_atom::value, id)
            .then([=](github::delete_reply& r) { out->removals.push_back(r); }, [](caf::error&) {});
      },
      [=](ask_defer_atom, std::int64_t id) {
        self->request(set, std::chrono::seconds(3600), protocols::defer_removal_atom::value, id,
                      std::string("linux-abcde"))
            .then([=](bool) { out->deferred.push_back(id); }, [](caf::error&) {});
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

  // A create that fails `how` had no clear answer: the Runner may exist, so
  // its placeholder holds until a GET, once the watch had its chance, finds
  // none; then the next plan creates again.
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
    EXPECT_EQ(s_->created.size(), 1u) << "created again while the first may exist";
    EXPECT_EQ(s_->runner_gets, 0) << "the watch gets its chance first";
    t_.advance(confirm_create_after);
    EXPECT_EQ(s_->runner_gets, 1);
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

// A create refused outright (422: it was not stored) frees its place at once.
TEST_F(RunnerSetExecute, ACreateRefusedOutrightIsRetriedAtOnce) {
  s_->create = answer::reply_error;
  s_->create_error = kube::api_error{422, "Invalid", "spec.template: Required value", {}, false};
  start();
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  poke();
  EXPECT_EQ(s_->created.size(), 2u);
  EXPECT_EQ(s_->runner_gets, 0);
}

// Creates go out in slow-start batches (create_pacing.hpp): after a refused
// create, one at a time, however many runners the set lacks; once creates
// succeed again each answer widens the window, and the rest go out.
TEST_F(RunnerSetExecute, AfterARefusedCreateCreatesGoOutOneAtATimeThenDoubleAgain) {
  s_->create = answer::reply_error;
  s_->create_error = kube::api_error{403, "Forbidden", "exceeded quota", {}, false};
  start();
  demand(1);
  demand(2);
  demand(3);
  EXPECT_EQ(s_->created.size(), 3u) << "one create per plan after a failure, not one per runner missing";
  s_->create = answer::ok;
  poke();
  EXPECT_EQ(s_->created.size(), 6u) << "the probe succeeded: room for the two runners still missing";
  poke();
  EXPECT_EQ(s_->created.size(), 6u) << "the creates out hold their places";
}

// Regression (bench/chaos, max-runners overshoot under watch-cut): a create
// whose answer was lost though the apiserver stored it is not made a second
// time; the GET finds it and the watch then shows it.
TEST_F(RunnerSetExecute, ACreateStoredWhoseAnswerWasLostIsNotMadeTwice) {
  s_->create = answer::silence;
  start();
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  const auto name = std::string(kube::parse_object(s_->created[0])->name);
  s_->stored.insert(name);
  t_.advance(cfg_.request_timeout + 1s);
  t_.advance(confirm_create_after);
  EXPECT_EQ(s_->runner_gets, 1);
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "found by the GET: it holds its place";
  watched(online(s_->created[0], 0));
  t_.advance(confirm_create_after);
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "the watched Runner is counted once";
  EXPECT_EQ(s_->runner_gets, 1) << "nothing left to confirm once watched";
}

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

// Secrets are not watched: a runner whose status names no GitHub runner
// yet, and whose JIT configuration did not pass through this set's actor (an
// earlier leader's), is removed by the id its JIT Secret holds, GitHub first
// (it may have taken a job), never deleted as if registered nowhere.
TEST_F(RunnerSetScaleDown, ARunnerWithoutAPublishedIdIsRemovedByItsJitSecretsId) {
  start();
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  auto runner = online(s_->created[0], 0);
  const std::string jit = std::string(runner.name) + "-jit";
  s_->jit_secrets[jit] = R"({"kind":"Secret","metadata":{"name":")" + jit + R"("},"data":{"jitConfig":")" +
                         base64_encode("e30") + R"(","runnerId":")" + base64_encode("88") +
                         R"(","runnerName":")" + base64_encode(std::string(runner.name)) + R"("}})";
  // The leader goes before it saw its Runner; the next one's set sees it.
  caf::anon_send_exit(set_, caf::exit_reason::kill);
  t_.run();
  start();
  s_->github_busy = true;
  watched(runner);
  t_.advance(cfg_.scale_down_window + 1s);
  ASSERT_GE(s_->github_deletes, 1) << "a registered runner deleted without asking GitHub";
  EXPECT_EQ(s_->deletes, 0) << "a busy runner was deleted";
  EXPECT_EQ(s_->jits, 0) << "registered again";
  s_->github_busy = false;
  t_.advance(cfg_.busy_recheck);
  poke();
  EXPECT_EQ(s_->github_deleted, (std::vector<std::int64_t>{88}));
  EXPECT_EQ(s_->deletes, 1);
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

// With a hold (the manager's), the changes made after an accepted write go
// out together once the hold ends, in one write of the latest status.
TEST_F(RunnerSetExecute, StatusChangesWithinTheHoldAreWrittenOnceWhenItEnds) {
  cfg_.status_hold = 2s;
  start();
  ASSERT_EQ(s_->status_patches, 1) << "the first status waits for nothing";
  demand(1);
  demand(2);
  poke();
  EXPECT_EQ(s_->status_patches, 1) << "written within the hold";
  t_.advance(1s);
  EXPECT_EQ(s_->status_patches, 1) << "written within the hold";
  t_.advance(1s);
  ASSERT_EQ(s_->status_patches, 2) << "not written when the hold ended";
  EXPECT_NE(s_->statuses.back().find(R"("desiredReplicas":2)"), std::string::npos) << s_->statuses.back();
  t_.advance(10s);
  EXPECT_EQ(s_->status_patches, 2) << "written again with nothing changed";
}

// ---- GitHub's budget -------------------------------------------------------------------

// A metric of the set's in the event registry (-1: none).
double set_metric(const std::string& family) {
  for (const auto& f : metrics::event_registry().Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      bool ours = false;
      for (const auto& l : m.label) ours |= l.name == "runnerset" && l.value == "linux";
      if (ours) return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return -1;
}

bool rate_limited(const github::jit_reply& r) {
  return !r && r.error().kind == github::error_kind::rate_limited;
}

class RunnerSetBudget : public RunnerSetExecute {
 protected:
  RunnerSetBudget() {
    start();
    // A Runner the set is making (its create not yet watched): the set
    // serves JIT requests only for Runners it knows as its own.
    demand(1);
    if (!s_->created.empty()) asks_->name = std::string(kube::parse_object(s_->created[0])->name);
    runner_ = t_.sys.spawn(runner_stub, set_, asks_);
  }
  ~RunnerSetBudget() override { caf::anon_send_exit(runner_, caf::exit_reason::kill); }
  template <class... Ts>
  void ask(Ts... xs) {
    caf::anon_send(runner_, xs...);
    t_.run();
  }
  std::shared_ptr<runner_asks> asks_ = std::make_shared<runner_asks>();
  caf::actor runner_;
};

// One rate-limit answer pauses every GitHub call of the set until its retry
// time: a thousand waiting runners make no request; the pause is logged and
// counted once, and the calls go again once it ends.
TEST_F(RunnerSetBudget, ARateLimitPausesEveryGitHubCallUntilItEnds) {
  s_->rate_limited = true;
  ask(ask_jit_atom::value);
  ASSERT_EQ(asks_->jits.size(), 1u);
  EXPECT_TRUE(rate_limited(asks_->jits[0]));
  EXPECT_EQ(s_->jits, 1);
  EXPECT_EQ(set_metric("octorun_github_rate_limited"), 1);
  EXPECT_EQ(set_metric("octorun_github_rate_limit_pauses_total"), 1);
  for (int i = 0; i < 20; ++i) ask(ask_jit_atom::value);
  ask(ask_remove_atom::value, std::int64_t{5});
  EXPECT_EQ(s_->jits, 1) << "asked GitHub during the pause";
  EXPECT_EQ(s_->github_deletes, 0) << "asked GitHub during the pause";
  ASSERT_EQ(asks_->jits.size(), 21u);
  EXPECT_TRUE(rate_limited(asks_->jits.back()));
  EXPECT_GT(asks_->jits.back().error().retry_after.count(), 0) << "the runner is told how long to wait";
  EXPECT_LE(asks_->jits.back().error().retry_after, s_->retry_after);
  s_->rate_limited = false;
  t_.advance(s_->retry_after - 1s);
  ask(ask_jit_atom::value);
  EXPECT_EQ(s_->jits, 1) << "the pause ended early";
  t_.advance(1s);  // the set's wake-up at the end of the pause
  EXPECT_EQ(set_metric("octorun_github_rate_limited"), 0);
  ask(ask_jit_atom::value);
  EXPECT_EQ(s_->jits, 2);
  EXPECT_FALSE(rate_limited(asks_->jits.back()));
  EXPECT_EQ(set_metric("octorun_github_rate_limit_pauses_total"), 1) << "one pause, counted once";
}

// A runner that can run no job hands its GitHub removal to the set: the set
// answers once its status records it (so a restart cannot lose it), and
// removes it from GitHub after the pause.
TEST_F(RunnerSetBudget, AHandedOverRemovalIsRecordedBeforeTheRunnerMayGoAndDoneAfterThePause) {
  s_->rate_limited = true;
  ask(ask_remove_atom::value, std::int64_t{42});
  ASSERT_EQ(asks_->removals.size(), 1u);
  EXPECT_FALSE(asks_->removals[0]);
  s_->status = answer::silence;
  ask(ask_defer_atom::value, std::int64_t{42});
  EXPECT_TRUE(asks_->deferred.empty()) << "answered before the status recorded it";
  ASSERT_FALSE(s_->statuses.empty());
  EXPECT_NE(s_->statuses.back().find(R"("pendingRemovals":[{"runnerId":42,"name":"linux-abcde"}])"),
            std::string::npos)
      << s_->statuses.back();
  s_->status = answer::ok;
  caf::anon_send(kube_, release_atom::value);
  t_.run();
  EXPECT_EQ(asks_->deferred, (std::vector<std::int64_t>{42}));
  ask(ask_defer_atom::value, std::int64_t{42});
  EXPECT_EQ(asks_->deferred.size(), 2u) << "recorded already: answered at once";
  EXPECT_EQ(set_metric("octorun_github_deferred_removals"), 1);
  // The pause ends: the set removes it from GitHub and the status drops it.
  s_->rate_limited = false;
  EXPECT_TRUE(s_->github_deleted.empty());
  t_.advance(s_->retry_after);
  EXPECT_EQ(s_->github_deleted, (std::vector<std::int64_t>{42}));
  EXPECT_NE(s_->statuses.back().find(R"("pendingRemovals":null)"), std::string::npos) << s_->statuses.back();
  EXPECT_EQ(set_metric("octorun_github_deferred_removals"), 0);
}

// After a restart (or on the next leader) the removals the status lists are
// still done.
TEST_F(RunnerSetExecute, RemovalsTheStatusListsAreDoneAfterARestart) {
  rapidjson::Document d;
  d.Parse(set_json);
  auto& a = d.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  rapidjson::Value removals(rapidjson::kArrayType);
  rapidjson::Value entry(rapidjson::kObjectType);
  entry.AddMember("runnerId", 77, a);
  entry.AddMember("name", "linux-old", a);
  removals.PushBack(entry, a);
  status.AddMember("pendingRemovals", removals, a);
  d.AddMember("status", status, a);
  set_ = caf::actor_cast<caf::actor>(spawn_runnerset(t_.sys, cfg_));
  caf::anon_send(set_,
                 watched::runnerset_event{"rs", kube::event_type::modified,
                                          watched::read_runnerset(*kube::parse_object(json::write(d)))});
  t_.run();
  EXPECT_EQ(s_->github_deleted, (std::vector<std::int64_t>{77}));
  ASSERT_FALSE(s_->statuses.empty());
  EXPECT_NE(s_->statuses.back().find(R"("pendingRemovals":null)"), std::string::npos) << s_->statuses.back();
}

}  // namespace
}  // namespace octorun::runnerset
