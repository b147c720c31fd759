// chaos: the octorun manager under sustained load and scheduled faults (see
// README.md). Two real manager replicas, a private control plane, the GitHub
// simulator; an observer of its own checks the invariants throughout; the
// run fails on any violation and prints the timeline around it.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "adapters/http/http_client.hpp"
#include "adapters/http/http_server.hpp"
#include "bench/chaos/harness.hpp"
#include "bench/chaos/report.hpp"
#include "common/base64.hpp"
#include "test/support/jwt_testing.hpp"
#include "test/support/poll.hpp"

#ifndef OCTORUN_BINARY
#error "OCTORUN_BINARY must name the octorun binary"
#endif

namespace octorun::chaos {
namespace {

using namespace std::chrono_literals;

struct options {
  std::string profile = "short";
  std::chrono::seconds duration{0};
  std::uint64_t seed = 0;
  std::string run_dir;
  std::string log_level = "info";
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(
      stderr,
      "chaos: %s\nusage: chaos [--profile short|soak] [--duration SECONDS] [--seed N] [--run-dir DIR] "
      "[--log-level info|debug]\n",
      why.c_str());
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  o.seed = std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      auto eq = a.find('=');
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    auto name = a.substr(0, a.find('='));
    try {
      if (name == "--profile")
        o.profile = value();
      else if (name == "--duration")
        o.duration = std::chrono::seconds(std::stol(value()));
      else if (name == "--seed")
        o.seed = std::stoull(value());
      else if (name == "--run-dir")
        o.run_dir = value();
      else if (name == "--log-level")
        o.log_level = value();
      else
        usage("unknown argument " + a);
    } catch (const std::logic_error&) {
      usage("bad value for " + name);
    }
  }
  if (o.run_dir.empty()) o.run_dir = "/tmp/octorun-chaos-" + std::to_string(getpid());
  return o;
}

std::string random_token(std::mt19937_64& rng, const char* prefix) {
  static const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out = prefix;
  for (int i = 0; i < 36; ++i) out.push_back(chars[rng() % 62]);
  return out;
}

void apply(env& e, const std::string& ns, const std::string& json) {
  test::kubectl(e.cluster,
                (ns.empty() ? "" : "-n " + ns + " ") + "apply -f - >/dev/null <<'EOF'\n" + json + "\nEOF");
}

std::string secret_json(const std::string& name, const std::map<std::string, std::string>& data) {
  std::string out = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")" + name + R"("},"data":{)";
  bool first = true;
  for (const auto& [k, v] : data) {
    out += std::string(first ? "" : ",") + "\"" + k + "\":\"" + base64_encode(v) + "\"";
    first = false;
  }
  return out + "}}";
}

const char* runner_template =
    R"({"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"}]}})";

std::string runnerset_json(const std::string& name, const std::string& scope, const std::string& secret,
                           const std::string& intake, const std::string& label, int min, int max,
                           const std::string& variants = {}) {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
         R"("},"spec":{"scopeURL":")" + scope + R"(","credentialsSecretName":")" + secret +
         R"(","intake":")" + intake + R"(","runnerLabels":[")" + label + R"("],"minRunners":)" +
         std::to_string(min) + R"(,"maxRunners":)" + std::to_string(max) + R"(,"template":)" +
         runner_template + variants + "}}";
}

// The pools the load feeds (namespace, set, variant, maxRunners, intake, labels).
std::vector<pool> pools() {
  return {{"chaos-a", "web", "", 5, true, {"self-hosted", "chaos-web"}},
          {"chaos-a", "lis", "small", 4, false, {"self-hosted", "chaos-lis", "small"}},
          {"chaos-a", "lis", "large", 3, false, {"self-hosted", "chaos-lis", "large"}},
          {doomed_namespace, "doomed", "", 3, true, {"self-hosted", "chaos-doomed"}}};
}

}  // namespace

void create_doomed_namespace(env& e) {
  test::kubectl(e.cluster, "create namespace " + std::string(doomed_namespace) + " >/dev/null 2>&1 || true");
  apply(e, doomed_namespace, secret_json("github-pat", {{"github_token", e.pat}}));
  apply(e, doomed_namespace,
        runnerset_json("doomed", e.scope_url, "github-pat", "Webhook", "chaos-doomed", 1, 3));
  e.doomed_up = true;
  e.tl.add("harness", std::string("namespace ") + doomed_namespace + " and RunnerSet doomed created");
}

