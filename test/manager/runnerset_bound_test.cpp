// maxRunners is a hard bound, at every instant, on the Runners that are not
// terminal — checked against the RunnerSet actor on CAF's deterministic
// coordinator, in both intakes, in a world that delivers everything out of
// step: the scale set's statistics lag or lead the job messages, the watch
// lags behind the apiserver by a random number of events, job messages
// arrive before or after the phase writes they cause, completions overtake
// starts, Runners linger behind their finalizers, and the clock jumps. After
// every step the test counts, in the world's store (what a watch of the
// apiserver shows), the Runners that are not terminal, and keeps the most.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/runnerset/runnerset_actor.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/json.hpp"
#include "messages/jobs.hpp"
#include "test/support/caf_test_system.hpp"
#include "test/support/credentials_secret.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

constexpr int max_runners = 4;
constexpr std::int64_t scale_set_id = 9;

std::string set_json(bool listener) {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet",)"
         R"("metadata":{"name":"linux","namespace":"ns","uid":"u","resourceVersion":"1",)"
         R"("finalizers":["octorun.io/runnerset"]},)"
         R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh","intake":")" +
         std::string(listener ? "Listener" : "Webhook") + R"(","minRunners":0,"maxRunners":)" +
         std::to_string(max_runners) +
         R"(,"template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}}})";
}

kube::api_error server_error() {
  return kube::api_error{500, "InternalError", "not in this test", {}, false};
}

// One Runner as the apiserver holds it.
struct stored_runner {
  std::string body;  // as created
  std::string phase;
  bool pod_ready = false;
  std::int64_t job = 0;
  bool deleting = false;
  int version = 0;
  int created = 0;          // creation order (names are random)
  bool completing = false;  // its job completed; the delivery (and its Succeeded) to come
};

// The apiserver's Runners and the watch that trails it. Creates and deletes
// come from the set; the test plays the Runner actors (phases) and the
// finalizers (the final removal). Every change is queued for the watch in
// the order the apiserver made it.
struct world {
  std::map<std::string, stored_runner> runners;
  std::deque<watched::runner_event> watch;  // not delivered yet
  int versions = 10;
  int creates = 0;
  std::size_t most_not_terminal = 0;

  kube::object render(const std::string& name) {
    auto& r = runners.at(name);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    auto& a = d.GetAllocator();
    auto& meta = d["metadata"];
    meta.RemoveMember("resourceVersion");
    meta.AddMember("resourceVersion", json::string_value(std::to_string(r.version), a), a);
    meta.AddMember("creationTimestamp", "2026-01-01T00:00:00Z", a);
    if (r.deleting) meta.AddMember("deletionTimestamp", "2026-01-01T00:01:00Z", a);
    rapidjson::Value status(rapidjson::kObjectType);
    status.AddMember("phase", json::string_value(r.phase, a), a);
    status.AddMember("podReady", r.pod_ready, a);
    status.AddMember("runnerId", r.created, a);  // registered with GitHub as it was made
    if (r.job != 0) {
      rapidjson::Value job(rapidjson::kObjectType);
      job.AddMember("id", r.job, a);
      status.AddMember("job", job, a);
    }
    d.AddMember("status", status, a);
    return *kube::parse_object(json::write(d));
  }
  void changed(const std::string& name, kube::event_type type) {
    runners.at(name).version = ++versions;
    watch.push_back({"runners", type, watched::read_runner(render(name))});
    if (type == kube::event_type::deleted) runners.erase(name);
    std::size_t not_terminal = 0;
    for (const auto& [n, r] : runners)
      if (r.phase != "Succeeded" && r.phase != "Failed" && r.phase != "Outdated") ++not_terminal;
    most_not_terminal = std::max(most_not_terminal, not_terminal);
  }
};

