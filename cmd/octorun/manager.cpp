#include "cmd/octorun/manager.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>

#include "actors/class_hooks/class_hooks_actor.hpp"
#include "actors/controller/controller.hpp"
#include "actors/kinds.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "actors/metrics/metrics_feed.hpp"
#include "adapters/admission/ca_injection.hpp"
#include "adapters/admission/identity.hpp"
#include "adapters/admission/platform_lookup.hpp"
#include "adapters/admission/shared_ca.hpp"
#include "adapters/admission/webhook_server.hpp"
#include "adapters/http/http_server.hpp"
#include "adapters/tls/ca_bundle.hpp"
#include "cmd/octorun/endpoints.hpp"
#include "cmd/octorun/version.hpp"
#include "model/scope.hpp"

namespace octorun::manager {
namespace {

std::string default_identity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::mt19937_64 rng(std::random_device{}());
  std::ostringstream id;
  id << host << "_" << std::hex << rng();
  return id.str();
}

expected<std::string, std::string> webhook_secret(const options& o) {
  if (!o.webhook_secret_file.empty()) {
    std::ifstream in(o.webhook_secret_file);
    if (!in) return unexpected<std::string>{"--webhook-secret-file: cannot read " + o.webhook_secret_file};
    std::stringstream ss;
    ss << in.rdbuf();
    auto s = ss.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }
  const char* env = std::getenv("OCTORUN_WEBHOOK_SECRET");
  return std::string(env != nullptr ? env : "");
}

// The manager's own user: --runner-creator, else asked of the apiserver (a
// SelfSubjectReview). The one user who creates Runners, and the subject of
// the sets' reads bindings.
expected<std::string, std::string> manager_username(const options& o, const kube::config& kube_cfg) {
  if (!o.runner_creator.empty()) return o.runner_creator;
  kube::client api(kube_cfg);
  return admission::own_username(api);
}

// Every replica serves the admission webhook: the apiserver calls whichever
// the Service picks. Self-generated certificates come from one CA (in a
// Secret, --admission-ca-secret) so that one caBundle fits every replica.
expected<std::shared_ptr<admission::webhook_server>, std::string> start_admission(
    const options& o, const kube::config& kube_cfg) {
  admission::webhook_server_options wo;
  wo.bind_address = o.admission_bind;
  wo.port = o.admission_port;
  wo.http = endpoints(o).admission;
  std::optional<admission::certificate_source> certs;
  if (!o.admission_cert_file.empty()) {
    certs = admission::certificate_source::from_files(
        {o.admission_cert_file, o.admission_key_file, o.admission_ca_file, o.admission_cert_dir});
  } else {
    if (!o.admission_ca_secret.empty()) {
      auto slash = o.admission_ca_secret.find('/');
      if (slash == std::string::npos)
        return unexpected<std::string>{"--admission-ca-secret must be NAMESPACE/NAME"};
      kube::client api(kube_cfg);
      auto shared = admission::fetch_shared_ca(api, o.admission_ca_secret.substr(0, slash),
                                               o.admission_ca_secret.substr(slash + 1), o.admission_cert_dir);
      if (!shared) return unexpected<std::string>{shared.error()};
    }
    admission::self_signed_config sc;
    sc.dir = o.admission_cert_dir;
    sc.dns_names = comma_list(o.admission_dns_names);
    sc.ip_addresses = comma_list(o.admission_ip_addresses);
    certs = admission::certificate_source::self_signed(sc);
  }
  wo.policy.scopes.http_hosts = comma_list(o.github_http_hosts);
  wo.policy.max_runners = o.max_runners;
  wo.policy.allow_sets_without_class = o.allow_sets_without_class;
  wo.policy.classes = admission::read_platform(kube_cfg, kinds::runner_classes(), kinds::runnersets());
  auto creator = manager_username(o, kube_cfg);
  if (!creator)
    return unexpected<std::string>{"who may create Runners (--runner-creator) is unknown: " +
                                   creator.error()};
  wo.policy.runner_creator = std::move(*creator);
  spdlog::info("admission webhook: only {} creates Runners", wo.policy.runner_creator);
  auto server = admission::webhook_server::start(wo, std::move(*certs));
  if (!server) return unexpected<std::string>{server.error()};
  return std::shared_ptr<admission::webhook_server>(std::move(*server));
}

using admission_tick_atom = caf::atom_constant<caf::atom("admtick")>;

// Keeps the webhook's certificate fresh (rotate_if_due) and, with
// --admission-inject-ca, the webhook configurations' caBundle current (also
// after someone reset it). Blocking calls: a detached actor.
caf::behavior admission_maintenance(caf::event_based_actor* self,
                                    std::shared_ptr<admission::webhook_server> server, kube::config kube_cfg,
                                    std::string inject_into) {
  auto inject = [=] {
    if (inject_into.empty()) return true;
    kube::client api(kube_cfg);
    auto done = admission::inject_ca_bundle(api, inject_into, server->ca_bundle());
    if (!done)
      spdlog::error("admission webhook: injecting the caBundle into {}: {}", inject_into, done.error());
    return static_cast<bool>(done);
  };
  const bool injected = inject();
  if (injected && !inject_into.empty())
    spdlog::info("admission webhook: caBundle injected into the webhook configurations {}", inject_into);
  self->delayed_send(self, injected ? std::chrono::minutes(5) : std::chrono::minutes(1),
                     admission_tick_atom::value);
  return {
      [=](admission_tick_atom) {
        auto rotated = server->rotate_if_due();
        if (!rotated) spdlog::error("admission webhook: certificate rotation: {}", rotated.error());
        if (rotated && *rotated) spdlog::info("admission webhook: serving certificate rotated");
        const bool ok = inject();
        self->delayed_send(self, ok ? std::chrono::minutes(5) : std::chrono::minutes(1),
                           admission_tick_atom::value);
      },
  };
}

}  // namespace