namespace {

// The job load: a steady rate (jittered), mixed run times, some cancelled.
void run_load(env& e, std::uint64_t seed, const std::atomic<bool>& stop) {
  std::mt19937_64 rng(seed ^ 0x10adULL);
  std::uniform_real_distribution<double> u(0, 1);
  const auto ps = pools();
  const std::vector<double> weights = {0.4, 0.25, 0.2, 0.15};
  std::vector<std::pair<double, std::int64_t>> cancels;
  double next = e.tl.now();
  while (!stop) {
    double now = e.tl.now();
    for (auto it = cancels.begin(); it != cancels.end();) {
      if (it->first > now) {
        ++it;
        continue;
      }
      e.observer.cancel_requested(it->second);
      if (e.sim.cancel_job(it->second)) e.tl.add("job", std::to_string(it->second) + " cancelled");
      it = cancels.erase(it);
    }
    if (now >= next) {
      double r = u(rng), acc = 0;
      std::size_t i = 0;
      for (; i + 1 < ps.size(); ++i)
        if (r < (acc += weights[i])) break;
      if (ps[i].ns == doomed_namespace && !e.doomed_up) i = 0;  // its namespace is being replaced
      double kind = u(rng), seconds;
      if (kind < e.prof.short_share)
        seconds = 0.5 + 2.5 * u(rng);
      else if (kind < e.prof.short_share + e.prof.medium_share)
        seconds = 3 + 12 * u(rng);
      else
        seconds = 15 + (static_cast<double>(e.prof.long_max.count()) - 15) * u(rng);
      sim::job_spec j;
      j.repository = "acme/app";
      j.labels = ps[i].job_labels;
      j.duration = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
      auto id = e.sim.add_job(j);
      e.observer.job_queued(id, ps[i].key(), ps[i].webhook);
      e.tl.add("job", std::to_string(id) + " queued for " + ps[i].key() + " (" +
                          std::to_string(static_cast<int>(seconds)) + " s)");
      if (u(rng) < e.prof.cancel_fraction) cancels.emplace_back(now + 20 * u(rng), id);
      next += (0.5 + u(rng)) / e.prof.jobs_per_second;
    }
    std::this_thread::sleep_for(100ms);  // the load's clock tick
  }
}

// One lane: its faults in order, each at its time (or as soon as the one
// before it has ended), none started after the load ends.
void run_lane(env& e, std::vector<planned_fault> faults, double t0, const std::atomic<bool>& load_over) {
  for (const auto& f : faults) {
    while (!load_over && e.tl.now() - t0 < f.at) std::this_thread::sleep_for(100ms);  // the schedule's clock
    if (load_over) {
      e.count(f.kind, false);
      e.tl.add("fault", std::string(to_string(f.kind)) + " not started: the load has ended");
      continue;
    }
    e.tl.add("fault", ">> " + std::string(to_string(f.kind)) + " (scheduled t=" + std::to_string(f.at) + ")");
    e.observer.fault_started();
    bool done = inject(e, f);
    e.observer.fault_ended();
    e.count(f.kind, done);
    e.tl.add("fault", "<< " + std::string(to_string(f.kind)) + (done ? " done" : " skipped: no target"));
  }
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

int run(const options& o) {
  profile prof = make_profile(o.profile, o.duration);
  auto schedule = make_schedule(prof, o.seed);
  ::mkdir(o.run_dir.c_str(), 0755);
  timeline tl(o.run_dir + "/timeline.log");
  std::printf("%s", describe(schedule, prof, o.seed).c_str());
  std::printf("run folder: %s (timeline.log, manager logs, report.md)\n", o.run_dir.c_str());
  std::fflush(stdout);
  report rep;
  rep.load_start = load_average();
  auto wall_start = std::chrono::steady_clock::now();

  // The control plane (private: the faults disturb it), stopped at exit and by its reaper.
  const auto& c = test::private_cluster();
  test::install_crds(c);
  auto admin = kube::load_kubeconfig(c.kubeconfig);
  if (!admin) throw std::runtime_error(admin.error());
  // The managers reach the apiserver through a proxy that can cut their connections.
  test::tcp_proxy proxy(std::stoi(c.server.substr(c.server.rfind(':') + 1)));
  std::string manager_kubeconfig = o.run_dir + "/manager.kubeconfig";
  {
    std::ifstream in(c.kubeconfig);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find(c.server);
    text.replace(at, c.server.size(), "https://127.0.0.1:" + std::to_string(proxy.port()));
    std::ofstream(manager_kubeconfig) << text;
  }

  // GitHub: an organisation, a PAT, a GitHub App; sessions of a dead listener lapse after 30 s.
  std::mt19937_64 rng(o.seed);
  auto key = github::testing::generate_rsa_key(2048);
  if (!key) throw std::runtime_error(key.error());
  sim::simulator_options so;
  so.session_idle_timeout = 30s;
  so.installation_token_ttl = 600s;
  so.rate_limit = 10000;
  auto simulator = sim::simulator::start(so);
  if (!simulator) throw std::runtime_error(simulator.error());
  auto& sim = **simulator;
  sim.add_organization("acme");
  sim.add_app({4242, "Iv1.chaos", key->public_key});
  sim.add_app_installation(4242, 77, "acme");
  std::string pat = random_token(rng, "ghp_"), webhook_secret = random_token(rng, "whsec_");
  sim.add_pat(pat);

  world observer(*admin, sim, tl, pools());
  replica_options ro{.binary = OCTORUN_BINARY,
                     .kubeconfig = manager_kubeconfig,
                     .namespaces = std::string("chaos-a,") + doomed_namespace,
                     .lease_namespace = "chaos-system",
                     .webhook_secret = webhook_secret,
                     .log_dir = o.run_dir,
                     .log_level = o.log_level};
  replicas managers(ro, tl);
  env e(c, *admin, sim, managers, observer, tl, proxy, prof, sim.ghes_url() + "/acme", pat, key->private_key);

  // GitHub delivers to a relay that plays the Service in front of the
  // replicas: each delivery goes to the next running replica's intake in
  // turn (the leader's or a follower's, which leaves the job to the
  // leader's sweep of GitHub's queue), once. GitHub does not redeliver: a
  // delivery the chosen replica does not accept is lost, and the job must
  // still run (the sweep).
  std::atomic<std::size_t> next_endpoint{0};
  auto relay = http::server::start(
      {.bind_address = "127.0.0.1", .port = 0, .tls_pem_file = {}, .threads = 4},
      {{"/hook", {"POST"}, http::request_body::accepted, [&](const http::server_request& r) {
          auto endpoints = managers.serving();
          std::string failure = "no replica was serving";
          if (!endpoints.empty()) {
            const auto& to = endpoints[next_endpoint++ % endpoints.size()];
            http::client client;
            client.set_plain_http(true);
            http::request req{"POST", to.intake, {}, r.body};
            for (const auto& h : r.headers)
              if (h.first.starts_with("x-") || h.first == "content-type" || h.first == "user-agent")
                req.headers.push_back(h);
            req.timeout = 10s;
            auto a = client.perform(req);
            if (a && a->status / 100 == 2) {
              observer.delivery(r.body, to.log, "");
              return http::server_response{static_cast<int>(a->status), "text/plain", a->body, {}};
            }
            failure = a ? to.log + " answered " + std::to_string(a->status)
                        : to.log + " did not answer: " + a.error().message;
          }
          observer.delivery(r.body, "", failure);
          return http::server_response{502, "text/plain", failure, {}};
        }}});
  if (!relay) throw std::runtime_error(relay.error());
  sim.set_webhook((*relay)->base_url() + "/hook", webhook_secret);

  for (const char* ns : {"chaos-system", "chaos-a"})
    test::kubectl(c, std::string("create namespace ") + ns + " >/dev/null");
  apply(e, "chaos-a", secret_json("github-pat", {{"github_token", pat}}));
  apply(e, "chaos-a",
        secret_json("github-app", {{"github_app_id", "4242"},
                                   {"github_app_installation_id", "77"},
                                   {"github_app_private_key", key->private_key}}));
  apply(e, "chaos-a", runnerset_json("web", e.scope_url, "github-pat", "Webhook", "chaos-web", 0, 5));
  apply(e, "chaos-a",
        runnerset_json(
            "lis", e.scope_url, "github-app", "Listener", "chaos-lis", 0, 4,
            R"(,"variants":[{"name":"small","runnerLabels":["small"]},)"
            R"({"name":"large","runnerLabels":["large"],"maxRunners":3,"template":{"spec":{"containers":)"
            R"([{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0",)"
            R"("resources":{"requests":{"cpu":"2","memory":"4Gi"}}}]}}}])"));
  create_doomed_namespace(e);
  observer.start();
  managers.start();
  if (!managers.wait_leader(90s)) throw std::runtime_error("no replica leads after 90 s");
  auto sessions = test::poll(
      [&] {
        int open = 0;
        for (const auto& s : sim.scale_sets()) open += s.session_id.empty() ? 0 : 1;
        return open;
      },
      [](int n) { return n >= 2; }, 120s);
  if (!sessions.met)
    throw std::runtime_error("the Listener set's two scale sets have no sessions after 120 s");
  rep.rss_start = managers.rss();
  tl.add("harness", "set up in " + std::to_string(static_cast<int>(tl.now())) + " s; load and faults start");

  // Load and the three fault lanes, for the profile's duration.
  std::atomic<bool> load_over{false};
  const double t0 = tl.now();
  std::vector<std::thread> threads;
  threads.emplace_back([&] { run_load(e, o.seed, load_over); });
  for (std::string_view lane : {"manager", "kube", "github"}) {
    std::vector<planned_fault> mine;
    for (const auto& f : schedule)
      if (lane_of(f.kind) == lane) mine.push_back(f);
    threads.emplace_back([&e, mine, t0, &load_over] { run_lane(e, mine, t0, load_over); });
  }
  test::poll([&] { return tl.now() - t0; },
             [&](double t) { return t >= static_cast<double>(prof.duration.count()); }, prof.duration + 60s);
  load_over = true;
  for (auto& t : threads) t.join();
  tl.add("harness", "load over; draining");

  // Everything back: faults cleared, a leader serving; then every job must end.
  sim.clear_faults();
  managers.wait_leader(90s);
  rep.drained = observer.drain(prof.drain);
  tl.add("harness", rep.drained ? "drained" : "drain bound passed with jobs still open");
  rep.rss_end = managers.rss();

  // Teardown: every RunnerSet deleted; nothing may be left, here or on GitHub.
  for (std::string ns : {"chaos-a", doomed_namespace})
    test::kubectl(c, "delete runnersets --all -n " + ns + " --wait=false >/dev/null 2>&1 || true");
  auto sets_gone =
      test::poll([&] { return test::kubectl(c, "get runnersets -A -o name 2>/dev/null || true"); },
                 [](const std::string& out) { return out.empty(); }, 180s);
  if (!sets_gone.met)
    observer.add_violation("stuck", "RunnerSets still exist 180 s after their deletion: " + sets_gone.last);
  rep.leaks = check_leaks(e);
  rep.clean_stop = managers.stop_all();
  if (!rep.clean_stop) observer.add_violation("stuck", "a replica did not stop cleanly on SIGTERM");
  observer.stop();
  rep.jobs = observer.account_jobs();
  rep.violations = observer.violations();
  rep.injected = e.injected;
  rep.skipped = e.skipped;
  rep.restarts = managers.restarts();
  rep.crashes = managers.crashes();
  rep.load_end = load_average();
  rep.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rep.profile = prof.name;
  rep.duration = prof.duration;
  rep.seed = o.seed;
  auto text = render(rep, tl);
  std::printf("%s", text.c_str());
  std::ofstream(o.run_dir + "/report.md") << text;
  return rep.violations.empty() && rep.crashes == 0 ? 0 : 1;
}

}  // namespace octorun::chaos

int main(int argc, char** argv) {
  auto o = octorun::chaos::parse(argc, argv);
  try {
    return octorun::chaos::run(o);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "chaos: %s\n", ex.what());
    return 3;
  }
}
