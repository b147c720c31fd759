// The RunnerSet actor executing plan()'s actions against the Kubernetes pool
// and its GitHub clients. Each reply updates the observation; only the
// replies that bring news mark the set dirty (a failure waits for the next
// event or tick, so a failing call is not hammered).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <utility>

#include "actors/kinds.hpp"
#include "actors/runner/runner_actor.hpp"
#include "actors/runnerset/credentials.hpp"
#include "actors/runnerset/github_connection.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "actors/runnerset/set_state.hpp"
#include "actors/runnerset/stuck_start.hpp"
#include "adapters/github/auth.hpp"
#include "adapters/github/scope.hpp"
#include "adapters/kube/finalizers.hpp"
#include "adapters/kube/protocol.hpp"
#include "adapters/tls/ca_bundle.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset::detail {

namespace {

std::string random_suffix(std::mt19937& rng) {
  static constexpr char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // as the apiserver's generateName
  std::uniform_int_distribution<std::size_t> pick(0, sizeof alphabet - 2);
  std::string s;
  for (std::size_t i = 0; i < model::runner_suffix_length; ++i) s.push_back(alphabet[pick(rng)]);
  return s;
}

// A Runner the apiserver stored without fields it was created with (a Runner
// CRD older than the manager prunes spec.containerMode, proxy, caBundle):
// its pod would lack them, and it would look outdated for ever, so a
// rollout would replace runners in a loop. plan() stops rollouts and says so.
void check_runner_as_stored(self_ptr self, const kube::object& stored, std::uint64_t fingerprint) {
  auto r = model::parse_runner(*stored.doc);
  auto& w = self->state.world;
  if (!r || self->state.fingerprints.of(r->spec) == fingerprint) return;
  if (!w.runner_crd_problem.empty()) return;
  w.runner_crd_problem = "the apiserver stored Runner " + std::string(stored.name) +
                         " without fields of its spec: the Runner CRD is older than the manager; apply "
                         "crds/runner.yaml";
  spdlog::error("runnerset {}: {}", id(self), w.runner_crd_problem);
  mark_dirty(self);
}

// Whether a new Runner may not take `name`: a Runner of the set has it or is
// being made under it, or the Pod of an earlier one is still there (the
// garbage collector removes it after its Runner): the new Runner's own pod,
// named after it, could not be made until it is gone. (An earlier JIT
// Secret is not seen, Secrets being unwatched: the new Runner's create of
// its own finds the name taken and looks again after a backoff.)
bool name_taken(const set_state& st, const std::string& name) {
  const auto& w = st.world;
  return w.runners.count(name) > 0 || w.being_created(name) || st.early_pods.count(name) > 0;
}

void create_runner(self_ptr self, const model::effective_variant& v) {
  auto& st = self->state;
  std::string suffix, name;
  auto draw = [&] {
    suffix = random_suffix(st.rng);
    name = model::runner_name(st.world.set->metadata.name, v.name, suffix);
  };
  // 27^5 names: a second draw is rare; a taken name after eight is left to
  // the apiserver (409) and the Runner actor (create_conflict).
  draw();
  for (int again = 0; again < 7 && name_taken(st, name); ++again) draw();
  spdlog::debug("runnerset {}: creating Runner {}", id(self), name);
  // No clear answer: the apiserver may have made it, so it keeps holding
  // its capacity until the watch shows it or a GET finds none (plan.hpp).
  auto unconfirmed = [=](const std::string& why) {
    spdlog::warn("runnerset {}: creating Runner {}: {} (holding its place until it is seen or found absent)",
                 id(self), name, why);
    self->state.world.unconfirmed_creates[name] = {v.name, self->clock().now()};
    mark_dirty(self);
  };
  const auto fingerprint = model::pod_fingerprint(*v.template_, v.pod);
  // Out until answered (create_pacing.hpp): a success makes room for more
  // now, a failure waits for the next plan.
  note_create_sent(st.world.creates);
  auto answered = [=](bool succeeded) {
    note_create_answered(self->state.world.creates, succeeded);
    if (succeeded) mark_dirty(self);
  };
  // In flight (a placeholder holding capacity) until the watch brings it.
  request_in_flight_until<kube::object_result>(
      self, {action_kind::create_runners, name}, v.name, in_flight_until::seen, st.cfg.kube,
      [=](kube::object_result& r) {
        answered(r.has_value());
        if (r) {
          if (auto& m = self->state.cfg.metrics)
            m->runner_created(self->state.cfg.ns, self->state.cfg.name, v.name);
          check_runner_as_stored(self, *r, fingerprint);
        } else if (create_may_have_happened(r.error())) {
          unconfirmed(kube::to_string(r.error()));
        } else {
          spdlog::warn("runnerset {}: creating Runner {}: {}", id(self), name, kube::to_string(r.error()));
        }
      },
      [=](const std::string& why) {
        answered(false);
        unconfirmed(why);
      },
      kube::create_request{kinds::runners(), st.cfg.ns, runner_json(*st.world.set, v, suffix)});
}

// GETs a Runner whose create had no clear answer: there, the watch will show
// it; absent, its capacity is free again; no answer, asked again later.
void confirm_create(self_ptr self, const std::string& name) {
  auto& st = self->state;
  auto unsettled = [=](const std::string& why) {
    spdlog::warn("runnerset {}: looking for Runner {}: {}", id(self), name, why);
    auto& w = self->state.world;
    if (auto it = w.unconfirmed_creates.find(name); it != w.unconfirmed_creates.end())
      it->second.since = self->clock().now();
    mark_dirty(self);
  };
  request_in_flight<kube::object_result>(
      self, {action_kind::confirm_create, name}, st.cfg.kube,
      [=](kube::object_result& r) {
        auto& w = self->state.world;
        auto it = w.unconfirmed_creates.find(name);
        if (it == w.unconfirmed_creates.end()) return;  // the watch showed it meanwhile
        if (r) {
          it->second.since = self->clock().now();  // made: the watch shows it soon
        } else if (r.error().not_found()) {
          spdlog::info("runnerset {}: Runner {} was not made; its place is free", id(self), name);
          w.unconfirmed_creates.erase(it);
        } else {
          return unsettled(kube::to_string(r.error()));
        }
        mark_dirty(self);
      },
      unsettled, kube::get_request{kinds::runners(), st.cfg.ns, name, ""});
}

void delete_runner(self_ptr self, const std::string& name, metrics::deletion_reason why) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::delete_runner, name}, st.cfg.kube,
      [=](kube::object_result& r) {
        auto& s = self->state;
        auto& w = s.world;
        if (r && s.cfg.metrics) s.cfg.metrics->runner_deleted(s.cfg.ns, s.cfg.name, variant_of(w, name), why);
        // Deleted (or going, behind its finalizer): known now, before the
        // watch says so, so the next plan does not delete it again.
        if (auto it = w.runners.find(name); it != w.runners.end() && (r || r.error().not_found()))
          it->second.view.deleting = true;
        if (!r && !r.error().not_found())
          spdlog::warn("runnerset {}: deleting Runner {}: {}", id(self), name, kube::to_string(r.error()));
      },
      [](const std::string&) {}, kube::delete_request{kinds::runners(), st.cfg.ns, name, {}});
}

