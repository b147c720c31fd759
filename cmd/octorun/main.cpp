// octorun: the manager. Watches RunnerSets and runs GitHub Actions runners
// as pods. Only the replica that holds the Lease reconciles and takes
// webhook deliveries; every replica serves /healthz and /readyz.
//
// Options come from the command line or a config file (--config-file, CAF's
// INI format); `octorun --help` lists them. SIGTERM/SIGINT: stop the intake,
// stop the controller (in-flight writes finish or time out), release the Lease.
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
#include <random>
#include <sstream>

#include "actors/controller/controller.hpp"
#include "actors/leader/leader_election.hpp"
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
        .add(health_bind, "health-bind", "address of /healthz and /readyz")
        .add(health_port, "health-port", "port of /healthz and /readyz; 0: any free port")
        .add(leader_elect, "leader-elect", "elect a leader among replicas on a Lease")
        .add(lease_namespace, "lease-namespace", "namespace of the leader-election Lease")
        .add(lease_name, "lease-name", "name of the leader-election Lease")
        .add(identity, "identity", "this replica's identity (default: hostname + random)")
        .add(resync_seconds, "resync-seconds", "how often each RunnerSet reconciles from scratch")
        .add(kube_workers, "kube-workers", "threads making Kubernetes requests");
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

// What leadership switches on and off: the controller and the intake.
struct leading_parts {
  caf::actor controller;
  std::unique_ptr<github::webhook_intake> intake;
};

caf::behavior leadership_watch(caf::event_based_actor* self, std::shared_ptr<leading_parts> parts,
                               controller::controller_config ccfg, github::intake_options iopts,
                               std::shared_ptr<std::atomic<bool>> ready) {
  return {
      [=](leader::leadership_atom, bool leading) {
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

  caf::actor_system sys{cfg};
  auto ready = std::make_shared<std::atomic<bool>>(false);
  auto health = http::server::start(
      {cfg.health_bind, cfg.health_port, "", 2, 1 << 16, 5000},
      {{"/healthz",
        {"GET"},
        [](const http::server_request&) {
          return http::server_response{200, "text/plain", "ok", {}};
        }},
       {"/readyz", {"GET"}, [ready](const http::server_request&) {
          // Followers are ready too: they serve health and wait for the Lease.
          return http::server_response{200, "text/plain", ready->load() ? "leading" : "standby", {}};
        }}});
  if (!health) {
    spdlog::critical("health server: {}", health.error());
    return 1;
  }
  spdlog::info("health endpoints on {}", (*health)->base_url());

  controller::controller_config ccfg;
  ccfg.kube = *kube_cfg;
  ccfg.ns = cfg.watch_namespace;
  ccfg.kube_workers = static_cast<std::size_t>(std::max(1, cfg.kube_workers));
  ccfg.runnerset_defaults.resync = std::chrono::seconds(std::max(1, cfg.resync_seconds));
  ccfg.runnerset_defaults.user_agent = "octorun/0.1.0";
  ccfg.runnerset_defaults.runner_defaults.user_agent = "octorun/0.1.0";
  github::intake_options iopts;
  iopts.secret = secret;
  iopts.allow_insecure = cfg.insecure_webhook;
  iopts.http.bind_address = cfg.webhook_bind;
  iopts.http.port = cfg.webhook_port;

  auto parts = std::make_shared<leading_parts>();
  auto watch = sys.spawn(leadership_watch, parts, ccfg, iopts, ready);
  caf::actor election;
  if (cfg.leader_elect) {
    leader::election_options eo;
    eo.lease = {cfg.lease_namespace, cfg.lease_name, cfg.identity.empty() ? default_identity() : cfg.identity,
                std::chrono::seconds(15)};
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
  health->reset();
  return 0;  // the actor system waits for its actors on destruction
}