std::shared_ptr<kube::token_bucket> kube_limiter(const options& o) {
  if (o.kube_qps <= 0) return nullptr;
  return std::make_shared<kube::token_bucket>(o.kube_qps, o.kube_burst);
}

expected<settings, std::string> resolve(const options& o) {
  settings s;
  auto kube_cfg =
      o.kubeconfig.empty() ? kube::default_config(o.context) : kube::load_kubeconfig(o.kubeconfig, o.context);
  if (!kube_cfg) return unexpected<std::string>{"Kubernetes configuration: " + kube_cfg.error()};
  s.kube = std::move(*kube_cfg);
  s.kube_options.limiter = kube_limiter(o);
  s.identity = o.identity.empty() ? default_identity() : o.identity;
  metrics::metrics_options metrics_options;
  metrics_options.job_start_target_seconds = o.job_start_target_seconds;
  s.metrics = metrics::manager_metrics::make({s.identity, version, git_commit}, metrics_options);
  s.kube_options.observer = s.metrics;
  if (o.webhook_intake) {
    auto secret = webhook_secret(o);
    if (!secret) return unexpected<std::string>{secret.error()};
    if (secret->empty() && !o.insecure_webhook)
      return unexpected<std::string>{
          "no webhook secret: set --webhook-secret-file or OCTORUN_WEBHOOK_SECRET (or --insecure-webhook for "
          "development, or --webhook-intake=false when every RunnerSet uses the Listener intake)"};
    s.webhook_secret = std::move(*secret);
  }
  if (!o.github_ca_file.empty()) {
    auto bundle = tls::trust_bundle_with(o.github_ca_file, tls::system_ca_bundle_path());
    if (!bundle) return unexpected<std::string>{"--github-ca-file: " + bundle.error()};
    s.github_tls.ca_pem = std::move(*bundle);
  }
  s.github_proxy = http::proxy_from_environment();
  for (auto [endpoint, variable] :
       {std::pair{&s.github_proxy.https, "HTTPS_PROXY"}, std::pair{&s.github_proxy.http, "HTTP_PROXY"}})
    if (*endpoint)
      if (auto url = model::parse_proxy_url((*endpoint)->url); !url)
        return unexpected<std::string>{std::string(variable) + " (or its lower-case name): " + url.error()};
  return s;
}

struct manager::replica_parts {
  std::shared_ptr<std::atomic<bool>> leading = std::make_shared<std::atomic<bool>>(false);
  // The leader's job router, once this replica leads: where the webhook
  // intake hands deliveries (none: a follower's, left to the leader's sweep).
  std::mutex router_mutex;
  protocols::job_router router;
  std::shared_ptr<admission::webhook_server> admission_server;
  caf::actor admission_upkeep;
  caf::actor class_hooks;                 // reads the RunnerClasses' webhook secrets for the intake
  std::unique_ptr<http::server> health;   // /healthz, /readyz
  std::unique_ptr<http::server> metrics;  // /metrics
  watched::observer metrics_feed;
};

