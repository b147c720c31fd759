// How a RunnerSet's GitHub clients (REST, scale set, listener long poll)
// connect (model::manager_connection decides whose word it is). Under a
// RunnerClass: through the class's proxy (spec.github.proxy) when it names
// one, else the manager's (its environment), trusting the class's CA
// bundle (spec.github.caBundle) beside the manager's trust (--github-ca-file
// or the system CAs). Served without a class: the same with the set's own
// spec.proxy and spec.caBundle. Pure: the actor reads the objects the
// settings refer to and hands them in; every error names the field.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "actors/runnerset/pod_resources.hpp"
#include "adapters/http/proxy.hpp"
#include "common/expected.hpp"
#include "model/class_rules.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

struct set_network {
  std::optional<http::proxy_options> proxy;  // none: libcurl reads the environment
  std::string ca_pem;                        // the CA bundle (PEM, checked); empty: none
  std::string ca_field;                      // the field it came from, for a message
};

// The objects the connection refers to (proxy credentials, a CA bundle
// held in a ConfigMap or Secret) and the namespace they are read from:
// under a class, its proxy's Secret in the platform's namespace; served
// without one, the set's references in its own namespace.
struct connection_references {
  std::string ns;
  std::vector<reference> references;
};
connection_references references_of(const model::manager_connection& c, const std::string& set_ns,
                                    const std::string& platform_ns);

// The network the set's GitHub clients use under `c`; `object(ref)` as for
// set_network_of, from `refs` (references_of).
expected<set_network, std::string> network_of(
    const model::manager_connection& c, const std::optional<http::proxy_options>& manager_proxy,
    const std::function<const rapidjson::Value*(const reference&)>& object,
    const connection_references& refs);

// `object(ref)`: the ConfigMap or Secret `ref` (pod_references) names as the
// API returned it, nullptr when it does not exist; `ns` is the set's
// namespace (for the message). Proxy credentials are the Secret's username
// and password, percent-decoded (runner pods put them into URLs as they are,
// so a Secret holds them percent-encoded).
expected<set_network, std::string> set_network_of(
    const model::pod_config& pod, const std::optional<http::proxy_options>& manager_proxy,
    const std::function<const rapidjson::Value*(const reference&)>& object, const std::string& ns);

// The set's GitHub proxy from spec.proxy alone (no credentials), for a
// message or a test; the error names the URL field that does not parse.
expected<http::proxy_options, std::string> proxy_of(const model::proxy_spec& spec);

}  // namespace octorun::runnerset
