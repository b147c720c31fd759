// Names of the objects the manager generates, and their length limits.
// Runner names become Pod names and label values, so they must fit in a
// label value (63 characters); Pods and Secrets are named after the Runner.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace octorun::model {

inline constexpr std::size_t max_label_value = 63;
inline constexpr std::size_t max_dns_label = 63;
inline constexpr std::size_t max_dns_subdomain = 253;
inline constexpr std::size_t runner_suffix_length = 5;  // like the apiserver's generateName suffix

inline constexpr const char* label_prefix = "octorun.io/";  // of every label below
inline constexpr const char* label_runnerset = "octorun.io/runnerset";
inline constexpr const char* label_variant = "octorun.io/variant";
inline constexpr const char* label_runner = "octorun.io/runner";
// "true" on the pod of a runner that has a job: the set's PodDisruptionBudget
// selects these pods, so a drain cannot evict a busy runner.
inline constexpr const char* label_busy = "octorun.io/busy";
// The Runner's finalizer: in its create body (the RunnerSet's), released by
// its Runner actor once GitHub no longer holds the runner.
inline constexpr const char* runner_finalizer = "octorun.io/runner";
// A RunnerSet's finalizer on its credentials Secret, one per set (sets may
// share a Secret): "runnerset.octorun.io/<set>". A set's name fits the
// 63-character name part (its Runners' names are longer).
std::string credentials_finalizer(std::string_view set);
// cluster-autoscaler's per-pod veto on removing its node.
inline constexpr const char* annotation_safe_to_evict = "cluster-autoscaler.kubernetes.io/safe-to-evict";
// Karpenter's: "true" keeps it from choosing the pod's node for consolidation
// or drift, and from evicting the pod (up to a NodePool's terminationGracePeriod).
inline constexpr const char* annotation_do_not_disrupt = "karpenter.sh/do-not-disrupt";

bool is_dns_label(std::string_view s);      // RFC 1123 label, <= 63
bool is_dns_subdomain(std::string_view s);  // RFC 1123 subdomain, <= 253

// "set-" or "set-variant-": the generateName of the set's (variant's) Runners.
std::string runner_name_prefix(std::string_view set, std::string_view variant);
// prefix + suffix; suffix is runner_suffix_length lowercase alphanumerics.
std::string runner_name(std::string_view set, std::string_view variant, std::string_view suffix);
std::string pod_name(std::string_view runner);         // the Runner's name
std::string jit_secret_name(std::string_view runner);  // "<runner>-jit"
// The per-set objects of runner pods: their ServiceAccount (and, in
// containerMode kubernetes, its RoleBinding to the hooks' ClusterRole), and
// the PodDisruptionBudget over the set's busy runners.
std::string runner_service_account_name(std::string_view set);  // "octorun-runner-<set>"
std::string hooks_role_binding_name(std::string_view set);      // "octorun-hooks-<set>"
std::string busy_runners_pdb_name(std::string_view set);        // "octorun-busy-<set>"
// The manager's own RoleBinding in the set's namespace that lets it read
// what the set names there (runnerset/pod_resources.hpp, manager_reads).
std::string manager_reads_role_binding_name(std::string_view set);  // "octorun-reads-<set>"
// The GitHub runner label that names the RunnerSet which registered a runner
// through the REST API (the Webhook intake) or a scale set (the Listener
// intake; its runners carry it as the scale set's): "octorun-set-" and the 16 lowercase hex digits of
// a 64-bit digest of the set's uid. Derived from the uid, not the name: sets
// of one name in two namespaces, or a set deleted and made again, get
// different labels. The prefix is reserved (admission refuses it in a
// set's runnerLabels), so only the set's own JIT requests carry its label.
inline constexpr std::string_view registering_set_label_prefix = "octorun-set-";
// GitHub registers at most this many labels on a runner (generate-jitconfig's
// `labels`); the manager adds the set's label above to a variant's own and,
// under the Listener intake, the scale set's name.
inline constexpr std::size_t github_max_runner_labels = 100;
std::string registering_set_label(std::string_view set_uid);
// Whether a label is in the reserved namespace, as GitHub compares labels
// (case-insensitively).
bool is_registering_set_label(std::string_view label);

// The serialized label selector of a set's runner Pods (status.selector).
std::string selector(std::string_view set);

// The longest name generated for a set (and variant) and how far it is over
// the limit; nullopt when everything fits.
struct name_overflow {
  std::string longest;  // an example of the longest generated name
  std::size_t length;
  std::size_t limit;
  std::size_t over() const { return length - limit; }
};
std::optional<name_overflow> generated_name_overflow(std::string_view set, std::string_view variant);

}  // namespace octorun::model