namespace {
// Who the RunnerSets' reads bindings name: --runner-creator, else this
// manager's own name; a ServiceAccount, as RBAC subjects go.
expected<runnerset::manager_reads, std::string> manager_reads_of(const options& o, const settings& s) {
  auto me = manager_username(o, s.kube);
  if (!me) return unexpected<std::string>{"who the manager is is unknown: " + me.error()};
  const auto& user = *me;
  auto account = runnerset::service_account_of(user);
  if (!account)
    return unexpected<std::string>{"the manager runs as " + user +
                                   ", not a ServiceAccount (system:serviceaccount:NAMESPACE:NAME), which a "
                                   "RoleBinding could name"};
  return runnerset::manager_reads{o.tenant_reads_cluster_role, std::move(account->first),
                                  std::move(account->second)};
}
}  // namespace

manager::manager(caf::actor_system& sys, options o, settings s)
    : sys_(sys),
      options_(std::move(o)),
      settings_(std::move(s)),
      replica_(std::make_unique<replica_parts>()) {}

manager::~manager() { stop(); }

expected<std::unique_ptr<manager>, std::string> manager::start(caf::actor_system& sys, options o,
                                                               settings s) {
  std::unique_ptr<manager> m(new manager(sys, std::move(o), std::move(s)));
  auto& r = *m->replica_;
  const auto& opts = m->options_;
  if (!opts.tenant_reads_cluster_role.empty()) {
    auto reads = manager_reads_of(opts, m->settings_);
    if (!reads) return unexpected<std::string>{"--tenant-reads-cluster-role: " + reads.error()};
    m->reads_ = std::move(*reads);
    spdlog::info(
        "RunnerSets bind ClusterRole {} to ServiceAccount {}/{} in their namespaces before reading there",
        m->reads_.cluster_role, m->reads_.account_namespace, m->reads_.account_name);
  }
  if (opts.admission) {
    auto started = start_admission(opts, m->settings_.kube);
    if (!started) return unexpected<std::string>{"admission webhook: " + started.error()};
    r.admission_server = std::move(*started);
    spdlog::info("admission webhook listening on https://{}:{}", opts.admission_bind,
                 r.admission_server->port());
    r.admission_upkeep = sys.spawn<caf::detached>(admission_maintenance, r.admission_server,
                                                  m->settings_.kube, opts.admission_inject_ca);
  }
  if (opts.webhook_intake) {
    auto started = m->start_webhook_intake();
    if (!started) return unexpected<std::string>{"webhook intake: " + started.error()};
  }
  auto leading = r.leading;
  auto scraped = m->settings_.metrics;
  scraped->count_actors_with([&sys] { return sys.registry().running(); });
  const auto limits = endpoints(opts);
  // The probes on a listener of their own: no other port's clients can
  // take their threads (docs/security.md).
  auto health = http::server::start(
      limits.probes,
      {{"/healthz",
        {"GET"},
        http::request_body::refused,
        [](const http::server_request&) {
          return http::server_response{200, "text/plain", "ok", {}};
        }},
       {"/readyz", {"GET"}, http::request_body::refused, [leading](const http::server_request&) {
          // Every port of a follower is ready too (docs/operations.md): health,
          // metrics, admission, and the webhook intake, whose deliveries the
          // leader's sweep of GitHub's queue serves. Its endpoints start before
          // this one answers.
          return http::server_response{200, "text/plain", leading->load() ? "leading" : "standby", {}};
        }}});
  if (!health) return unexpected<std::string>{"health server: " + health.error()};
  r.health = std::move(*health);
  auto metrics_server = http::server::start(
      limits.metrics,
      {{"/metrics", {"GET"}, http::request_body::refused, [scraped](const http::server_request&) {
          return http::server_response{
              200, "text/plain; version=0.0.4; charset=utf-8", scraped->scrape(), {}};
        }}});
  if (!metrics_server) return unexpected<std::string>{"metrics server: " + metrics_server.error()};
  r.metrics = std::move(*metrics_server);
  spdlog::info("metrics on {}/metrics", r.metrics->base_url());
  spdlog::info("health endpoints on {}", r.health->base_url());
  r.metrics_feed = metrics::spawn_metrics_feed(sys, m->settings_.metrics->state());
  return m;
}

