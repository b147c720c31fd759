#include "actors/runner/pod_features.hpp"

#include <string_view>
#include <vector>

#include "common/json_parse.hpp"
#include "model/naming.hpp"
#include "model/pod_config.hpp"
#include "model/scope.hpp"

namespace octorun::runner {
namespace {

using json::allocator;
using rapidjson::Value;

Value str(std::string_view s, allocator& a) { return json::string_value(s, a); }

bool named(const Value& item, std::string_view name) {
  const auto* n = json::find_value(item, "name");
  return n != nullptr && n->IsString() && std::string_view(n->GetString(), n->GetStringLength()) == name;
}

// The list `key` of `obj`, made an empty list if missing (or not a list).
Value& list(Value& obj, const char* key, allocator& a) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) {
    obj.AddMember(rapidjson::StringRef(key), Value(rapidjson::kArrayType), a);
    it = obj.FindMember(key);
  }
  if (!it->value.IsArray()) it->value.SetArray();
  return it->value;
}

bool has_named(const Value& obj, const char* key, std::string_view name) {
  const auto* items = json::find_value(obj, key);
  if (items == nullptr || !items->IsArray()) return false;
  for (const auto& item : items->GetArray())
    if (named(item, name)) return true;
  return false;
}

bool has_container(const Value& spec, std::string_view name) {
  return has_named(spec, "containers", name) || has_named(spec, "initContainers", name);
}

// A variable, unless the container sets one of that name (the template wins).
void add_env(Value& container, std::string_view name, Value value_or_from, bool from, allocator& a) {
  if (has_named(container, "env", name)) return;
  Value var(rapidjson::kObjectType);
  var.AddMember("name", str(name, a), a);
  var.AddMember(rapidjson::StringRef(from ? "valueFrom" : "value"), value_or_from, a);
  list(container, "env", a).PushBack(var, a);
}
void add_env(Value& container, std::string_view name, std::string_view value, allocator& a) {
  add_env(container, name, str(value, a), false, a);
}

Value key_ref(const char* kind, std::string_view name, std::string_view key, allocator& a) {
  Value ref(rapidjson::kObjectType);
  ref.AddMember("name", str(name, a), a);
  ref.AddMember("key", str(key, a), a);
  Value from(rapidjson::kObjectType);
  from.AddMember(rapidjson::StringRef(kind), ref, a);
  return from;
}

// A mount, unless the container mounts a volume of that name already.
void add_mount(Value& container, std::string_view volume, std::string_view path, allocator& a,
               std::string_view sub_path = {}) {
  if (has_named(container, "volumeMounts", volume)) return;
  Value m(rapidjson::kObjectType);
  m.AddMember("name", str(volume, a), a);
  m.AddMember("mountPath", str(path, a), a);
  if (!sub_path.empty()) {
    m.AddMember("subPath", str(sub_path, a), a);
    m.AddMember("readOnly", true, a);
  }
  list(container, "volumeMounts", a).PushBack(m, a);
}

// A volume `name` with `source` (e.g. "emptyDir": {}), unless the template has one.
void add_volume(Value& spec, std::string_view name, const char* source, Value body, allocator& a) {
  if (has_named(spec, "volumes", name)) return;
  Value v(rapidjson::kObjectType);
  v.AddMember("name", str(name, a), a);
  v.AddMember(rapidjson::StringRef(source), body, a);
  list(spec, "volumes", a).PushBack(v, a);
}

void add_member_if_absent(Value& obj, const char* key, Value value, allocator& a) {
  if (json::member(obj, key) == nullptr) obj.AddMember(rapidjson::StringRef(key), value, a);
}

Value& runner_of(Value& spec, rapidjson::SizeType index) { return spec["containers"][index]; }

