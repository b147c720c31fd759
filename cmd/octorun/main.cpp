// octorun: the manager. Watches RunnerSets and runs GitHub Actions runners
// as pods. Only the replica that holds the Lease reconciles and takes
// webhook deliveries; every replica serves /healthz, /readyz and /metrics
// (the state metrics hold data on the leader) and the admission webhook.
//
// Options come from the command line or a config file (--config-file, CAF's
// INI format); `octorun --help` lists them. SIGTERM/SIGINT: stop the intake,
// stop the controller (in-flight writes finish or time out), release the Lease.
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <caf/all.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include "actors/controller/controller.hpp"
#include "actors/leader/leader_election.hpp"
#include "actors/metrics/metrics_feed.hpp"
#include "adapters/admission/ca_injection.hpp"
#include "adapters/admission/shared_ca.hpp"
#include "adapters/admission/webhook_server.hpp"
#include "adapters/github/webhook_intake.hpp"
#include "adapters/http/http_server.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/logging/logging.hpp"

namespace {

using namespace octorun;

struct manager_config : caf::actor_system_config {
  std::string kubeconfig;
  std::string context;
  std::string watch_namespace;
  std::string log_level = "info";
  std::string log_format = "json";
  std::string webhook_bind = "0.0.0.0";
  uint16_t webhook_port = 8080;
  std::string webhook_secret_file;
  bool insecure_webhook = false;
  std::string health_bind = "0.0.0.0";
  uint16_t health_port = 8081;
  bool leader_elect = true;
  std::string lease_namespace = "default";
  std::string lease_name = "octorun-manager";
  std::string identity;
  int32_t resync_seconds = 30;
  int32_t kube_workers = 4;
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

  manager_config() {
    opt_group{custom_options_, "global"}
        .add(kubeconfig, "kubeconfig",
             "kubeconfig file (default: in-cluster, then $KUBECONFIG, ~/.kube/config)")
        .add(context, "context", "kubeconfig context (default: the current one)")
        .add(watch_namespace, "namespace", "watch RunnerSets in this namespace only (default: all)")
        .add(log_level, "log-level", "trace, debug, info, warn, error")
        .add(log_format, "log-format", "json or text")
        .add(webhook_bind, "webhook-bind", "address of the GitHub webhook intake")
        .add(webhook_port, "webhook-port",
             "port of the GitHub webhook intake (POST /webhook); 0: any free port")
        .add(webhook_secret_file, "webhook-secret-file",
             "file holding the webhook secret (or set OCTORUN_WEBHOOK_SECRET)")
        .add(insecure_webhook, "insecure-webhook", "accept unsigned webhook deliveries (development only)")
        .add(health_bind, "health-bind", "address of /healthz, /readyz and /metrics")
        .add(health_port, "health-port",
             "port of /healthz, /readyz and /metrics (Prometheus); 0: any free port")
        .add(leader_elect, "leader-elect", "elect a leader among replicas on a Lease")
        .add(lease_namespace, "lease-namespace", "namespace of the leader-election Lease")
        .add(lease_name, "lease-name", "name of the leader-election Lease")
        .add(identity, "identity", "this replica's identity (default: hostname + random)")
        .add(resync_seconds, "resync-seconds", "how often each RunnerSet reconciles from scratch")
        .add(kube_workers, "kube-workers", "threads making Kubernetes requests");
    opt_group{custom_options_, "global"}
        .add(admission, "admission",
             "serve the admission webhook on --admission-port (every replica, leader or not; off unless "
             "given)")
        .add(admission_bind, "admission-bind", "address of the admission webhook (HTTPS)")
        .add(admission_port, "admission-port", "port of the admission webhook (HTTPS); 0: any free port")
        .add(admission_cert_dir, "admission-cert-dir",
             "self-generated certificates: folder of the CA and the serving certificate")
        .add(admission_dns_names, "admission-dns-names",
             "self-generated certificates: the serving certificate's DNS names (comma-separated)")
        .add(admission_ip_addresses, "admission-ip-addresses",
             "self-generated certificates: the serving certificate's IP addresses (comma-separated)")
        .add(admission_ca_secret, "admission-ca-secret",
             "self-generated certificates: NAMESPACE/NAME of a Secret holding the CA that every replica "
             "shares (created by the first replica; default: a CA of this replica's own)")
        .add(admission_inject_ca, "admission-inject-ca",
             "self-generated certificates: put the CA into the caBundle of the Mutating- and "
             "ValidatingWebhookConfiguration of this name (e.g. octorun); default: do not")
        .add(admission_cert_file, "admission-cert-file",
             "serving certificate chain (PEM) kept by someone else, e.g. cert-manager's tls.crt; "
             "instead of self-generated certificates, reloaded when it changes")
        .add(admission_key_file, "admission-key-file", "its private key (PEM), e.g. tls.key")
        .add(admission_ca_file, "admission-ca-file", "its CA (PEM), e.g. ca.crt (optional)");
  }
};

std::string default_identity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::mt19937_64 rng(std::random_device{}());
  std::ostringstream id;
  id << host << "_" << std::hex << rng();
  return id.str();
}