namespace {
std::string platform_namespace_of(const options& o);
}  // namespace

expected<ok_t, std::string> manager::start_webhook_intake() {
  github::intake_options iopts;
  iopts.secret = settings_.webhook_secret;
  // Each RunnerClass with a webhook secret of its own gets a path of its
  // own, verified with that secret (docs/intakes.md): read on every replica,
  // since a follower answers deliveries too.
  auto class_secrets = std::make_shared<github::class_webhook_secrets>();
  iopts.classes = class_secrets;
  iopts.allow_insecure = options_.insecure_webhook;
  iopts.http = endpoints(options_).intake;
  iopts.on_rejected = [](const char* reason, const std::string& delivery, const std::string& why) {
    // Unsigned requests are logged once in all (anyone can send them), the others once per delivery.
    const bool unsigned_request = std::string_view(reason) == "bad_signature";
    if (metrics::reject_input("webhook", reason, unsigned_request ? std::string() : delivery))
      spdlog::info("webhook intake: delivery {} turned away: {} ({})", delivery.empty() ? "-" : delivery, why,
                   reason);
  };
  iopts.counters = settings_.metrics->webhook_deliveries();
  // On the leader each delivery goes to the job router as its own message
  // type (checked against its interface); on a follower the job waits on
  // GitHub's queue for the leader's sweep.
  github::job_sink to_router = [parts = replica_.get()](messages::job_message m) {
    protocols::job_router router;
    {
      std::lock_guard lock(parts->router_mutex);
      router = parts->router;
    }
    if (router)
      messages::send_job_message(router, std::move(m));
    else
      spdlog::debug("webhook intake (standby): job {} is left to the leader's sweep of GitHub's queue",
                    messages::job_of(m).job_id);
  };
  auto intake = github::webhook_intake::start(iopts, std::move(to_router));
  if (!intake) return unexpected<std::string>{intake.error()};
  intake_ = std::move(*intake);
  class_hooks::class_hooks_config hooks;
  hooks.kube = settings_.kube;
  hooks.kube_options = settings_.kube_options;
  hooks.platform_namespace = platform_namespace_of(options_);
  hooks.resync = std::chrono::seconds(std::max(1, options_.resync_seconds));
  hooks.secrets = std::move(class_secrets);
  replica_->class_hooks = class_hooks::spawn_class_hooks(sys_, std::move(hooks));
  spdlog::info(
      "webhook intake serving {}, and {}/classes/NAME for each RunnerClass with a webhook secret "
      "(standby until this replica leads)",
      intake_->url(), intake_->url());
  return ok;
}

std::string manager::probes_url() const { return replica_->health->base_url(); }
std::string manager::metrics_url() const { return replica_->metrics->base_url() + "/metrics"; }
std::uint16_t manager::admission_port() const {
  return replica_->admission_server ? replica_->admission_server->port() : 0;
}
std::string manager::intake_url() const { return intake_ ? intake_->url() : std::string(); }

void manager::set_leader_gauge(bool leading) { settings_.metrics->set_leader(leading); }

// A listed namespace that does not exist is not an error: its watches list
// it empty and serve its RunnerSets once it is created (controller-runtime's
// multi-namespace cache does the same), and the other namespaces are served
// meanwhile. It is logged by name, so that a typo does not go unnoticed
// (README.md). One GET per namespace, on the main thread.
namespace {
void warn_about_missing_namespaces(const settings& s, const std::vector<std::string>& namespaces) {
  if (namespaces.empty()) return;
  kube::client api(s.kube, s.kube_options);
  for (const auto& ns : namespaces) {
    auto got = api.get(kube::namespaces(), "", ns);
    if (got) continue;
    if (got.error().not_found())
      spdlog::warn(
          "--namespaces: namespace {} does not exist; its RunnerSets are served once it is created, the "
          "other namespaces are served now",
          ns);
    else if (!got.error().forbidden())  // namespaced RBAC may not allow reading it: nothing to say
      spdlog::warn("--namespaces: cannot check that namespace {} exists: {}", ns,
                   kube::to_string(got.error()));
  }
}
// Where RunnerClasses keep their credentials: --platform-namespace, else
// the manager's own namespace (its ServiceAccount's), else octorun-system.
std::string platform_namespace_of(const options& o) {
  if (!o.platform_namespace.empty()) return o.platform_namespace;
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (in && std::getline(in, ns) && !ns.empty()) return ns;
  return "octorun-system";
}
}  // namespace

