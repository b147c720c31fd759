#include "model/pod_security.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "common/json.hpp"
#include "common/json_parse.hpp"

namespace octorun::model {
namespace {

using rapidjson::Value;

constexpr std::array<std::string_view, 13> baseline_capabilities = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
constexpr std::array<std::string_view, 10> safe_sysctls = {
    "kernel.shm_rmid_forced",       "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",      "net.ipv4.ping_group_range",    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",  "net.ipv4.tcp_fin_timeout",     "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes"};
constexpr std::array<std::string_view, 8> restricted_volumes = {
    "configMap", "csi",   "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& xs, std::string_view x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

class judge {
 public:
  judge(std::string path, pod_security_level level) : path_(std::move(path)), level_(level) {}

  field_errors run(const Value& t) {
    const Value* spec = json::member(t, "spec");
    if (spec == nullptr) return std::move(out_);
    const auto at = path_ + ".spec";
    for (const char* host : {"hostNetwork", "hostPID", "hostIPC"})
      if (json::boolean(*spec, host))
        refuse(at + "." + host, "must not be true (the pod would share the node's)");
    if (!json::str(*spec, "nodeName").empty())
      refuse(at + ".nodeName",
             "must not be set (it skips the scheduler, and with it the platform's node pools)");
    if (const Value* sc = json::member(*spec, "securityContext")) {
      security_context(at + ".securityContext", *sc);
      if (const Value* sysctls = json::member(*sc, "sysctls"); sysctls != nullptr && sysctls->IsArray())
        for (rapidjson::SizeType i = 0; i < sysctls->Size(); ++i)
          if (auto name = json::str((*sysctls)[i], "name"); !listed(safe_sysctls, name))
            refuse(at + ".securityContext.sysctls[" + std::to_string(i) + "].name",
                   "must be a safe sysctl, not \"" + name + "\"");
    }
    volumes(at, *spec);
    for (const char* kind : {"containers", "initContainers", "ephemeralContainers"})
      if (const Value* cs = json::member(*spec, kind); cs != nullptr && cs->IsArray())
        for (rapidjson::SizeType i = 0; i < cs->Size(); ++i)
          container(at + "." + kind + "[" + std::to_string(i) + "]", (*cs)[i]);
    return std::move(out_);
  }

 private:
  void refuse(const std::string& field, const std::string& why) {
    out_.push_back({field, why + " under the " + std::string(to_string(level_)) + " pod security level"});
  }
  bool restricted() const { return level_ == pod_security_level::restricted; }

  void security_context(const std::string& at, const Value& sc) {
    if (const Value* seccomp = json::member(sc, "seccompProfile")) {
      const auto type = json::str(*seccomp, "type");
      if (type == "Unconfined" ||
          (restricted() && !type.empty() && type != "RuntimeDefault" && type != "Localhost"))
        refuse(at + ".seccompProfile.type", "must not be \"" + type + "\"");
    }
    if (const Value* apparmor = json::member(sc, "appArmorProfile");
        apparmor != nullptr && json::str(*apparmor, "type") == "Unconfined")
      refuse(at + ".appArmorProfile.type", "must not be \"Unconfined\"");
    if (const Value* windows = json::member(sc, "windowsOptions");
        windows != nullptr && json::boolean(*windows, "hostProcess"))
      refuse(at + ".windowsOptions.hostProcess", "must not be true");
    if (const Value* se = json::member(sc, "seLinuxOptions")) {
      const auto type = json::str(*se, "type");
      if (!type.empty() && type != "container_t" && type != "container_init_t" && type != "container_kvm_t" &&
          type != "container_engine_t")
        refuse(at + ".seLinuxOptions.type", "must not be \"" + type + "\"");
      for (const char* key : {"user", "role"})
        if (!json::str(*se, key).empty()) refuse(at + ".seLinuxOptions." + key, "must not be set");
    }
    if (!restricted()) return;
    if (const Value* v = json::member(sc, "runAsNonRoot"); v != nullptr && v->IsBool() && !v->GetBool())
      refuse(at + ".runAsNonRoot", "must not be false");
    if (const Value* v = json::member(sc, "runAsUser"); v != nullptr && v->IsInt64() && v->GetInt64() == 0)
      refuse(at + ".runAsUser", "must not be 0");
  }

  void container(const std::string& at, const Value& c) {
    if (const Value* ports = json::member(c, "ports"); ports != nullptr && ports->IsArray())
      for (rapidjson::SizeType i = 0; i < ports->Size(); ++i)
        if (const Value* hp = json::member((*ports)[i], "hostPort");
            hp != nullptr && hp->IsInt64() && hp->GetInt64() != 0)
          refuse(at + ".ports[" + std::to_string(i) + "].hostPort", "must not be set");
    const Value* sc = json::member(c, "securityContext");
    if (sc == nullptr) return;
    const auto sat = at + ".securityContext";
    if (json::boolean(*sc, "privileged")) refuse(sat + ".privileged", "must not be true");
    if (auto mount = json::str(*sc, "procMount"); !mount.empty() && mount != "Default")
      refuse(sat + ".procMount", "must be Default, not \"" + mount + "\"");
    if (restricted())
      if (const Value* v = json::member(*sc, "allowPrivilegeEscalation");
          v != nullptr && v->IsBool() && v->GetBool())
        refuse(sat + ".allowPrivilegeEscalation", "must not be true");
    if (const Value* caps = json::member(*sc, "capabilities"))
      if (const Value* add = json::member(*caps, "add"); add != nullptr && add->IsArray())
        for (rapidjson::SizeType i = 0; i < add->Size(); ++i) {
          const auto cap = (*add)[i].IsString() ? std::string((*add)[i].GetString()) : std::string();
          const bool allowed = restricted() ? cap == "NET_BIND_SERVICE" : listed(baseline_capabilities, cap);
          if (!allowed)
            refuse(sat + ".capabilities.add[" + std::to_string(i) + "]", "must not add \"" + cap + "\"");
        }
    security_context(sat, *sc);
  }

  void volumes(const std::string& at, const Value& spec) {
    const Value* vs = json::member(spec, "volumes");
    if (vs == nullptr || !vs->IsArray()) return;
    for (rapidjson::SizeType i = 0; i < vs->Size(); ++i) {
      const Value& v = (*vs)[i];
      if (!v.IsObject()) continue;
      const auto vat = at + ".volumes[" + std::to_string(i) + "]";
      if (json::member(v, "hostPath") != nullptr) refuse(vat + ".hostPath", "must not be set");
      if (!restricted()) continue;
      for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
        std::string_view key(m->name.GetString(), m->name.GetStringLength());
        if (key != "name" && key != "hostPath" && !listed(restricted_volumes, key))
          refuse(vat + "." + std::string(key), "is not a volume type allowed");
      }
    }
  }

  std::string path_;
  pod_security_level level_;
  field_errors out_;
};

}  // namespace

field_errors check_pod_security(const std::string& path, const pod_template& t, pod_security_level level) {
  if (level == pod_security_level::privileged || t.json.empty()) return {};
  auto doc = json::parse(t.json, json::sources::kube_object);
  if (!doc) return {{path, "cannot be read: " + doc.error()}};
  return judge(path, level).run(*doc);
}

}  // namespace octorun::model
