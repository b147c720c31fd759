// Typed views of the octorun.io/v1alpha1 custom resources (crds/README.md has
// the field names). Pod templates stay JSON: the manager passes them to the
// Pod unchanged, and only the parts we check or patch are typed here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/runner_phase.hpp"
#include "model/scope.hpp"
#include "model/timeline.hpp"

namespace octorun::model {

inline constexpr const char* api_group = "octorun.io";
inline constexpr const char* api_version = "octorun.io/v1alpha1";

// One problem with one field: `field` is a path like spec.variants[1].name.
struct field_error {
  std::string field;
  std::string message;
  bool operator==(const field_error&) const = default;
};
using field_errors = std::vector<field_error>;

struct object_meta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::int64_t generation = 0;
  std::map<std::string, std::string> labels;
  // No annotations: the manager reads none of its objects' (the informers
  // cache a Runner per runner; a kubectl- or Helm-applied object's can be large).
  std::vector<std::string> finalizers;
  std::string creation_timestamp;  // RFC 3339, as the apiserver wrote it
  bool deleting = false;           // deletionTimestamp is set
  // Its controller ownerReference ("" when it has none): a Runner's says
  // which RunnerSet made it (runner_made_by).
  std::string owner_kind;
  std::string owner_uid;
};

// Whether metadata.finalizers lists `name`.
bool has_finalizer(const object_meta& m, std::string_view name);

struct container_view {
  std::string name;
  std::string image;
};

struct pod_template {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<container_view> containers;
  std::vector<container_view> init_containers;
  std::string restart_policy;        // empty when unset
  std::string service_account_name;  // empty when unset
  std::string json;                  // the whole template as received, compact JSON

  bool has_container(const std::string& name) const;
};

// What a runner pod needs for jobs that run containers (spec.containerMode;
// docs/runner-pods.md has the pods each mode renders).
enum class container_mode {
  none,        // the template alone
  dind,        // a Docker daemon as a native sidecar; DOCKER_HOST in the runner
  kubernetes,  // runner container hooks: job containers run as pods of their own
};

// The spelling of a mode in spec.containerMode.type and a RunnerClass's
// containerModes ("none" is the class's word for no mode), and back.
std::string_view to_string(container_mode mode);
std::optional<container_mode> container_mode_named(std::string_view name);

// The Pod Security Standards' levels (kubernetes.io/docs/concepts/security/pod-security-standards),
// spelled as a RunnerClass's spec.podSecurity and a Runner's spec.podSecurity spell them.
enum class pod_security_level { privileged, baseline, restricted };
std::string_view to_string(pod_security_level level);
std::optional<pod_security_level> pod_security_level_named(std::string_view name);

struct container_mode_spec {
  container_mode type = container_mode::none;
  // kubernetes: the spec of the work volume's ephemeral PersistentVolumeClaim,
  // compact JSON as given; empty: the default (ReadWriteOnce, 1Gi).
  std::string work_volume_claim_json;
  bool operator==(const container_mode_spec&) const = default;
};

// One proxy (spec.proxy.http / .https).
struct proxy_endpoint {
  std::string url;                      // http(s)://HOST[:PORT], no credentials
  std::string credentials_secret_name;  // a Secret with keys username and password; empty: none
  bool operator==(const proxy_endpoint&) const = default;
};

// The proxy runner pods use (spec.proxy): lower- and upper-case http_proxy,
// https_proxy and no_proxy in the runner (and the Docker daemon).
struct proxy_spec {
  std::optional<proxy_endpoint> http;
  std::optional<proxy_endpoint> https;
  std::vector<std::string> no_proxy;
  bool operator==(const proxy_spec&) const = default;
};

// A PEM CA bundle runner pods trust (spec.caBundle): a key of a ConfigMap or
// of a Secret in the set's namespace.
struct ca_bundle_ref {
  enum class source { config_map, secret };
  source from = source::config_map;
  std::string name;
  std::string key;
  bool operator==(const ca_bundle_ref&) const = default;
};

