#include "bench/chaos/world.hpp"

#include <rapidjson/document.h>

#include <algorithm>

#include "adapters/kube/client.hpp"
#include "adapters/kube/informer.hpp"
#include "common/json.hpp"
#include "test/support/poll.hpp"

namespace octorun::chaos {

using namespace std::chrono_literals;

namespace {

constexpr double stuck_calm_seconds = 180;  // fault-free time without progress (a silent watch takes 150 s)
constexpr double stuck_wall_seconds = 600;  // wall time without progress, whatever the faults

int rank(const std::string& phase) {
  if (phase.empty()) return 0;
  if (phase == "Pending") return 1;
  if (phase == "Running") return 2;
  return 3;  // Succeeded, Failed, Outdated
}
bool terminal(const std::string& phase) { return rank(phase) == 3; }

std::string text(const rapidjson::Value* v, const char* key) {
  return v != nullptr ? json::str(*v, key) : "";
}

struct sim_state {
  std::map<std::string, std::pair<bool, bool>> runners;  // name -> (online, busy)
  struct job {
    std::string state, runner, result;
  };
  std::map<std::int64_t, job> jobs;
};

sim_state read_sim(const sim::simulator& s) {
  sim_state out;
  rapidjson::Document d;
  auto state = s.state_json();
  d.Parse(state.data(), state.size());
  if (d.HasParseError()) return out;
  if (const auto* rs = json::member(d, "runners"); rs != nullptr && rs->IsArray())
    for (const auto& r : rs->GetArray())
      out.runners[json::str(r, "name")] = {json::str(r, "status") == "online", json::boolean(r, "busy")};
  if (const auto* js = json::member(d, "jobs"); js != nullptr && js->IsArray())
    for (const auto& j : js->GetArray())
      out.jobs[json::i64(j, "id")] = {json::str(j, "state"), json::str(j, "runner_name"),
                                      json::str(j, "result")};
  return out;
}

}  // namespace

world::world(kube::config cfg, sim::simulator& sim, timeline& tl, std::vector<pool> pools)
    : cfg_(std::move(cfg)), sim_(sim), tl_(tl) {
  for (auto& p : pools) pools_[p.key()] = std::move(p);
}

world::~world() { stop(); }

void world::start() {
  std::set<std::string> namespaces;
  for (const auto& [k, p] : pools_) namespaces.insert(p.ns);
  for (const auto& ns : namespaces) {
    threads_.emplace_back([this, ns] { reflect(ns, false); });
    threads_.emplace_back([this, ns] { reflect(ns, true); });
  }
  threads_.emplace_back([this] { poll_simulator(); });
  threads_.emplace_back([this] { run_emulator(writer::simulator); });
  threads_.emplace_back([this] { run_emulator(writer::kube); });
}

void world::stop() {
  if (stop_.exchange(true)) return;
  for (auto& q : queues_) {
    std::lock_guard l(q.mu);  // no waiter misses the flag
    q.cv.notify_all();
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

// ---- watches --------------------------------------------------------------

void world::reflect(const std::string& ns, bool pods) {
  kube::informer_options o;
  o.res = pods ? kube::resource{"", "v1", "pods", true}
               : kube::resource{"octorun.io", "v1alpha1", "runners", true};
  o.ns = ns;
  if (pods) o.label_selector = "octorun.io/runner";
  o.watch_timeout_min = 5;  // the stop flag is read between watches
  o.watch_timeout_max = 10;
  o.backoff_max = 2s;
  kube::reflector_callbacks cb;
  cb.replaced = [this, ns, pods](kube::object_list l) {
    std::set<std::string> present;
    for (auto& item : l.items) {
      present.insert(item.key());
      pods ? on_pod(item, false) : on_runner(item, false);
    }
    // What went while the watch was down: gone now.
    std::vector<kube::object> gone;
    {
      std::lock_guard g(mu_);
      if (pods) {
        for (const auto& [key, p] : pods_)
          if (p.ns == ns && !present.count(key))
            gone.push_back(*kube::parse_object(R"({"metadata":{"namespace":")" + p.ns + R"(","name":")" +
                                               p.name + R"(","uid":")" + p.uid + R"("}})"));
      } else {
        for (const auto& [key, r] : runners_)
          if (r.ns == ns && !r.gone && !present.count(key))
            gone.push_back(*kube::parse_object(R"({"metadata":{"namespace":")" + r.ns + R"(","name":")" +
                                               r.name + R"(","uid":")" + r.uid + R"("},"status":{"phase":")" +
                                               r.phase + R"("}})"));
      }
    }
    for (const auto& o : gone) pods ? on_pod(o, true) : on_runner(o, true);
  };
  cb.event = [this, pods](kube::watch_event ev) {
    if (ev.type == kube::event_type::error || ev.type == kube::event_type::bookmark) return;
    bool deleted = ev.type == kube::event_type::deleted;
    pods ? on_pod(ev.obj, deleted) : on_runner(ev.obj, deleted);
  };
  kube::client c(cfg_);
  kube::run_reflector(c, o, stop_, cb);
}

