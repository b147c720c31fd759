#include "model/runner_class.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>

#include "common/json_parse.hpp"
#include "model/field_reader.hpp"
#include "model/parse.hpp"

namespace octorun::model {
namespace {

using detail::index;
using detail::reader;
using rapidjson::Value;

void read_selector(reader& r, const Value& parent, const char* key, const std::string& path,
                   label_selector& out) {
  const Value* s = r.object(parent, key, path);
  if (s == nullptr) return;
  r.string_map(*s, "matchLabels", path + ".matchLabels", out.match_labels);
  r.objects(*s, "matchExpressions", path + ".matchExpressions", out.match_expressions,
            [&](const Value& e, const std::string& at, label_selector_requirement& req) {
              r.string(e, "key", at + ".key", req.key);
              r.string(e, "operator", at + ".operator", req.op);
              r.string_list(e, "values", at + ".values", req.values);
              const bool listed = req.op == "In" || req.op == "NotIn";
              if (!listed && req.op != "Exists" && req.op != "DoesNotExist")
                r.errors.push_back(
                    {at + ".operator", "must be In, NotIn, Exists or DoesNotExist, not \"" + req.op + "\""});
              else if (listed == req.values.empty())
                r.errors.push_back({at + ".values", listed ? "must not be empty with " + req.op
                                                           : "must be empty with " + req.op});
            });
}

void read_class_spec(reader& r, const Value& spec, runner_class_spec& s) {
  read_selector(r, spec, "namespaceSelector", "spec.namespaceSelector", s.namespace_selector);
  if (r.find(spec, "namespaceSelector") == nullptr)
    r.errors.push_back({"spec.namespaceSelector", "is required: {} admits every namespace"});
  if (const Value* github = r.object(spec, "github", "spec.github")) {
    r.string_list(*github, "servers", "spec.github.servers", s.servers);
    r.string_list(*github, "scopes", "spec.github.scopes", s.scopes);
    r.string(*github, "credentialsSecretName", "spec.github.credentialsSecretName",
             s.credentials_secret_name);
    r.boolean(*github, "allowTenantCredentials", "spec.github.allowTenantCredentials",
              s.allow_tenant_credentials);
    if (const Value* proxy = r.object(*github, "proxy", "spec.github.proxy")) {
      class_proxy p;
      r.string(*proxy, "url", "spec.github.proxy.url", p.url);
      r.string(*proxy, "credentialsSecretName", "spec.github.proxy.credentialsSecretName",
               p.credentials_secret_name);
      s.connection.proxy = std::move(p);
    }
    r.string(*github, "caBundle", "spec.github.caBundle", s.connection.ca_bundle);
    if (const Value* ref = r.object(*github, "webhookSecretRef", "spec.github.webhookSecretRef")) {
      r.string(*ref, "name", "spec.github.webhookSecretRef.name", s.webhook_secret.name);
      r.string(*ref, "key", "spec.github.webhookSecretRef.key", s.webhook_secret.key);
      if (s.webhook_secret.name.empty())
        r.errors.push_back({"spec.github.webhookSecretRef.name", "is required"});
      if (s.webhook_secret.key.empty()) s.webhook_secret.key = secret_key_ref{}.key;
    }
  }
  std::vector<std::string> modes;
  r.string_list(spec, "containerModes", "spec.containerModes", modes);
  for (std::size_t i = 0; i < modes.size(); ++i) {
    if (auto m = container_mode_named(modes[i]))
      s.container_modes.push_back(*m);
    else
      r.errors.push_back(
          {index("spec.containerModes", i), "must be none, dind or kubernetes, not \"" + modes[i] + "\""});
  }
  std::string level;
  r.string(spec, "podSecurity", "spec.podSecurity", level);
  if (auto named = pod_security_level_named(level))
    s.pod_security = *named;
  else if (!level.empty())
    r.errors.push_back(
        {"spec.podSecurity", "must be privileged, baseline or restricted, not \"" + level + "\""});
  r.int32(spec, "maxRunnersPerSet", "spec.maxRunnersPerSet", s.max_runners_per_set);
  r.int32(spec, "maxRunnersPerNamespace", "spec.maxRunnersPerNamespace", s.max_runners_per_namespace);
}

bool contains(const std::vector<std::string>& xs, const std::string& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

}  // namespace

bool older_than(const namespace_set& a, const namespace_set& b) {
  const auto ta = a.created.value_or(std::numeric_limits<std::int64_t>::max());
  const auto tb = b.created.value_or(std::numeric_limits<std::int64_t>::max());
  return std::tie(ta, a.name) < std::tie(tb, b.name);
}

bool selector_matches(const label_selector& selector, const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const auto& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    const bool has = it != labels.end();
    if (req.op == "Exists" && !has) return false;
    if (req.op == "DoesNotExist" && has) return false;
    if (req.op == "In" && (!has || !contains(req.values, it->second))) return false;
    if (req.op == "NotIn" && has && contains(req.values, it->second)) return false;
    // An operator parse_runner_class refused never reaches here; match nothing on one anyway.
    if (req.op != "Exists" && req.op != "DoesNotExist" && req.op != "In" && req.op != "NotIn") return false;
  }
  return true;
}

std::vector<std::string> runner_class_spec::effective_servers() const {
  if (!servers.empty()) return servers;
  return {"https://github.com", "https://*.ghe.com"};
}

std::vector<container_mode> runner_class_spec::effective_container_modes() const {
  if (!container_modes.empty()) return container_modes;
  return {container_mode::none, container_mode::kubernetes};
}

expected<runner_class, field_errors> parse_runner_class(const rapidjson::Value& object) {
  if (!object.IsObject()) return unexpected<field_errors>{field_errors{{"", "must be an object"}}};
  reader r;
  runner_class out;
  out.metadata = read_object_meta(object);
  if (const Value* meta = r.object(object, "metadata", "metadata"))
    if (const Value* annotations = r.object(*meta, "annotations", "metadata.annotations"))
      out.is_default = json::str(*annotations, default_class_annotation) == "true";
  if (const Value* spec = r.object(object, "spec", "spec"))
    read_class_spec(r, *spec, out.spec);
  else
    r.errors.push_back({"spec", "is required"});
  if (!r.errors.empty()) return unexpected<field_errors>{std::move(r.errors)};
  return out;
}

expected<runner_class, field_errors> parse_runner_class(std::string_view json) {
  auto d = json::parse(json, json::sources::kube_object);
  if (!d) return unexpected<field_errors>{field_errors{{"", "is not valid JSON: " + d.error()}}};
  return parse_runner_class(*d);
}

}  // namespace octorun::model
