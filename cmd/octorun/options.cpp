#include "cmd/octorun/options.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <variant>

#include "common/strings.hpp"

namespace octorun::manager {
namespace {

using field = std::variant<std::string options::*, bool options::*, uint16_t options::*, int32_t options::*,
                           double options::*, std::vector<std::string> options::*>;

struct flag {
  std::string_view name;
  field target;
  std::string_view help;
  double min = std::numeric_limits<double>::lowest();  // numbers: the smallest accepted value
};

// One table: the parser, the help text and the defaults it shows.
const std::vector<flag>& flags() {
  static const std::vector<flag> table = {
      {"kubeconfig", &options::kubeconfig,
       "kubeconfig file (default: in-cluster, then $KUBECONFIG, ~/.kube/config)"},
      {"context", &options::context, "kubeconfig context (default: the current one)"},
      {"namespaces", &options::namespaces,
       "watch RunnerSets (and their Runners and Pods) in these namespaces, comma-separated (empty: all)"},
      {"namespace", &options::namespaces, "one namespace to watch: --namespaces with one item"},
      {"log-level", &options::log_level, "trace, debug, info, warn, error"},
      {"log-format", &options::log_format, "json or text"},
      {"webhook-intake", &options::webhook_intake,
       "serve the GitHub webhook intake (every replica; the leader acts on deliveries); false: no webhook "
       "server and no secret needed "
       "(RunnerSets with intake Webhook get IntakeReady=False)"},
      {"webhook-bind", &options::webhook_bind, "address of the GitHub webhook intake"},
      {"webhook-port", &options::webhook_port,
       "port of the GitHub webhook intake (POST /webhook); 0: any free port"},
      {"webhook-secret-file", &options::webhook_secret_file,
       "file holding the webhook secret (or set OCTORUN_WEBHOOK_SECRET)"},
      {"insecure-webhook", &options::insecure_webhook,
       "accept unsigned webhook deliveries (development only)"},
      {"health-bind", &options::health_bind,
       "address of /healthz and /readyz, a listener of their own (loopback: `octorun probe` asks them from "
       "inside the pod)"},
      {"health-port", &options::health_port, "port of /healthz and /readyz; 0: any free port"},
      {"metrics-bind", &options::metrics_bind, "address of /metrics (the pod IP, for Prometheus)"},
      {"metrics-port", &options::metrics_port, "port of /metrics (Prometheus); 0: any free port"},
      {"endpoints-file", &options::endpoints_file,
       "once every server listens, write their URLs (health, metrics, admission, webhookIntake) as one JSON "
       "object to this file, replaced whole: for tools that start the manager on port 0 (empty: none)"},
      {"leader-elect", &options::leader_elect, "elect a leader among replicas on a Lease"},
      {"lease-namespace", &options::lease_namespace, "namespace of the leader-election Lease"},
      {"lease-name", &options::lease_name, "name of the leader-election Lease"},
      {"identity", &options::identity, "this replica's identity (default: hostname + random)"},
      {"resync-seconds", &options::resync_seconds, "how often each RunnerSet reconciles from scratch", 1},
      {"webhook-sweep-seconds", &options::webhook_sweep_seconds,
       "how often a Webhook RunnerSet reconciles its demand from GitHub's queued and running jobs (0: only "
       "when it starts)",
       0},
      {"runner-phase-events", &options::runner_phase_events,
       "record Normal Events on Runners: Running, naming the job (one write per job), Pending for a runner "
       "that waits for its job; false: only Warnings (Failed, Outdated, pod failures)"},
      {"job-start-target-seconds", &options::job_start_target_seconds,
       "a job that waits longer than this from GitHub queueing it to a runner starting it counts in "
       "octorun_jobs_start_target_exceeded_total",
       1},
      {"kube-workers", &options::kube_workers, "threads making Kubernetes requests", 1},
      {"kube-qps", &options::kube_qps,
       "Kubernetes requests per second, on average, from this process (a token bucket); 0: no limit, the "
       "apiserver's API Priority and Fairness alone",
       0},
      {"kube-burst", &options::kube_burst, "Kubernetes requests allowed at once above --kube-qps", 1},
      {"github-workers", &options::github_workers,
       "threads each RunnerSet calls GitHub on: its REST workers (Webhook intake) or scale-set workers "
       "(Listener intake: at least one per variant, up to 8)",
       1},
      {"github-ca-file", &options::github_ca_file,
       "PEM bundle trusted for GitHub (Enterprise Server) connections in addition to the system CAs"},
      {"github-http-hosts", &options::github_http_hosts,
       "GitHub hosts (without port, comma-separated) a RunnerSet's scopeURL may reach over plain http or "
       "name "
       "as an IP address, e.g. a test server on 127.0.0.1; every other scope must be https to a host name"},
      {"max-runners", &options::max_runners,
       "the largest minRunners, maxRunners and replicas the admission webhook admits per RunnerSet and "
       "variant (the CRD's bound, 10000, is the ceiling)",
       1},
      {"allow-sets-without-class", &options::allow_sets_without_class,
       "serve RunnerSets that name no RunnerClass when no class is the default, under the rules from before "
       "classes (the set's own credentials, proxy and CA, any https GitHub scope); false: such a set is "
       "refused (docs/runner-classes.md, upgrading)"},
      {"platform-namespace", &options::platform_namespace,
       "the namespace of the RunnerClasses' credentials Secrets (default: the manager's own, from its "
       "ServiceAccount, else octorun-system)"},
      {"runner-creator", &options::runner_creator,
       "the one user (request.userInfo.username) the admission webhook lets create Runners (default: this "
       "manager's own name, asked of the apiserver with a SelfSubjectReview)"},
      {"runner-kubernetes-mode-cluster-role", &options::runner_kubernetes_mode_cluster_role,
       "the ClusterRole with what the runner container hooks call, which a RoleBinding in its namespace "
       "grants a containerMode kubernetes RunnerSet's ServiceAccount (the manager needs the RBAC bind verb "
       "on it); empty: such sets get no runners and say why"},
      {"tenant-reads-cluster-role", &options::tenant_reads_cluster_role,
       "the ClusterRole with get on Secrets and ConfigMaps that the manager binds to its own ServiceAccount "
       "(--runner-creator, else its name from a SelfSubjectReview) in each namespace of a RunnerSet a class "
       "admits, before it reads anything there (the manager needs the RBAC bind verb on it, and no reads of "
       "its own elsewhere); empty: its RBAC grants the reads"},
      {"admission", &options::admission,
       "serve the admission webhook on --admission-port (every replica, leader or not; off unless given)"},
      {"admission-bind", &options::admission_bind, "address of the admission webhook (HTTPS)"},
      {"admission-port", &options::admission_port, "port of the admission webhook (HTTPS); 0: any free port"},
      {"admission-cert-dir", &options::admission_cert_dir,
       "self-generated certificates: folder of the CA and the serving certificate"},
      {"admission-dns-names", &options::admission_dns_names,
       "self-generated certificates: the serving certificate's DNS names (comma-separated)"},
      {"admission-ip-addresses", &options::admission_ip_addresses,
       "self-generated certificates: the serving certificate's IP addresses (comma-separated)"},
      {"admission-ca-secret", &options::admission_ca_secret,
       "self-generated certificates: NAMESPACE/NAME of a Secret holding the CA that every replica shares "
       "(created by the first replica; default: a CA of this replica's own)"},
      {"admission-inject-ca", &options::admission_inject_ca,
       "self-generated certificates: put the CA into the caBundle of the Mutating- and "
       "ValidatingWebhookConfiguration of this name (e.g. octorun); default: do not"},
      {"admission-cert-file", &options::admission_cert_file,
       "serving certificate chain (PEM) kept by someone else, e.g. cert-manager's tls.crt; instead of "
       "self-generated certificates, reloaded when it changes"},
      {"admission-key-file", &options::admission_key_file, "its private key (PEM), e.g. tls.key"},
      {"admission-ca-file", &options::admission_ca_file, "its CA (PEM), e.g. ca.crt (optional)"},
  };
  return table;
}

const flag* find_flag(std::string_view name) {
  for (const auto& f : flags())
    if (f.name == name) return &f;
  return nullptr;
}

// A namespace name is a DNS-1123 label.
bool valid_namespace(const std::string& ns) {
  if (ns.empty() || ns.size() > 63 || ns.front() == '-' || ns.back() == '-') return false;
  return std::all_of(ns.begin(), ns.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

}  // namespace

bool whole_number(std::string_view text, long& out, long min, long max) {
  long n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || n < min || n > max)
    return false;
  out = n;
  return true;
}

namespace {

template <class Number>
expected<Number, std::string> number(const flag& f, const std::string& value) {
  Number n{};
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec == std::errc::result_out_of_range)
    return unexpected<std::string>{"--" + std::string(f.name) + ": " + value + " is out of range"};
  if (ec != std::errc() || end != value.data() + value.size() || value.empty())
    return unexpected<std::string>{"--" + std::string(f.name) + ": '" + value + "' is not a number"};
  if (static_cast<double>(n) < f.min) {
    std::ostringstream why;
    why << "--" << f.name << ": " << value << " is too small (at least " << f.min << ")";
    return unexpected<std::string>{why.str()};
  }
  return n;
}

std::optional<bool> boolean(const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return std::nullopt;
}

// Sets the field a flag names; the error names the flag. (The template
// takes the numbers: the other overloads match their types exactly.)
struct setter {
  options& o;
  const flag& f;
  const std::string& value;
  const std::string dashed = "--" + std::string(f.name);
  std::optional<std::string> operator()(std::string options::*m) const {
    o.*m = value;
    return std::nullopt;
  }
  std::optional<std::string> operator()(bool options::*m) const {
    auto b = boolean(value);
    if (!b) return dashed + ": '" + value + "' is not true or false";
    o.*m = *b;
    return std::nullopt;
  }
  template <class Number>
  std::optional<std::string> operator()(Number options::*m) const {
    auto n = number<Number>(f, value);
    if (!n) return n.error();
    o.*m = *n;
    return std::nullopt;
  }
  std::optional<std::string> operator()(std::vector<std::string> options::*m) const {
    auto items = comma_list(value);
    for (const auto& ns : items)
      if (!valid_namespace(ns)) return dashed + ": '" + ns + "' is not a namespace name";
    o.*m = std::move(items);
    return std::nullopt;
  }
};

std::optional<std::string> assign(options& o, const flag& f, const std::string& value) {
  return std::visit(setter{o, f, value}, f.target);
}

std::optional<std::string> check(const options& o) {
  if (o.log_format != "json" && o.log_format != "text")
    return "--log-format: '" + o.log_format + "' is not json or text";
  if (auto bad = check_github_http_hosts(o.github_http_hosts)) return bad;
  if (!o.platform_namespace.empty() && !valid_namespace(o.platform_namespace))
    return "--platform-namespace: '" + o.platform_namespace + "' is not a namespace name";
  return std::nullopt;
}

bool is_caf_option(std::string_view name) {
  return name.find('.') != std::string_view::npos || name == "config-file";
}

std::string shown_default(const flag& f) {
  static const options defaults;
  struct visitor {
    std::string operator()(std::string options::*m) const { return defaults.*m; }
    std::string operator()(bool options::*m) const { return defaults.*m ? "true" : "false"; }
    std::string operator()(uint16_t options::*m) const { return std::to_string(defaults.*m); }
    std::string operator()(int32_t options::*m) const { return std::to_string(defaults.*m); }
    std::string operator()(double options::*m) const {
      std::ostringstream s;
      s << defaults.*m;
      return s.str();
    }
    std::string operator()(std::vector<std::string> options::*m) const {
      std::string out;
      for (const auto& item : defaults.*m) out += (out.empty() ? "" : ",") + item;
      return out;
    }
  };
  return std::visit(visitor{}, f.target);
}

}  // namespace

std::vector<std::string> comma_list(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, ','))
    if (auto trimmed = trim_space(item); !trimmed.empty()) out.emplace_back(trimmed);
  return out;
}

