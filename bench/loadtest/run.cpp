#include "bench/loadtest/run.hpp"

#include <rapidjson/document.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "actors/kinds.hpp"
#include "adapters/http/http_client.hpp"
#include "adapters/kube/client.hpp"
#include "bench/common/apiserver_metrics.hpp"
#include "bench/common/lifecycle.hpp"
#include "bench/loadtest/placement_watch.hpp"
#include "bench/loadtest/report.hpp"
#include "bench/loadtest/resources.hpp"
#include "bench/loadtest/runner_process.hpp"
#include "bench/loadtest/schedule.hpp"
#include "bench/loadtest/simulator_client.hpp"
#include "common/json.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"

namespace octorun::loadtest {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

void say(const std::string& what) { std::fprintf(stderr, "octorun-loadtest: %s\n", what.c_str()); }

// The run's RunnerSet's cost so far, as the manager's /metrics at `url` counts it; nothing when it does not
// answer.
std::optional<run_cost> scrape_cost(const std::string& url, const std::string& ns, const std::string& set) {
  http::client client;
  client.set_plain_http(true);
  auto r = client.perform({"GET", url, {}, {}, 10s});
  if (!r || r->status != 200) {
    say("cannot read the manager's metrics at " + url + " (cost not shown)");
    return std::nullopt;
  }
  return cost_in(r->body, ns, set);
}

std::string random_id() {
  static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::mt19937_64 rng(std::random_device{}());
  std::string id;
  for (int i = 0; i < 5; ++i) id += chars[rng() % 36];
  return id;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}

std::int64_t rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6));
  return 0;
}

// Sleeps until `until` unless `stop` is set first; false when stopped.
bool sleep_until(steady::time_point until, const std::atomic<bool>& stop) {
  while (steady::now() < until) {
    if (stop.load()) return false;
    std::this_thread::sleep_for(std::min<steady::duration>(until - steady::now(), 100ms));
  }
  return !stop.load();
}

// Samples the Runners (and the manager's RSS) twice a second.
class sampler {
 public:
  sampler(const bench::lifecycle_watch& w, int manager_pid, double start_ms)
      : thread_([this, &w, manager_pid, start_ms] {
          while (!stop_.load()) {
            sample s;
            s.t_s = (bench::unix_ms_now() - start_ms) / 1000;
            s.runners = w.counts();
            if (manager_pid > 0) s.rss_kib = rss_kib(manager_pid);
            {
              std::lock_guard lock(mu_);
              samples_.push_back(s);
            }
            sleep_until(steady::now() + 500ms, stop_);
          }
        }) {}
  ~sampler() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<sample> samples() {
    std::lock_guard lock(mu_);
    return samples_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<sample> samples_;
  std::thread thread_;
};

// The simulator's records of `ids`.
std::vector<bench::sim_job_record> jobs_of(simulator_client& sim, const std::set<std::int64_t>& ids) {
  auto state = sim.state();
  std::vector<bench::sim_job_record> out;
  if (!state) return out;
  for (auto& j : bench::parse_sim_jobs(*state))
    if (ids.count(j.id)) out.push_back(std::move(j));
  return out;
}

// The RunnerSet as the manager sees it: empty once it has written status,
// else why not yet (a condition it reported, or nothing at all).
std::optional<std::string> not_taken_up(kube::client& api, const std::string& ns, const std::string& set) {
  auto got = api.get(kinds::runnersets(), ns, set);
  if (!got) return "reading it: " + kube::to_string(got.error());
  const auto* status = got->member("status");
  if (status == nullptr || json::i64(*status, "observedGeneration") < 1) return "it has no status yet";
  if (const auto* conditions = json::find_value(*status, "conditions"); conditions && conditions->IsArray())
    for (const auto& c : conditions->GetArray())
      if (c.IsObject() && json::str(c, "status") == "False")
        return json::str(c, "type") + "=False: " + json::str(c, "reason") + ": " + json::str(c, "message");
  return std::nullopt;
}

bool session_open(simulator_client& sim, const std::string& scale_set) {
  auto state = sim.state();
  if (!state) return false;
  rapidjson::Document d;
  d.Parse(state->data(), state->size());
  if (d.HasParseError() || !d.IsObject() || json::i64(d, "sessions") < 1) return false;
  const auto* sets = json::find_value(d, "scale_sets");
  if (sets == nullptr || !sets->IsArray()) return false;
  for (const auto& s : sets->GetArray())
    if (s.IsObject() && json::str(s, "name") == scale_set) return true;
  return false;
}

std::map<std::string, std::int64_t> minus(std::map<std::string, std::int64_t> after,
                                          const std::map<std::string, std::int64_t>& before) {
  for (auto& [k, v] : after)
    if (auto b = before.find(k); b != before.end()) v -= b->second;
  return after;
}

}  // namespace