void remove_registered_or_not(self_ptr self, const std::string& name, std::int64_t github_id,
                              metrics::deletion_reason why) {
  spdlog::info("runnerset {}: {}: removing idle runner {} (GitHub runner {})", id(self),
               why == metrics::deletion_reason::stuck_start ? "replacing a stuck start" : "scaling down",
               name, github_id);
  if (github_id == 0) return delete_runner(self, name, why);  // not registered
  auto failed = [=](const std::string& why) {
    spdlog::warn("runnerset {}: removing runner {} from GitHub: {}", id(self), name, why);
  };
  request_in_flight<github::delete_reply>(
      self, {action_kind::delete_runner, name}, runner_github(self),
      [=](github::delete_reply& r) {
        auto& w = self->state.world;
        note_github_answer(self, r ? nullptr : &r.error(), github_call_target::object);
        if (!r) {
          note_github_error(self, r.error());  // a rate limit is logged once, there
          if (r.error().kind == github::error_kind::rate_limited) return mark_dirty(self);
          return failed(r.error().describe());
        }
        if (*r == github::delete_outcome::busy) {
          spdlog::info("runnerset {}: runner {} took a job; keeping it", id(self), name);
          if (auto it = w.runners.find(name); it != w.runners.end())
            it->second.busy_until = self->clock().now() + self->state.cfg.busy_recheck;
          return;
        }
        self->state.runners.send(self, name, runner::removed_from_github_atom::value);
        delete_runner(self, name, why);
      },
      failed, github::delete_runner_atom::value, github_id);
}