std::optional<std::string> check_github_http_hosts(const std::string& value) {
  if (trim_space(value).empty()) return std::nullopt;
  const std::string flag = "--github-http-hosts: ";
  std::string raw;
  std::istringstream in(value);
  while (std::getline(in, raw, ',')) {
    const auto host = std::string(trim_space(raw));
    if (host.empty()) return flag + "an empty item in '" + value + "' (host names, comma-separated)";
    if (host.find("://") != std::string::npos || host.find('/') != std::string::npos)
      return flag + "'" + host + "' is a URL; give the host alone (e.g. ghes.example.com)";
    // The scope's host is compared without its port: a port here would never match.
    const bool ipv6 = host.front() == '[' && host.back() == ']';
    if (!ipv6 && host.find(':') != std::string::npos)
      return flag + "'" + host + "' has a port; give the host alone (any port of it is allowed)";
    if (host.find_first_of(" \t") != std::string::npos) return flag + "'" + host + "' is not a host name";
  }
  if (trim_space(value).back() == ',')  // getline gives no last, empty item
    return flag + "an empty item in '" + value + "' (host names, comma-separated)";
  return std::nullopt;
}

expected<options, std::string> parse_options(const std::vector<std::string>& args) {
  options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg == "--version") {
      o.version = true;
      continue;
    }
    if (!arg.starts_with("--") || arg.size() == 2)
      return unexpected<std::string>{"unexpected argument '" + arg +
                                     "' (flags start with --; octorun --help lists them)"};
    const auto eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::optional<std::string> value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    const bool next_is_value = i + 1 < args.size() && !args[i + 1].starts_with("--");
    if (is_caf_option(name)) {
      if (!value && next_is_value) value = args[++i];
      o.caf_args.push_back("--" + name + (value ? "=" + *value : ""));
      continue;
    }
    const flag* f = find_flag(name);
    if (f == nullptr)
      return unexpected<std::string>{"unknown flag --" + name + " (octorun --help lists the flags)"};
    if (!value) {
      if (std::holds_alternative<bool options::*>(f->target)) {
        // A bool alone is true; `--flag false` is taken too.
        value = next_is_value && boolean(args[i + 1]) ? args[++i] : "true";
      } else if (next_is_value) {
        value = args[++i];
      } else {
        return unexpected<std::string>{"--" + name + " needs a value (--" + name + "=VALUE or --" + name +
                                       " VALUE)"};
      }
    }
    if (auto err = assign(o, *f, *value)) return unexpected<std::string>{*err};
  }
  if (auto err = check(o)) return unexpected<std::string>{*err};
  return o;
}

