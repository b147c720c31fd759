// GitHub benchmarks (not in ctest):
//  1. webhook intake: signed workflow_job deliveries/s and p50/p99 latency on
//     loopback, several client threads, median over repetitions;
//  2. GitHub calls per ephemeral runner lifecycle, from the simulator's
//     per-endpoint counters: scale-set listener path (one job at a time and a
//     burst) and the webhook + REST JIT path.
// Usage: github_bench [--deliveries N] [--threads T] [--repetitions R] [--jobs J]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "adapters/github/crypto.hpp"
#include "adapters/github/scaleset_client.hpp"
#include "adapters/github/webhook_intake.hpp"
#include "test/simulator/simulator.hpp"

using namespace octorun;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double percentile(std::vector<double>& v, double p) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  auto i = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  return v[i];
}

struct intake_run {
  double per_second, p50_us, p99_us;
};

intake_run bench_intake(int deliveries, int threads) {
  const std::string secret = "bench-secret";
  std::atomic<std::int64_t> received{0};
  github::intake_options o;
  o.secret = secret;
  o.http.threads = std::max(4, threads * 2);
  auto intake = github::webhook_intake::start(o, [&](messages::job_message) { received++; });
  if (!intake) {
    std::fprintf(stderr, "intake: %s\n", intake.error().c_str());
    std::exit(1);
  }
  struct prepared {
    std::string body, signature, delivery;
  };
  std::vector<prepared> work(static_cast<size_t>(deliveries));
  for (int i = 0; i < deliveries; ++i) {
    auto& w = work[static_cast<size_t>(i)];
    w.body =
        R"({"action":"queued","workflow_job":{"id":)" + std::to_string(7'000'000'000 + i) +
        R"(,"run_id":9000000001,"run_attempt":1,"labels":["self-hosted","linux","x64"],"status":"queued",)"
        R"("conclusion":null,"runner_id":null,"runner_name":null,"name":"build","workflow_name":"CI",)"
        R"("head_branch":"main","head_sha":"0000000000000000000000000000000000000000","steps":[]},)"
        R"("repository":{"id":1,"name":"app","full_name":"octo/app","html_url":"https://github.com/octo/app",)"
        R"("owner":{"login":"octo"}},)"
        R"("organization":{"login":"octo"},"sender":{"login":"octocat"}})";
    w.signature = github::webhook_signature(secret, w.body);
    w.delivery =
        "bench-" + std::to_string(i) + "-" + std::to_string(steady::now().time_since_epoch().count());
  }
  std::vector<std::vector<double>> lat(static_cast<size_t>(threads));
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  auto start = steady::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      http::client c;
      c.set_plain_http(true);
      for (;;) {
        int i = next++;
        if (i >= deliveries) break;
        auto& w = work[static_cast<size_t>(i)];
        http::request req{"POST",
                          (*intake)->url(),
                          {{"Content-Type", "application/json"},
                           {"X-GitHub-Event", "workflow_job"},
                           {"X-GitHub-Delivery", w.delivery},
                           {"X-Hub-Signature-256", w.signature}},
                          w.body};
        auto t0 = steady::now();
        auto r = c.perform(req);
        auto t1 = steady::now();
        if (!r || r->status != 202) failures++;
        lat[static_cast<size_t>(t)].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
    });
  }
  for (auto& th : pool) th.join();
  double secs = std::chrono::duration<double>(steady::now() - start).count();
  std::vector<double> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  if (failures > 0 || received != deliveries)
    std::fprintf(stderr, "warning: %d failures, %lld received of %d\n", failures.load(),
                 static_cast<long long>(received.load()), deliveries);
  return {deliveries / secs, percentile(all, 0.50), percentile(all, 0.99)};
}

std::unique_ptr<sim::simulator> start_sim(bool auto_online) {
  sim::simulator_options o;
  o.auto_online = auto_online;
  o.long_poll = 5s;
  auto s = sim::simulator::start(o);
  if (!s) {
    std::fprintf(stderr, "simulator: %s\n", s.error().c_str());
    std::exit(1);
  }
  (*s)->add_organization("octo");
  (*s)->add_repository("octo/app");
  return std::move(*s);
}

void print_counts(const char* title, const std::map<std::string, std::int64_t>& counts, int jobs) {
  std::int64_t total = 0;
  for (const auto& [k, v] : counts)
    if (!k.starts_with("webhook.")) total += v;
  std::printf("\n%s: %.2f GitHub calls per runner lifecycle (%d jobs)\n", title,
              static_cast<double>(total) / jobs, jobs);
  for (const auto& [k, v] : counts)
    std::printf("  %-28s %6lld  (%.2f/job)\n", k.c_str(), static_cast<long long>(v),
                static_cast<double>(v) / jobs);
}

