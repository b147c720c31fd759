// The Runner actor's GitHub side: its JIT configuration (and a name GitHub
// says is taken), the JIT Secret that stores it, and the removal of its GitHub
// runner (or its hand-over to the RunnerSet while GitHub's budget is spent).
// next_step() decides each; runner_actor.cpp's execute() calls these.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "actors/kinds.hpp"
#include "actors/runner/children.hpp"
#include "actors/runner/jit_conflict.hpp"
#include "actors/runner/runner_state.hpp"
#include "adapters/github/github_workers.hpp"
#include "adapters/kube/protocol.hpp"
#include "model/naming.hpp"

namespace octorun::runner::detail {

// A spent GitHub budget is logged once per pause, by the RunnerSet; each
// runner waiting on it says so only at debug level.
spdlog::level::level_enum github_failure_level(const github::error& e) {
  // The set not ready yet (a new leader loading its credentials) is no failure either.
  return e.kind == github::error_kind::rate_limited || e.kind == github::error_kind::not_ready
             ? spdlog::level::debug
             : spdlog::level::warn;
}

void jit_failed_backoff(self_ptr self, const std::string& why, std::chrono::seconds retry_after,
                        spdlog::level::level_enum level = spdlog::level::warn) {
  auto& st = self->state;
  land(self, flight::step);
  st.jit_conflict_retried = false;
  ++st.consecutive_errors;
  auto wait = std::max<std::chrono::milliseconds>(backoff(self), retry_after);
  if (!st.memory.registration_failure.empty()) st.memory.registration_retry_at = now(self) + wait;
  spdlog::log(level, "runner {}: GitHub JIT configuration failed: {}; retrying in {} ms", id(self), why,
              wait.count());
  wake_at(self, now(self) + wait);
}

void decide_name_conflict(self_ptr self, const github::error& e);

// GitHub holds the Runner's name for a runner nothing shows is this
// Runner's: it is left alone, and the Runner fails (next_step: NameTaken)
// so its set makes another under a new name. A registration of ours whose
// answer was lost would be that very holder (GitHub refuses a second
// registration of one name), so nothing is left to look up by name: a
// lookup at the Runner's deletion would find the same holder.
void give_up_the_name(self_ptr self, std::int64_t holder) {
  auto& st = self->state;
  land(self, flight::step);
  st.jit_conflict_retried = false;
  st.memory.jit_answer_lost = false;
  st.memory.earlier_registration_possible = false;
  st.memory.name_taken = "GitHub runner " + std::to_string(holder) + " holds the name " + st.cfg.name +
                         " and nothing shows it is this Runner's registration (a runner of the same name "
                         "in another namespace or set, or one registered outside this RunnerSet): it is "
                         "left alone, and the RunnerSet makes a new runner under another name";
  spdlog::warn("runner {}: {}", id(self), st.memory.name_taken);
  mark_dirty(self);
}

// Whether a JIT Secret read from the server is this Runner's (owned_by; one
// that cannot be read is judged by next_step as before).
bool own_secret(self_ptr self, const kube::object& o) {
  auto secret = watched::read_secret(o);
  return !secret || model::owned_by(secret->metadata, self->state.runner->metadata.uid);
}

// A JIT request failed. GitHub refusing the name may mean this Runner is
// registered already, its Secret written after this actor read it: the
// server is asked for the Secret first, and one found is used as it is
// (a second registration would strand the first).
void on_jit_failed(self_ptr self, const github::error& e) {
  auto& st = self->state;
  // GitHub's lasting refusal: the Runner says so (next_step); anything else
  // is retried unsaid (lasting_registration_refusal).
  if (lasting_registration_refusal(e)) st.memory.registration_failure = e.describe();
  if (e.kind != github::error_kind::conflict)
    return jit_failed_backoff(self, e.describe(), e.retry_after, github_failure_level(e));
  // The same step goes on: its next request is matched with its ticket.
  const auto ticket = st.in_flight.ticket_of(flight::step);
  ask_kube(self, kube::get_request{kinds::secrets(), st.cfg.ns, model::jit_secret_name(st.cfg.name), ""})
      .then(
          [=](kube::object_result& existing) {
            if (!awaited(self, flight::step, ticket)) return;
            auto& s = self->state;
            // An earlier Runner's Secret of this name (owned_by) holds no registration of ours.
            if (existing && !own_secret(self, *existing)) return decide_name_conflict(self, e);
            if (existing) {
              land(self, flight::step);
              s.jit_conflict_retried = false;
              s.secret = watched::read_secret(*existing);
              return mark_dirty(self);
            }
            if (!existing.error().not_found())
              return on_api_error(self, "reading the JIT Secret", existing.error());
            decide_name_conflict(self, e);
          },
          [=](caf::error& err) {
            if (awaited(self, flight::step, ticket)) on_actor_error(self, "reading the JIT Secret", err);
          });
}

// GitHub refused the name and no Secret holds a registration: decided by
// on_jit_name_conflict (jit_conflict.hpp). The holder is this Runner's own
// only where something shows it (holder_is_own): the set's word, or the id
// its status or Secret records.
void decide_name_conflict(self_ptr self, const github::error& e) {
  auto& st = self->state;
  const auto& recorded = st.runner->status;
  const std::int64_t secret_id =
      st.secret && st.secret->registration ? st.secret->registration->runner_id : 0;
  const bool own = e.holder && (e.holder->requesters_own ||
                                holder_is_own(e.holder->runner_id, {recorded.runner_id, secret_id}, false));
  const jit_conflict_view conflict{e.holder.has_value(), e.holder && e.holder->busy, own,
                                   st.jit_conflict_retried};
  switch (on_jit_name_conflict(conflict)) {
    case jit_conflict_action::back_off:
      return jit_failed_backoff(self, e.describe(), e.retry_after);
    case jit_conflict_action::retry_now:
      st.jit_conflict_retried = true;
      land(self, flight::step);
      return mark_dirty(self);
    case jit_conflict_action::give_up_the_name:
      return give_up_the_name(self, e.holder->runner_id);
    case jit_conflict_action::delete_holder_and_retry:
      break;
  }
  st.jit_conflict_retried = true;
  const auto holder = e.holder->runner_id;
  spdlog::info("runner {}: GitHub runner {} holds the name; removing it to register again", id(self), holder);
  const auto ticket = st.in_flight.ticket_of(flight::step);
  self->request(st.cfg.github, st.cfg.request_timeout, github::delete_runner_atom::value, holder)
      .then(
          [=](github::delete_reply& r) {
            if (!awaited(self, flight::step, ticket)) return;
            if (!r) return jit_failed_backoff(self, r.error().describe(), r.error().retry_after);
            if (*r == github::delete_outcome::busy)
              return jit_failed_backoff(self, "runner " + self->state.cfg.name + " exists and is busy", {});
            land(self, flight::step);
            mark_dirty(self);
          },
          [=](caf::error& err) {
            if (awaited(self, flight::step, ticket))
              on_actor_error(self, "freeing the runner name on GitHub", err);
          });
}

namespace {

// GitHub answered a request with a refusal: it did not do it. A 5xx, no
// answer, or a 2xx we cannot read leave open whether it did.
bool refused(const github::error& e) {
  switch (e.kind) {
    case github::error_kind::busy:
    case github::error_kind::conflict:
    case github::error_kind::unauthorized:
    case github::error_kind::rate_limited:
    case github::error_kind::not_found:
    case github::error_kind::rejected:
    case github::error_kind::not_ready:  // never sent
      return true;
    case github::error_kind::server_error:
    case github::error_kind::transport:
    case github::error_kind::bad_response:
      return false;
  }
  return false;
}

}  // namespace

// Asks GitHub for a JIT configuration. The actor read its JIT Secret before
// its first decision (read_own_secret), so one an earlier incarnation stored
// is known; one written after that read (by an actor before this one) makes
// GitHub refuse the name, and that path reads the Secret from the server
// before anything else (on_jit_failed).
void provision(self_ptr self) {
  auto& st = self->state;
  const auto ticket = send_off(self, flight::step, "JIT configuration");
  // Remembered before anything else: a failed Secret create retries with
  // it, and a deletion removes it from GitHub (store_secret).
  auto store = [=](const jit_config& jit) {
    auto& s2 = self->state;
    spdlog::debug("runner {}: registered on GitHub as runner {}", id(self), jit.runner_id);
    land(self, flight::step);
    s2.consecutive_errors = 0;
    s2.jit_conflict_retried = false;
    s2.memory.unstored_jit = jit;
    // Known now; an earlier registration of the name would have been refused.
    s2.memory.jit_answer_lost = false;
    s2.memory.earlier_registration_possible = false;
    s2.memory.registration_failure.clear();
    mark_dirty(self);
  };
  // Until GitHub answers, it may have registered the runner; a refusal
  // leaves what was known before (an earlier answer may have been lost).
  const bool lost_before = std::exchange(st.memory.jit_answer_lost, true);
  github::jit_request req;
  req.name = st.cfg.name;
  req.runner_group_id = st.cfg.runner_group_id;
  req.labels = st.runner->spec->runner_labels;
  self->request(st.cfg.github, st.cfg.request_timeout, github::jit_config_atom::value, std::move(req))
      .then(
          [=](github::jit_reply& r) {
            if (!awaited(self, flight::step, ticket)) return;
            if (!r) {
              if (refused(r.error())) self->state.memory.jit_answer_lost = lost_before;
              return on_jit_failed(self, r.error());
            }
            store({r->encoded_jit_config, r->registered.id, r->registered.name});
          },
          [=](caf::error& e) {
            if (awaited(self, flight::step, ticket)) on_actor_error(self, "JIT configuration", e);
          });
}

// Stores the JIT configuration GitHub generated in the Runner's Secret.
void store_secret(self_ptr self) {
  auto& st = self->state;
  const auto ticket = send_off(self, flight::step, "creating the JIT Secret");
  auto secret_name = model::jit_secret_name(st.cfg.name);
  auto stored = [=](const kube::object& found) {
    auto& s = self->state;
    land(self, flight::step);
    s.consecutive_errors = 0;
    s.secret = watched::read_secret(found);
    s.secret_checked = true;
    s.memory.unstored_jit.reset();
    mark_dirty(self);
  };
  ask_kube(self, kube::create_request{kinds::secrets(), st.cfg.ns,
                                      jit_secret_json(*st.runner, *st.memory.unstored_jit)})
      .then(
          [=](kube::object_result& r) {
            if (!awaited(self, flight::step, ticket)) return;
            if (r) return stored(*r);
            if (!r.error().already_exists()) return on_api_error(self, "creating the JIT Secret", r.error());
            // Created by an attempt whose answer was lost: read it back.
            ask_kube(self, kube::get_request{kinds::secrets(), self->state.cfg.ns, secret_name, ""})
                .then(
                    [=](kube::object_result& found) {
                      if (!awaited(self, flight::step, ticket)) return;
                      if (!found) return on_api_error(self, "reading the JIT Secret", found.error());
                      // An earlier Runner's, not yet removed: this JIT configuration is stored once it is.
                      if (!own_secret(self, *found)) return create_conflict(self, "creating the JIT Secret");
                      stored(*found);
                    },
                    [=](caf::error& e) {
                      if (awaited(self, flight::step, ticket))
                        on_actor_error(self, "reading the JIT Secret", e);
                    });
          },
          [=](caf::error& e) {
            if (awaited(self, flight::step, ticket)) on_actor_error(self, "creating the JIT Secret", e);
          });
}

// The GitHub runner id to remove: the observed one, else its JIT Secret's; 0: never registered.
std::int64_t registered_id(self_ptr self, std::int64_t runner_id) {
  auto& st = self->state;
  if (runner_id == 0 && st.secret && st.secret->registration) runner_id = st.secret->registration->runner_id;
  return runner_id;
}

namespace {

// A GitHub call on the way to the Runner's removal failed: a spent budget
// waits for its reset (next_step: wait, or hand the removal to the set),
// anything else is tried again after a backoff.
void removal_call_failed(self_ptr self, const std::string& what, const github::error& e) {
  auto& s = self->state;
  if (e.kind == github::error_kind::rate_limited) {
    s.memory.removal = github_removal::rate_limited;
    s.memory.retry_not_before = now(self) + std::max<std::chrono::milliseconds>(backoff(self), e.retry_after);
    spdlog::debug("runner {}: {}: {}", id(self), what, e.describe());
    return mark_dirty(self);
  }
  ++s.consecutive_errors;
  auto wait = std::max<std::chrono::milliseconds>(backoff(self), e.retry_after);
  spdlog::warn("runner {}: {} failed: {}; retrying in {} ms", id(self), what, e.describe(), wait.count());
  wake_at(self, now(self) + wait);
}

}  // namespace

// Looks the Runner's name up on GitHub: a runner found is removed next
// (remove_from_github), none found lets the Runner go.
void find_on_github(self_ptr self) {
  auto& st = self->state;
  const auto ticket = send_off(self, flight::step, "looking the runner up on GitHub");
  self->request(st.cfg.github, st.cfg.request_timeout, github::find_runner_atom::value, st.cfg.name)
      .then(
          [=](github::maybe_reference_reply& r) {
            if (!awaited(self, flight::step, ticket)) return;
            auto& s = self->state;
            land(self, flight::step);
            if (!r) return removal_call_failed(self, "looking its name up on GitHub", r.error());
            s.consecutive_errors = 0;
            s.memory.removal = github_removal::not_tried;
            s.memory.earlier_registration_possible = false;
            s.memory.jit_answer_lost = false;
            if (*r) {
              s.memory.found_runner_id = (*r)->id;
              spdlog::info(
                  "runner {}: GitHub holds runner {} under its name, a registration nothing here recorded "
                  "(its answer was lost, or an earlier leader's); removing it",
                  id(self), (*r)->id);
            }
            mark_dirty(self);
          },
          [=](caf::error& e) {
            if (awaited(self, flight::step, ticket))
              on_actor_error(self, "looking the runner up on GitHub", e);
          });
}

void remove_from_github(self_ptr self, std::int64_t runner_id) {
  auto& st = self->state;
  runner_id = registered_id(self, runner_id);
  if (runner_id == 0) {  // never registered: nothing to remove
    st.memory.removal = github_removal::removed;
    return mark_dirty(self);
  }
  const auto ticket = send_off(self, flight::step, "removing the GitHub runner");
  self->request(st.cfg.github, st.cfg.request_timeout, github::delete_runner_atom::value, runner_id)
      .then(
          [=](github::delete_reply& r) {
            if (!awaited(self, flight::step, ticket)) return;
            auto& s = self->state;
            land(self, flight::step);
            if (!r)
              return removal_call_failed(self, "removing GitHub runner " + std::to_string(runner_id),
                                         r.error());
            s.consecutive_errors = 0;
            if (*r == github::delete_outcome::busy) {
              // A job is running on it: keep everything, ask again later.
              s.memory.removal = github_removal::busy;
              s.memory.retry_not_before = now(self) + s.cfg.busy_recheck;
              spdlog::info("runner {}: GitHub runner {} is busy; keeping it until its job ends", id(self),
                           runner_id);
            } else {
              s.memory.removal = github_removal::removed;
            }
            mark_dirty(self);
          },
          [=](caf::error& e) {
            if (awaited(self, flight::step, ticket)) on_actor_error(self, "removing the GitHub runner", e);
          });
}

// GitHub's budget is spent and the runner can run no job: the RunnerSet
// records that it will remove the GitHub runner after the reset, and the
// Runner's objects go now.
void defer_removal(self_ptr self, std::int64_t runner_id) {
  auto& st = self->state;
  runner_id = registered_id(self, runner_id);
  const auto ticket = send_off(self, flight::step, "deferring the GitHub removal");
  self->request(st.cfg.github, st.cfg.request_timeout, protocols::defer_removal_atom::value, runner_id,
                st.cfg.name)
      .then(
          [=](bool) {
            if (!awaited(self, flight::step, ticket)) return;
            auto& s = self->state;
            land(self, flight::step);
            s.memory.removal = github_removal::deferred;
            spdlog::info("runner {}: GitHub's budget is spent; its RunnerSet removes GitHub runner {} later",
                         id(self), runner_id);
            mark_dirty(self);
          },
          [=](caf::error& e) {
            if (awaited(self, flight::step, ticket)) on_actor_error(self, "deferring the GitHub removal", e);
          });
}

}  // namespace octorun::runner::detail