// The object `key` of `obj`, made an empty object if missing (or not an object).
Value& object_member(Value& obj, const char* key, allocator& a) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) {
    obj.AddMember(rapidjson::StringRef(key), Value(rapidjson::kObjectType), a);
    it = obj.FindMember(key);
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

// ---- the proxy: lower- and upper-case variables, credentials by reference --------

struct env_var {
  std::string name, value;
  std::string secret, key;  // valueFrom secretKeyRef when set
};

// The proxy variables of a container, credentials first: Kubernetes expands
// $(NAME) from variables defined before, so the password is never written
// into the pod spec, and a rotated Secret reaches the next pod.
std::vector<env_var> proxy_env(const model::proxy_spec& p) {
  std::vector<env_var> out;
  auto endpoint = [&](const std::optional<model::proxy_endpoint>& e, const char* lower, const char* upper,
                      const char* prefix) {
    if (!e) return;
    auto url = model::parse_proxy_url(e->url);
    if (!url) return;  // admission refuses it; a pod without it is better than a broken variable
    std::string userinfo;
    if (!e->credentials_secret_name.empty()) {
      const std::string user = std::string(prefix) + "_USERNAME",
                        password = std::string(prefix) + "_PASSWORD";
      out.push_back({user, "", e->credentials_secret_name, "username"});
      out.push_back({password, "", e->credentials_secret_name, "password"});
      userinfo = "$(" + user + "):$(" + password + ")@";
    }
    const auto value = url->scheme + "://" + userinfo + url->host;
    out.push_back({lower, value, "", ""});
    out.push_back({upper, value, "", ""});
  };
  endpoint(p.http, "http_proxy", "HTTP_PROXY", "OCTORUN_HTTP_PROXY");
  endpoint(p.https, "https_proxy", "HTTPS_PROXY", "OCTORUN_HTTPS_PROXY");
  if (!p.no_proxy.empty()) {
    std::string joined;
    for (const auto& h : p.no_proxy) joined += (joined.empty() ? "" : ",") + h;
    out.push_back({"no_proxy", joined, "", ""});
    out.push_back({"NO_PROXY", joined, "", ""});
  }
  return out;
}

void add_env_vars(Value& container, const std::vector<env_var>& vars, allocator& a) {
  for (const auto& v : vars) {
    if (v.secret.empty())
      add_env(container, v.name, v.value, a);
    else
      add_env(container, v.name, key_ref("secretKeyRef", v.secret, v.key, a), true, a);
  }
}

// ---- container modes ------------------------------------------------------------

// A Docker daemon as a native sidecar (an init container that keeps running,
// Kubernetes >= 1.29), sharing the runner's work directory and the runner
// image's externals (job containers bind-mount both by path), its socket in
// an emptyDir. Privileged: dockerd needs it; nothing else here is.
// True when it added the daemon (the template has no container "dind").
bool add_dind(Value& spec, rapidjson::SizeType runner_index, const std::vector<env_var>& proxy,
              allocator& a) {
  const std::string image = json::str(runner_of(spec, runner_index), "image");
  Value added(rapidjson::kArrayType);
  if (!has_container(spec, "init-dind-externals")) {
    Value init(rapidjson::kObjectType);
    init.AddMember("name", "init-dind-externals", a);
    init.AddMember("image", str(image, a), a);
    Value command(rapidjson::kArrayType);
    command.PushBack("cp", a);
    init.AddMember("command", command, a);
    Value args(rapidjson::kArrayType);
    for (const char* arg : {"-r", "/home/runner/externals/.", "/home/runner/tmpDir/"})
      args.PushBack(rapidjson::StringRef(arg), a);
    init.AddMember("args", args, a);
    add_mount(init, "dind-externals", "/home/runner/tmpDir", a);
    added.PushBack(init, a);
  }
  const bool ours = !has_container(spec, "dind");
  if (ours) {
    Value dind(rapidjson::kObjectType);
    dind.AddMember("name", "dind", a);
    dind.AddMember("image", rapidjson::StringRef(dind_image), a);
    Value args(rapidjson::kArrayType);
    for (const char* arg : {"dockerd", "--host=unix:///var/run/docker.sock", "--group=$(DOCKER_GROUP_GID)"})
      args.PushBack(rapidjson::StringRef(arg), a);
    dind.AddMember("args", args, a);
    add_env(dind, "DOCKER_GROUP_GID", docker_group_id, a);
    add_env_vars(dind, proxy, a);  // image pulls go through the proxy too
    Value security(rapidjson::kObjectType);
    security.AddMember("privileged", true, a);
    dind.AddMember("securityContext", security, a);
    dind.AddMember("restartPolicy", "Always", a);
    // The runner starts once the daemon answers (it waits up to
    // RUNNER_WAIT_FOR_DOCKER_IN_SECONDS as well).
    Value probe(rapidjson::kObjectType), exec(rapidjson::kObjectType), command(rapidjson::kArrayType);
    command.PushBack("docker", a).PushBack("info", a);
    exec.AddMember("command", command, a);
    probe.AddMember("exec", exec, a);
    probe.AddMember("initialDelaySeconds", 0, a);
    probe.AddMember("failureThreshold", 24, a);
    probe.AddMember("periodSeconds", 5, a);
    dind.AddMember("startupProbe", probe, a);
    add_mount(dind, "work", runner_work_dir, a);
    add_mount(dind, "dind-sock", "/var/run", a);
    add_mount(dind, "dind-externals", "/home/runner/externals", a);
    added.PushBack(dind, a);
  }
  // Ours first: the daemon is up before the template's own init containers run.
  auto& inits = list(spec, "initContainers", a);
  for (auto& c : inits.GetArray()) added.PushBack(c, a);
  inits = added;

  auto& runner = runner_of(spec, runner_index);
  add_env(runner, "DOCKER_HOST", "unix:///var/run/docker.sock", a);
  add_env(runner, "RUNNER_WAIT_FOR_DOCKER_IN_SECONDS", "120", a);
  add_mount(runner, "work", runner_work_dir, a);
  add_mount(runner, "dind-sock", "/var/run", a);
  add_volume(spec, "work", "emptyDir", Value(rapidjson::kObjectType), a);
  add_volume(spec, "dind-sock", "emptyDir", Value(rapidjson::kObjectType), a);
  add_volume(spec, "dind-externals", "emptyDir", Value(rapidjson::kObjectType), a);
  return ours;
}

// Runner container hooks (the image's /home/runner/k8s): each job container
// becomes a pod of its own, created through the API with the runner pod's
// ServiceAccount token, sharing the work volume, an ephemeral claim.
void add_kubernetes_mode(Value& spec, rapidjson::SizeType runner_index,
                         const model::container_mode_spec& mode, allocator& a) {
  auto& runner = runner_of(spec, runner_index);
  add_env(runner, "ACTIONS_RUNNER_CONTAINER_HOOKS", "/home/runner/k8s/index.js", a);
  Value field(rapidjson::kObjectType), from(rapidjson::kObjectType);
  field.AddMember("fieldPath", "metadata.name", a);
  from.AddMember("fieldRef", field, a);
  add_env(runner, "ACTIONS_RUNNER_POD_NAME", std::move(from), true, a);
  add_env(runner, "ACTIONS_RUNNER_REQUIRE_JOB_CONTAINER", "true", a);
  add_mount(runner, "work", runner_work_dir, a);

  const auto& claim_text = mode.work_volume_claim_json.empty() ? std::string(model::default_work_volume_claim)
                                                               : mode.work_volume_claim_json;
  auto claim = json::parse(claim_text, json::sources::stored_json);
  Value claim_template(rapidjson::kObjectType), ephemeral(rapidjson::kObjectType);
  claim_template.AddMember("spec",
                           claim && claim->IsObject() ? Value(*claim, a) : Value(rapidjson::kObjectType), a);
  ephemeral.AddMember("volumeClaimTemplate", claim_template, a);
  add_volume(spec, "work", "ephemeral", std::move(ephemeral), a);

  // The volume is group-owned by the runner user's group, so the runner can
  // write it (a fresh volume belongs to root).
  add_member_if_absent(object_member(spec, "securityContext", a), "fsGroup", Value(123), a);
  // The hooks call the API as the pod's ServiceAccount (whose own default
  // mounts no token).
  add_member_if_absent(spec, "automountServiceAccountToken", Value(true), a);
}

// `our_dind`: add_dind added the Docker daemon, which trusts the bundle too.
void add_ca_bundle(Value& spec, rapidjson::SizeType runner_index, const model::ca_bundle_ref& b,
                   bool our_dind, allocator& a) {
  constexpr const char* volume = "octorun-ca-bundle";
  constexpr const char* file = "octorun-ca-bundle.crt";
  Value items(rapidjson::kArrayType), item(rapidjson::kObjectType);
  item.AddMember("key", str(b.key, a), a);
  item.AddMember("path", rapidjson::StringRef(file), a);
  items.PushBack(item, a);
  Value source(rapidjson::kObjectType);
  const bool config_map = b.from == model::ca_bundle_ref::source::config_map;
  source.AddMember(rapidjson::StringRef(config_map ? "name" : "secretName"), str(b.name, a), a);
  source.AddMember("items", items, a);
  add_volume(spec, volume, config_map ? "configMap" : "secret", std::move(source), a);
  auto& runner = runner_of(spec, runner_index);
  add_mount(runner, volume, ca_bundle_file, a, file);
  // Node (actions) reads it directly; run.sh adds it to the system store
  // (update-ca-certificates) for the runner, git and curl.
  add_env(runner, "NODE_EXTRA_CA_CERTS", ca_bundle_file, a);
  add_env(runner, "RUNNER_UPDATE_CA_CERTS", "1", a);
  // The Docker daemon (Go) reads every file of SSL_CERT_DIR: registries
  // and proxies behind the private CA work for image pulls too.
  if (!our_dind) return;
  for (auto& c : spec["initContainers"].GetArray()) {
    if (!named(c, "dind")) continue;
    add_mount(c, volume, "/etc/octorun/ca/" + std::string(file), a, file);
    add_env(c, "SSL_CERT_DIR", "/etc/ssl/certs:/etc/octorun/ca", a);
  }
}

// ---- Pod Security: the level's fields a template leaves out ------------------

// The actions/runner image's runner user: its Dockerfile names it (USER
// runner), and a kubelet cannot tell a named user from root, so under
// runAsNonRoot the number must be given.
constexpr int actions_runner_uid = 1001;

bool is_privileged(const Value& container) {
  const auto* sc = json::find_value(container, "securityContext");
  const auto* p = sc != nullptr && sc->IsObject() ? json::find_value(*sc, "privileged") : nullptr;
  return p != nullptr && p->IsBool() && p->GetBool();
}

// The container runtime's default seccomp profile for the pod, unless the
// template names one: what restricted requires, and under baseline the one
// restricted field that takes nothing from a job (sudo keeps working).
void add_runtime_default_seccomp(Value& spec, allocator& a) {
  auto& pod = object_member(spec, "securityContext", a);
  if (json::member(pod, "seccompProfile") != nullptr) return;
  Value profile(rapidjson::kObjectType);
  profile.AddMember("type", "RuntimeDefault", a);
  pod.AddMember("seccompProfile", profile, a);
}

// What the restricted level requires of every container and the pod, each
// only where the template says nothing of it (a template that sets a field
// against the level is refused by the set's class, model/pod_security.hpp).
void add_restricted_defaults(Value& spec, rapidjson::SizeType runner_index, allocator& a) {
  add_runtime_default_seccomp(spec, a);
  auto& pod = object_member(spec, "securityContext", a);
  add_member_if_absent(pod, "runAsNonRoot", Value(true), a);
  const bool pod_user = json::member(pod, "runAsUser") != nullptr;
  for (const char* key : {"initContainers", "containers"}) {
    auto items = spec.FindMember(key);
    if (items == spec.MemberEnd() || !items->value.IsArray()) continue;
    for (auto& c : items->value.GetArray()) {
      if (!c.IsObject() || is_privileged(c)) continue;  // no field below is valid beside privileged
      auto& sc = object_member(c, "securityContext", a);
      add_member_if_absent(sc, "allowPrivilegeEscalation", Value(false), a);
      auto& capabilities = object_member(sc, "capabilities", a);
      if (json::member(capabilities, "drop") == nullptr) {
        Value drop(rapidjson::kArrayType);
        drop.PushBack("ALL", a);
        capabilities.AddMember("drop", drop, a);
      }
    }
  }
  auto& runner = runner_of(spec, runner_index);
  if (!pod_user && model::is_actions_runner_image(json::str(runner, "image")))
    add_member_if_absent(object_member(runner, "securityContext", a), "runAsUser", Value(actions_runner_uid),
                         a);
}

}  // namespace