// Scale-down of an idle runner, GitHub first by its id. One whose status
// names no GitHub runner yet and whose JIT configuration did not pass
// through this set's actor (a new leader's Runners, a restarted set's) may
// be registered all the same, and may take a job any moment: its JIT
// Secret, read by name (Secrets are not watched), says; only a runner
// registered nowhere is deleted without asking GitHub.
void remove_idle(self_ptr self, const std::string& name, std::int64_t github_id,
                 metrics::deletion_reason why = metrics::deletion_reason::scaled_down) {
  if (github_id != 0) return remove_registered_or_not(self, name, github_id, why);
  const auto uid = runner_uid(self, name);
  request_in_flight<kube::object_result>(
      self, {action_kind::delete_runner, name}, self->state.cfg.kube,
      [=](kube::object_result& r) {
        if (!r && !r.error().not_found())
          return spdlog::warn("runnerset {}: reading the JIT Secret of runner {}: {}", id(self), name,
                              kube::to_string(r.error()));
        std::int64_t registered = 0;
        if (auto secret = r ? watched::read_secret(*r) : nullptr;
            secret && secret->registration && model::owned_by(secret->metadata, uid))
          registered = secret->registration->runner_id;
        note_registration(self, name, uid, registered);
        remove_registered_or_not(self, name, registered, why);
      },
      [=](const std::string& why) {
        spdlog::warn("runnerset {}: reading the JIT Secret of runner {}: {}", id(self), name, why);
      },
      kube::get_request{kinds::secrets(), self->state.cfg.ns, model::jit_secret_name(name), ""});
}

// A stuck start (stuck_start.hpp): counted and told once per runner, then
// removed as an idle runner is (its replacement is the plan's create).
void remove_stuck_start(self_ptr self, const action& a) {
  auto& st = self->state;
  auto runner = st.world.runners.find(a.subject);
  if (runner != st.world.runners.end() && !std::exchange(runner->second.stuck_start_noted, true)) {
    const auto& variant = runner->second.variant;
    spdlog::warn("runnerset {}: runner {} is not online {} s after it was made; replacing it", id(self),
                 a.subject, a.count);
    if (st.cfg.metrics) st.cfg.metrics->stuck_start_replaced(st.cfg.ns, st.cfg.name, variant);
    send_set_event(self, stuck_start_event(a.subject, variant, std::chrono::seconds(a.count), a.on));
  }
  remove_idle(self, a.subject, a.id, metrics::deletion_reason::stuck_start);
}

// The set's finalizer, merge-patched with the resourceVersion read (a
// conflict or any failure: the next event or tick decides again).
constexpr const char* set_finalizer = "octorun.io/runnerset";

}  // namespace

bool has_set_finalizer(const model::runnerset& set) {
  return model::has_finalizer(set.metadata, set_finalizer);
}

namespace {

void patch_finalizer(self_ptr self, bool ours) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::patch_finalizer, ""}, st.cfg.kube,
      [=](kube::object_result& r) {
        if (!r && !r.error().not_found() && !r.error().conflict())
          spdlog::warn("runnerset {}: {} the finalizer: {}", id(self), ours ? "adding" : "removing",
                       kube::to_string(r.error()));
      },
      [](const std::string&) {},
      kube::patch_request{
          kinds::runnersets(), st.cfg.ns, st.cfg.name, kube::patch_type::merge,
          kube::finalizer_patch(st.set_object->metadata.finalizers, st.set_object->metadata.resource_version,
                                set_finalizer, ours),
          ""});
}