std::string webhook_secret(const manager_config& cfg) {
  if (!cfg.webhook_secret_file.empty()) {
    std::ifstream in(cfg.webhook_secret_file);
    std::stringstream ss;
    ss << in.rdbuf();
    auto s = ss.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }
  const char* env = std::getenv("OCTORUN_WEBHOOK_SECRET");
  return env != nullptr ? env : "";
}

// The manager's own metrics beside the state metrics, all served on /metrics.
struct manager_metrics {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::shared_ptr<metrics::state_collector> state = std::make_shared<metrics::state_collector>();
  prometheus::Gauge* leader = nullptr;

  explicit manager_metrics(const std::string& identity) {
    leader = &prometheus::BuildGauge()
                  .Name("octorun_manager_leader")
                  .Help("1 while this replica holds the Lease and reconciles, else 0.")
                  .Register(*registry)
                  .Add({{"identity", identity}});
    prometheus::BuildGauge()
        .Name("octorun_manager_info")
        .Help("The manager's version; 1.")
        .Register(*registry)
        .Add({{"version", "0.1.0"}, {"identity", identity}})
        .Set(1);
    prometheus::BuildGauge()
        .Name("octorun_manager_start_time_seconds")
        .Help("When this replica started, in seconds since the epoch.")
        .Register(*registry)
        .Add({})
        .SetToCurrentTime();
  }

  std::string scrape() const {
    auto families = registry->Collect();
    for (auto& f : state->Collect()) families.push_back(std::move(f));
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families);
    return out.str();
  }
};

// What leadership switches on and off: the controller and the intake.
struct leading_parts {
  caf::actor controller;
  std::unique_ptr<github::webhook_intake> intake;
};

caf::behavior leadership_watch(caf::event_based_actor* self, std::shared_ptr<leading_parts> parts,
                               controller::controller_config ccfg, github::intake_options iopts,
                               std::shared_ptr<std::atomic<bool>> ready,
                               std::shared_ptr<manager_metrics> metrics) {
  return {
      [=](leader::leadership_atom, bool leading) {
        metrics->leader->Set(leading ? 1 : 0);
        if (leading && !parts->controller) {
          parts->controller = controller::spawn_controller(self->system(), ccfg);
          auto intake = github::webhook_intake::start(iopts, github::actor_sink(parts->controller));
          if (!intake) {
            spdlog::critical("webhook intake: {}", intake.error());
            std::exit(1);
          }
          parts->intake = std::move(*intake);
          spdlog::info("leading: webhook intake listening on {}", parts->intake->url());
          ready->store(true);
        } else if (!leading && parts->controller) {
          // Another replica may lead now: stop at once rather than race it.
          spdlog::critical("lost leadership; exiting so that only the leader reconciles");
          std::_Exit(1);
        }
      },
  };
}