// A minimal listener: poll, ack, acquire available jobs, JIT a runner per assigned job,
// until `jobs` jobs have completed.
void listener_until_done(github::scaleset_client& c, sim::simulator& s, std::int64_t set_id, int jobs,
                         int& runner_seq) {
  std::int64_t last = 0;
  int completed = 0;
  while (completed < jobs) {
    auto m = c.get_message(last, 100);
    if (!m) {
      std::fprintf(stderr, "get_message: %s\n", m.error().describe().c_str());
      std::exit(1);
    }
    if (!m->has_value()) continue;
    last = (*m)->message_id;
    (void)c.delete_message(last);
    std::vector<std::int64_t> available;
    for (auto& j : (*m)->jobs) {
      if (auto* a = std::get_if<messages::job_available>(&j)) available.push_back(a->job.job_id);
      if (std::holds_alternative<messages::job_assigned>(j)) {
        auto name = "runner-" + std::to_string(runner_seq++);
        auto jit = c.generate_jit_config(set_id, name);
        if (!jit) std::fprintf(stderr, "jit: %s\n", jit.error().describe().c_str());
        s.runner_online(name);  // the pod started and the runner connected
      }
      if (std::holds_alternative<messages::job_completed>(j)) ++completed;
    }
    if (!available.empty()) (void)c.acquire_jobs(set_id, available);
  }
}

void bench_lifecycle(int jobs) {
  // Scale-set listener path.
  for (bool burst : {false, true}) {
    auto s = start_sim(false);
    auto c = github::scaleset_client::make(
        {s->base_url() + "/octo", github::pat_auth("ghp_simulator"), {}, 5s, nullptr});
    github::scale_set wanted;
    wanted.name = "bench";
    wanted.runner_group_id = 1;
    auto set = (*c)->create_scale_set(wanted);
    if (!set || !(*c)->create_session(set->id, "bench")) {
      std::fprintf(stderr, "scale set setup failed\n");
      std::exit(1);
    }
    s->reset_counts();
    int seq = 0;
    sim::job_spec job;
    job.labels = {"bench"};
    job.duration = 0ms;
    if (burst) {
      for (int i = 0; i < jobs; ++i) s->add_job(job);
      listener_until_done(**c, *s, set->id, jobs, seq);
    } else {
      for (int i = 0; i < jobs; ++i) {
        s->add_job(job);
        listener_until_done(**c, *s, set->id, 1, seq);
      }
    }
    print_counts(burst ? "scale-set listener, burst of jobs" : "scale-set listener, one job at a time",
                 s->call_counts(), jobs);
  }
  // Webhook + REST JIT path: one JIT config per runner; GitHub removes the ephemeral runner itself.
  {
    auto s = start_sim(true);
    std::atomic<int> done{0};
    github::intake_options o;
    o.secret = "x";
    auto intake = github::webhook_intake::start(o, [&](messages::job_message m) {
      if (std::holds_alternative<messages::job_completed>(m)) done++;
    });
    s->set_webhook((*intake)->url(), "x");
    github::rest_client rest({s->api_url(),
                              {github::scope_kind::repository, "octo", "app"},
                              github::pat_auth("ghp_simulator"),
                              {}});
    s->reset_counts();
    sim::job_spec job;
    job.labels = {"self-hosted", "linux"};
    job.duration = 0ms;
    for (int i = 0; i < jobs; ++i) {
      s->add_job(job);  // webhook: queued -> the manager creates one JIT runner
      auto jit =
          rest.generate_jit_config({"hook-" + std::to_string(i), 1, {"self-hosted", "linux"}, "_work"});
      if (!jit) std::fprintf(stderr, "jit: %s\n", jit.error().describe().c_str());
    }
    s->wait_until([&](const sim::simulator&) { return done.load() >= jobs; }, 30s);
    print_counts("webhook + REST JIT", s->call_counts(), jobs);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int deliveries = 5000, threads = 4, repetitions = 5, jobs = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (a == "--deliveries")
      deliveries = v;
    else if (a == "--threads")
      threads = v;
    else if (a == "--repetitions")
      repetitions = v;
    else if (a == "--jobs")
      jobs = v;
  }
  std::printf(
      "webhook intake, HMAC-SHA256 verified, loopback HTTP: %d deliveries x %d repetitions, %d client "
      "threads\n",
      deliveries, repetitions, threads);
  std::vector<double> rates, p50s, p99s;
  for (int r = 0; r < repetitions; ++r) {
    auto run = bench_intake(deliveries, threads);
    std::printf("  run %d: %8.0f deliveries/s  p50 %6.0f us  p99 %6.0f us\n", r + 1, run.per_second,
                run.p50_us, run.p99_us);
    rates.push_back(run.per_second);
    p50s.push_back(run.p50_us);
    p99s.push_back(run.p99_us);
  }
  std::printf("  median: %8.0f deliveries/s  p50 %6.0f us  p99 %6.0f us\n", median(rates), median(p50s),
              median(p99s));
  bench_lifecycle(jobs);
  return 0;
}