std::string help_text() {
  std::ostringstream out;
  out << "octorun: runs GitHub Actions self-hosted runners as Kubernetes pods.\n\n"
         "Usage: octorun [--flag=value | --flag value]...\n"
         "       octorun stop-manager --namespace=NS --deployment=NAME --selector=LABELS "
         "[--timeout-seconds=120]\n"
         "         (the chart's pre-delete hook: scale the manager to 0, wait for its pods to leave)\n"
         "       octorun probe [--port=N] [--path=/healthz] [--timeout-seconds=N]\n"
         "         (the exec probe: asks the probe listener on 127.0.0.1; exit 0 when it answers 200)\n\n"
         "Flags:\n";
  for (const auto& f : flags()) {
    out << "  --" << f.name;
    auto d = shown_default(f);
    if (!d.empty()) out << " (default: " << d << ")";
    out << "\n      " << f.help << "\n";
  }
  out << "  --version\n      print the version and the git commit it was built from\n"
         "  --help, -h\n      print this text\n\n"
         "CAF's own settings pass through as --name.with.dots=value (e.g. --scheduler.max-threads=2, set it\n"
         "to the pod's CPU limit) or from a CAF INI file given with --config-file. The manager's workers\n"
         "share one queue (--scheduler.policy=sharing) unless one of those chooses another policy.\n";
  return out.str();
}

}  // namespace octorun::manager