std::vector<std::string> comma_list(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Every replica serves the admission webhook: the apiserver calls whichever
// the Service picks. Self-generated certificates come from one CA (in a
// Secret, --admission-ca-secret) so that one caBundle fits every replica.
expected<std::shared_ptr<admission::webhook_server>, std::string> start_admission(
    const manager_config& cfg, const kube::config& kube_cfg) {
  admission::webhook_server_options o;
  o.bind_address = cfg.admission_bind;
  o.port = cfg.admission_port;
  std::optional<admission::certificate_source> certs;
  if (!cfg.admission_cert_file.empty()) {
    certs = admission::certificate_source::from_files(
        {cfg.admission_cert_file, cfg.admission_key_file, cfg.admission_ca_file, cfg.admission_cert_dir});
  } else {
    if (!cfg.admission_ca_secret.empty()) {
      auto slash = cfg.admission_ca_secret.find('/');
      if (slash == std::string::npos)
        return unexpected<std::string>{"--admission-ca-secret must be NAMESPACE/NAME"};
      kube::client api(kube_cfg);
      auto shared =
          admission::fetch_shared_ca(api, cfg.admission_ca_secret.substr(0, slash),
                                     cfg.admission_ca_secret.substr(slash + 1), cfg.admission_cert_dir);
      if (!shared) return unexpected<std::string>{shared.error()};
    }
    admission::self_signed_config sc;
    sc.dir = cfg.admission_cert_dir;
    sc.dns_names = comma_list(cfg.admission_dns_names);
    sc.ip_addresses = comma_list(cfg.admission_ip_addresses);
    certs = admission::certificate_source::self_signed(sc);
  }
  auto server = admission::webhook_server::start(o, std::move(*certs));
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

int main(int argc, char** argv) {
  // Signals are taken by sigwait below, never by CAF's threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  manager_config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "octorun: " << caf::to_string(err) << "\n(octorun --help lists the options)\n";
    return 2;
  }
  if (cfg.cli_helptext_printed) return 0;
  if (auto logged = logging::setup({cfg.log_format == "text" ? logging::format::text : logging::format::json,
                                    cfg.log_level, "octorun"});
      !logged) {
    std::cerr << "octorun: " << logged.error() << "\n";
    return 2;
  }
  auto kube_cfg = cfg.kubeconfig.empty() ? kube::default_config(cfg.context)
                                         : kube::load_kubeconfig(cfg.kubeconfig, cfg.context);
  if (!kube_cfg) {
    spdlog::critical("Kubernetes configuration: {}", kube_cfg.error());
    return 2;
  }
  auto secret = webhook_secret(cfg);
  if (secret.empty() && !cfg.insecure_webhook) {
    spdlog::critical(
        "no webhook secret: set --webhook-secret-file or OCTORUN_WEBHOOK_SECRET "
        "(or --insecure-webhook for development)");
    return 2;
  }

  const auto identity = cfg.identity.empty() ? default_identity() : cfg.identity;
  std::shared_ptr<admission::webhook_server> admission_server;
  if (cfg.admission) {
    auto started = start_admission(cfg, *kube_cfg);
    if (!started) {
      spdlog::critical("admission webhook: {}", started.error());
      return 1;
    }
    admission_server = std::move(*started);
    spdlog::info("admission webhook listening on https://{}:{}", cfg.admission_bind,
                 admission_server->port());
  }

  caf::actor_system sys{cfg};
  caf::actor admission_upkeep;
  if (admission_server)
    admission_upkeep =
        sys.spawn<caf::detached>(admission_maintenance, admission_server, *kube_cfg, cfg.admission_inject_ca);
  auto ready = std::make_shared<std::atomic<bool>>(false);
  auto metrics = std::make_shared<manager_metrics>(identity);
  auto health = http::server::start(
      {cfg.health_bind, cfg.health_port, "", 2, 1 << 16, 5000},
      {{"/healthz",
        {"GET"},
        [](const http::server_request&) {
          return http::server_response{200, "text/plain", "ok", {}};
        }},
       {"/readyz",
        {"GET"},
        [ready](const http::server_request&) {
          // Followers are ready too: they serve health, admission and metrics, and wait for the Lease.
          return http::server_response{200, "text/plain", ready->load() ? "leading" : "standby", {}};
        }},
       {"/metrics", {"GET"}, [metrics](const http::server_request&) {
          return http::server_response{
              200, "text/plain; version=0.0.4; charset=utf-8", metrics->scrape(), {}};
        }}});
  if (!health) {
    spdlog::critical("health server: {}", health.error());
    return 1;
  }
  spdlog::info("health endpoints on {}", (*health)->base_url());
  auto metrics_feed = metrics::spawn_metrics_feed(sys, metrics->state);

  controller::controller_config ccfg;
  ccfg.kube = *kube_cfg;
  ccfg.ns = cfg.watch_namespace;
  ccfg.kube_workers = static_cast<std::size_t>(std::max(1, cfg.kube_workers));
  ccfg.runnerset_defaults.resync = std::chrono::seconds(std::max(1, cfg.resync_seconds));
  ccfg.runnerset_defaults.user_agent = "octorun/0.1.0";
  ccfg.runnerset_defaults.runner_defaults.user_agent = "octorun/0.1.0";
  ccfg.observer = metrics_feed;
  ccfg.reporting_instance = identity;
  github::intake_options iopts;
  iopts.secret = secret;
  iopts.allow_insecure = cfg.insecure_webhook;
  iopts.http.bind_address = cfg.webhook_bind;
  iopts.http.port = cfg.webhook_port;

  auto parts = std::make_shared<leading_parts>();
  auto watch = sys.spawn(leadership_watch, parts, ccfg, iopts, ready, metrics);
  caf::actor election;
  if (cfg.leader_elect) {
    leader::election_options eo;
    eo.lease = {cfg.lease_namespace, cfg.lease_name, identity, std::chrono::seconds(15)};
    election = leader::spawn_leader_election(sys, *kube_cfg, {}, eo, watch);
  } else {
    caf::anon_send(watch, leader::leadership_atom::value, true);
  }

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received {}; shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  parts->intake.reset();  // no new deliveries
  if (parts->controller) caf::anon_send_exit(parts->controller, caf::exit_reason::user_shutdown);
  if (election) caf::anon_send_exit(election, caf::exit_reason::user_shutdown);  // releases the Lease
  caf::anon_send_exit(watch, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(metrics_feed, caf::exit_reason::user_shutdown);
  if (admission_upkeep) caf::anon_send_exit(admission_upkeep, caf::exit_reason::user_shutdown);
  health->reset();
  admission_server.reset();
  return 0;  // the actor system waits for its actors on destruction
}