void add_pod_features(Value& spec, rapidjson::SizeType runner_index, const model::runner& r, allocator& a) {
  auto& runner = runner_of(spec, runner_index);
  // The actions/runner image has no entry point.
  if (json::member(runner, "command") == nullptr && json::member(runner, "args") == nullptr &&
      model::is_actions_runner_image(json::str(runner, "image"))) {
    Value command(rapidjson::kArrayType);
    command.PushBack(rapidjson::StringRef(runner_start_command), a);
    runner.AddMember("command", command, a);
  }
  // The set's own ServiceAccount, which mounts no token, rather than the
  // namespace's default.
  if (!r.spec->runner_set_name.empty() && json::find_value(spec, "serviceAccountName") == nullptr &&
      json::find_value(spec, "serviceAccount") == nullptr)
    spec.AddMember("serviceAccountName", str(model::runner_service_account_name(r.spec->runner_set_name), a),
                   a);

  const auto& pod = r.spec->pod;
  const auto proxy = pod.proxy ? proxy_env(*pod.proxy) : std::vector<env_var>{};
  bool our_dind = false;
  if (pod.container_mode && pod.container_mode->type == model::container_mode::dind)
    our_dind = add_dind(spec, runner_index, proxy, a);
  if (pod.container_mode && pod.container_mode->type == model::container_mode::kubernetes)
    add_kubernetes_mode(spec, runner_index, *pod.container_mode, a);
  else
    // No mode but kubernetes calls the API from the pod: no token, whichever
    // ServiceAccount the template names (a template that sets the field
    // keeps its choice).
    add_member_if_absent(spec, "automountServiceAccountToken", Value(false), a);
  add_env_vars(runner_of(spec, runner_index), proxy, a);
  if (pod.ca_bundle) add_ca_bundle(spec, runner_index, *pod.ca_bundle, our_dind, a);
  // Last, so what the mode added is covered too. dind's daemon is a
  // privileged root container no level but privileged admits.
  const bool dind = pod.container_mode && pod.container_mode->type == model::container_mode::dind;
  if (pod.pod_security == model::pod_security_level::restricted && !dind)
    add_restricted_defaults(spec, runner_index, a);
  else if (pod.pod_security == model::pod_security_level::baseline && !dind)
    add_runtime_default_seccomp(spec, a);
}

}  // namespace octorun::runner