void world::progress(runner_view& r, double now) {
  r.last_progress = now;
  r.calm_at_progress = calm_seconds_;
  r.stuck_reported = false;
}

void world::on_runner(const kube::object& o, bool deleted) {
  const double now = tl_.now();
  const auto* status = o.member("status");
  const auto* job = status != nullptr ? json::member(*status, "job") : nullptr;
  std::string phase = text(status, "phase");
  std::int64_t job_id = job != nullptr ? json::i64(*job, "id") : 0;
  std::string key = o.key(), ns(o.namespace_), name(o.name);
  std::string pool_key = ns + "/" + std::string(o.label("octorun.io/runnerset"));
  if (auto v = o.label("octorun.io/variant"); !v.empty()) pool_key += ":" + std::string(v);

  std::lock_guard l(mu_);
  auto [it, fresh] = runners_.try_emplace(key);
  auto& r = it->second;
  if (fresh || (r.uid != std::string(o.uid) && !std::string(o.uid).empty())) {
    r = runner_view{};
    r.uid = std::string(o.uid);
    r.ns = ns;
    r.name = name;
    r.pool = pool_key;
    r.first_seen = now;
    progress(r, now);
    tl_.add("kube", "Runner " + key + " created (" + pool_key + ")");
  }
  if (deleted) {
    if (!r.gone) tl_.add("kube", "Runner " + key + " gone (phase " + (r.phase.empty() ? "-" : r.phase) + ")");
    r.gone = true;
    check_max(r.pool);
    return;
  }
  if (!o.deletion_timestamp.empty() && !r.deleting) {
    r.deleting = true;
    progress(r, now);
    tl_.add("kube", "Runner " + key + " deleting (phase " + (r.phase.empty() ? "-" : r.phase) + ")");
    if (!ns_deleting_.count(ns)) {
      // Is GitHub running a job on it? A job that started well before the
      // deletion (not one GitHub handed it in the instant before its
      // removal, which its finalizer then waits out) means the manager
      // deleted a busy runner.
      act([this, key, name, now, was = phase] {
        auto s = read_sim(sim_);
        for (const auto& [id, j] : s.jobs) {
          if (j.state != "running" || j.runner != name) continue;
          std::lock_guard g(mu_);
          auto rec = jobs_.find(id);
          double started = rec != jobs_.end() ? rec->second.started_at : -1;
          if (started >= 0 && now - started > 2)
            record({now, "busy-runner",
                    "Runner " + key + " (phase " + (was.empty() ? "-" : was) +
                        ") was deleted by the manager while " + "GitHub runs job " + std::to_string(id) +
                        " on it (started " + std::to_string(static_cast<int>(now - started)) + " s before)"});
          else
            tl_.add("kube", "Runner " + key + " deleted as GitHub handed it job " + std::to_string(id) +
                                " (its finalizer waits for the job)");
        }
      });
    }
  }
  if (phase != r.phase) {
    if (rank(phase) < rank(r.phase) || (terminal(r.phase) && phase != r.phase))
      violations_.push_back(
          {now, "phase-order",
           "Runner " + key + " went from " + r.phase + " to " + (phase.empty() ? "\"\"" : phase)});
    tl_.add("kube", "Runner " + key + " " + (r.phase.empty() ? "-" : r.phase) + " -> " + phase +
                        (job_id ? " (job " + std::to_string(job_id) + ")" : ""));
    r.phase = phase;
    progress(r, now);
    if (phase == "Failed" && (job_id != 0 || r.job != 0)) check_failed(key, name, job_id ? job_id : r.job);
  }
  if (job_id != 0 && r.job != job_id) {
    r.job = job_id;
    auto& claims = claims_[job_id];
    claims.insert(key);
    if (claims.size() > 1) {
      std::string who;
      for (const auto& c : claims) who += " " + c;
      record({now, "one-runner", "job " + std::to_string(job_id) + " is claimed by" + who});
    }
    if (auto j = jobs_.find(job_id);
        j != jobs_.end() && !j->second.runner.empty() && j->second.runner != name)
      record({now, "one-runner",
              "Runner " + key + " claims job " + std::to_string(job_id) + " which GitHub ran on " +
                  j->second.runner});
  }
  check_max(r.pool);
}