// Everything besides the template that shapes a runner's pod. A Runner
// carries the values of its set (and variant) at its creation.
struct pod_config {
  std::optional<container_mode_spec> container_mode;
  std::optional<proxy_spec> proxy;
  std::optional<ca_bundle_ref> ca_bundle;
  // cluster-autoscaler.kubernetes.io/safe-to-evict: "true" while the runner
  // is idle (busy runners get "false" either way), unless the template sets it.
  bool manage_safe_to_evict = false;
  // Set on a Runner (never by a tenant: the RunnerSet's schema has no such
  // field) when its set's RunnerClass asks for restricted pods: the pod's
  // securityContext fields the template leaves out get the restricted
  // level's values (docs/runner-pods.md, "Pod Security").
  std::optional<pod_security_level> pod_security;
  bool operator==(const pod_config&) const = default;
};

// spec.startTimeTarget (and a variant's): the 95th percentile of queued ->
// job started the set keeps warm runners for (model/start_time.hpp,
// docs/scaling.md "Start-time targets"). p95Seconds is required (the
// webhook says so) and within model::min/max_start_time_target_seconds.
struct start_time_target_spec {
  std::optional<std::int32_t> p95_seconds;
  bool operator==(const start_time_target_spec&) const = default;
};

struct variant_spec {
  std::string name;
  std::vector<std::string> runner_labels;
  std::optional<pod_template> template_;  // replaces the set's template when present
  std::optional<std::int32_t> min_runners;
  std::optional<std::int32_t> max_runners;
  std::optional<container_mode_spec> container_mode{};        // replaces the set's when present
  std::optional<std::int32_t> startup_timeout_seconds{};      // replaces the set's when present
  std::optional<start_time_target_spec> start_time_target{};  // replaces the set's when present
};

// spec.startupTimeoutSeconds (and a variant's): how long a runner may take
// from its creation to coming online before it counts as a stuck start and
// is replaced (docs/scaling.md, "Stuck starts"). Unset: derived from the
// variant's observed start-ups. The bounds keep a typo from replacing every
// runner as it starts, or from leaving a stuck one for hours.
inline constexpr std::int32_t min_startup_timeout_seconds = 10;
inline constexpr std::int32_t max_startup_timeout_seconds = 3600;

// Where a RunnerSet's job demand comes from (docs/intakes.md).
enum class intake_mode {
  webhook,   // workflow_job deliveries to the manager's webhook intake
  listener,  // the runner scale-set protocol: one GitHub scale set and message session per variant
};

struct runnerset_spec {
  std::string
      runner_class_name;  // the RunnerClass it runs under (model/runner_class.hpp); empty: the default
  std::string scope_url;  // as written
  // scope_url parsed once, when the set is decoded (set_scope_url): the
  // scope it names, else why it names none (parse_scope_url's message, for
  // a user). Later code reads these, never the URL's text again.
  std::optional<github_scope> scope;
  std::string scope_error;
  void set_scope_url(std::string url);
  std::string credentials_secret_name;
  std::string runner_group;
  std::vector<std::string> runner_labels;
  std::optional<std::int32_t> min_runners;
  std::optional<std::int32_t> max_runners;
  std::optional<std::int32_t> replicas;
  std::optional<std::int32_t> startup_timeout_seconds;      // a variant's own replaces it
  std::optional<start_time_target_spec> start_time_target;  // a variant's own replaces it
  intake_mode intake = intake_mode::webhook;
  pod_template template_;
  pod_config pod;  // containerMode, proxy, caBundle, manageSafeToEvict
  std::vector<variant_spec> variants;
};

struct condition {
  std::string type;
  std::string status;  // True | False | Unknown
  std::string reason;
  std::string message;
  std::string last_transition_time;
  std::int64_t observed_generation = 0;
};

struct runner_counts {
  std::int32_t desired_replicas = 0;
  std::int32_t outdated_runners = 0;
  std::int32_t replicas = 0;
  std::int32_t pending_runners = 0;
  std::int32_t idle_runners = 0;
  std::int32_t running_runners = 0;
  std::int32_t failed_runners = 0;
  std::int32_t assigned_jobs = 0;
};

