// The RunnerSet actor and its credentials Secret: reading it (and the
// objects its pod configuration refers to) into the GitHub clients, and the
// set's finalizer on it (credentials_secret_view in plan.hpp says why).
#include <spdlog/spdlog.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/kinds.hpp"
#include "actors/runnerset/credentials.hpp"
#include "actors/runnerset/github_connection.hpp"
#include "actors/runnerset/set_state.hpp"
#include "adapters/github/auth.hpp"
#include "adapters/github/scope.hpp"
#include "adapters/kube/finalizers.hpp"
#include "adapters/kube/protocol.hpp"
#include "adapters/tls/ca_bundle.hpp"
#include "common/json.hpp"
#include "model/naming.hpp"
#include "model/scope.hpp"

namespace octorun::runnerset::detail {

namespace {

// What the set observes of its credentials Secret, and what a finalizer
// patch is locked on.
void remember_secret(self_ptr self, const kube::object& secret) {
  auto& st = self->state;
  st.world.credentials_secret =
      credentials_secret_view{std::string(secret.name), !secret.deletion_timestamp.empty(),
                              kube::has_finalizer(secret, model::credentials_finalizer(st.cfg.name))};
  st.credentials_object = secret;
}

// The objects the connection's settings name (proxy credentials, a CA
// bundle), by key; a key that is absent was not found.
using referenced_objects = std::map<std::string, kube::object>;

// Reads `refs` from `next` on, one after another under the read_credentials
// key (so it stays in flight), then `done(objects)`; `fail` on an error.
void read_references(self_ptr self, std::shared_ptr<const connection_references> refs, std::size_t next,
                     std::shared_ptr<referenced_objects> got,
                     std::function<void(const referenced_objects&)> done,
                     std::function<void(std::string)> fail) {
  if (next == refs->references.size()) return done(*got);
  const auto& ref = refs->references[next];
  request_in_flight<kube::object_result>(
      self, {action_kind::read_credentials, ""}, self->state.cfg.kube,
      [=](kube::object_result& r) {
        const auto& at = refs->references[next];
        if (!r && !r.error().not_found()) return fail(at.field + ": " + kube::to_string(r.error()));
        if (r) got->emplace(at.key, std::move(*r));
        read_references(self, refs, next + 1, got, done, fail);
      },
      [=](const std::string& why) { spdlog::warn("runnerset {}: reading credentials: {}", id(self), why); },
      kube::get_request{resource_of(ref.key), refs->ns, std::string(key_name(ref.key)), ""});
}

// The GitHub clients on the credentials Secret and the connection's
// settings (github_connection.hpp), unless these are what they run on.
void load_github_clients(self_ptr self, const kube::object& secret,
                         const model::manager_connection& connection, const connection_references& refs,
                         const referenced_objects& objects, const std::function<void(std::string)>& fail) {
  auto& s = self->state;
  auto& w = s.world;
  std::string version(secret.resource_version);
  for (const auto& [key, object] : objects) version += " " + key + "@" + std::string(object.resource_version);
  if (s.github && version == s.credentials_version) {
    // A read that failed before (a blip) must not leave the condition False.
    if (!w.credentials_error.empty()) {
      w.credentials_error.clear();
      mark_dirty(self);
    }
    return;
  }
  auto creds = runnerset::read_credentials(*secret.doc);
  if (!creds) return fail(creds.error());
  const auto& spec = w.set->spec;
  if (!spec.scope)
    return fail("spec.scopeURL: invalid GitHub URL '" + spec.scope_url + "': " + spec.scope_error);
  const auto target = github::target_for(*spec.scope);
  if (auto refused = model::scope_host_refused(*spec.scope, s.cfg.scopes))
    return fail("spec.scopeURL: \"" + w.set->spec.scope_url + "\" " + *refused);
  // Under a RunnerClass the manager's own connections take the class's
  // proxy and CA (else the manager's): a tenant's spec.proxy and
  // spec.caBundle shape its runner pods, never where the credentials go.
  auto network = network_of(
      connection, s.cfg.github_proxy,
      [&](const reference& ref) -> const rapidjson::Value* {
        auto it = objects.find(ref.key);
        return it == objects.end() ? nullptr : it->second.doc.get();
      },
      refs);
  if (!network) return fail(network.error());
  github::rest_options opts;
  opts.api_base = target.api_base;
  opts.where = target.where;
  opts.call.user_agent = s.cfg.user_agent;
  opts.call.tls = s.cfg.github_tls;
  if (!network->ca_pem.empty()) {
    // Trusted beside the manager's CAs (--github-ca-file, else the system's).
    const auto& manager_trust = s.cfg.github_tls.ca_pem;
    auto trust = tls::trust_bundle_with_pem(network->ca_pem,
                                            manager_trust.empty() ? tls::system_ca_bundle_path() : "");
    if (!trust) return fail(network->ca_field + ": " + trust.error());  // checked already: not expected
    opts.call.tls.ca_pem = manager_trust.empty() ? std::move(*trust) : manager_trust + "\n" + *trust;
  }
  opts.call.proxy = network->proxy;
  opts.call.health = s.health;  // read by observe_github_budget
  opts.call.budget = s.budget;  // read by observe_github_budget
  if (s.cfg.metrics) opts.call.observer = s.cfg.metrics->github_observer(s.cfg.ns, s.cfg.name);
  if (auto* pat = std::get_if<pat_credentials>(&*creds)) {
    opts.auth = github::pat_auth(pat->token);
  } else {
    const auto& app = std::get<app_credentials>(*creds);
    opts.auth = github::app_auth({app.app_id, app.installation_id, app.private_key_pem, target.api_base});
  }
  if (s.github && s.github != s.cfg.github) caf::anon_send_exit(s.github, caf::exit_reason::user_shutdown);
  // Under the Listener intake the runners' calls go to the scale set:
  // one REST worker (credential checks) is enough.
  if (s.cfg.github)
    s.github = s.cfg.github;
  else
    s.github = s.owned->rest =
        github::spawn_rest_pool(self->system(), opts, listening(s) ? 1 : s.cfg.github_workers);
  w.credentials_loaded = true;
  s.health->record_response();          // the new settings have not failed yet
  w.access = {};                        // nor have the new credentials been refused
  github::scaleset_options scale_sets;  // its client is spawned when first needed
  scale_sets.where = *spec.scope;
  scale_sets.auth = opts.auth;
  scale_sets.call = opts.call;
  start_scale_set_admin(self, std::move(scale_sets));
  s.credentials_version = std::move(version);
  w.credentials_error.clear();
  const auto& class_proxy = connection.by_class.proxy;
  spdlog::info("runnerset {}: GitHub credentials loaded for {}{}", id(self), w.set->spec.scope_url,
               class_proxy ? " (through the proxy " + class_proxy->url + " of RunnerClass " +
                                 connection.class_name + ")"
                           : std::string());
  // Before the first sweep, whose jobs the router routes by them.
  const auto* app = std::get_if<app_credentials>(&*creds);
  s.app_installation_id = app ? app->installation_id : 0;
  if (s.cfg.credentials_told)
    caf::anon_send(s.cfg.credentials_told,
                   messages::set_credentials{s.cfg.ns + "/" + s.cfg.name, s.app_installation_id});
  start_sweeps(self);
  mark_dirty(self);
}

}  // namespace

void read_credentials(self_ptr self) {
  auto& st = self->state;
  // The class refuses the set, or has not judged it yet; or they are the
  // tenant's, in the set's namespace, which the manager may not read yet
  // (plan_pod_resources asks; the plan reads them once it may). A class's
  // are in the platform's namespace, which the manager always reads.
  if (!st.credentials_at || !st.connection) return;
  if (!st.credentials_at->platform && !reads_granted(st.world)) return;
  const auto where = *st.credentials_at;
  const auto connection = *st.connection;
  const auto& secret = where.name;
  auto fail = [=](std::string why) {
    auto& w = self->state.world;
    if (why != w.credentials_error)
      spdlog::error("runnerset {}: credentials Secret {}: {}", id(self), secret, why);
    w.credentials_error = std::move(why);
    mark_dirty(self);
  };
  request_in_flight<kube::object_result>(
      self, {action_kind::read_credentials, ""}, st.cfg.kube,
      [=](kube::object_result& r) {
        auto& w = self->state.world;
        // Moved, or connected otherwise, meanwhile: read again.
        if (self->state.credentials_at != where || self->state.connection != connection) return;
        w.credentials_gone = !r && r.error().not_found();
        if (w.credentials_gone) w.credentials_secret.reset();
        if (!r && r.error().forbidden() && !where.platform) reads_lost(self);
        if (!r) return fail(kube::to_string(r.error()));
        // The set holds a finalizer on a Secret of its own, not on its class's.
        if (where.platform)
          w.credentials_secret.reset();
        else
          remember_secret(self, *r);
        auto refs = std::make_shared<const connection_references>(
            references_of(connection, self->state.cfg.ns, self->state.cfg.platform_namespace));
        read_references(
            self, refs, 0, std::make_shared<referenced_objects>(),
            [=, secret_object = std::move(*r)](const referenced_objects& objects) {
              load_github_clients(self, secret_object, connection, *refs, objects, fail);
            },
            fail);
      },
      [=](const std::string& why) { spdlog::warn("runnerset {}: reading credentials: {}", id(self), why); },
      kube::get_request{kinds::secrets(), where.ns, secret, ""});
}

// Adds or removes the set's finalizer on `secret`: the current credentials
// Secret's patch is locked on the version last read (a conflict reads it
// again); one the set named before is read first. A failure waits for the
// next read of the Secret (a tick) rather than for the next event, and a
// Secret not found holds nothing.
void patch_credentials_finalizer(self_ptr self, const std::string& secret, bool hold) {
  auto& st = self->state;
  const auto finalizer = model::credentials_finalizer(st.cfg.name);
  const bool current = st.world.set && st.world.set->spec.credentials_secret_name == secret;
  auto settled = [=](const kube::object* now) {
    auto& w = self->state.world;
    if (now == nullptr || !kube::has_finalizer(*now, finalizer)) w.former_credentials.erase(secret);
    if (w.set && w.set->spec.credentials_secret_name == secret) {
      if (now == nullptr)
        w.credentials_secret.reset();
      else
        remember_secret(self, *now);
    }
    mark_dirty(self);
  };
  auto failed = [=](const std::string& why) {
    spdlog::warn("runnerset {}: {} its finalizer on the credentials Secret {}: {}", id(self),
                 hold ? "adding" : "removing", secret, why);
    if (current) self->state.world.credentials_secret.reset();  // planned again once read again
  };
  // `body` is locked on `version`.
  auto patch = [=](std::string body, const std::string& version) {
    request_in_flight<kube::object_result>(
        self, {action_kind::patch_credentials_finalizer, secret}, self->state.cfg.kube,
        [=](kube::object_result& patched) {
          if (!patched && patched.error().not_found()) return settled(nullptr);
          if (!patched && patched.error().conflict() && current) {
            self->state.world.credentials_secret.reset();
            if (!self->state.world.in_flight.contains(action_kind::read_credentials)) read_credentials(self);
            return;
          }
          if (!patched) return failed(kube::to_string(patched.error()));
          spdlog::info("runnerset {}: {} its finalizer on the credentials Secret {}", id(self),
                       hold ? "holds" : "released", secret);
          // Only its metadata changed: the clients loaded from the version
          // read stay (no reload for a finalizer).
          auto& loaded = self->state.credentials_version;
          if (loaded.substr(0, loaded.find(' ')) == version)
            loaded.replace(0, version.size(), patched->resource_version);
          settled(&*patched);
        },
        failed,
        kube::patch_request{kinds::secrets(), self->state.cfg.ns, secret, kube::patch_type::merge,
                            std::move(body), ""});
  };
  if (current && st.credentials_object)
    return patch(kube::finalizer_patch(st.credentials_object, finalizer, hold),
                 std::string(st.credentials_object.resource_version));
  request_in_flight<kube::object_result>(
      self, {action_kind::patch_credentials_finalizer, secret}, st.cfg.kube,
      [=](kube::object_result& r) {
        if (!r && r.error().not_found()) return settled(nullptr);
        if (!r) return failed(kube::to_string(r.error()));
        if (kube::has_finalizer(*r, finalizer) == hold) return settled(&*r);
        patch(kube::finalizer_patch(*r, finalizer, hold), std::string(r->resource_version));
      },
      failed, kube::get_request{kinds::secrets(), st.cfg.ns, secret, ""});
}

}  // namespace octorun::runnerset::detail
