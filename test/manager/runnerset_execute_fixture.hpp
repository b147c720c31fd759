// The RunnerSet actor on CAF's deterministic coordinator, against fake
// Kubernetes and GitHub pools: the fakes, a stand-in Runner actor and the
// fixture the execute and budget tests share.
#pragma once

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

namespace octorun::runnerset::execute_fixture {

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
  // Whether RBAC lets the manager read the set's namespace (a refused read
  // of the credentials answers 403), the SelfSubjectAccessReviews asked,
  // and the names applied.
  bool reads_allowed = true;
  std::string review_answer;  // when set, the review's whole answer instead
  int reviews = 0, refused_reads = 0;
  std::vector<std::string> applied;
};

inline github::error rate_limit_error(const script& s) {
  return github::error{github::error_kind::rate_limited, 403, "API rate limit exceeded", s.retry_after, 0};
}

// Asks the fake apiserver to answer the oldest request it held.
using release_atom = caf::atom_constant<caf::atom("release")>;

inline kube::api_error server_error() { return kube::api_error{500, "InternalError", "boom", {}, false}; }

inline const char* set_json =
    R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet",)"
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

inline caf::behavior fake_kube(caf::event_based_actor* self, std::shared_ptr<script> s) {
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
        if (!s->reads_allowed) {
          ++s->refused_reads;
          return kube::object_result{unexpected{kube::api_error{403, "Forbidden", "forbidden", {}, false}}};
        }
        ++s->secret_reads;
        return *kube::parse_object(R"({"kind":"Secret","metadata":{"name":"gh","resourceVersion":"3"},)"
                                   R"("data":{"github_token":")" +
                                   base64_encode("ghp_x") + R"("}})");
      },
      [=](kube::create_request& r) -> caf::result<kube::object_result> {
        if (r.res.plural == "selfsubjectaccessreviews") {
          ++s->reviews;
          if (!s->review_answer.empty()) return *kube::parse_object(s->review_answer);
          return *kube::parse_object(
              std::string(R"({"kind":"SelfSubjectAccessReview","status":{"allowed":)") +
              (s->reads_allowed ? "true" : "false") + "}}");
        }
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
          s->applied.push_back(r.name);
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

inline caf::behavior fake_github(caf::event_based_actor* self, std::shared_ptr<script> s) {
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

inline caf::behavior runner_stub(caf::event_based_actor* self, caf::actor set,
                                 std::shared_ptr<runner_asks> out) {
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
inline kube::object online(const std::string& body, std::int64_t runner_id) {
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

}  // namespace octorun::runnerset::execute_fixture
