#include "actors/runnerset/github_connection.hpp"

#include "adapters/tls/ca_bundle.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/strings.hpp"
#include "model/scope.hpp"

namespace octorun::runnerset {
namespace {

// A key of a ConfigMap (text) or a Secret (base64); reference_problem has
// checked that it is there.
std::string data_value(const reference& ref, const rapidjson::Value& object, const std::string& key) {
  const auto* data = json::find_value(object, "data");
  const auto* v = data != nullptr ? json::find_value(*data, key.c_str()) : nullptr;
  if (v == nullptr || !v->IsString()) return {};
  std::string text(v->GetString(), v->GetStringLength());
  return key_kind(ref.key) == "Secret" ? base64_decode(text).value_or("") : text;
}

}  // namespace

expected<http::proxy_options, std::string> proxy_of(const model::proxy_spec& spec) {
  http::proxy_options out;
  for (auto [from, to, field] : {std::tuple{&spec.http, &out.http, "spec.proxy.http.url"},
                                 std::tuple{&spec.https, &out.https, "spec.proxy.https.url"}}) {
    if (!*from) continue;
    if (auto parsed = model::parse_proxy_url((*from)->url); !parsed)
      return unexpected<std::string>{std::string(field) + ": " + parsed.error()};
    *to = http::proxy_endpoint{(*from)->url, {}, {}};
  }
  for (const auto& host : spec.no_proxy) out.no_proxy += (out.no_proxy.empty() ? "" : ",") + host;
  return out;
}

expected<set_network, std::string> set_network_of(
    const model::pod_config& pod, const std::optional<http::proxy_options>& manager_proxy,
    const std::function<const rapidjson::Value*(const reference&)>& object, const std::string& ns) {
  set_network out;
  out.proxy = manager_proxy;
  if (pod.proxy) {
    auto proxy = proxy_of(*pod.proxy);
    if (!proxy) return unexpected<std::string>{proxy.error()};
    out.proxy = std::move(*proxy);
  }
  for (const auto& ref : pod_references(pod)) {
    const auto* found = object(ref);
    if (found == nullptr) return unexpected<std::string>{reference_not_found(ref, ns)};
    if (auto problem = reference_problem(ref, *found)) return unexpected<std::string>{*problem};
    if (ref.pem) {
      out.ca_pem = data_value(ref, *found, ref.keys.front());
      if (auto counted = tls::count_pem_certificates(out.ca_pem); !counted)
        return unexpected<std::string>{
            ref.field + ": key \"" + ref.keys.front() + "\" of " + std::string(key_kind(ref.key)) + " \"" +
            std::string(key_name(ref.key)) + "\" is not a PEM certificate bundle: " + counted.error()};
      continue;
    }
    // Proxy credentials: the endpoint(s) whose credentialsSecretName this is.
    for (auto [spec, endpoint] :
         {std::pair{&pod.proxy->http, &out.proxy->http}, std::pair{&pod.proxy->https, &out.proxy->https}}) {
      if (!*spec || key_name(ref.key) != (*spec)->credentials_secret_name) continue;
      (*endpoint)->username = percent_decode(data_value(ref, *found, "username"));
      (*endpoint)->password = percent_decode(data_value(ref, *found, "password"));
    }
  }
  return out;
}

}  // namespace octorun::runnerset