caf::behavior fake_apiserver(caf::event_based_actor*, std::shared_ptr<world> w, std::string set) {
  return {
      [=](kube::get_request& r) -> kube::object_result {
        if (r.res.plural != "secrets" || r.name != "gh") return unexpected{server_error()};
        return test::pat_credentials_secret("ghp_x");
      },
      [=](kube::create_request& r) -> kube::object_result {
        if (r.res.plural != "runners") return unexpected{server_error()};
        auto created = kube::parse_object(r.body);
        std::string name(created->name);
        w->runners[name] = stored_runner{r.body, "", false, 0, false, 0, ++w->creates};
        w->changed(name, kube::event_type::added);
        return w->render(name);
      },
      [=](kube::delete_request& r) -> kube::object_result {
        if (r.res.plural != "runners") return unexpected{server_error()};
        auto it = w->runners.find(r.name);
        if (it == w->runners.end()) return unexpected{kube::api_error{404, "NotFound", "gone", {}, false}};
        if (!it->second.deleting) {
          it->second.deleting = true;  // behind its finalizer
          w->changed(r.name, kube::event_type::modified);
        }
        return w->render(r.name);
      },
      [=](kube::patch_request& r) -> kube::object_result {
        // The set's ServiceAccount and PodDisruptionBudget (server-side apply).
        if (r.type == kube::patch_type::apply) return *kube::parse_object(r.body);
        if (r.res.plural != "runnersets") return unexpected{server_error()};
        return *kube::parse_object(set);
      },
      [=](kube::list_request&) -> kube::list_result { return kube::object_list{}; },
      [=](kube::update_request&) -> kube::object_result { return unexpected{server_error()}; },
  };
}

github::error not_here() {
  return github::error{github::error_kind::server_error, 502, "not in this test", {}, 0};
}

// GitHub: every runner the set removes is removed, unless it was handed a
// job and has not finished (GitHub answers that it is busy); the Runner actors'
// JIT requests fail (the test plays their phases); the Listener intake's
// scale set is registered.
// (Its scale set's id as an argument: CAF 0.17 dereferences an empty
// argument tuple when it spawns a function actor without arguments, which
// UBSan reports.)
caf::behavior fake_github(caf::event_based_actor*, std::int64_t registered_id, std::shared_ptr<world> w) {
  return {
      [=](github::delete_runner_atom, std::int64_t id) -> github::delete_reply {
        for (const auto& [name, r] : w->runners)
          if (r.created == id && r.job != 0 && r.phase != "Succeeded") return github::delete_outcome::busy;
        return github::delete_outcome::deleted;
      },
      [](github::jit_config_atom, github::jit_request&) -> github::jit_reply {
        return unexpected{not_here()};
      },
      [](github::jit_config_atom, std::int64_t, std::string&) -> github::scaleset_jit_reply {
        return unexpected{not_here()};
      },
      [](github::runner_group_atom, std::string&) -> github::group_reply {
        return github::runner_group{1, "Default", true};
      },
      [](github::find_scale_set_atom, std::int64_t, std::string&) -> github::maybe_scale_set_reply {
        return std::optional<github::scale_set>{};
      },
      [=](github::create_scale_set_atom, github::scale_set& s) -> github::scale_set_reply {
        s.id = registered_id;
        return s;
      },
  };
}

messages::job_info job(std::int64_t id, bool listener) {
  messages::job_info j;
  j.source = listener ? messages::job_source::listener : messages::job_source::webhook;
  j.job_id = id;
  j.repository = "acme/app";
  j.labels = {"self-hosted"};
  j.scale_set_id = listener ? scale_set_id : 0;
  return j;
}

// One run of `steps` random steps from `seed`. Webhook intake: demand is the
// queued jobs the set heard of. Listener intake: demand is the scale set's
// statistics, sent as the listener would, in any order with the job messages
// (stale counts included) — or, in GitHub's order, each session message in
// turn with the statistics that came with its job message.
enum class delivery { any_order, github_order };

