// The Runner actor's waits on CAF's deterministic test scheduler: its clock
// is the actor's (virtual here) and its wall clock the one its config passes
// in, so the pod recreation backoff and the registration retry window are
// measured exactly, and the times it writes are fixed.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "actors/runner/runner_actor.hpp"
#include "adapters/github/github_workers.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/json.hpp"
#include "common/rfc3339.hpp"
#include "test/support/caf_test_system.hpp"

namespace octorun::runner {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t wall_time = 1'780'000'000;

// RFC 7386: `patch` merged into `target`.
void merge_patch(rapidjson::Value& target, const rapidjson::Value& patch, json::allocator& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    if (m.value.IsNull()) {
      target.RemoveMember(m.name);
      continue;
    }
    auto it = target.FindMember(m.name);
    if (it == target.MemberEnd()) {
      rapidjson::Value name(m.name, a);
      rapidjson::Value value(rapidjson::kObjectType);
      merge_patch(value, m.value, a);
      target.AddMember(name, value, a);
    } else {
      merge_patch(it->value, m.value, a);
    }
  }
}

// A fake apiserver holding the Runner "r" (its finalizer held) and the
// children the actor makes; it records what it is asked.
struct cluster {
  std::string runner =
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"r","namespace":"ns",)"
      R"("uid":"u","resourceVersion":"1","finalizers":["octorun.io/runner"]},)"
      R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh",)"
      R"("template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}},"status":{}})";
  int version = 1;
  std::string secret;                // JSON of the JIT Secret, once created
  std::vector<std::string> pods;     // JSON of each pod created, as answered
  std::vector<std::string> patches;  // bodies of the Runner's status patches
  int pod_deletes = 0;
  int pod_creates_unanswered = 0;                  // pod creates taken and never answered
  std::vector<kube::api_error> pod_create_errors;  // the answers to the first pod creates
  std::vector<caf::typed_response_promise<kube::object_result>> held;

  kube::object with_identity(const std::string& body, const std::string& uid) {
    rapidjson::Document d;
    d.Parse(body.c_str());
    auto& a = d.GetAllocator();
    auto& meta = d["metadata"];
    meta.RemoveMember("uid");
    meta.AddMember("uid", json::string_value(uid, a), a);
    meta.AddMember("resourceVersion", json::string_value(std::to_string(++version), a), a);
    return *kube::parse_object(json::write(d));
  }
};

kube::api_error not_found() { return kube::api_error{404, "NotFound", "not found", {}, false}; }

// Tells the fake apiserver to answer, now, the first create it held: "not
// found" (a promise is delivered from its own actor).
using answer_late_atom = caf::atom_constant<caf::atom("late")>;

caf::behavior fake_kube(caf::event_based_actor* self, std::shared_ptr<cluster> c) {
  return {
      [=](kube::get_request& r) -> kube::object_result {
        if (r.res.plural == "secrets") {
          if (c->secret.empty()) return unexpected{not_found()};
          return *kube::parse_object(c->secret);
        }
        return *kube::parse_object(c->runner);
      },
      [=](kube::create_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural == "secrets") {
          auto o = c->with_identity(r.body, "secret-uid");
          c->secret = o.json();
          return kube::object_result{o};
        }
        if (c->pods.size() < c->pod_create_errors.size()) {
          c->pods.push_back(r.body);
          return kube::object_result{unexpected{c->pod_create_errors[c->pods.size() - 1]}};
        }
        if (c->pod_creates_unanswered > 0) {
          --c->pod_creates_unanswered;
          c->pods.push_back(r.body);
          c->held.push_back(self->make_response_promise<kube::object_result>());
          return c->held.back();
        }
        auto o = c->with_identity(r.body, "pod-" + std::to_string(c->pods.size() + 1));
        c->pods.push_back(o.json());
        return kube::object_result{o};
      },
      [=](kube::patch_request& r) -> kube::object_result {
        // The finalizer's release (a JSON patch) changes nothing here: the
        // actor remembers it released it.
        if (r.type == kube::patch_type::json) return *kube::parse_object(c->runner);
        c->patches.push_back(r.body);
        rapidjson::Document d, patch;
        d.Parse(c->runner.c_str());
        patch.Parse(r.body.c_str());
        merge_patch(d, patch, d.GetAllocator());
        d["metadata"]["resourceVersion"].SetString(std::to_string(++c->version).c_str(), d.GetAllocator());
        c->runner = json::write(d);
        return *kube::parse_object(c->runner);
      },
      [=](answer_late_atom) { c->held.front().deliver(kube::object_result{unexpected{not_found()}}); },
      [=](kube::delete_request&) -> kube::object_result {
        ++c->pod_deletes;
        return unexpected{not_found()};
      },
  };
}