// A consistent LIST of the set's Runners; when it holds none the set made,
// draining goes on.
void confirm_no_runners(self_ptr self) {
  auto& st = self->state;
  auto failed = [=](const std::string& why) {
    spdlog::warn("runnerset {}: listing its Runners: {}", id(self),
                 why);  // the next event or tick asks again
  };
  kube::list_options only_ours;
  only_ours.label_selector = std::string(model::label_runnerset) + "=" + st.cfg.name;
  request_in_flight<kube::list_result>(
      self, {action_kind::confirm_no_runners, ""}, st.cfg.kube,
      [=](kube::list_result& r) {
        if (!r) return failed(kube::to_string(r.error()));
        // Runners the watch has not shown yet arrive through it and are drained
        // then; one the set did not make is left alone, and holds nothing.
        auto& w = self->state.world;
        if (!w.set) return;
        std::vector<model::object_meta> labelled;
        for (const auto& item : r->items)
          if (item) labelled.push_back(model::read_object_meta(*item.doc));
        w.no_runners_confirmed = model::no_runner_made_by(labelled, w.set->metadata.uid);
        if (w.no_runners_confirmed) mark_dirty(self);
      },
      failed, kube::list_request{kinds::runners(), st.cfg.ns, only_ours});
}

// One write at a time: plan() plans none while one is in flight, and says
// so (status_after_write); its answer then plans again.
void publish_status(self_ptr self, const std::string& text, const std::vector<model::condition>& conditions) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::publish_status, ""}, st.cfg.kube,
      [=](kube::object_result& r) {
        auto& s = self->state;
        if (r) {
          s.world.published_status = text;
          s.world.published_conditions = conditions;
          s.world.status_written_at = self->clock().now();
          status_published(self, text);
        } else if (!r.error().not_found())
          spdlog::warn("runnerset {}: publishing status: {}", id(self), kube::to_string(r.error()));
        if (std::exchange(s.status_stale, false)) mark_dirty(self);
      },
      [](const std::string&) {},
      kube::patch_request{kinds::runnersets(), st.cfg.ns, st.cfg.name, kube::patch_type::merge,
                          json::writer().open().raw_field("status", text).close().str(), "status"});
}

}  // namespace

// ---- the per-set objects of the runner pods (pod_resources.hpp) -------------------

kube::resource resource_of(std::string_view key) {
  const auto kind = key_kind(key);
  if (kind == "ServiceAccount") return kinds::service_accounts();
  if (kind == "RoleBinding") return kinds::role_bindings();
  if (kind == "PodDisruptionBudget") return kinds::pod_disruption_budgets();
  if (kind == "ConfigMap") return kinds::config_maps();
  if (kind == "Secret") return kinds::secrets();
  std::abort();  // plan() names only these kinds
}