class BoundRun {
 public:
  BoundRun(std::uint32_t seed, std::chrono::milliseconds window, bool listener,
           delivery order = delivery::any_order)
      : rng_(seed), listener_(listener), order_(order) {
    kube_ = t_.sys.spawn(fake_apiserver, w_, set_json(listener));
    github_ = t_.sys.spawn(fake_github, scale_set_id, w_);
    runnerset_actor_config cfg;
    cfg.ns = "ns";
    cfg.name = "linux";
    cfg.kube = kube_;
    cfg.github = github_;
    cfg.request_timeout = 5s;
    cfg.scale_down_window = window;
    cfg.resync = 1h;
    cfg.runner_defaults.resync = 1h;
    // The run plays the listener (statistics and job messages): a listener
    // that waits for its end stands in for it.
    cfg.spawn_listener = [](caf::local_actor* parent, listener::listener_config c) -> caf::actor {
      return parent->spawn(
          [](caf::event_based_actor*, const std::string&) -> caf::behavior { return {[](caf::unit_t) {}}; },
          c.variant);
    };
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(t_.sys, cfg));
    caf::anon_send(
        set_, watched::runnerset_event{"rs", kube::event_type::modified,
                                       watched::read_runnerset(*kube::parse_object(set_json(listener)))});
    t_.run();
    if (listener_) statistics_now();  // the session's first statistics: demand is known
  }
  ~BoundRun() {
    for (auto* a : {&set_, &kube_, &github_}) caf::anon_send_exit(*a, caf::exit_reason::kill);
    t_.run();
  }

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      step();
      t_.run();
      most_runners_beyond_jobs_ = std::max<std::int64_t>(most_runners_beyond_jobs_, w_->creates - next_job_);
    }
    // The deliveries made (in GitHub's order), the watch caught up, the
    // finalizers done: the set settles.
    if (order_ == delivery::github_order)
      while (!pending_.empty()) deliver(0);
    for (int i = 0; i < 50; ++i) {
      deliver_watch(w_->watch.size());
      finish_deletions();
      t_.advance(1s);
    }
  }

  const world& state() const { return *w_; }
  int jobs_run() const { return jobs_run_; }
  // The jobs queued or running, and the Runners there are to run them (not
  // terminal, not being deleted).
  std::int64_t jobs_left() const { return static_cast<std::int64_t>(queued_.size()) + running_; }
  std::int64_t runners_left() const {
    std::int64_t n = 0;
    for (const auto& [name, r] : w_->runners)
      n += (r.phase != "Succeeded" && r.phase != "Failed" && !r.deleting) ? 1 : 0;
    return n;
  }
  // The most Runners made beyond the jobs queued, at any step: a Runner
  // that no job needs (each job needs one).
  std::int64_t most_runners_beyond_jobs() const { return most_runners_beyond_jobs_; }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint32_t>(n)); }

  void deliver_watch(std::size_t n) {
    for (; n > 0 && !w_->watch.empty(); --n) {
      caf::anon_send(set_, w_->watch.front());
      w_->watch.pop_front();
      t_.run();
    }
  }
  // In creation order: the set names its Runners at random, the run does not depend on it.
  std::vector<std::string> runners_where(const std::function<bool(const stored_runner&)>& pred) {
    std::vector<std::pair<int, std::string>> found;
    for (const auto& [name, r] : w_->runners)
      if (pred(r)) found.emplace_back(r.created, name);
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& [order, name] : found) out.push_back(std::move(name));
    return out;
  }
  void finish_deletions() {
    for (const auto& name : runners_where([](const stored_runner& r) { return r.deleting; }))
      w_->changed(name, kube::event_type::deleted);
  }
  // The statistics as they stand (assigned: queued or running).
  messages::job_statistics statistics() const {
    messages::job_statistics stats;
    stats.scale_set_id = scale_set_id;
    stats.total_assigned_jobs = static_cast<std::int64_t>(queued_.size()) + running_;
    stats.total_running_jobs = running_;
    return stats;
  }
  // A job message, sent later (after the step's change to the statistics).
  // Under the Listener intake, in a session message: with the statistics in
  // GitHub's order, else alone (its statistics come in another, sooner or
  // later).
  template <class M>
  void later(M m) {
    if (!listener_) return queue(caf::make_message(std::move(m)));
    std::optional<messages::job_statistics> stats;
    if (order_ == delivery::github_order) stats = statistics();
    queue(caf::make_message(messages::session_message{"ns/linux", {std::move(m)}, stats}));
  }
  void deliver(std::size_t i) {
    caf::anon_send(set_, pending_[i]);
    pending_.erase(pending_.begin() + static_cast<long>(i));
    t_.run();
    const auto [name, phase] = lands_[i];
    lands_.erase(lands_.begin() + static_cast<long>(i));
    if (!name.empty()) land(name, phase);
  }
  void queue(caf::message m) {
    pending_.push_back(std::move(m));
    lands_.emplace_back();
  }
  // The job path writes `phase` once the delivery is made (in GitHub's order).
  void lands_on_delivery(const std::string& name, const std::string& phase) { lands_.back() = {name, phase}; }
  // The Runner's phase lands (if it is still there and not finished).
  void land(const std::string& name, const std::string& phase) {
    auto r = w_->runners.find(name);
    if (r == w_->runners.end() || r->second.phase == "Succeeded") return;
    r->second.phase = phase;
    w_->changed(name, kube::event_type::modified);
  }
  // The statistics, sent later in a session message of their own (in
  // GitHub's order they came with the step's job message).
  void statistics_later() {
    if (!listener_ || order_ == delivery::github_order) return;
    queue(caf::make_message(messages::session_message{"ns/linux", {}, statistics()}));
  }
  void statistics_now() {
    caf::anon_send(set_, caf::make_message(messages::session_message{"ns/linux", {}, statistics()}));
    t_.run();
  }

  void step() {
    switch (pick(9)) {
      case 0:  // a job is queued (the delivery may wait)
        // (In GitHub's order, demand stays within maxRunners: a runner too few shows.)
        if (order_ == delivery::github_order && jobs_left() >= max_runners) break;
        queued_.push_back(++next_job_);
        later(messages::job_available{job(next_job_, listener_)});
        statistics_later();
        break;
      case 1:  // a runner's pod is ready: Pending
        for (const auto& name :
             runners_where([](const stored_runner& r) { return r.phase.empty() && !r.deleting; })) {
          w_->runners[name].phase = "Pending";
          w_->runners[name].pod_ready = true;
          w_->changed(name, kube::event_type::modified);
          break;
        }
        break;
      case 2: {  // GitHub hands a queued job to an idle runner: Running, and the delivery
        auto idle = runners_where(
            [](const stored_runner& r) { return r.phase == "Pending" && r.job == 0 && !r.deleting; });
        if (idle.empty() || queued_.empty()) break;
        const auto& name = idle[pick(static_cast<int>(idle.size()))];
        auto id = queued_.front();
        queued_.pop_front();
        w_->runners[name].job = id;
        ++running_;
        later(messages::job_started{job(id, listener_), name, 0});
        // In GitHub's order the job path writes Running once the start is delivered.
        if (order_ == delivery::github_order) {
          lands_on_delivery(name, "Running");
          break;
        }
        w_->runners[name].phase = "Running";
        w_->changed(name, kube::event_type::modified);
        break;
      }
      case 3: {  // a job completes: Succeeded, and the delivery (either first)
        // (GitHub's JobStarted long came before the job's end.)
        if (order_ == delivery::github_order)
          while (!pending_.empty()) deliver(0);
        auto busy =
            runners_where([](const stored_runner& r) { return r.phase == "Running" && !r.completing; });
        if (busy.empty()) break;
        const auto& name = busy[pick(static_cast<int>(busy.size()))];
        auto id = w_->runners[name].job;
        --running_;
        later(messages::job_completed{job(id, listener_), name, 0, "success"});
        statistics_later();
        ++jobs_run_;
        if (order_ == delivery::github_order) {
          if (pick(2) == 0) {
            // The runner exits before the completion comes: its pod makes it Succeeded.
            land(name, "Succeeded");
            break;
          }
          // The job path writes Succeeded once the completion is delivered.
          w_->runners[name].completing = true;
          lands_on_delivery(name, "Succeeded");
          break;
        }
        land(name, "Succeeded");
        break;
      }
      case 4:  // deliveries arrive, in any order among themselves (or in GitHub's)
        if (!pending_.empty())
          deliver(order_ == delivery::github_order
                      ? std::size_t{0}
                      : static_cast<std::size_t>(pick(static_cast<int>(pending_.size()))));
        break;
      case 5:
      case 6:  // the watch catches up a little
        deliver_watch(static_cast<std::size_t>(pick(4)));
        break;
      case 7:  // finalizers finish
        if (pick(2) == 0) finish_deletions();
        break;
      case 8:  // time passes (scale-down windows, wake-ups); GitHub's messages come within seconds
        if (order_ == delivery::github_order)
          while (!pending_.empty()) deliver(0);
        t_.advance(std::chrono::milliseconds(pick(3000)));
        break;
    }
  }

  test::caf_test_system t_;
  std::shared_ptr<world> w_ = std::make_shared<world>();
  std::mt19937 rng_;
  caf::actor kube_, github_, set_;
  std::deque<std::int64_t> queued_;
  std::vector<caf::message> pending_;
  // Per pending_ entry: the Runner whose phase the job path writes once it is
  // delivered, and the phase.
  std::vector<std::pair<std::string, std::string>> lands_;
  std::int64_t next_job_ = 0;
  std::int64_t running_ = 0;
  int jobs_run_ = 0;
  std::int64_t most_runners_beyond_jobs_ = 0;
  bool listener_;
  delivery order_;
};