void world::check_failed(const std::string& key, const std::string& name, std::int64_t job) {
  // Failed says the job was lost with the runner: GitHub must agree, unless
  // a fault of the harness took the pod. Such a pod can be over for
  // Kubernetes before GitHub knows: pod GC ends the pods of a deleted node
  // (phase Failed, containers terminated) before it deletes them, and the
  // played runner process dies only with the deletion.
  bool fault = evicted_.count(key) || node_gone_ || ns_deleting_.count(key.substr(0, key.find('/')));
  act([this, key, name, job, fault] {
    auto s = read_sim(sim_);
    auto j = s.jobs.find(job);
    if (j == s.jobs.end() || j->second.runner != name) return;
    if (j->second.state == "running" && fault)
      tl_.add("kube", "Runner " + key + " marked Failed while GitHub still runs its job " +
                          std::to_string(job) + ": a fault of the harness took its pod");
    else if (j->second.state == "running")
      add_violation("phase-truth", "Runner " + key + " was marked Failed while GitHub runs its job " +
                                       std::to_string(job) + " (no fault of the harness took its pod)");
    else if (j->second.state == "completed" && j->second.result == "succeeded" && !fault)
      add_violation("phase-truth", "Runner " + key + " was marked Failed though its job " +
                                       std::to_string(job) +
                                       " succeeded on GitHub (no fault of the harness took its pod)");
  });
}

void world::check_max(const std::string& pool_key) {
  auto p = pools_.find(pool_key);
  if (p == pools_.end()) return;
  std::vector<std::string> live;
  for (const auto& [key, r] : runners_)
    if (r.pool == pool_key && !r.gone && !terminal(r.phase))
      live.push_back(r.name + "(" + (r.phase.empty() ? "-" : r.phase) + (r.deleting ? ",deleting" : "") +
                     ")");
  // One violation per episode (and again when it grows), not one per event.
  int& reported = over_max_[pool_key];
  if (static_cast<int>(live.size()) <= p->second.max_runners) {
    reported = 0;
    return;
  }
  if (static_cast<int>(live.size()) <= reported) return;
  reported = static_cast<int>(live.size());
  // The diagnosis: how many of them GitHub says have finished their job
  // (the manager may count those as free before their Succeeded lands; read
  // from the simulator's state now: such a runner is gone there), and how
  // many more are being deleted; beyond the bound even without both, it is
  // an overshoot.
  auto now_state = read_sim(sim_);
  int finished = 0, deleting = 0;
  for (const auto& [key, r] : runners_) {
    if (r.pool != pool_key || r.gone || terminal(r.phase)) continue;
    bool done = !now_state.runners.count(r.name) && r.job != 0;
    for (const auto& [id, j] : now_state.jobs)
      if (j.runner == r.name && j.state == "completed") done = true;
    finished += done ? 1 : 0;
    deleting += !done && r.deleting ? 1 : 0;
  }
  const int n = static_cast<int>(live.size()), max = p->second.max_runners;
  std::string kind = n - finished <= max              ? "finished-not-yet-terminal"
                     : n - finished - deleting <= max ? "deleting-still-counted"
                                                      : "overshoot";
  std::string who = " [" + kind + ": " + std::to_string(finished) + " had finished their job on GitHub, " +
                    std::to_string(deleting) + " more being deleted]:";
  for (const auto& name : live) who += " " + name;
  record({tl_.now(), "max-runners",
          pool_key + ": " + std::to_string(n) + " non-terminal Runners, maxRunners " + std::to_string(max) +
              who});
}

