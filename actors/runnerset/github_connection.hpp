// How a RunnerSet's GitHub clients (REST, scale set, listener long poll)
// connect: through the set's own proxy (spec.proxy) when it declares one,
// else the manager's (its environment), and trusting the set's CA bundle
// (spec.caBundle) beside the manager's trust (--github-ca-file or the
// system CAs). Pure: the actor reads the objects the spec refers to and
// hands them in; every error names the field.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <optional>
#include <string>

#include "actors/runnerset/pod_resources.hpp"
#include "adapters/http/proxy.hpp"
#include "common/expected.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

struct set_network {
  std::optional<http::proxy_options> proxy;  // none: libcurl reads the environment
  std::string ca_pem;                        // the set's CA bundle (PEM, checked); empty: none
};

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