void bound_holds(bool listener) {
  int jobs = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    BoundRun run(seed, seed % 2 == 0 ? 0ms : 10'000ms, listener);
    run.run(400);
    EXPECT_LE(run.state().most_not_terminal, static_cast<std::size_t>(max_runners)) << "seed " << seed;
    jobs += run.jobs_run();
  }
  EXPECT_GT(jobs, 40 * 10) << "the runs ran jobs: the bound was tested under load";
}

TEST(RunnerSetBound, WebhookNeverMoreThanMaxRunnersNotTerminalWhateverTheOrder) { bound_holds(false); }
TEST(RunnerSetBound, ListenerNeverMoreThanMaxRunnersNotTerminalWhateverTheOrder) { bound_holds(true); }

// In GitHub's order (deliveries in turn; under the Listener intake a
// JobCompleted in the same session message as the statistics that stop
// counting its job) the set makes no Runner that no job needs: not when the
// completion and the statistics come together, nor when a runner exits
// before its job's completion comes (the watch still lags, the clock still
// jumps).
void one_runner_per_job(bool listener) {
  int jobs = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    BoundRun run(seed, seed % 2 == 0 ? 0ms : 10'000ms, listener, delivery::github_order);
    run.run(400);
    // (Without a scale-down window, Runners the lagging watch still shows
    // serving make the set remove an idle one at once, which a queued job
    // then needs: the window, 10 s in the manager, absorbs that lag.)
    if (seed % 2 == 1) {
      EXPECT_EQ(run.most_runners_beyond_jobs(), 0) << "seed " << seed;
    }
    // Nothing held back: once settled, every job left has a runner (up to maxRunners).
    EXPECT_EQ(run.runners_left(), std::min<std::int64_t>(run.jobs_left(), max_runners)) << "seed " << seed;
    EXPECT_LE(run.state().most_not_terminal, static_cast<std::size_t>(max_runners)) << "seed " << seed;
    jobs += run.jobs_run();
  }
  EXPECT_GT(jobs, 40 * 10) << "the runs ran jobs";
}

TEST(RunnerSetBound, WebhookInGitHubsOrderMakesNoRunnerThatNoJobNeeds) { one_runner_per_job(false); }
TEST(RunnerSetBound, ListenerInGitHubsOrderMakesNoRunnerThatNoJobNeeds) { one_runner_per_job(true); }

}  // namespace
}  // namespace octorun::runnerset