int run(const options& o, const std::atomic<bool>& interrupted, const std::atomic<bool>& abandon) {
  const auto id = random_id();
  // 1. The cluster: reachable, Octorun installed, no test suite on it.
  auto cfg =
      o.kubeconfig.empty() ? kube::default_config(o.context) : kube::load_kubeconfig(o.kubeconfig, o.context);
  if (!cfg) return say("cannot read the cluster's configuration: " + cfg.error()), exit_unusable;
  kube::client_options co;
  co.timeout = 10s;
  co.max_retries = 1;
  kube::client api(*cfg, co);
  if (auto v = api.call("GET", "/version"); !v)
    return say("cannot reach the cluster at " + cfg->server + ": " + kube::to_string(v.error())),
           exit_unusable;
  if (auto g = api.call("GET", "/apis/octorun.io/v1alpha1"); !g)
    return say("Octorun is not installed on " + cfg->server +
               " (the API octorun.io/v1alpha1 is not served: " + kube::to_string(g.error()) +
               "); install the chart first (deploy/chart/octorun)"),
           exit_unusable;
  if (!o.allow_test_suite)
    if (auto why = busy_with_tests(api)) return say("refusing to run: " + *why), exit_unusable;

  // 2. GitHub: the simulator, ours or the one named.
  std::unique_ptr<sim::simulator> own_sim;
  std::string sim_url = o.simulator_url;
  if (sim_url.empty()) {
    sim::simulator_options so;
    so.http.bind_address = o.simulator_bind;
    so.http.port = static_cast<std::uint16_t>(o.simulator_port);
    so.long_poll = 20s;
    auto started = sim::simulator::start(so);
    if (!started) return say("cannot start the GitHub simulator: " + started.error()), exit_unusable;
    own_sim = std::move(*started);
    sim_url = "http://127.0.0.1:" + std::to_string(own_sim->port());
    if (o.simulator_bind != "0.0.0.0") sim_url = own_sim->base_url();
  }
  simulator_client sim(sim_url);
  if (auto r = sim.reachable(); !r)
    return say("cannot reach the GitHub simulator: " + r.error()), exit_unusable;
  const auto advertise = o.simulator_advertise.empty() ? sim_url : o.simulator_advertise;

  // 3. What the run needs, each removed again by cleanup().
  run_resources res(api, sim, o, id);
  std::set<std::int64_t> ids;
  auto complete_running = [&] {
    for (const auto& j : jobs_of(sim, ids))
      if (j.state == "running") (void)sim.complete_job(j.id);
  };
  auto finish = [&](int status, const std::string& why) {
    if (!why.empty()) say(why);
    const auto made = res.created();
    if (made.empty()) return res.cleanup(o.cleanup_timeout, {}, &abandon), status;
    say("removing " + made);
    auto left = res.cleanup(o.cleanup_timeout, complete_running, &abandon);
    for (const auto& l : left) say("LEFT BEHIND: " + l);
    if (left.empty()) say("removed: nothing is left behind");
    return status;
  };
  for (const auto& step : {&run_resources::prepare_namespace, &run_resources::create_credentials}) {
    if (auto r = (res.*step)(); !r) return finish(exit_unusable, r.error());
  }
  if (auto r = res.prepare_simulator(advertise); !r) return finish(exit_unusable, r.error());
  if (auto r = res.create_runnerset(); !r) return finish(exit_unusable, r.error());
  if (auto r = res.count_manager_requests(); !r) say(r.error() + " (writes per job not measured)");
  say("RunnerSet " + res.ns() + "/" + res.runnerset() + " created (" + o.intake + " intake, scope " +
      res.scope_url() + "); waiting for the manager");

  // 4. The manager takes up the set (and, for the Listener, opens its session).
  // Neither offers an event to this tool: the set's status and the
  // simulator's state are polled (test/support/poll.hpp).
  auto taken_up = test::poll(
      [&] {
        return interrupted ? std::optional<std::string>() : not_taken_up(api, res.ns(), res.runnerset());
      },
      [](const std::optional<std::string>& why) {
        return !why || why->find("=False") != std::string::npos;  // taken up, or answered with a refusal
      },
      o.manager_timeout);
  if (interrupted) return finish(exit_interrupted, "interrupted");
  if (taken_up.last)
    return finish(exit_unusable,
                  "the manager did not take up RunnerSet " + res.ns() + "/" + res.runnerset() + " within " +
                      std::to_string(o.manager_timeout.count() / 1000) + " s (" + *taken_up.last +
                      "): is the manager running, does it watch namespace " + res.ns() +
                      " (the chart's watchNamespaces), can it reach the simulator at " + advertise + "?");
  if (o.intake == "Listener") {
    auto session = test::poll([&] { return interrupted || session_open(sim, res.runnerset()); },
                              [](bool done) { return done; }, o.manager_timeout);
    if (interrupted) return finish(exit_interrupted, "interrupted");
    if (!session)
      return finish(exit_unusable, "the manager opened no message session with the simulator at " +
                                       advertise + ": can it reach that URL (--simulator-advertise)?");
  }

  // 5. The load, the runner process, the observation.
  // The start-up delays are drawn from a stream of their own, so the same
  // seed gives the same jobs whatever --runner-start says.
  runner_process runner(sim_url, o.runner_start, o.seed + 1);
  const std::string pod_selector = "octorun.io/runnerset=" + res.runnerset();
  bench::lifecycle_watch watch(
      *cfg, res.ns(), [&runner](const std::string& name) { runner.pod_running(name); }, pod_selector);
  // The nodes runner pods may land on (those --node-selector picks): the
  // ones whose idle seconds the run pays for.
  std::string node_selector;
  for (const auto& kv : o.node_selector) node_selector += (node_selector.empty() ? "" : ",") + kv;
  placement_watch placement(*cfg, res.ns(), pod_selector, node_selector, o.per_node_image_cache);
  if (!watch.wait([](const bench::lifecycle_watch& w) { return w.synced(); }, 30s, &interrupted))
    return finish(interrupted ? exit_interrupted : exit_unusable, "cannot watch the namespace " + res.ns());
  // A set with minRunners meets its first job warm, as one that has been
  // running would: the load starts once that many runners are online, and
  // what they cost before it is not the run's.
  if (o.min_runners > 0) {
    say("waiting for the " + std::to_string(o.min_runners) + " runners of minRunners to come online");
    auto warm = test::poll(
        [&] { return interrupted || runner.online_ms().size() >= static_cast<std::size_t>(o.min_runners); },
        [](bool done) { return done; }, o.warm_up_timeout);
    if (interrupted) return finish(exit_interrupted, "interrupted");
    if (!warm)
      return finish(exit_unusable, std::to_string(runner.online_ms().size()) + " of minRunners " +
                                       std::to_string(o.min_runners) + " runners online after " +
                                       std::to_string(o.warm_up_timeout.count() / 1000) +
                                       " s (--warm-up-timeout): can the cluster place them?");
  }
  auto calls_before = sim.calls();
  std::optional<std::map<std::string, std::int64_t>> kube_before;
  if (res.counting())
    if (auto c = bench::read_flow_counters(api, res.counter_prefix())) kube_before = *c;
  std::optional<run_cost> cost_before;
  if (!o.manager_metrics.empty()) cost_before = scrape_cost(o.manager_metrics, res.ns(), res.runnerset());
  const auto plan = plan_jobs(o.load, o.durations, o.seed);
  run_record rec;
  rec.run_id = id;
  rec.started_utc = utc_now();
  rec.cluster = cfg->server;
  rec.ns = res.ns();
  rec.runnerset = res.runnerset();
  rec.scope_url = res.scope_url();
  rec.planned = static_cast<int>(plan.size());
  say("queueing " + std::to_string(plan.size()) + " jobs; report in " +
      (o.report_dir.empty() ? "loadtest-report-" + id : o.report_dir));
  const auto start = steady::now();
  rec.start_ms = bench::unix_ms_now();
  sampler samples(watch, o.manager_pid, rec.start_ms);
  const std::vector<std::string> labels = {"self-hosted", res.runner_label()};
  const std::string repository = res.org() + "/app";
  auto last_progress = steady::now();
  auto progress = [&](const char* phase) {
    if (steady::now() - last_progress < 5s) return;
    last_progress = steady::now();
    auto c = watch.counts();
    say(std::string(phase) + ": " + std::to_string(ids.size()) + "/" + std::to_string(plan.size()) +
        " queued, Runners " + std::to_string(c.total) + " (busy " + std::to_string(c.busy) + ", idle " +
        std::to_string(c.idle) + ", starting " + std::to_string(c.starting) + ")");
  };
  // A manager that gets no demand, or cannot start runners, shows within manager_timeout of the first job
  // (not of the run's start: a profile's first job may come late, a Poisson day's many seconds in).
  std::optional<steady::time_point> first_queued;
  auto stalled = [&]() -> std::optional<std::string> {
    if (ids.empty() || !first_queued || steady::now() - *first_queued < o.manager_timeout)
      return std::nullopt;
    auto times = watch.times();
    bool any_pod = std::any_of(times.begin(), times.end(), [](const auto& t) { return t.second.pod > 0; });
    if (any_pod) return std::nullopt;
    if (times.empty())
      return o.intake == "Webhook"
                 ? "no Runner appeared: the manager got no demand (does the simulator reach "
                   "--webhook-url " +
                       o.webhook_url + " with the right --webhook-secret?)"
                 : "no Runner appeared: the manager got no demand from its message session";
    return "Runners appeared but no pod: can the manager reach the simulator at " + advertise +
           " for their JIT configurations? (kubectl -n " + res.ns() + " describe runners)";
  };
  for (const auto& job : plan) {
    if (!sleep_until(start + std::chrono::milliseconds(static_cast<std::int64_t>(job.at_s * 1000)),
                     interrupted))
      break;
    auto queued = sim.add_job(repository, labels, job.duration_ms);
    if (!queued) return finish(exit_unusable, "queueing a job: " + queued.error());
    ids.insert(*queued);
    if (!first_queued) first_queued = steady::now();
    progress("queueing");
    if (auto s = stalled()) {
      samples.stop();
      return finish(exit_unusable, "after " + std::to_string(o.manager_timeout.count() / 1000) + " s: " + *s);
    }
  }
  if (interrupted) return finish(exit_interrupted, "interrupted");

  // 6. Every job completed and its Runner gone (or the timeout).
  const auto give_up = steady::now() + o.timeout;
  std::vector<bench::sim_job_record> jobs;
  bool done = false;
  while (!interrupted && steady::now() < give_up) {
    jobs = jobs_of(sim, ids);
    auto times = watch.times();
    done = jobs.size() == ids.size() && std::all_of(jobs.begin(), jobs.end(), [&](const auto& j) {
             auto t = times.find(j.runner_name);
             return j.completed_ms > 0 && t != times.end() && t->second.deleted > 0;
           });
    if (done) break;
    if (auto s = stalled()) {
      samples.stop();
      return finish(exit_unusable, "after " + std::to_string(o.manager_timeout.count() / 1000) + " s: " + *s);
    }
    progress("running");
    sleep_until(steady::now() + 500ms, interrupted);
  }
  samples.stop();
  if (interrupted) return finish(exit_interrupted, "interrupted");
  rec.jobs = jobs_of(sim, ids);
  rec.runners = watch.times();
  rec.pods = placement.pods();
  rec.nodes = placement.nodes();
  rec.runner_online_ms = runner.online_ms();
  rec.samples = samples.samples();
  rec.max_runners_seen = watch.max_runners();
  rec.max_active_runners = watch.max_active_runners();
  rec.max_pods = watch.max_pods();
  rec.timed_out = !done;
  if (auto after = sim.calls(); after && calls_before) rec.github_calls = minus(*after, *calls_before);
  if (kube_before)
    if (auto after = bench::read_flow_counters(api, res.counter_prefix()))
      rec.kube_requests = minus(*after, *kube_before);
  if (cost_before)
    if (auto after = scrape_cost(o.manager_metrics, res.ns(), res.runnerset()))
      rec.cost = minus(*after, *cost_before);

  // 7. The report, then the cleanup.
  auto s = summarize(rec, o);
  const auto dir = o.report_dir.empty() ? "loadtest-report-" + id : o.report_dir;
  for (const auto& p : write_report(dir, rec, o, s)) say(p);
  std::fputs(summary_text(rec, o, s).c_str(), stdout);
  std::printf("report       %s/\n", dir.c_str());
  std::fflush(stdout);
  return finish(s.timed_out ? exit_timed_out : s.passed() ? exit_passed : exit_target_missed, "");
}

}  // namespace octorun::loadtest
