#include "model/pod_config.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "common/hash.hpp"
#include "common/json_parse.hpp"
#include "model/naming.hpp"
#include "model/scope.hpp"

namespace octorun::model {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

void check_object_name(const std::string& path, const std::string& name, const char* kind,
                       field_errors& out) {
  if (name.empty())
    out.push_back({path, std::string("is required: the name of a ") + kind + " in this namespace"});
  else if (!is_dns_subdomain(name))
    out.push_back(
        {path, quoted(name) + " is not a valid " + kind + " name (lowercase letters, digits, '-' and '.')"});
}

// ConfigMap and Secret keys: letters, digits, '-', '_' and '.'.
bool valid_data_key(std::string_view key) {
  if (key.empty() || key.size() > max_dns_subdomain || key == "." || key == "..") return false;
  for (char c : key)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.'))
      return false;
  return true;
}

void check_proxy_endpoint(const std::string& path, const proxy_endpoint& e, field_errors& out) {
  if (auto url = parse_proxy_url(e.url); !url) out.push_back({path + ".url", url.error()});
  if (!e.credentials_secret_name.empty())
    check_object_name(path + ".credentialsSecretName", e.credentials_secret_name, "Secret", out);
}

void check_proxy(const std::string& path, const proxy_spec& p, field_errors& out) {
  if (!p.http && !p.https) out.push_back({path, "set http, https or both"});
  if (p.http) check_proxy_endpoint(path + ".http", *p.http, out);
  if (p.https) check_proxy_endpoint(path + ".https", *p.https, out);
  for (std::size_t i = 0; i < p.no_proxy.size(); ++i) {
    const auto& host = p.no_proxy[i];
    const auto at = path + ".noProxy[" + std::to_string(i) + "]";
    if (host.empty())
      out.push_back({at, "must not be empty"});
    else if (host.find_first_of(", \t\r\n") != std::string::npos)
      out.push_back({at, quoted(host) + " must be one host, domain or CIDR: give each as its own list item"});
  }
}

void check_ca_bundle(const std::string& path, const ca_bundle_ref& b, field_errors& out) {
  const bool config_map = b.from == ca_bundle_ref::source::config_map;
  const auto ref = path + (config_map ? ".configMapKeyRef" : ".secretKeyRef");
  check_object_name(ref + ".name", b.name, config_map ? "ConfigMap" : "Secret", out);
  if (!valid_data_key(b.key))
    out.push_back(
        {ref + ".key", (b.key.empty() ? std::string("is required") : quoted(b.key) + " is not a valid key") +
                           ": the key that holds the PEM bundle (letters, digits, '-', '_' and '.')"});
}

// The apiserver refuses a claim template without access modes or a storage request.
void check_work_volume_claim(const std::string& path, const std::string& claim_json, field_errors& out) {
  auto claim = json::parse(claim_json, json::sources::stored_json);
  if (!claim || !claim->IsObject()) {
    out.push_back({path, "must be a PersistentVolumeClaim spec"});
    return;
  }
  const auto* modes = json::find_value(*claim, "accessModes");
  if (modes == nullptr || !modes->IsArray() || modes->Empty())
    out.push_back({path + ".accessModes", "is required, e.g. [ReadWriteOnce]"});
  const auto* resources = json::find_value(*claim, "resources");
  const auto* requests = resources ? json::find_value(*resources, "requests") : nullptr;
  if (requests == nullptr || json::find_value(*requests, "storage") == nullptr)
    out.push_back({path + ".resources.requests.storage", "is required, e.g. 1Gi"});
}

void write_endpoint(json::writer& w, const char* key, const proxy_endpoint& e) {
  w.open(key).field("url", e.url).optional("credentialsSecretName", e.credentials_secret_name).close();
}

void write_container_mode(json::writer& w, const container_mode_spec& m) {
  w.open("containerMode").field("type", to_string(m.type));
  if (!m.work_volume_claim_json.empty()) {
    auto claim = json::parse(m.work_volume_claim_json, json::sources::stored_json);
    if (claim && claim->IsObject()) w.raw_field("workVolumeClaim", json::write(*claim));
  }
  w.close();
}

}  // namespace

void check_container_mode(const std::string& path, const container_mode_spec& m, field_errors& out) {
  if (m.work_volume_claim_json.empty()) return;
  if (m.type != container_mode::kubernetes)
    out.push_back({path + ".workVolumeClaim", "only applies to containerMode type kubernetes"});
  else
    check_work_volume_claim(path + ".workVolumeClaim", m.work_volume_claim_json, out);
}

void check_pod_config(const std::string& path, const pod_config& c, field_errors& out) {
  if (c.container_mode) check_container_mode(path + ".containerMode", *c.container_mode, out);
  if (c.proxy) check_proxy(path + ".proxy", *c.proxy, out);
  if (c.ca_bundle) check_ca_bundle(path + ".caBundle", *c.ca_bundle, out);
}

void write_pod_config(json::writer& w, const pod_config& c) {
  if (c.container_mode && c.container_mode->type != container_mode::none)
    write_container_mode(w, *c.container_mode);
  if (c.proxy) {
    w.open("proxy");
    if (c.proxy->http) write_endpoint(w, "http", *c.proxy->http);
    if (c.proxy->https) write_endpoint(w, "https", *c.proxy->https);
    if (!c.proxy->no_proxy.empty()) {
      w.open_array("noProxy");
      for (const auto& h : c.proxy->no_proxy) w.value(h);
      w.close_array();
    }
    w.close();
  }
  if (c.ca_bundle) {
    const char* source =
        c.ca_bundle->from == ca_bundle_ref::source::config_map ? "configMapKeyRef" : "secretKeyRef";
    w.open("caBundle").open(source).field("name", c.ca_bundle->name).field("key", c.ca_bundle->key).close();
    w.close();
  }
  if (c.manage_safe_to_evict) w.field("manageSafeToEvict", true);
  if (c.pod_security) w.field("podSecurity", to_string(*c.pod_security));
}

std::uint64_t pod_fingerprint(const pod_template& t, const pod_config& c) {
  json::writer w;
  w.open();
  if (auto tmpl = json::parse(t.json, json::sources::stored_json))
    w.raw_field("template", json::write(*tmpl));
  else
    w.null_field("template");
  write_pod_config(w, c);
  // Read back, so the digest sees the members sorted (json::canonical).
  auto d = json::parse(w.close().str(), json::sources::stored_json);
  const std::uint64_t digest = fnv1a(d ? json::canonical(*d) : w.str());
  return digest == 0 ? 1 : digest;
}

std::uint64_t spec_fingerprints::of(const shared_runner_spec& spec) {
  for (const auto& [known, fingerprint] : known_)
    if (known == spec) return fingerprint;
  if (known_.size() >= prune_above_) {
    // Specs no Runner holds any more (a rollout replaced them).
    std::erase_if(known_, [](const auto& entry) { return entry.first.use_count() == 1; });
    prune_above_ = std::max<std::size_t>(8, 2 * known_.size());
  }
  const auto fingerprint = pod_fingerprint(spec->template_, spec->pod);
  // Runners share a handful of specs; many distinct ones held at once (specs
  // with errors are never shared) would make the scan above the hot path.
  if (known_.size() < max_known) known_.emplace_back(spec, fingerprint);
  return fingerprint;
}

bool is_actions_runner_image(std::string_view image) {
  constexpr std::string_view repository = "ghcr.io/actions/actions-runner";
  if (!image.starts_with(repository)) return false;
  auto rest = image.substr(repository.size());
  return rest.empty() || rest.front() == ':' || rest.front() == '@';
}

}  // namespace octorun::model
