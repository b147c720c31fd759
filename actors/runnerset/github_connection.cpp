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
      out.ca_field = ref.field;
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

namespace {

std::string of_class(const model::manager_connection& c) {
  return " of RunnerClass \"" + c.class_name + "\"";
}

// The class's proxy Secret, as a reference naming the class's field.
std::optional<reference> class_proxy_reference(const model::manager_connection& c) {
  const auto& proxy = c.by_class.proxy;
  if (!proxy || proxy->credentials_secret_name.empty()) return std::nullopt;
  return reference{"Secret/" + proxy->credentials_secret_name,
                   "spec.github.proxy.credentialsSecretName" + of_class(c),
                   {"username", "password"},
                   false};
}

// Under a class: its proxy for every URL (http:// and https://) and its CA
// bundle; the set's own settings are not looked at.
expected<set_network, std::string> class_network_of(
    const model::manager_connection& c, const std::optional<http::proxy_options>& manager_proxy,
    const std::function<const rapidjson::Value*(const reference&)>& object, const std::string& ns) {
  set_network out;
  out.proxy = manager_proxy;
  if (const auto& proxy = c.by_class.proxy) {
    if (auto url = model::parse_proxy_url(proxy->url); !url)
      return unexpected<std::string>{"spec.github.proxy.url" + of_class(c) + ": " + url.error()};
    http::proxy_endpoint endpoint{proxy->url, {}, {}};
    if (auto ref = class_proxy_reference(c)) {
      const auto* found = object(*ref);
      if (found == nullptr) return unexpected<std::string>{reference_not_found(*ref, ns)};
      if (auto problem = reference_problem(*ref, *found)) return unexpected<std::string>{*problem};
      endpoint.username = percent_decode(data_value(*ref, *found, "username"));
      endpoint.password = percent_decode(data_value(*ref, *found, "password"));
    }
    out.proxy = http::proxy_options{endpoint, endpoint, ""};
  }
  if (!c.by_class.ca_bundle.empty()) {
    out.ca_field = "spec.github.caBundle" + of_class(c);
    if (auto counted = tls::count_pem_certificates(c.by_class.ca_bundle); !counted)
      return unexpected<std::string>{out.ca_field + " is not a PEM certificate bundle: " + counted.error()};
    out.ca_pem = c.by_class.ca_bundle;
  }
  return out;
}

// Served without a class: the set's own spec.proxy and spec.caBundle.
model::pod_config own_settings(const model::manager_connection& c) {
  model::pod_config own;
  own.proxy = c.set_proxy;
  own.ca_bundle = c.set_ca_bundle;
  return own;
}

}  // namespace

connection_references references_of(const model::manager_connection& c, const std::string& set_ns,
                                    const std::string& platform_ns) {
  if (c.class_name.empty()) return {set_ns, pod_references(own_settings(c))};
  connection_references out{platform_ns, {}};
  if (auto ref = class_proxy_reference(c)) out.references.push_back(std::move(*ref));
  return out;
}

expected<set_network, std::string> network_of(
    const model::manager_connection& c, const std::optional<http::proxy_options>& manager_proxy,
    const std::function<const rapidjson::Value*(const reference&)>& object,
    const connection_references& refs) {
  if (!c.class_name.empty()) return class_network_of(c, manager_proxy, object, refs.ns);
  return set_network_of(own_settings(c), manager_proxy, object, refs.ns);
}

}  // namespace octorun::runnerset
