#include "model/parse.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/rfc3339.hpp"
#include "model/field_reader.hpp"
#include "model/naming.hpp"
#include "model/quantity.hpp"
#include "model/runner_phase.hpp"

namespace octorun::model {
namespace {

using rapidjson::Value;

using detail::index;
using detail::join;
using detail::reader;

void read_meta(reader& r, const Value& obj, object_meta& m) {
  const Value* meta = r.object(obj, "metadata", "metadata");
  if (meta == nullptr) return;
  r.string(*meta, "name", "metadata.name", m.name);
  r.string(*meta, "generateName", "metadata.generateName", m.generate_name);
  r.string(*meta, "namespace", "metadata.namespace", m.namespace_);
  r.string(*meta, "uid", "metadata.uid", m.uid);
  r.string(*meta, "resourceVersion", "metadata.resourceVersion", m.resource_version);
  r.int64(*meta, "generation", "metadata.generation", m.generation);
  r.string_map(*meta, "labels", "metadata.labels", m.labels);
  r.string_list(*meta, "finalizers", "metadata.finalizers", m.finalizers);
  r.string(*meta, "creationTimestamp", "metadata.creationTimestamp", m.creation_timestamp);
  m.deleting = r.find(*meta, "deletionTimestamp") != nullptr;
  if (const Value* owners = r.find(*meta, "ownerReferences"); owners != nullptr && owners->IsArray())
    for (const auto& owner : owners->GetArray())
      if (owner.IsObject() && json::boolean(owner, "controller")) {
        m.owner_kind = json::str(owner, "kind");
        m.owner_uid = json::str(owner, "uid");
      }
}

void read_containers(reader& r, const Value& spec, const char* key, const std::string& path,
                     std::vector<container_view>& out) {
  r.objects(spec, key, path, out, [&](const Value& c, const std::string& at, container_view& v) {
    r.string(c, "name", at + ".name", v.name);
    r.string(c, "image", at + ".image", v.image);
  });
}

std::optional<pod_template> read_template(reader& r, const Value& parent, const std::string& parent_path) {
  const auto path = join(parent_path, "template");
  const Value* t = r.object(parent, "template", path);
  if (t == nullptr) return std::nullopt;
  pod_template out;
  out.json = json::write(*t);
  if (const Value* meta = r.object(*t, "metadata", path + ".metadata")) {
    r.string_map(*meta, "labels", path + ".metadata.labels", out.labels);
    r.string_map(*meta, "annotations", path + ".metadata.annotations", out.annotations);
  }
  if (const Value* spec = r.object(*t, "spec", path + ".spec")) {
    read_containers(r, *spec, "containers", path + ".spec.containers", out.containers);
    read_containers(r, *spec, "initContainers", path + ".spec.initContainers", out.init_containers);
    r.string(*spec, "restartPolicy", path + ".spec.restartPolicy", out.restart_policy);
    r.string(*spec, "serviceAccountName", path + ".spec.serviceAccountName", out.service_account_name);
  }
  return out;
}

void read_conditions(reader& r, const Value& status, const std::string& path, std::vector<condition>& out) {
  r.objects(status, "conditions", path, out, [&](const Value& c, const std::string& at, condition& v) {
    r.string(c, "type", at + ".type", v.type);
    r.string(c, "status", at + ".status", v.status);
    r.string(c, "reason", at + ".reason", v.reason);
    r.string(c, "message", at + ".message", v.message);
    r.string(c, "lastTransitionTime", at + ".lastTransitionTime", v.last_transition_time);
    r.int64(c, "observedGeneration", at + ".observedGeneration", v.observed_generation);
  });
}

void read_counts(reader& r, const Value& obj, const std::string& path, runner_counts& c) {
  r.int32(obj, "desiredReplicas", join(path, "desiredReplicas"), c.desired_replicas);
  r.int32(obj, "outdatedRunners", join(path, "outdatedRunners"), c.outdated_runners);
  r.int32(obj, "replicas", join(path, "replicas"), c.replicas);
  r.int32(obj, "pendingRunners", join(path, "pendingRunners"), c.pending_runners);
  r.int32(obj, "idleRunners", join(path, "idleRunners"), c.idle_runners);
  r.int32(obj, "runningRunners", join(path, "runningRunners"), c.running_runners);
  r.int32(obj, "failedRunners", join(path, "failedRunners"), c.failed_runners);
  r.int32(obj, "assignedJobs", join(path, "assignedJobs"), c.assigned_jobs);
}

std::optional<container_mode_spec> read_container_mode(reader& r, const Value& parent,
                                                       const std::string& parent_path) {
  const auto path = join(parent_path, "containerMode");
  const Value* m = r.object(parent, "containerMode", path);
  if (m == nullptr) return std::nullopt;
  container_mode_spec out;
  std::string type;
  r.string(*m, "type", path + ".type", type);
  if (auto named = container_mode_named(type); named && *named != container_mode::none)
    out.type = *named;
  else if (type.empty())
    r.errors.push_back({path + ".type", "is required: dind or kubernetes"});
  else
    r.errors.push_back({path + ".type", "must be dind or kubernetes, not \"" + type + "\""});
  if (const Value* claim = r.object(*m, "workVolumeClaim", path + ".workVolumeClaim"))
    out.work_volume_claim_json = json::write(*claim);
  return out;
}

std::optional<proxy_endpoint> read_proxy_endpoint(reader& r, const Value& proxy, const char* key,
                                                  const std::string& path) {
  const Value* e = r.object(proxy, key, path);
  if (e == nullptr) return std::nullopt;
  proxy_endpoint out;
  r.string(*e, "url", path + ".url", out.url);
  r.string(*e, "credentialsSecretName", path + ".credentialsSecretName", out.credentials_secret_name);
  return out;
}

std::optional<ca_bundle_ref> read_ca_bundle(reader& r, const Value& spec) {
  const Value* b = r.object(spec, "caBundle", "spec.caBundle");
  if (b == nullptr) return std::nullopt;
  const Value* config_map = r.object(*b, "configMapKeyRef", "spec.caBundle.configMapKeyRef");
  const Value* secret = r.object(*b, "secretKeyRef", "spec.caBundle.secretKeyRef");
  if ((config_map == nullptr) == (secret == nullptr)) {
    r.errors.push_back({"spec.caBundle", "set exactly one of configMapKeyRef and secretKeyRef"});
    return std::nullopt;
  }
  ca_bundle_ref out;
  out.from = config_map != nullptr ? ca_bundle_ref::source::config_map : ca_bundle_ref::source::secret;
  const auto path =
      std::string("spec.caBundle.") + (config_map != nullptr ? "configMapKeyRef" : "secretKeyRef");
  const Value& ref = config_map != nullptr ? *config_map : *secret;
  r.string(ref, "name", path + ".name", out.name);
  r.string(ref, "key", path + ".key", out.key);
  return out;
}

// spec.containerMode, spec.proxy, spec.caBundle, spec.manageSafeToEvict:
// the same fields on a RunnerSet and on a Runner.
void read_pod_config(reader& r, const Value& spec, pod_config& c) {
  c.container_mode = read_container_mode(r, spec, "spec");
  if (const Value* p = r.object(spec, "proxy", "spec.proxy")) {
    proxy_spec proxy;
    proxy.http = read_proxy_endpoint(r, *p, "http", "spec.proxy.http");
    proxy.https = read_proxy_endpoint(r, *p, "https", "spec.proxy.https");
    r.string_list(*p, "noProxy", "spec.proxy.noProxy", proxy.no_proxy);
    c.proxy = std::move(proxy);
  }
  c.ca_bundle = read_ca_bundle(r, spec);
  r.boolean(spec, "manageSafeToEvict", "spec.manageSafeToEvict", c.manage_safe_to_evict);
}

// A Runner's spec.podSecurity: its set's RunnerClass's level, where that
// asks for fields a template may leave out (model::variants_under). A
// RunnerSet has no such field: a tenant does not choose it.
void read_runner_pod_security(reader& r, const Value& spec, pod_config& c) {
  std::string level;
  r.string(spec, "podSecurity", "spec.podSecurity", level);
  if (auto named = pod_security_level_named(level))
    c.pod_security = *named;
  else if (!level.empty())
    r.errors.push_back(
        {"spec.podSecurity", "must be privileged, baseline or restricted, not \"" + level + "\""});
}

// The fields a Runner copies from its RunnerSet: same names in both specs.
template <class Spec>
void read_registration(reader& r, const Value& spec, Spec& s) {
  r.string(spec, "scopeURL", "spec.scopeURL", s.scope_url);
  r.string(spec, "credentialsSecretName", "spec.credentialsSecretName", s.credentials_secret_name);
  r.string(spec, "runnerGroup", "spec.runnerGroup", s.runner_group);
  r.string_list(spec, "runnerLabels", "spec.runnerLabels", s.runner_labels);
  if (auto t = read_template(r, spec, "spec")) s.template_ = std::move(*t);
  read_pod_config(r, spec, s.pod);
}

}  // namespace

void runnerset_spec::set_scope_url(std::string url) {
  scope_url = std::move(url);
  auto parsed = parse_scope_url(scope_url);
  scope = parsed ? std::optional<github_scope>(std::move(*parsed)) : std::nullopt;
  scope_error = parsed ? std::string() : parsed.error();
}

namespace {

// spec.startTimeTarget and a variant's.
std::optional<start_time_target_spec> read_start_time_target(reader& r, const Value& parent,
                                                             const std::string& at) {
  const auto path = join(at, "startTimeTarget");
  const Value* t = r.object(parent, "startTimeTarget", path);
  if (t == nullptr) return std::nullopt;
  start_time_target_spec out;
  r.int32(*t, "p95Seconds", path + ".p95Seconds", out.p95_seconds);
  return out;
}

void read_runnerset_spec(reader& r, const Value& spec, runnerset_spec& s) {
  r.string(spec, "runnerClassName", "spec.runnerClassName", s.runner_class_name);
  read_registration(r, spec, s);
  // A set whose URL names no scope still decodes: admission refuses it,
  // and the manager says why in its conditions.
  s.set_scope_url(std::move(s.scope_url));
  r.int32(spec, "minRunners", "spec.minRunners", s.min_runners);
  r.int32(spec, "maxRunners", "spec.maxRunners", s.max_runners);
  r.int32(spec, "replicas", "spec.replicas", s.replicas);
  r.int32(spec, "startupTimeoutSeconds", "spec.startupTimeoutSeconds", s.startup_timeout_seconds);
  s.start_time_target = read_start_time_target(r, spec, "spec");
  std::string intake;
  r.string(spec, "intake", "spec.intake", intake);
  if (intake == "Listener")
    s.intake = intake_mode::listener;
  else if (!intake.empty() && intake != "Webhook")
    r.errors.push_back({"spec.intake", "must be Webhook or Listener, not \"" + intake + "\""});
  r.objects(spec, "variants", "spec.variants", s.variants,
            [&](const Value& v, const std::string& at, variant_spec& out) {
              r.string(v, "name", at + ".name", out.name);
              r.string_list(v, "runnerLabels", at + ".runnerLabels", out.runner_labels);
              r.int32(v, "minRunners", at + ".minRunners", out.min_runners);
              r.int32(v, "maxRunners", at + ".maxRunners", out.max_runners);
              out.template_ = read_template(r, v, at);
              out.container_mode = read_container_mode(r, v, at);
              r.int32(v, "startupTimeoutSeconds", at + ".startupTimeoutSeconds", out.startup_timeout_seconds);
              out.start_time_target = read_start_time_target(r, v, at);
            });
}

void read_runnerset_status(reader& r, const Value& status, runnerset_status& s) {
  r.int64(status, "observedGeneration", "status.observedGeneration", s.observed_generation);
  r.int64(status, "scaleSetId", "status.scaleSetId", s.scale_set_id);
  r.string(status, "sessionId", "status.sessionId", s.session_id);
  read_counts(r, status, "status", s.counts);
  r.string(status, "selector", "status.selector", s.selector);
  read_conditions(r, status, "status.conditions", s.conditions);
  r.objects(status, "variants", "status.variants", s.variants,
            [&](const Value& v, const std::string& at, variant_status& out) {
              r.string(v, "name", at + ".name", out.name);
              r.int64(v, "scaleSetId", at + ".scaleSetId", out.scale_set_id);
              r.string(v, "sessionId", at + ".sessionId", out.session_id);
              read_counts(r, v, at, out.counts);
            });
  r.objects(status, "pendingRemovals", "status.pendingRemovals", s.pending_removals,
            [&](const Value& v, const std::string& at, pending_removal& out) {
              r.int64(v, "runnerId", at + ".runnerId", out.runner_id);
              r.string(v, "name", at + ".name", out.name);
            });
}

// An RFC 3339 member as seconds since the epoch: nothing when absent, 0
// when it is not a time (model::job_timeline: reached, without a time the
// manager can use; never an error that would make the object unreadable).
time_point_seconds time_member(const Value& obj, const char* key) {
  const Value* v = json::find_value(obj, key);
  if (v == nullptr || v->IsNull()) return std::nullopt;
  if (!v->IsString()) return 0;
  return parse_rfc3339(std::string_view(v->GetString(), v->GetStringLength())).value_or(0);
}

void read_timeline(const Value& status, job_timeline& t) {
  const Value* v = json::find_value(status, "timeline");
  if (v == nullptr || !v->IsObject()) return;
  t.queued = time_member(*v, "queued");
  t.created = time_member(*v, "created");
  t.pod_scheduled = time_member(*v, "podScheduled");
  t.containers_started = time_member(*v, "containersStarted");
  t.online = time_member(*v, "online");
  t.started = time_member(*v, "started");
  t.completed = time_member(*v, "completed");
}

void read_runner_status(reader& r, const Value& status, runner_status& s) {
  // The CRD admits the five phases only; a phase outside them (legacy
  // "Unknown", or none) reads as unset, which the controller may publish over.
  std::string phase;
  r.string(status, "phase", "status.phase", phase);
  s.phase = parse_runner_phase(phase).value_or(runner_phase::unset);
  r.int64(status, "runnerId", "status.runnerId", s.runner_id);
  r.string(status, "runnerName", "status.runnerName", s.runner_name);
  r.boolean(status, "podReady", "status.podReady", s.pod_ready);
  r.string(status, "reason", "status.reason", s.reason);
  r.string(status, "message", "status.message", s.message);
  if (const Value* job = r.object(status, "job", "status.job")) {
    job_ref j;
    r.int64(*job, "id", "status.job.id", j.id);
    r.string(*job, "repository", "status.job.repository", j.repository);
    r.string(*job, "workflowRef", "status.job.workflowRef", j.workflow_ref);
    r.int64(*job, "runId", "status.job.runId", j.run_id);
    r.string(*job, "displayName", "status.job.displayName", j.display_name);
    s.job = std::move(j);
  }
  read_conditions(r, status, "status.conditions", s.conditions);
  r.objects(status, "failures", "status.failures", s.failures,
            [&](const Value& f, const std::string& at, runner_failure& out) {
              r.string(f, "time", at + ".time", out.time);
              r.string(f, "reason", at + ".reason", out.reason);
              r.string(f, "message", at + ".message", out.message);
              r.int32(f, "exitCode", at + ".exitCode", out.exit_code);
              r.string(f, "podUID", at + ".podUID", out.pod_uid);
            });
  read_timeline(status, s.timeline);
}

// One container's resources.requests (0 for what it does not request or
// requests in a form that is not a quantity).
pod_requests container_requests(const Value& container) {
  pod_requests out;
  const Value* resources = json::find_value(container, "resources");
  const Value* requests =
      resources && resources->IsObject() ? json::find_value(*resources, "requests") : nullptr;
  if (requests == nullptr || !requests->IsObject()) return out;
  out.cpu_cores = parse_quantity(json::str(*requests, "cpu")).value_or(0);
  out.memory_bytes = parse_quantity(json::str(*requests, "memory")).value_or(0);
  return out;
}

// What the scheduler reserves for the pod: the containers' requests and the
// native sidecars' (init containers with restartPolicy Always), or a regular
// init container's when larger, plus spec.overhead.
pod_requests read_pod_requests(const Value& spec) {
  pod_requests sum;
  auto add = [](pod_requests& to, const pod_requests& r) {
    to.cpu_cores += r.cpu_cores;
    to.memory_bytes += r.memory_bytes;
  };
  if (const Value* cs = json::find_value(spec, "containers"); cs && cs->IsArray())
    for (const auto& c : cs->GetArray()) add(sum, container_requests(c));
  pod_requests largest_init;
  if (const Value* cs = json::find_value(spec, "initContainers"); cs && cs->IsArray())
    for (const auto& c : cs->GetArray()) {
      if (json::str(c, "restartPolicy") == "Always") {
        add(sum, container_requests(c));
        continue;
      }
      const auto r = container_requests(c);
      largest_init.cpu_cores = std::max(largest_init.cpu_cores, r.cpu_cores);
      largest_init.memory_bytes = std::max(largest_init.memory_bytes, r.memory_bytes);
    }
  sum.cpu_cores = std::max(sum.cpu_cores, largest_init.cpu_cores);
  sum.memory_bytes = std::max(sum.memory_bytes, largest_init.memory_bytes);
  if (const Value* overhead = json::find_value(spec, "overhead"); overhead && overhead->IsObject()) {
    sum.cpu_cores += parse_quantity(json::str(*overhead, "cpu")).value_or(0);
    sum.memory_bytes += parse_quantity(json::str(*overhead, "memory")).value_or(0);
  }
  return sum;
}

template <class T, class Fn>
expected<T, field_errors> parse_text(std::string_view json, Fn&& fn) {
  auto d = json::parse(json, json::sources::kube_object);
  if (!d) return unexpected<field_errors>{field_errors{{"", "is not valid JSON: " + d.error()}}};
  return fn(*d);
}

// The labels of its own objects the manager reads: which set (routing),
// which Runner (the set hands the event to it) and busy (a pod's drain
// protection). The others (the variant's, the template's) are not kept: the
// informers cache a Pod and a Secret per Runner, and each label is a map
// node with two strings.
bool label_read(std::string_view key) {
  return key == label_runnerset || key == label_runner || key == label_busy;
}

// The metadata of an object a Runner owns: identity, deletion, its owner,
// and only the labels the manager reads (label_read).
owned_object_meta owned_meta(const Value& obj) {
  owned_object_meta m;
  const Value* meta = json::find_value(obj, "metadata");
  if (meta == nullptr || !meta->IsObject()) return m;
  m.name = json::str(*meta, "name");
  m.namespace_ = json::str(*meta, "namespace");
  m.uid = json::str(*meta, "uid");
  m.resource_version = json::str(*meta, "resourceVersion");
  m.deleting = json::find_value(*meta, "deletionTimestamp") != nullptr;
  if (const Value* owners = json::find_value(*meta, "ownerReferences");
      owners != nullptr && owners->IsArray())
    for (const auto& owner : owners->GetArray())
      if (owner.IsObject() && json::boolean(owner, "controller")) {
        m.owner_uid = json::str(owner, "uid");
        const auto api_version = json::str(owner, "apiVersion");
        m.owner_is_runner =
            json::str(owner, "kind") == "Runner" && api_version.starts_with(std::string(api_group) + "/");
      }
  if (const Value* labels = json::find_value(*meta, "labels"); labels != nullptr && labels->IsObject())
    for (auto it = labels->MemberBegin(); it != labels->MemberEnd(); ++it) {
      std::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (label_read(key) && it->value.IsString())
        m.labels.emplace(key, std::string(it->value.GetString(), it->value.GetStringLength()));
    }
  return m;
}

}  // namespace

std::optional<jit_config> read_jit_secret(const rapidjson::Value& secret) {
  const auto* data = json::find_value(secret, "data");
  if (data == nullptr || !data->IsObject()) return std::nullopt;
  auto field = [&](const char* key) -> std::optional<std::string> {
    const auto* v = json::find_value(*data, key);
    if (v == nullptr || !v->IsString()) return std::nullopt;
    return base64_decode(std::string_view(v->GetString(), v->GetStringLength()));
  };
  auto encoded = field(jit_key_config);
  auto id = field(jit_key_runner_id);
  auto name = field(jit_key_runner_name);
  if (!encoded || encoded->empty() || !id || !name) return std::nullopt;
  jit_config out{*encoded, 0, *name};
  try {
    size_t used = 0;
    out.runner_id = std::stoll(*id, &used);
    if (used != id->size() || out.runner_id <= 0) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return out;
}

object_meta read_object_meta(const rapidjson::Value& object) {
  object_meta out;
  if (!object.IsObject()) return out;
  reader r;
  read_meta(r, object, out);
  return out;
}

jit_secret read_jit_secret_view(const rapidjson::Value& secret) {
  jit_secret out;
  out.metadata = owned_meta(secret);
  if (auto jit = read_jit_secret(secret))
    out.registration = jit_registration{jit->runner_id, jit->runner_name};
  return out;
}

runner_pod read_runner_pod(const rapidjson::Value& pod) {
  runner_pod out;
  out.metadata = owned_meta(pod);
  if (const Value* spec = json::find_value(pod, "spec"); spec && spec->IsObject())
    out.requests = read_pod_requests(*spec);
  const Value* status = json::find_value(pod, "status");
  if (status == nullptr || !status->IsObject()) return out;
  out.phase = json::str(*status, "phase");
  auto transition = [](const Value& c) { return time_member(c, "lastTransitionTime").value_or(0); };
  if (const auto* conditions = json::find_value(*status, "conditions"); conditions && conditions->IsArray())
    for (const auto& c : conditions->GetArray()) {
      const auto type = json::str(c, "type");
      const bool is_true = json::str(c, "status") == "True";
      if (type == "Ready") {
        out.ready = is_true;
        if (is_true) out.ready_at = transition(c);
      } else if (type == "PodScheduled" && is_true) {
        out.scheduled_at = transition(c);
      }
    }
  if (const auto* cs = json::find_value(*status, "containerStatuses"); cs && cs->IsArray())
    for (const auto& c : cs->GetArray()) {
      container_state state;
      state.name = json::str(c, "name");
      const auto* st = json::find_value(c, "state");
      const auto* terminated = st ? json::find_value(*st, "terminated") : nullptr;
      const auto* running = st ? json::find_value(*st, "running") : nullptr;
      if (state.name == runner_container)
        for (const auto* s : {running, terminated})
          if (s != nullptr && s->IsObject()) out.runner_started_at = time_member(*s, "startedAt").value_or(0);
      if (terminated != nullptr && terminated->IsObject()) {
        state.terminated = true;
        state.exit_code = static_cast<std::int32_t>(json::i64(*terminated, "exitCode", 1));
        state.reported_version = deprecated_version_in(json::str(*terminated, "message"));
        state.deprecated = state.reported_version.has_value();
      }
      out.containers.push_back(std::move(state));
    }
  return out;
}

expected<runnerset, field_errors> parse_runnerset(const rapidjson::Value& object) {
  if (!object.IsObject()) return unexpected<field_errors>{field_errors{{"", "must be an object"}}};
  reader r;
  runnerset out;
  read_meta(r, object, out.metadata);
  if (const Value* spec = r.object(object, "spec", "spec")) read_runnerset_spec(r, *spec, out.spec);
  if (const Value* status = r.object(object, "status", "status"))
    read_runnerset_status(r, *status, out.status);
  if (!r.errors.empty()) return unexpected<field_errors>{std::move(r.errors)};
  return out;
}

expected<runner, field_errors> parse_runner(const rapidjson::Value& object) {
  if (!object.IsObject()) return unexpected<field_errors>{field_errors{{"", "must be an object"}}};
  reader r;
  runner out;
  read_meta(r, object, out.metadata);
  if (const Value* spec = r.object(object, "spec", "spec")) {
    // A spec seen before (every Runner of a variant has the same) is not
    // decoded again: it was decoded without errors, and is shared.
    const auto key = json::write(*spec);
    if (auto known = shared_runner_spec_for(key)) {
      out.spec = std::move(known);
    } else {
      runner_spec s;
      const auto errors_before = r.errors.size();
      read_registration(r, *spec, s);
      read_runner_pod_security(r, *spec, s.pod);
      r.string(*spec, "runnerSetName", "spec.runnerSetName", s.runner_set_name);
      r.string(*spec, "variant", "spec.variant", s.variant);
      if (r.errors.size() == errors_before) out.spec = share_runner_spec(std::move(s), key);
    }
  }
  if (const Value* status = r.object(object, "status", "status")) read_runner_status(r, *status, out.status);
  if (!r.errors.empty()) return unexpected<field_errors>{std::move(r.errors)};
  return out;
}

expected<runnerset, field_errors> parse_runnerset(std::string_view json) {
  return parse_text<runnerset>(json, [](const rapidjson::Document& d) { return parse_runnerset(d); });
}

expected<runner, field_errors> parse_runner(std::string_view json) {
  return parse_text<runner>(json, [](const rapidjson::Document& d) { return parse_runner(d); });
}

}  // namespace octorun::model