void world::on_pod(const kube::object& o, bool deleted) {
  const double now = tl_.now();
  std::string key = o.key(), ns(o.namespace_), name(o.name);
  const auto* status = o.member("status");
  const auto* spec = o.member("spec");
  bool running = text(status, "phase") == "Running";
  bool deleting = deleted || !o.deletion_timestamp.empty();

  std::lock_guard l(mu_);
  auto [it, fresh] = pods_.try_emplace(key);
  auto& p = it->second;
  if (fresh || (p.uid != std::string(o.uid) && !std::string(o.uid).empty())) {
    p = pod_view{std::string(o.uid), ns, name, text(spec, "nodeName")};
    tl_.add("kube", "Pod " + key + " created");
  }
  if (p.node.empty()) p.node = text(spec, "nodeName");
  auto runner = runners_.find(key);
  if (running && !p.running && !deleting) {
    p.running = true;
    if (runner != runners_.end()) progress(runner->second, now);
  }
  if (p.running && !p.onlined && !deleting) {
    // The runner process starts from its JIT configuration and connects.
    p.onlined = true;
    act([this, name] {
      if (sim_.runner_online(name)) tl_.add("runner", name + " online on GitHub");
    });
  }
  if (deleting && !p.deleting) {
    p.deleting = true;
    tl_.add("kube", "Pod " + key + (deleted ? " deleted" : " deleting"));
    std::string cause;
    if (evicted_.count(key))
      cause = "evicted by the harness";
    else if (ns_deleting_.count(ns))
      cause = "its namespace was deleted by the harness";
    else if (node_gone_)
      cause = "its node was deleted by the harness";
    // Its runner process dies with it: a job it was running fails. Checked
    // on the simulator's state now, not the poller's copy.
    act([this, name, key, cause] {
      auto s = read_sim(sim_);
      auto r = s.runners.find(name);
      if (r == s.runners.end()) return;
      if (r->second.second) {
        if (cause.empty())
          add_violation("busy-runner",
                        "Pod " + key + " was deleted while its runner runs a job (no fault of the harness)");
        else
          tl_.add("runner", name + " was running a job; " + cause + ": the job fails");
      }
      sim_.lose_runner(name);
    });
  }
  if (deleted) pods_.erase(it);
}

// ---- the simulator and the runner processes ----------------------------

void world::poll_simulator() {
  double last = tl_.now(), next_stuck_check = 0;
  while (!stop_) {
    auto s = read_sim(sim_);
    const double now = tl_.now();
    {
      std::lock_guard l(mu_);
      if (!under_fault()) calm_seconds_ += now - last;
      last = now;
      sim_runners_.clear();
      for (const auto& [name, r] : s.runners) sim_runners_[name] = {r.first, r.second};
      for (const auto& [id, sj] : s.jobs) {
        auto j = jobs_.find(id);
        if (j == jobs_.end() || j->second.state == sj.state) continue;
        auto& rec = j->second;
        if (sj.state == "running" || (sj.state == "completed" && !sj.runner.empty() && rec.started_at < 0)) {
          rec.started_at = now;
          rec.runner = sj.runner;
          tl_.add("job", std::to_string(id) + " started on " + sj.runner);
          for (const auto& claim : claims_[id])
            if (claim.substr(claim.find('/') + 1) != sj.runner)
              record({now, "one-runner",
                      "Runner " + claim + " claims job " + std::to_string(id) + " which GitHub runs on " +
                          sj.runner});
        }
        if (sj.state == "completed") {
          rec.completed_at = now;
          rec.result = sj.result;
          tl_.add("job", std::to_string(id) + " completed: " + sj.result);
          // The ephemeral runner process exits after its one job: its pod succeeds.
          for (auto& [key, p] : pods_)
            if (!sj.runner.empty() && p.name == sj.runner && !p.deleting && !p.exited) {
              p.exited = true;
              act([this, ns = p.ns, name = p.name] { pod_exits(ns, name); }, writer::kube);
            }
          for (auto& [key, r] : runners_)
            if (r.name == sj.runner) progress(r, now);
        }
        rec.state = sj.state;
      }
    }
    if (now >= next_stuck_check) {
      check_stuck(now);
      next_stuck_check = now + 5;
    }
    // The simulator's state is a document, not a stream: read it 4 times a second.
    std::this_thread::sleep_for(250ms);
  }
}

