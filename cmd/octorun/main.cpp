// octorun: the manager. Watches RunnerSets and runs GitHub Actions runners
// as pods. Only the replica that holds the Lease reconciles and takes
// webhook deliveries; every replica serves /healthz and /readyz (on loopback,
// for `octorun probe`), /metrics (the state metrics hold data on the leader)
// and the admission webhook.
//
// `octorun --help` lists the flags (options.hpp). main owns the process:
// it parses the flags, starts the every-replica parts (manager.hpp), and
// then waits on one mailbox for leadership changes and signals. Everything
// that blocks or ends the process happens here, on the main thread, never
// on an actor. SIGTERM/SIGINT: stop the intake, stop the controller
// (in-flight writes finish or time out), release the Lease.
#include <malloc.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <caf/all.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "actors/leader/leader_election.hpp"
#include "adapters/logging/logging.hpp"
#include "cmd/octorun/caf_settings.hpp"
#include "cmd/octorun/endpoints.hpp"
#include "cmd/octorun/heap_return.hpp"
#include "cmd/octorun/manager.hpp"
#include "cmd/octorun/options.hpp"
#include "cmd/octorun/probe.hpp"
#include "cmd/octorun/stop_manager.hpp"
#include "cmd/octorun/version.hpp"

namespace {

using namespace octorun;
using signal_atom = caf::atom_constant<caf::atom("signal")>;

// Takes SIGTERM/SIGINT (blocked in every thread) and posts them to `mailbox`.
// stop() wakes it if no signal came.
class signal_relay {
 public:
  signal_relay(sigset_t signals, caf::actor mailbox)
      : thread_([signals, mailbox] {
          int sig = 0;
          sigwait(&signals, &sig);
          caf::anon_send(mailbox, signal_atom::value, sig);
        }) {}
  ~signal_relay() {
    pthread_kill(thread_.native_handle(), SIGTERM);  // a no-op race if it already returned: it is joinable
    thread_.join();
  }

 private:
  std::thread thread_;
};

// Runs until a signal (status 0) or a fatal condition (status 1, logged).
int run(caf::actor_system& sys, const manager::options& opts, manager::settings s, const sigset_t& signals) {
  const auto lease_identity = s.identity;
  const auto kube_cfg = s.kube;
  const auto kube_options = s.kube_options;
  auto started = manager::manager::start(sys, opts, std::move(s));
  if (!started) {
    spdlog::critical("{}", started.error());
    return 1;
  }
  auto& m = **started;
  // What a burst freed goes back to the system once it is over: glibc keeps
  // it otherwise (heap_return.hpp). A look every 10 s costs a walk of the
  // heap's bins; a trim, only after 8 MiB were freed.
  manager::heap_return freed_heap(std::chrono::seconds(10), std::size_t{8} << 20);
  if (!opts.endpoints_file.empty()) {
    const manager::listening at{
        m.probes_url(), m.metrics_url(),
        m.admission_port() != 0 ? "https://" + opts.admission_bind + ":" + std::to_string(m.admission_port())
                                : std::string(),
        m.intake_url()};
    if (auto written = manager::write_endpoints_file(opts.endpoints_file, at); !written) {
      spdlog::critical("{}", written.error());
      return 1;
    }
  }
  caf::scoped_actor mailbox{sys};
  signal_relay relay(signals, caf::actor_cast<caf::actor>(mailbox));
  caf::actor election;
  if (opts.leader_elect) {
    leader::election_options eo;
    eo.lease = {opts.lease_namespace, opts.lease_name, lease_identity, std::chrono::seconds(15)};
    election =
        leader::spawn_leader_election(sys, kube_cfg, kube_options, eo, caf::actor_cast<caf::actor>(mailbox));
  } else {
    caf::anon_send(mailbox, leader::leadership_atom::value, true);
  }
  int status = -1;
  while (status < 0) {
    mailbox->receive(
        [&](leader::leadership_atom, bool leading) {
          m.set_leader_gauge(leading);
          if (leading) {
            if (auto led = m.lead(); !led) {
              spdlog::critical("{}", led.error());
              status = 1;
            }
          } else if (m.leading()) {
            // Another replica may lead now: stop at once rather than race it.
            spdlog::critical("lost leadership; exiting so that only the leader reconciles");
            spdlog::shutdown();
            std::_Exit(1);
          }
        },
        [&](signal_atom, int sig) {
          spdlog::info("received {}; shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
          status = 0;
        });
  }
  m.stop();
  if (election) caf::anon_send_exit(election, caf::exit_reason::user_shutdown);  // releases the Lease
  return status;  // the actor system waits for its actors on destruction
}

// glibc gives each thread that allocates under contention an arena of its
// own, up to 8 per core, and memory freed in one arena serves only that one:
// the manager's threads (CAF's scheduler, the request pool, reflectors)
// allocate and free the same objects across threads, so at scale the heap
// grows by the spread, not by the work. One arena: glibc's per-thread cache
// serves most small allocations without its lock, and the bursts ran no
// slower with it, with a lower peak at 10,000 Runners (the figures:
// bench/manager/README.md). MALLOC_ARENA_MAX (or glibc's tunables) chooses
// another number.
void limit_malloc_arenas() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr && std::getenv("GLIBC_TUNABLES") == nullptr)
    mallopt(M_ARENA_MAX, 1);
}

}  // namespace

int main(int argc, char** argv) {
  // OpenSSL frees every thread's state from an atexit handler, unlocked,
  // while threads that made HTTPS calls may still be exiting (the actor
  // system's wait for its detached actors ends a moment before their
  // threads do) and free their own: a double free that glibc reports as a
  // corrupted heap at exit. The process's memory goes with it anyway.
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  // The exec probe: a short-lived process of its own, no actor system.
  if (argc > 1 && std::string_view(argv[1]) == "probe")
    return manager::probe(std::vector<std::string>(argv + 2, argv + argc), std::cerr);
  limit_malloc_arenas();
  // Signals are taken by the signal relay, never by CAF's threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (argc > 1 && std::string_view(argv[1]) == "stop-manager") {
    auto stop = manager::parse_stop_manager(std::vector<std::string>(argv + 2, argv + argc));
    if (!stop) {
      std::cerr << "octorun: " << stop.error() << "\n";
      return 2;
    }
    if (auto logged = logging::setup({logging::format::json, "info", "octorun"}); !logged) {
      std::cerr << "octorun: " << logged.error() << "\n";
      return 2;
    }
    return manager::stop_manager(*stop);
  }
  auto opts = manager::parse_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!opts) {
    std::cerr << "octorun: " << opts.error() << "\n";
    return 2;
  }
  if (opts->help) {
    std::cout << manager::help_text();
    return 0;
  }
  if (opts->version) {
    std::cout << "octorun " << manager::version << " (commit " << manager::git_commit << ")\n";
    return 0;
  }
  caf::actor_system_config caf_cfg;
  if (auto refused = manager::configure_caf(caf_cfg, opts->caf_args)) {
    std::cerr << "octorun: " << *refused << "\n";
    return 2;
  }
  if (auto logged =
          logging::setup({opts->log_format == "text" ? logging::format::text : logging::format::json,
                          opts->log_level, "octorun"});
      !logged) {
    std::cerr << "octorun: --log-level: " << logged.error() << "\n";
    return 2;
  }
  auto s = manager::resolve(*opts);
  if (!s) {
    spdlog::critical("{}", s.error());
    return 2;
  }
  caf::actor_system sys{caf_cfg};
  return run(sys, *opts, std::move(*s), signals);
}
