#include "bench/floor/floor.hpp"

#include <rapidjson/document.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "actors/kinds.hpp"
#include "actors/runner/children.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "adapters/kube/client.hpp"
#include "bench/common/lifecycle.hpp"
#include "common/json.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"

namespace octorun::bench {
namespace {

using namespace std::chrono_literals;

// The bench's RunnerSet (the same as bench/manager's); it only owns the
// Runners here: no manager watches the namespace.
std::string runnerset_json(const std::string& name) {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
         R"("},"spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"github",)"
         R"("runnerLabels":["linux"],"minRunners":0,"maxRunners":1000,)"
         R"("template":{"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"}]}}}})";
}

enum class step { create_runner, create_secret, create_pod, pending, running, succeeded, remove };

struct task {
  int job = 0;
  step what = step::create_runner;
};

struct job_state {
  std::string name;
  std::optional<model::runner> runner;
  std::string rv;         // of the Runner's latest write
  int children_left = 3;  // Secret, Pod, Pending
  bool pod_running = false;
  double began_ms = 0, created_ms = 0;
};

class floor_run {
 public:
  floor_run(const kube::config& cfg, const floor_options& o) : cfg_(cfg), o_(o), jobs_(o.jobs) {}

  floor_result run() {
    kube::client admin(cfg_);
    const std::string set_name = "floor";
    auto set_obj = admin.get(kinds::runnersets(), o_.ns, set_name);
    if (!set_obj) set_obj = admin.create(kinds::runnersets(), o_.ns, runnerset_json(set_name));
    if (!set_obj) return failed("RunnerSet: " + kube::to_string(set_obj.error()));
    auto set = model::parse_runnerset(*set_obj->doc);
    if (!set) return failed("RunnerSet does not parse");
    set_ = std::move(*set);
    variant_ = model::effective_variants(set_.spec).at(0);
    static int run_counter = 0;
    tag_ = std::to_string(getpid() % 10000) + "x" + std::to_string(run_counter++) + "x";
    for (int i = 0; i < o_.jobs; ++i)
      jobs_[i].name = model::runner_name(set_name, "", tag_ + std::to_string(i));

    lifecycle_watch watch(
        cfg_, o_.ns, [this](const std::string& runner) { on_pod_running(runner); },
        "octorun.io/runnerset=" + set_name);
    if (!watch.wait([](const lifecycle_watch& w) { return w.synced(); }, 60s))
      return failed("watch did not sync");

    const double start = unix_ms_now();
    {
      std::lock_guard lock(mu_);
      for (; next_job_ < std::min(o_.jobs, o_.max_runners); ++next_job_)
        push_locked({next_job_, step::create_runner});
    }
    std::vector<std::thread> workers;
    for (int i = 0; i < o_.connections; ++i) workers.emplace_back([this] { work(); });
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [&] { return done_ == o_.jobs || !error_.empty(); });
      stop_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers) t.join();
    floor_result r;
    r.seconds = (last_done_ms_ - start) / 1000;
    r.jobs_per_s = r.seconds > 0 ? o_.jobs / r.seconds : 0;
    r.writes = writes_;
    r.failed_writes = failed_writes_;
    r.job_ms = job_ms_;
    r.runner_to_pod_running = to_running_ms_;
    // The garbage collector deletes the Pods and Secrets; the next run starts clean.
    watch.wait([](const lifecycle_watch& w) { return w.counts().pods == 0 && w.counts().total == 0; }, 300s);
    if (!error_.empty()) std::fprintf(stderr, "floor: %s\n", error_.c_str());
    return r;
  }

 private:
  floor_result failed(const std::string& why) {
    std::fprintf(stderr, "floor: %s\n", why.c_str());
    return {};
  }

  void push_locked(task t) {
    queue_.push_back(t);
    ready_.notify_one();
  }
  void push(task t) {
    std::lock_guard lock(mu_);
    push_locked(t);
  }

  void on_pod_running(const std::string& runner) {
    std::lock_guard lock(mu_);
    for (int i = 0; i < o_.jobs; ++i)  // names are few; a scan is cheap next to a request
      if (jobs_[i].name == runner) {
        auto& j = jobs_[i];
        j.pod_running = true;
        to_running_ms_.push_back(unix_ms_now() - j.created_ms);
        if (j.children_left == 0) push_locked({i, step::running});
        return;
      }
  }

  void work() {
    kube::client api(cfg_);
    for (;;) {
      task t;
      {
        std::unique_lock lock(mu_);
        ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        t = queue_.front();
        queue_.pop_front();
      }
      execute(api, t);
    }
  }

  // One write, retried on transport failures; false (and the run fails) when refused.
  template <class Write>
  std::optional<kube::object> write(Write w, const char* what) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto r = w();
      ++writes_;
      if (r) return std::move(*r);
      ++failed_writes_;
      if (!r.error().retryable()) {
        std::lock_guard lock(mu_);
        error_ = std::string(what) + ": " + kube::to_string(r.error());
        ready_.notify_all();
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  std::string status_patch(const std::string& rv, const std::string& status) {
    return R"({"metadata":{"resourceVersion":)" + json::quote(rv) + R"(},"status":)" + status + "}";
  }

  std::string job_json(int i) {
    return R"({"id":)" + std::to_string(1000 + i) +
           R"(,"repository":"acme/app","workflowRef":"acme/app/.github/workflows/ci.yml@refs/heads/main","runId":)" +
           std::to_string(3000000000LL + i) + R"(,"displayName":"build"})";
  }

  // The manager's Runner body holds the Runner actor's finalizer; the floor
  // has no actor to release it (and no finalizer: its delete is the last write).
  static std::string without_finalizers(const std::string& body) {
    rapidjson::Document d;
    d.Parse(body.c_str(), body.size());
    if (auto meta = d.FindMember("metadata"); meta != d.MemberEnd()) meta->value.RemoveMember("finalizers");
    return json::write(d);
  }

  void execute(kube::client& api, task t) {
    auto& j = jobs_[t.job];  // each job's steps are ordered: no two touch it at once, except 2-4 (below)
    switch (t.what) {
      case step::create_runner: {
        j.began_ms = unix_ms_now();
        auto body = without_finalizers(runnerset::runner_json(set_, variant_, tag_ + std::to_string(t.job)));
        auto created = write([&] { return api.create(kinds::runners(), o_.ns, body); }, "create Runner");
        if (!created) return;
        auto runner = model::parse_runner(*created->doc);
        std::lock_guard lock(mu_);
        j.created_ms = unix_ms_now();
        j.runner = std::move(*runner);
        j.rv = std::string(created->resource_version);
        push_locked({t.job, step::create_secret});
        push_locked({t.job, step::create_pod});
        push_locked({t.job, step::pending});
        return;
      }
      case step::create_secret: {
        runner::jit_config jit{std::string(1200, 'J'), 1000 + t.job, j.name};
        auto body = runner::jit_secret_json(*j.runner, jit);
        if (!write([&] { return api.create(kinds::secrets(), o_.ns, body); }, "create Secret")) return;
        return child_done(t.job, {});
      }
      case step::create_pod: {
        auto body = runner::pod_json(*j.runner, "octorun-floor");
        if (!write([&] { return api.create(kinds::pods(), o_.ns, *body); }, "create Pod")) return;
        return child_done(t.job, {});
      }
      case step::pending: {
        std::string rv;
        {
          std::lock_guard lock(mu_);
          rv = j.rv;
        }
        auto body = status_patch(rv, R"({"phase":"Pending","podReady":false,"runnerId":)" +
                                         std::to_string(1000 + t.job) + R"(,"runnerName":)" +
                                         json::quote(j.name) + "}");
        auto patched = write(
            [&] {
              return api.patch(kinds::runners(), o_.ns, j.name, kube::patch_type::merge, body, "status");
            },
            "status Pending");
        if (!patched) return;
        return child_done(t.job, std::string(patched->resource_version));
      }
      case step::running:
      case step::succeeded: {
        const bool running = t.what == step::running;
        auto status = running ? R"({"phase":"Running","job":)" + job_json(t.job) + "}"
                              : R"({"phase":"Succeeded","job":)" + job_json(t.job) +
                                    R"(,"reason":"JobCompleted","message":"succeeded"})";
        auto body = status_patch(j.rv, status);
        auto patched = write(
            [&] {
              return api.patch(kinds::runners(), o_.ns, j.name, kube::patch_type::merge, body, "status");
            },
            running ? "status Running" : "status Succeeded");
        if (!patched) return;
        j.rv = std::string(patched->resource_version);
        return push({t.job, running ? step::succeeded : step::remove});
      }
      case step::remove: {
        kube::delete_options d;
        d.propagation_policy = "Background";
        if (!write([&] { return api.remove(kinds::runners(), o_.ns, j.name, d); }, "delete Runner")) return;
        std::lock_guard lock(mu_);
        last_done_ms_ = unix_ms_now();
        job_ms_.push_back(last_done_ms_ - j.began_ms);
        ++done_;
        if (next_job_ < o_.jobs) push_locked({next_job_++, step::create_runner});
        ready_.notify_all();
        return;
      }
    }
  }

  // Secret, Pod and Pending are in; once the pod runs too, the job starts.
  void child_done(int i, const std::string& pending_rv) {
    std::lock_guard lock(mu_);
    auto& j = jobs_[i];
    if (!pending_rv.empty()) j.rv = pending_rv;
    if (--j.children_left == 0 && j.pod_running) push_locked({i, step::running});
  }

  kube::config cfg_;
  floor_options o_;
  model::runnerset set_;
  model::effective_variant variant_{};
  std::string tag_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<task> queue_;
  std::vector<job_state> jobs_;
  int next_job_ = 0, done_ = 0;
  bool stop_ = false;
  std::string error_;
  std::atomic<std::int64_t> writes_{0}, failed_writes_{0};
  double last_done_ms_ = 0;
  std::vector<double> job_ms_, to_running_ms_;
};

}  // namespace

floor_result run_floor(const kube::config& cfg, const floor_options& o) { return floor_run(cfg, o).run(); }

}  // namespace octorun::bench