namespace {

// An apply or delete of `key` failed: said in PodConfigReady, tried again
// after reference_recheck.
void object_failed(self_ptr self, const std::string& key, std::string why, bool deleting) {
  auto& w = self->state.world;
  spdlog::warn("runnerset {}: {} {}: {}", id(self), deleting ? "deleting" : "applying", key, why);
  w.object_errors[key] = std::move(why);
  w.objects_retry_at = self->clock().now() + w.reference_recheck;
  mark_dirty(self);
}

// Records how an apply or delete of `key` ended.
void object_outcome(self_ptr self, const std::string& key, const kube::object_result& r, bool deleting,
                    const std::string& body) {
  auto& w = self->state.world;
  const bool done = r || (deleting && r.error().not_found());
  if (done) {
    if (deleting) {
      w.deleted_objects.insert(key);
      w.applied_objects.erase(key);
      // The deletion's last step: the grant goes with the binding, and
      // nothing of the namespace is read after it.
      if (key == manager_reads_key(self->state.cfg.name)) w.reads_granted = false;
    } else {
      w.applied_objects[key] = body;
      w.deleted_objects.erase(key);
    }
    w.object_errors.erase(key);
    mark_dirty(self);  // runners may be created now, or the finalizer released
    return;
  }
  auto why = kube::to_string(r.error());
  // Kubernetes lets no one bind a role it may not bind.
  if (r.error().forbidden() && !deleting && key == manager_reads_key(self->state.cfg.name))
    why += " (the manager needs `bind` on the ClusterRole --tenant-reads-cluster-role names)";
  else if (r.error().forbidden() && !deleting && key_kind(key) == "RoleBinding")
    why +=
        " (the manager may bind only the ClusterRole --runner-kubernetes-mode-cluster-role names: install "
        "the chart with rbac.containerModeKubernetes=true)";
  object_failed(self, key, std::move(why), deleting);
}

void apply_object(self_ptr self, const std::string& key, const std::string& body) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::apply_object, key}, st.cfg.kube,
      [=](kube::object_result& r) { object_outcome(self, key, r, false, body); },
      [=](const std::string& why) { object_failed(self, key, why, false); },
      kube::patch_request{resource_of(key), st.cfg.ns, std::string(key_name(key)), kube::patch_type::apply,
                          body, ""});
}

void delete_object(self_ptr self, const std::string& key) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::delete_object, key}, st.cfg.kube,
      [=](kube::object_result& r) { object_outcome(self, key, r, true, {}); },
      [=](const std::string& why) { object_failed(self, key, why, true); },
      kube::delete_request{resource_of(key), st.cfg.ns, std::string(key_name(key)), {}});
}

// Reads what the pod configuration refers to and records its problem ("" when it fits).
void check_reference(self_ptr self, const reference& ref) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::check_reference, ref.key}, st.cfg.kube,
      [=](kube::object_result& r) {
        auto& w = self->state.world;
        w.references_checked_at = self->clock().now();
        std::string problem;
        if (r) {
          problem = reference_problem(ref, *r->doc).value_or("");
        } else if (r.error().not_found()) {
          problem = reference_not_found(ref, self->state.cfg.ns);
        } else {
          if (r.error().forbidden()) reads_lost(self);
          spdlog::warn("runnerset {}: reading {}: {}", id(self), ref.key, kube::to_string(r.error()));
          return;  // unknown: the next check says
        }
        auto [known, added] = w.reference_problems.try_emplace(ref.key, problem);
        const bool changed = added || known->second != problem;
        if (changed && !problem.empty()) spdlog::warn("runnerset {}: {}", id(self), problem);
        known->second = problem;
        if (changed) mark_dirty(self);
      },
      [=](const std::string& why) { spdlog::warn("runnerset {}: reading {}: {}", id(self), ref.key, why); },
      kube::get_request{resource_of(ref.key), st.cfg.ns, std::string(key_name(ref.key)), ""});
}

}  // namespace

// ---- one action ----------------------------------------------------------------