// GitHub as the RunnerSet answers a Runner: `refusals` JIT requests refused
// (bad credentials), then registrations.
struct github_script {
  int jit_requests = 0;
  int refusals = 0;
  int delete_requests = 0;
  int busy_answers = 0;  // deletes answered "busy" (a job runs on it) before one succeeds
};

caf::behavior fake_github(caf::event_based_actor*, std::shared_ptr<github_script> g) {
  return {
      [=](github::jit_config_atom, github::jit_request& req) -> github::jit_reply {
        if (++g->jit_requests <= g->refusals)
          return unexpected{github::error{github::error_kind::unauthorized, 401, "Bad credentials"}};
        github::jit_config jit;
        jit.registered.id = 7;
        jit.registered.name = req.name;
        jit.encoded_jit_config = "e30=";
        return jit;
      },
      [=](github::delete_runner_atom, std::int64_t) -> github::delete_reply {
        return ++g->delete_requests <= g->busy_answers ? github::delete_outcome::busy
                                                       : github::delete_outcome::deleted;
      },
  };
}

class RunnerWindows : public ::testing::Test {
 protected:
  void spawn() {
    kube_ = t_.sys.spawn(fake_kube, c_);
    github_ = t_.sys.spawn(fake_github, g_);
    runner_actor_config cfg;
    cfg.ns = "ns";
    cfg.name = "r";
    cfg.kube = kube_;
    cfg.github = caf::actor_cast<protocols::runner_github_api>(github_);
    cfg.wall_clock = [] { return wall_time; };
    cfg.resync = 60s;
    cfg.lost_after = 300s;
    runner_ = caf::actor_cast<caf::actor>(spawn_runner(t_.sys, cfg));
    caf::anon_send(runner_, made_here_atom::value);
    watched::runner_event ev;
    ev.type = kube::event_type::added;
    ev.obj = watched::read_runner(*kube::parse_object(c_->runner));
    caf::anon_send(runner_, std::move(ev));
    t_.run();
  }
  // The pod last created, as its watch shows it once it failed.
  void fail_the_pod() {
    rapidjson::Document d;
    d.Parse(c_->pods.back().c_str());
    d.AddMember("status", rapidjson::Value(rapidjson::kObjectType), d.GetAllocator());
    d["status"].AddMember("phase", "Failed", d.GetAllocator());
    watched::pod_event ev;
    ev.type = kube::event_type::modified;
    ev.obj = watched::read_pod(*kube::parse_object(json::write(d)));
    caf::anon_send(runner_, std::move(ev));
    t_.run();
  }
  ~RunnerWindows() override {
    for (const auto& a : {runner_, kube_, github_}) caf::anon_send_exit(a, caf::exit_reason::kill);
    t_.run();
  }
  test::caf_test_system t_;
  std::shared_ptr<cluster> c_ = std::make_shared<cluster>();
  std::shared_ptr<github_script> g_ = std::make_shared<github_script>();
  caf::actor kube_, github_, runner_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A refused registration is asked again after the actor's backoff (retry
// initial 500 ms, doubling per failure in a row): 1 s after the first
// refusal. The Registered condition then says why, stamped with the wall
// clock the config passes in; that write succeeding starts the count again,
// so the second refusal waits 1 s too, the third 2 s.
TEST_F(RunnerWindows, ARefusedRegistrationIsAskedAgainAfterItsBackoff) {
  g_->refusals = 3;
  spawn();
  EXPECT_EQ(g_->jit_requests, 1);
  t_.advance(999ms);
  EXPECT_EQ(g_->jit_requests, 1);
  t_.advance(1ms);
  EXPECT_EQ(g_->jit_requests, 2);
  ASSERT_EQ(c_->patches.size(), 1u);
  EXPECT_TRUE(contains(c_->patches[0], R"("lastTransitionTime":")" + format_rfc3339(wall_time) + "\""))
      << c_->patches[0];
  EXPECT_TRUE(contains(c_->patches[0], "Bad credentials")) << c_->patches[0];
  t_.advance(999ms);
  EXPECT_EQ(g_->jit_requests, 2);
  t_.advance(1ms);
  EXPECT_EQ(g_->jit_requests, 3);
  t_.advance(1999ms);
  EXPECT_EQ(g_->jit_requests, 3);
  t_.advance(1ms);
  EXPECT_EQ(g_->jit_requests, 4);
  EXPECT_EQ(c_->patches.size(), 1u) << "the refusal is said once";
  EXPECT_EQ(c_->pods.size(), 1u) << "registered at the fourth request, its pod is made";
}

