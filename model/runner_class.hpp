// A RunnerClass (octorun.io/v1alpha1, cluster-scoped): what the platform
// admin decides for the RunnerSets of the namespaces it admits. Only a
// cluster admin writes one; a tenant's RunnerSet names it
// (spec.runnerClassName), as a PersistentVolumeClaim names a StorageClass.
// docs/runner-classes.md has the fields and why a class rather than flags.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "model/types.hpp"

namespace octorun::model {

// The annotation that makes a class the one a RunnerSet without
// spec.runnerClassName gets in the namespaces the class admits (as
// ingressclass.kubernetes.io/is-default-class).
inline constexpr const char* default_class_annotation = "octorun.io/is-default-class";

// metav1.LabelSelector. An empty selector selects everything.
struct label_selector_requirement {
  std::string key;
  std::string op;  // In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
};
struct label_selector {
  std::map<std::string, std::string> match_labels;
  std::vector<label_selector_requirement> match_expressions;
};
bool selector_matches(const label_selector& selector, const std::map<std::string, std::string>& labels);

// The proxy the manager's own GitHub connections for a class's sets go
// through (spec.github.proxy): every request, to http:// and https:// URLs
// alike, so that no call bypasses it for its scheme.
struct class_proxy {
  std::string url;  // http(s)://HOST[:PORT], no credentials
  // A Secret in the platform's namespace with keys username and password
  // (percent-encoded, as a RunnerSet's spec.proxy Secret); empty: none.
  std::string credentials_secret_name;
  bool operator==(const class_proxy&) const = default;
};

// How the manager itself connects to GitHub for a class's sets: the
// class's word, never the sets' (docs/runner-classes.md, "The manager's
// connections").
struct class_connection {
  std::optional<class_proxy> proxy;  // none: the manager's own (its environment)
  // PEM certificates trusted beside the manager's own CAs (--github-ca-file,
  // else the system's), inline in the class; empty: the manager's only.
  std::string ca_bundle;
  bool operator==(const class_connection&) const = default;
};

// A key of a Secret (as a Pod's secretKeyRef names one), in a namespace
// the referring object implies.
struct secret_key_ref {
  std::string name;
  std::string key = "secret";  // the chart's githubWebhook.existingSecretKey default
  bool operator==(const secret_key_ref&) const = default;
};

struct runner_class_spec {
  label_selector namespace_selector;
  // GitHub servers a scope may be on: https://HOST, https://*.SUFFIX or
  // http://HOST (only where --github-http-hosts lists HOST), each with an
  // optional :PORT. Empty: https://github.com and https://*.ghe.com.
  std::vector<std::string> servers;
  // The scopes a set may claim: an organisation's URL (itself and its
  // repositories), a repository's, a repository prefix ending in '*', or an
  // enterprise's. Empty: any scope on the servers.
  std::vector<std::string> scopes;
  // The credentials the class's sets use: a Secret in the platform's
  // namespace (the manager's), out of tenants' reach. Empty: none.
  std::string credentials_secret_name;
  // A set may instead name a Secret of its own namespace (its own
  // credentials, sent only to the class's servers and scopes).
  bool allow_tenant_credentials = false;
  // spec.github.proxy and spec.github.caBundle.
  class_connection connection;
  // The class's own webhook secret (spec.github.webhookSecretRef): a key of
  // a Secret in the platform's namespace. Deliveries signed with it are
  // taken on the intake's path of the class (<path>/classes/<class>) and
  // their demand goes only to the class's sets (docs/intakes.md). Empty
  // name: the class has no path of its own.
  secret_key_ref webhook_secret;
  // Empty: none and kubernetes (dind runs a privileged container).
  std::vector<container_mode> container_modes;
  pod_security_level pod_security = pod_security_level::baseline;
  std::optional<std::int32_t> max_runners_per_set;  // the sum over the set's variants
  // The sum of maxRunners over the sets of one namespace under the class
  // (model/namespace_cap.hpp).
  std::optional<std::int32_t> max_runners_per_namespace;

  std::vector<std::string> effective_servers() const;
  std::vector<container_mode> effective_container_modes() const;
};

struct runner_class {
  object_meta metadata;
  bool is_default = false;  // default_class_annotation is "true"
  runner_class_spec spec;
};

expected<runner_class, field_errors> parse_runner_class(const rapidjson::Value& object);
expected<runner_class, field_errors> parse_runner_class(std::string_view json);

// A Namespace as a class's namespaceSelector sees it: its labels.
struct namespace_view {
  object_meta metadata;
};

// A RunnerSet as a class's per-namespace cap counts it (namespace_cap.hpp).
struct namespace_set {
  std::string name;
  // creationTimestamp in seconds since the epoch; none (not created yet, or
  // unreadable): the youngest.
  std::optional<std::int64_t> created;
  std::string runner_class_name;  // as declared ("": the namespace's default class)
  std::int64_t max_runners = 0;   // summed over its variants
  // spec.credentialsSecretName: the Secret of the namespace its credentials
  // are read from ("": its class's, in the platform's namespace).
  std::string credentials_secret_name;
  // The first field that runs a variant in containerMode kubernetes ("":
  // none), e.g. spec.variants[1].containerMode.type (namespace_secrets.hpp).
  std::string kubernetes_mode_field;
  bool operator==(const namespace_set&) const = default;
};

// The order of age every replica and every moment agrees on, for the rules
// that judge a namespace's sets against each other: creationTimestamp, then
// name; a set not created yet is the youngest.
bool older_than(const namespace_set& a, const namespace_set& b);

// What the platform declared, as one snapshot: its classes by name, the
// labels of each namespace (what namespaceSelector matches), and the sets
// of each namespace that are not being deleted (what maxRunnersPerNamespace
// sums).
struct platform_classes {
  std::map<std::string, runner_class> classes;
  std::map<std::string, std::map<std::string, std::string>> namespace_labels;
  std::map<std::string, std::vector<namespace_set>> namespace_sets;
};
using platform_classes_ptr = std::shared_ptr<const platform_classes>;

}  // namespace octorun::model