void execute(self_ptr self, const action& a) {
  auto& st = self->state;
  switch (a.kind) {
    case action_kind::read_credentials:
      return read_credentials(self);
    case action_kind::patch_finalizer:
      if (!a.on) spdlog::info("runnerset {}: every runner is gone; releasing the RunnerSet", id(self));
      return patch_finalizer(self, a.on);
    case action_kind::patch_credentials_finalizer:
      return patch_credentials_finalizer(self, a.subject, a.on);
    case action_kind::create_runners:
      for (std::int32_t i = 0; i < a.count; ++i) create_runner(self, *a.variant);
      return;
    case action_kind::delete_runner: {
      // Finished, or drained: its variant was removed or the set is being deleted.
      auto r = st.world.runners.find(a.subject);
      const bool finished = r != st.world.runners.end() && r->second.view.finished();
      return delete_runner(self, a.subject,
                           finished ? metrics::deletion_reason::finished : metrics::deletion_reason::drained);
    }
    case action_kind::remove_idle_runner:
      return remove_idle(self, a.subject, a.id);
    case action_kind::remove_stuck_start:
      return remove_stuck_start(self, a);
    case action_kind::remove_deferred:
      return remove_deferred(self, a.id);
    case action_kind::resolve_runner_group:
      return resolve_runner_group(self);
    case action_kind::register_scale_set:
      return register_scale_set(self, a);
    case action_kind::delete_scale_set:
      return delete_scale_set(self, a.subject, a.id);
    case action_kind::start_listener:
      return start_listener(self, a.subject);
    case action_kind::stop_listener:
      return stop_listener(self, a.subject);
    case action_kind::confirm_no_runners:
      return confirm_no_runners(self);
    case action_kind::confirm_create:
      return confirm_create(self, a.subject);
    case action_kind::publish_status:
      return publish_status(self, a.text, a.conditions);
    case action_kind::apply_object:
      return apply_object(self, a.subject, a.text);
    case action_kind::delete_object:
      return delete_object(self, a.subject);
    case action_kind::apply_warm_nodes:
      return apply_warm_nodes(self, a.subject, a.text);
    case action_kind::delete_warm_nodes:
      return delete_warm_nodes(self, a.subject);
    case action_kind::check_reference:
      return check_reference(self, *a.ref);
    case action_kind::confirm_reads:
      return confirm_reads(self);
    case action_kind::fetch_runner_release:
      return fetch_runner_release(self);
    case action_kind::wake: {
      st.world.in_flight.insert({action_kind::wake, a.subject});
      auto delay = std::max(a.at - self->clock().now(), std::chrono::steady_clock::duration::zero());
      self->delayed_send(self, delay, wake_atom::value, a.subject);
      return;
    }
  }
}

namespace {
std::string_view action_name(action_kind kind) {
  switch (kind) {
    case action_kind::read_credentials:
      return "read_credentials";
    case action_kind::patch_finalizer:
      return "patch_finalizer";
    case action_kind::patch_credentials_finalizer:
      return "patch_credentials_finalizer";
    case action_kind::create_runners:
      return "create_runner";
    case action_kind::delete_runner:
      return "delete_runner";
    case action_kind::remove_idle_runner:
      return "remove_idle_runner";
    case action_kind::remove_deferred:
      return "remove_deferred";
    case action_kind::resolve_runner_group:
      return "resolve_runner_group";
    case action_kind::register_scale_set:
      return "register_scale_set";
    case action_kind::delete_scale_set:
      return "delete_scale_set";
    case action_kind::start_listener:
      return "start_listener";
    case action_kind::stop_listener:
      return "stop_listener";
    case action_kind::confirm_no_runners:
      return "confirm_no_runners";
    case action_kind::publish_status:
      return "publish_status";
    case action_kind::wake:
      return "wake";
    case action_kind::apply_object:
      return "apply_object";
    case action_kind::delete_object:
      return "delete_object";
    case action_kind::check_reference:
      return "check_reference";
    case action_kind::confirm_create:
      return "confirm_create";
    case action_kind::fetch_runner_release:
      return "fetch_runner_release";
    case action_kind::remove_stuck_start:
      return "remove_stuck_start";
    case action_kind::apply_warm_nodes:
      return "apply_warm_nodes";
    case action_kind::delete_warm_nodes:
      return "delete_warm_nodes";
    case action_kind::confirm_reads:
      return "confirm_reads";
  }
  return "unknown";
}
}  // namespace

void count_failure(self_ptr self, action_kind kind) {
  if (auto& m = self->state.cfg.metrics) m->reconcile_error("runnerset", action_name(kind));
}

caf::typed_behavior<caf::reacts_to<wake_atom, std::string>> wake_handler(self_ptr self) {
  return {[=](wake_atom, const std::string& key) {
    self->state.world.in_flight.erase({action_kind::wake, key});
    mark_dirty(self);
  }};
}

}  // namespace octorun::runnerset::detail