void world::check_stuck(double now) {
  std::lock_guard l(mu_);
  for (auto& [key, r] : runners_) {
    if (r.gone || r.stuck_reported) continue;
    auto sr = sim_runners_.find(r.name);
    bool serving = sr != sim_runners_.end() && sr->second.online && !r.deleting && !terminal(r.phase);
    if (serving) {
      r.last_progress = now;  // an idle or busy runner online on GitHub serves
      r.calm_at_progress = calm_seconds_;
      continue;
    }
    double calm = calm_seconds_ - r.calm_at_progress, wall = now - r.last_progress;
    if (calm <= stuck_calm_seconds && wall <= stuck_wall_seconds) continue;
    r.stuck_reported = true;
    record({now, "stuck",
            "Runner " + key + " (phase " + (r.phase.empty() ? "-" : r.phase) +
                (r.deleting ? ", deleting" : "") + ") made no progress for " +
                std::to_string(static_cast<int>(wall)) + " s (" + std::to_string(static_cast<int>(calm)) +
                " s without faults)"});
  }
}

void world::act(std::function<void()> f, writer w) {
  auto& q = queues_[static_cast<int>(w)];
  {
    std::lock_guard l(q.mu);
    q.actions.push_back(std::move(f));
  }
  q.cv.notify_one();
}

void world::run_emulator(writer w) {
  auto& q = queues_[static_cast<int>(w)];
  for (;;) {
    std::function<void()> f;
    {
      std::unique_lock l(q.mu);
      q.cv.wait(l, [&] { return stop_ || !q.actions.empty(); });
      if (stop_) return;
      f = std::move(q.actions.front());
      q.actions.pop_front();
    }
    f();
  }
}

void world::pod_exits(const std::string& ns, const std::string& name) {
  // What the kubelet would write when the runner container exits 0: kwok
  // leaves a pod annotated custom alone, so the harness writes its status.
  // A pod already being deleted is kwok's to finish. The apiserver may be
  // down (a fault): retried for up to 60 s, unless the pod is gone.
  kube::client c(cfg_);
  kube::resource pods{"", "v1", "pods", true};
  enum class outcome { exited, deleting, gone, failed };
  auto attempt = [&]() -> std::pair<outcome, std::string> {
    auto pod = c.get(pods, ns, name);
    if (!pod)
      return {pod.error().not_found() ? outcome::gone : outcome::failed, kube::to_string(pod.error())};
    if (!pod->deletion_timestamp.empty()) return {outcome::deleting, {}};
    // resourceVersion-locked: a deletion that lands first makes this a conflict, and we look again.
    auto annotated = c.patch(pods, ns, name, kube::patch_type::merge,
                             R"({"metadata":{"resourceVersion":")" + std::string(pod->resource_version) +
                                 R"(","annotations":{"kwok.x-k8s.io/status":"custom"}}})");
    if (!annotated) return {outcome::failed, kube::to_string(annotated.error())};
    auto status =
        c.patch(pods, ns, name, kube::patch_type::merge,
                R"({"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False"}],)"
                R"("containerStatuses":[{"name":"runner","image":"r","imageID":"","ready":false,)"
                R"("restartCount":0,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}})",
                "status");
    if (!status) return {outcome::failed, kube::to_string(status.error())};
    // A deletion that came between the two writes waits for a kubelet now:
    // as the kubelet does once the containers stopped, confirm it.
    if (!status->deletion_timestamp.empty()) {
      kube::delete_options now;
      now.grace_period_seconds = 0;
      c.remove(pods, ns, name, now);
    }
    return {outcome::exited, {}};
  };
  auto done = test::poll(
      attempt, [this](const auto& r) { return r.first != outcome::failed || stop_.load(); }, 60s);
  if (done.last.first == outcome::exited)
    tl_.add("runner", name + " exited 0 after its job");
  else if (done.last.first == outcome::failed)
    tl_.add("runner", name + ": its exit could not be written in 60 s: " + done.last.second);
}

}  // namespace octorun::chaos