expected<ok_t, std::string> manager::lead() {
  if (controller_) return ok;
  warn_about_missing_namespaces(settings_, options_.namespaces);
  const std::string user_agent = std::string("octorun/") + version;
  controller::controller_config ccfg;
  ccfg.kube = settings_.kube;
  ccfg.kube_options = settings_.kube_options;
  ccfg.namespaces = options_.namespaces;
  ccfg.kube_workers = static_cast<std::size_t>(std::max(1, options_.kube_workers));
  ccfg.runnerset_defaults.resync = std::chrono::seconds(std::max(1, options_.resync_seconds));
  ccfg.runnerset_defaults.webhook_sweep = std::chrono::seconds(std::max(0, options_.webhook_sweep_seconds));
  ccfg.runnerset_defaults.user_agent = user_agent;
  ccfg.runnerset_defaults.status_hold = runnerset::default_status_hold;
  ccfg.runnerset_defaults.runner_defaults.user_agent = user_agent;
  ccfg.runnerset_defaults.runner_defaults.phase_events = options_.runner_phase_events;
  ccfg.runnerset_defaults.webhook_intake_enabled = options_.webhook_intake;
  ccfg.runnerset_defaults.hooks_cluster_role = options_.runner_kubernetes_mode_cluster_role;
  ccfg.runnerset_defaults.reads = reads_;
  ccfg.runnerset_defaults.github_tls = settings_.github_tls;
  ccfg.runnerset_defaults.github_workers = static_cast<std::size_t>(std::max(1, options_.github_workers));
  ccfg.runnerset_defaults.github_proxy = settings_.github_proxy;
  ccfg.runnerset_defaults.scopes.http_hosts = comma_list(options_.github_http_hosts);
  ccfg.runnerset_defaults.classes = {.allow_sets_without_class = options_.allow_sets_without_class,
                                     .scopes = ccfg.runnerset_defaults.scopes};
  ccfg.runnerset_defaults.platform_namespace = platform_namespace_of(options_);
  for (auto [endpoint, scheme] :
       {std::pair{&settings_.github_proxy.https, "https"}, std::pair{&settings_.github_proxy.http, "http"}})
    if (*endpoint)
      spdlog::info("GitHub {}:// calls go through the proxy {}{} (from the environment; NO_PROXY: \"{}\")",
                   scheme, (*endpoint)->url, (*endpoint)->username.empty() ? "" : " with credentials",
                   settings_.github_proxy.no_proxy);
  ccfg.runnerset_defaults.metrics = settings_.metrics;
  ccfg.observer = replica_->metrics_feed;
  ccfg.reporting_instance = settings_.identity;
  auto router = controller::spawn_controller(sys_, ccfg);
  controller_ = caf::actor_cast<caf::actor>(router);
  {
    std::lock_guard lock(replica_->router_mutex);
    replica_->router = protocols::job_router{router};
  }
  if (intake_)
    spdlog::info("leading: webhook intake listening on {}", intake_->url());
  else
    spdlog::info("leading: no webhook intake (--webhook-intake=false)");
  replica_->leading->store(true);
  return ok;
}

void manager::stop() {
  intake_.reset();  // no new deliveries
  if (controller_) caf::anon_send_exit(controller_, caf::exit_reason::user_shutdown);
  controller_ = nullptr;
  auto& r = *replica_;
  if (r.metrics_feed) caf::anon_send_exit(r.metrics_feed, caf::exit_reason::user_shutdown);
  if (r.admission_upkeep) caf::anon_send_exit(r.admission_upkeep, caf::exit_reason::user_shutdown);
  if (r.class_hooks) caf::anon_send_exit(r.class_hooks, caf::exit_reason::user_shutdown);
  r.class_hooks = nullptr;
  r.metrics_feed = nullptr;
  r.admission_upkeep = nullptr;
  r.health.reset();
  r.metrics.reset();
  r.admission_server.reset();
}

}  // namespace octorun::manager