struct variant_status {
  std::string name;
  std::int64_t scale_set_id = 0;
  runner_counts counts;
  std::string session_id;  // the message session the manager last opened on its scale set
};

// A GitHub runner the set removes once its GitHub budget allows (its Runner
// is gone already).
struct pending_removal {
  std::int64_t runner_id = 0;
  std::string name;
};

struct runnerset_status {
  std::int64_t observed_generation = 0;
  std::int64_t scale_set_id = 0;  // the scale set of a set without variants (Listener intake)
  std::string session_id;         // the message session the manager last opened on that scale set
  runner_counts counts;
  std::string selector;
  std::vector<condition> conditions;
  std::vector<variant_status> variants;
  std::vector<pending_removal> pending_removals;
};

struct runnerset {
  object_meta metadata;
  runnerset_spec spec;
  runnerset_status status;
};

struct runner_spec {
  std::string scope_url;
  std::string credentials_secret_name;
  std::string runner_group;
  std::vector<std::string> runner_labels;
  std::string runner_set_name;
  std::string variant;
  pod_template template_;
  pod_config pod;  // the set's (variant's) at creation
};

// The Runners of a variant carry the same spec (their set's values at their
// creation): decoded Runners share one copy of each distinct spec, so a pool
// of thousands holds a handful in the informers' caches, not one per Runner
// (its template alone is often several KiB).
using shared_runner_spec = std::shared_ptr<const runner_spec>;
// The copy held for `key` (a spec's compact JSON), or null when no Runner
// holds one. Thread-safe, as share_runner_spec.
shared_runner_spec shared_runner_spec_for(const std::string& key);
// One copy per distinct key while any holder lives; the copy already held
// when there is one.
shared_runner_spec share_runner_spec(runner_spec spec, const std::string& key);
// The empty spec, shared.
const shared_runner_spec& empty_runner_spec();

struct job_ref {
  std::int64_t id = 0;
  std::string repository;
  std::string workflow_ref;
  std::int64_t run_id = 0;
  std::string display_name;
};

struct runner_failure {
  std::string time;
  std::string reason;
  std::string message;
  std::int32_t exit_code = 0;
  std::string pod_uid;  // the pod that failed (one entry per pod)
};

struct runner_status {
  // Decoded once (model/runner_phase.hpp); who may write it: actors/runner/phase.hpp.
  runner_phase phase = runner_phase::unset;
  std::int64_t runner_id = 0;
  std::string runner_name;
  std::optional<job_ref> job;
  bool pod_ready = false;
  std::string reason;
  std::string message;
  std::vector<condition> conditions;
  std::vector<runner_failure> failures;
  // status.timeline: when its job was queued, its pod scheduled, ... (the
  // Runner actor writes them with the patches it makes anyway; `gone` is
  // never stored).
  job_timeline timeline;
};

struct runner {
  object_meta metadata;
  shared_runner_spec spec = empty_runner_spec();  // never null; shared: replace it, never change it
  runner_status status;
};

// The variants to reconcile: the declared ones with the set's values filled
// in (labels: the set's plus the variant's; template, min and max: the
// variant's when given, else the set's), or one unnamed default variant carrying the set's values when none
// are declared (so callers have a single code path).
struct effective_variant {
  std::string name;  // empty for the default variant
  std::vector<std::string> runner_labels;
  const pod_template* template_;  // points into the spec it was computed from
  std::int32_t min_runners;
  std::int32_t max_runners;
  pod_config pod{};  // the set's, with the variant's containerMode when it has one
  std::optional<std::int32_t> startup_timeout_seconds{};  // the variant's, else the set's; unset: derived
  // The variant's start-time target (p95 seconds), else the set's; unset: none.
  std::optional<std::int32_t> start_time_target_seconds{};
};
inline constexpr std::int32_t default_max_runners = 10;
std::vector<effective_variant> effective_variants(const runnerset_spec& spec);

}  // namespace octorun::model