// A failed pod is recorded (at the config's wall clock), deleted, and made
// again after the recreation backoff: 5 s after the first failure.
TEST_F(RunnerWindows, AFailedPodIsMadeAgainAfterTheRecreationBackoff) {
  spawn();
  ASSERT_EQ(c_->pods.size(), 1u);
  fail_the_pod();
  ASSERT_FALSE(c_->patches.empty());
  EXPECT_TRUE(contains(c_->patches.back(), R"("time":")" + format_rfc3339(wall_time) + "\""))
      << c_->patches.back();
  EXPECT_TRUE(contains(c_->patches.back(), R"("podUID":"pod-1")")) << c_->patches.back();
  EXPECT_EQ(c_->pod_deletes, 1);
  t_.advance(4999ms);
  EXPECT_EQ(c_->pods.size(), 1u);
  t_.advance(1ms);
  EXPECT_EQ(c_->pods.size(), 2u);
}

// A write the apiserver refuses is asked again after the actor's backoff
// (retry initial 500 ms, doubling per failure in a row), or after the
// Retry-After it was given when that is longer: 1 s after a 500, then the
// 5 s a 429 asked for (its backoff, 2 s, is shorter).
TEST_F(RunnerWindows, ARefusedWriteIsAskedAgainAfterItsBackoffOrRetryAfter) {
  c_->pod_create_errors = {
      kube::api_error{500, "InternalError", "try again", {}, false},
      kube::api_error{429, "TooManyRequests", "slow down", std::chrono::seconds(5), false}};
  spawn();
  EXPECT_EQ(c_->pods.size(), 1u);
  t_.advance(999ms);
  EXPECT_EQ(c_->pods.size(), 1u);
  t_.advance(1ms);
  EXPECT_EQ(c_->pods.size(), 2u);
  t_.advance(4999ms);
  EXPECT_EQ(c_->pods.size(), 2u);
  t_.advance(1ms);
  EXPECT_EQ(c_->pods.size(), 3u);
  t_.advance(60s);
  EXPECT_EQ(c_->pods.size(), 3u) << "made, the pod is not asked for again";
}

// A Runner being deleted whose GitHub runner is busy keeps it, and asks
// GitHub again after busy_recheck (30 s); removed, its finalizer goes.
TEST_F(RunnerWindows, ABusyRunnerIsAskedAgainAfterTheBusyRecheck) {
  auto& runner = c_->runner;
  runner.replace(runner.find(R"("finalizers")"), 0, R"("deletionTimestamp":"2026-01-01T00:00:00Z",)");
  runner.replace(runner.rfind("{}"), 2, R"({"runnerId":7})");
  g_->busy_answers = 1;
  spawn();
  EXPECT_EQ(g_->delete_requests, 1);
  t_.advance(29'999ms);
  EXPECT_EQ(g_->delete_requests, 1);
  t_.advance(1ms);
  EXPECT_EQ(g_->delete_requests, 2);
  t_.advance(60s);
  EXPECT_EQ(g_->delete_requests, 2) << "removed from GitHub, it is not asked again";
  EXPECT_TRUE(c_->pods.empty());
}

// A request without an answer is taken as lost at the first resync past
// lost_after, and the decision runs again: the pod is created again. The
// lost request's answer, when it comes late, is not heeded (heeded, this
// one would make the actor forget its pod and make a third).
TEST_F(RunnerWindows, ARequestWithoutAnAnswerIsTakenAsLostAndDecidedAgain) {
  c_->pod_creates_unanswered = 1;
  spawn();
  ASSERT_EQ(c_->pods.size(), 1u);
  for (int resync = 1; resync <= 4; ++resync) t_.advance(60s);  // the resyncs at 60 s ... 240 s
  t_.advance(59s);
  EXPECT_EQ(c_->pods.size(), 1u) << "asked again before the request was lost";
  t_.advance(1s);
  ASSERT_EQ(c_->pods.size(), 2u);
  caf::anon_send(kube_, answer_late_atom::value);
  t_.run();
  t_.advance(60s);
  EXPECT_EQ(c_->pods.size(), 2u) << "the lost request's late answer was heeded";
}

}  // namespace
}  // namespace octorun::runner
