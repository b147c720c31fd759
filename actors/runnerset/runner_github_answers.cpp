// The RunnerSet's answers to its Runners' GitHub requests (runner_github_api, actors/protocols.hpp):
// each asked of the set's current credentials, only for a Runner the set
// made, and what each reply tells of the set's registrations and access.
#include <spdlog/spdlog.h>

#include <optional>
#include <string>
#include <utility>

#include "actors/runner/jit_conflict.hpp"
#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/set_registrations.hpp"
#include "actors/runnerset/set_state.hpp"
#include "adapters/github/github_workers.hpp"
#include "model/naming.hpp"

namespace octorun::runnerset {
namespace detail {

// What a reply tells of the set's runner registrations (JIT configurations)
// and of its access to GitHub: a REST JIT configuration is asked of the
// scope (its 404: the credentials cannot see it), a runner is one object.
void note_reply(self_ptr self, const github::jit_reply& r) {
  note_runner_registration(self, r ? nullptr : &r.error());
  note_github_answer(self, r ? nullptr : &r.error(), github_call_target::scope);
}
void note_reply(self_ptr self, const github::delete_reply& r) {
  note_github_answer(self, r ? nullptr : &r.error(), github_call_target::object);
}
void note_reply(self_ptr self, const github::maybe_reference_reply& r) {
  note_github_answer(self, r ? nullptr : &r.error(), github_call_target::object);
}

// Asks GitHub (the REST pool, or the scale-set pool under the Listener
// intake) on a Runner's behalf; `finish` may amend the reply it delivers.
template <class Reply, class Finish, class... Ts>
caf::result<Reply> forward_to_github_then(self_ptr self, Finish finish, Ts... xs) {
  auto& st = self->state;
  auto target = runner_github(self);
  if (!target)
    return Reply{unexpected{
        github::error{github::error_kind::not_ready,
                      0,
                      "the RunnerSet's GitHub credentials are not loaded: " + st.world.credentials_error,
                      {},
                      0}}};
  auto rp = self->make_response_promise<Reply>();
  self->request(target, st.cfg.request_timeout, std::move(xs)...)
      .then(
          [=](Reply& r) mutable {
            note_reply(self, r);
            if (!r) note_github_error(self, r.error());
            finish(r);
            rp.deliver(std::move(r));
          },
          [=](caf::error& e) mutable { rp.deliver(e); });
  return rp;
}

template <class Reply, class... Ts>
caf::result<Reply> forward_to_github(self_ptr self, Ts... xs) {
  return forward_to_github_then<Reply>(
      self, [](Reply&) {}, std::move(xs)...);
}

// The label the set registers every REST runner with ("" before the set is read).
std::string set_label(const set_state& st) {
  return st.world.set ? model::registering_set_label(st.world.set->metadata.uid) : std::string();
}

// The runner GitHub holds under a Runner's name, if it is the set's
// (judge_found_runner): under the Listener intake the service lists the
// runners of every scale set, and under the Webhook intake every REST runner
// of the scope. Any other is left alone, said here, and answered as none
// found: the Runner's deletion goes on, as when nothing holds the name.
caf::result<github::maybe_reference_reply> find_runner(self_ptr self, github::find_runner_atom a,
                                                       std::string name) {
  auto& st = self->state;
  const bool listener = listening(st);
  const auto ours = listener ? scale_set_id(st.world, variant_of(st.world, name)) : 0;
  auto not_ours = [=, label = set_label(st)](github::maybe_reference_reply& r) {
    if (!r || !*r) return;
    const auto& found = **r;
    const auto verdict = judge_found_runner(listener, ours, found.scale_set_id, found.labels, label);
    if (verdict == found_runner_verdict::the_sets) return;
    spdlog::info("runnerset {}: GitHub runner {} holds the name of Runner {}, but {}: left alone", id(self),
                 found.id, found.name, found_runner_left_because(verdict));
    r->reset();
  };
  return forward_to_github_then<github::maybe_reference_reply>(self, not_ours, a, std::move(name));
}

std::string runner_uid(self_ptr self, const std::string& runner) {
  const auto& runners = self->state.world.runners;
  auto it = runners.find(runner);
  return it == runners.end() ? std::string() : it->second.uid;
}

void note_registration(self_ptr self, const std::string& runner, const std::string& uid,
                       std::int64_t github_runner_id) {
  auto& runners = self->state.world.runners;
  if (auto it = runners.find(runner); it != runners.end())
    note_jit_registration(it->second, uid, github_runner_id);
}

void note_name_holder(self_ptr self, const std::string& runner, const std::string& uid, github::error& e,
                      bool registered_as_the_sets) {
  if (e.kind != github::error_kind::conflict || !e.holder) return;
  std::int64_t jit_id = 0, status_id = 0;
  const auto& runners = self->state.world.runners;
  if (auto it = runners.find(runner); it != runners.end() && !uid.empty() && it->second.uid == uid) {
    jit_id = it->second.jit_runner_id;
    status_id = it->second.status_runner_id;
  }
  e.holder->requesters_own =
      runner::holder_is_own(e.holder->runner_id, {jit_id, status_id}, registered_as_the_sets);
}

// The set's credentials register only Runners it made: on_runner gives
// no other an actor, and a request naming one is refused where they are used.
std::optional<github::error> not_its_runner(self_ptr self, const std::string& runner) {
  const auto& w = self->state.world;
  // Positive: a name the set has not judged its own (not seen yet, or seen
  // before the set was read) is refused too, not only a known foreign one.
  if (w.runners.count(runner) > 0 || w.being_created(runner)) return std::nullopt;
  return github::error{github::error_kind::rejected,
                       0,
                       "Runner " + runner + " is not one RunnerSet " + id(self) + " made (or has seen yet)",
                       {},
                       0};
}

// The RunnerSet's runner-facing API (runner_github_api), checked against its
// declaration at compile time.
protocols::runner_github_api::behavior_type runner_github_behavior(self_ptr self) {
  return {
      [=](github::jit_config_atom a, github::jit_request& req) -> caf::result<github::jit_reply> {
        if (auto wait = held_back(self, github_call::new_runner)) return github::jit_reply{unexpected{*wait}};
        if (auto refused = not_its_runner(self, req.name)) return github::jit_reply{unexpected{*refused}};
        if (auto refused = class_refuses(self)) return github::jit_reply{unexpected{*refused}};
        if (listening(self->state)) return scale_set_jit(self, req);
        // A REST runner has no scale set: the set's label says it registered it.
        const auto label = set_label(self->state);
        req.labels = labels_to_register(std::move(req.labels), label);
        auto noted = [=, runner = req.name, uid = runner_uid(self, req.name)](github::jit_reply& r) {
          if (r) return note_registration(self, runner, uid, r->registered.id);
          // A holder is the Runner's when an id recorded for it, or the set's label, shows it.
          const auto& holder = r.error().holder;
          note_name_holder(self, runner, uid, r.error(), holder && carries_label(holder->labels, label));
        };
        return forward_to_github_then<github::jit_reply>(self, noted, a, std::move(req));
      },
      [=](github::find_runner_atom a, std::string& name) -> caf::result<github::maybe_reference_reply> {
        using found = std::optional<github::runner_reference>;
        if (github_unreachable(self)) return github::maybe_reference_reply{found{}};
        if (auto wait = held_back(self, github_call::cleanup))
          return github::maybe_reference_reply{unexpected{*wait}};
        return find_runner(self, a, std::move(name));
      },
      [=](github::delete_runner_atom a, std::int64_t runner_id) -> caf::result<github::delete_reply> {
        if (github_unreachable(self)) return github::delete_reply{github::delete_outcome::not_found};
        if (auto wait = held_back(self, github_call::cleanup)) return github::delete_reply{unexpected{*wait}};
        return forward_to_github<github::delete_reply>(self, a, runner_id);
      },
      [=](protocols::defer_removal_atom, std::int64_t runner_id,
          const std::string& runner) -> caf::result<bool> { return defer_removal(self, runner_id, runner); },
  };
}

}  // namespace detail
}  // namespace octorun::runnerset
