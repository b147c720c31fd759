// The manager's command line as a value: a pure parse from the arguments to
// `options` or one human sentence naming the bad flag. Takes `--flag=value`
// and `--flag value`; a bool flag alone means true. Flags with a dot in
// their name (CAF's own: --scheduler.max-threads, --caf.*) and --config-file
// go to CAF's actor system configuration unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace octorun::manager {

struct options {
  std::string kubeconfig;
  std::string context;
  std::vector<std::string> namespaces;  // empty: every namespace
  std::string log_level = "info";
  std::string log_format = "json";
  bool webhook_intake = true;
  std::string webhook_bind = "0.0.0.0";
  uint16_t webhook_port = 8080;
  std::string webhook_secret_file;
  bool insecure_webhook = false;
  // The probes listen on loopback only: the exec probe (`octorun probe`)
  // runs in the pod, and nothing on the pod network can reach or starve them.
  std::string health_bind = "127.0.0.1";
  uint16_t health_port = 8082;
  std::string metrics_bind = "0.0.0.0";
  uint16_t metrics_port = 8081;
  bool leader_elect = true;
  std::string lease_namespace = "default";
  std::string lease_name = "octorun-manager";
  std::string identity;
  int32_t resync_seconds = 30;
  int32_t webhook_sweep_seconds = 60;
  bool runner_phase_events = true;
  // A job that waited longer from GitHub queueing it to its start counts in
  // octorun_jobs_start_target_exceeded_total (docs/monitoring.md).
  int32_t job_start_target_seconds = 300;
  // Sixteen connections: a burst queues each request behind the others in
  // front of an exchange with the apiserver. Sixteen came closer to the floor
  // than eight at the largest burst (bench/floor/README.md), and took 10,000
  // Runners with no request outwaiting its actor and no more memory, where
  // eight gave thousands up (bench/manager/README.md).
  int32_t kube_workers = 16;
  int32_t github_workers = 2;
  // No client-side limit by default: the apiserver's API Priority and Fairness
  // queues and sheds load (controller-runtime defaults the same way since
  // v0.21); a client-side limit of 50 per second starved a burst
  // (bench/floor/README.md).
  double kube_qps = 0;
  int32_t kube_burst = 100;
  std::string github_ca_file;
  // GitHub hosts a scope may reach over plain http or name as an IP address
  // (comma-separated; test servers): model::scope_rules.
  std::string github_http_hosts;
  // The largest minRunners, maxRunners and replicas admitted per RunnerSet
  // and variant (the CRD's own bound, 10,000, is the ceiling).
  int32_t max_runners = 1000;
  // RunnerSets without a class and with no default class are served under
  // the rules from before classes (model::class_policy).
  bool allow_sets_without_class = false;
  // Where RunnerClasses' credentials Secrets live; empty: the manager's own
  // namespace (platform_namespace_of in manager.cpp).
  std::string platform_namespace;
  // The one user who may create Runners; empty: this manager's own name
  // (a SelfSubjectReview at start).
  std::string runner_creator;
  // The ClusterRole kubernetes-mode RunnerSets' ServiceAccounts are bound to
  // (the manager may only bind it); empty: kubernetes mode is unavailable.
  std::string runner_kubernetes_mode_cluster_role;
  // The ClusterRole (get on Secrets and ConfigMaps) the manager binds to its
  // own ServiceAccount in each namespace of an admitted set, before reading
  // anything there (it may only bind it); empty: its RBAC reads wherever it
  // watches (a Role per namespace, or a ClusterRole).
  std::string tenant_reads_cluster_role;
  bool admission = false;
  std::string admission_bind = "0.0.0.0";
  uint16_t admission_port = 9443;
  std::string admission_cert_dir = "/tmp/octorun-webhook";
  std::string admission_dns_names =
      "octorun-webhook.octorun-system.svc,octorun-webhook.octorun-system.svc.cluster.local";
  std::string admission_ip_addresses;
  std::string admission_ca_secret;
  std::string admission_inject_ca;
  std::string admission_cert_file;
  std::string admission_key_file;
  std::string admission_ca_file;

  // Where to write the URLs the servers listen on once all of them do
  // (write_endpoints_file); empty: nowhere.
  std::string endpoints_file;

  bool help = false;     // --help / -h: print help_text() and stop
  bool version = false;  // --version: print the version and stop
  // For caf::actor_system_config::parse, each as --name=value.
  std::vector<std::string> caf_args;
};

// `args` without the program name. The error is one sentence naming the flag.
expected<options, std::string> parse_options(const std::vector<std::string>& args);

// What `octorun --help` prints: every flag, its default and what it does.
std::string help_text();

// "a, b,,c" -> {"a", "b", "c"}: each item trimmed, empty ones dropped.
std::vector<std::string> comma_list(const std::string& s);

// What is wrong with a --github-http-hosts value, naming the flag: an empty
// item, a URL (a scheme or a path) or a port (a scope's host is compared
// without its port, so such an item would never match).
std::optional<std::string> check_github_http_hosts(const std::string& value);

// A subcommand's numeric flag value (`octorun probe`, `octorun stop-manager`):
// the whole of `text` a decimal number within [min, max].
bool whole_number(std::string_view text, long& out, long min, long max);

}  // namespace octorun::manager
