// The simulator's state and handlers, shared by its translation units.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/json.hpp"
#include "test/simulator/simulator.hpp"

namespace octorun::sim {

using http::server_request;
using http::server_response;
using clock_type = std::chrono::steady_clock;

using wall_clock = std::chrono::system_clock;

struct sim_runner {
  std::int64_t id = 0;
  std::string name;
  std::string scope_key;       // "repos/o/r", "orgs/o", "enterprises/e"; "" for scale-set runners
  std::int64_t tenant_id = 0;  // scale-set runners: the Actions tenant that registered them
  std::vector<std::string> labels;
  std::int64_t group_id = 1;
  std::int64_t scale_set_id = 0;
  bool online = false;
  bool busy = false;
  std::int64_t job_id = 0;
};

struct sim_job {
  std::int64_t id = 0;  // the runner request id (runnerRequestId) and workflow_job id
  std::int64_t run_id = 0;
  std::string guid;  // the job's id in scale-set messages (jobId): a UUID string, as GitHub's
  job_spec spec;
  std::string state = "queued";  // queued, assigned (acquired by a scale set), running, completed
  std::int64_t scale_set_id = 0;
  bool offered = false;  // a JobAvailable went out (held back while the scale set is at capacity)
  // When each event happened (queueTime, scaleSetAssignTime, runnerAssignTime, finishTime).
  wall_clock::time_point queued_at;
  std::optional<wall_clock::time_point> scale_set_assigned_at, runner_assigned_at, finished_at;
  std::string runner_name;
  std::int64_t runner_id = 0;
  std::string result;
  std::optional<clock_type::time_point> due;             // running: when it completes
  std::optional<clock_type::time_point> assignment_due;  // assigned: when, untaken, it is requeued
  int requeues = 0;                                      // assignments no runner took in time
};

struct sim_scale_set {
  std::int64_t id = 0;
  std::int64_t tenant_id = 0;
  std::string name;
  std::int64_t group_id = 1;
  std::vector<std::string> labels;
  bool disable_update = false;
  wall_clock::time_point created_on;
  // The X-ScaleSetMaxCapacity of the latest poll: no more jobs than this are
  // handed out (offered, acquired or running) at once. Unset until polled.
  std::optional<std::int64_t> max_capacity;
};

// One Actions-service tenant per scope (repository, organization,
// enterprise): its own scale sets, runner names and agents.
struct sim_tenant {
  std::int64_t id = 0;
  std::string scope_key;
};

// Runner groups of an organization or enterprise beside its Default group (id 1).
struct sim_runner_group {
  std::int64_t id = 0;
  std::string scope_key;
  std::string name;
};

// A registration token is for one scope; an admin token for one tenant.
struct scoped_token {
  std::int64_t expires = 0;  // epoch seconds
  std::string scope_key;
  std::int64_t tenant_id = 0;
};

struct sim_session {
  std::string id;
  std::string owner;
  std::string token;
  std::int64_t scale_set_id = 0;
  int polls_in_flight = 0;
  clock_type::time_point last_poll;  // on the simulator's clock (steady_now)
};

struct sim_message {
  std::int64_t id = 0;
  std::vector<std::string> jobs;  // JSON objects
  bool delivered = false;
};

struct delivery {
  std::string event;
  std::string id;
  std::string body;
};

struct simulator::impl {
  simulator_options options;
  std::int64_t latest_release_published_at = 0;  // set at start from options.latest_runner_release_age
  std::unique_ptr<http::server> server;
  std::string base;

  mutable std::mutex mu;
  std::condition_variable queue_cv;  // long polls wait here
  std::set<std::string> scopes;
  std::set<std::string> pats;
  std::map<std::string, std::int64_t> installation_tokens;  // token -> expiry epoch
  std::map<std::int64_t, github_app> apps;                  // by App id
  // Installations: id -> the App that owns it, the account it is on and the
  // repositories it was granted (empty: all of the account's). Only its App
  // gets tokens for it; a token serves only these.
  struct sim_installation {
    std::int64_t app_id = 0;
    std::string account;
    std::vector<std::string> repositories;
  };
  std::map<std::int64_t, sim_installation> installations;
  std::map<std::string, std::int64_t> token_installation;  // installation token -> its installation
  std::map<std::string, scoped_token> registration_tokens;
  std::map<std::string, scoped_token> admin_tokens;
  std::map<std::string, sim_tenant> tenants;  // by scope key
  std::map<std::int64_t, sim_runner_group> runner_groups;
  // Scale-set runners the service removed after their job: id -> tenant.
  // Removing one again answers 204, as GitHub does (see README.md).
  std::map<std::int64_t, std::int64_t> removed_after_job;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> budgets;  // token -> (window start, used)
  std::map<std::int64_t, sim_runner> runners;
  std::map<std::int64_t, sim_job> jobs;  // every job of the run, as GitHub keeps their history
  // The ids of the jobs not completed, in queue order: what the timer,
  // dispatch, offers and statistics walk, once per event, so that their
  // cost follows the jobs in flight and not the history (a steady load of
  // 24,000 jobs slowed every step before).
  std::set<std::int64_t> open_jobs;
  std::map<std::int64_t, sim_scale_set> scale_sets;
  std::map<std::int64_t, sim_session> sessions;  // by scale set id
  std::map<std::int64_t, std::deque<sim_message>> queues;
  std::deque<fault> faults;
  // An after_handling fault that matched the request being handled: its
  // answer replaces the real one (handle()).
  std::optional<server_response> lost_answer;
  std::map<std::string, std::int64_t> counts;
  std::int64_t next_runner_id = 100;
  std::int64_t next_job_id = 5'000'000'001;
  std::int64_t next_scale_set_id = 1;
  std::int64_t next_tenant_id = 1;
  std::int64_t next_group_id = 2;  // 1 is every scope's Default group
  std::int64_t next_message_id = 100'000'000;
  bool stopping = false;
  // The simulator's time is the real clocks' plus what advance_clock skipped.
  std::chrono::milliseconds skipped{0};
  clock_type::time_point steady_now() const;
  wall_clock::time_point wall_now() const;

  // Change notification for wait_until.
  mutable std::mutex change_mu;
  mutable std::condition_variable change_cv;
  std::uint64_t version = 0;
  void changed();

  // Webhook deliveries.
  std::mutex delivery_mu;
  std::condition_variable delivery_cv;
  std::deque<delivery> outbox;
  std::optional<delivery> held;   // reorder: waits for the next one
  std::vector<delivery> dropped;  // lost by delivery_faults.drop
  delivery_fault delivery_faults;
  bool sender_stop = false;  // guarded by delivery_mu
  std::atomic<std::int64_t> sent{0};
  std::thread sender;
  std::thread timer;
  std::condition_variable timer_cv;

  // Dispatch and helpers (mu held unless noted).
  using lock_type = std::unique_lock<std::mutex>;
  server_response handle(const server_request& r);  // any civetweb thread; takes mu
  server_response control(const server_request& r, const std::vector<std::string>& seg);
  server_response rest(const server_request& r, const std::vector<std::string>& seg, lock_type& lock);
  // POST /app/installations/{id}/access_tokens (sim_rest.cpp).
  server_response installation_token(const server_request& r, std::int64_t installation);
  // GET /orgs/{o}/repos, /repos/{o}/{r}/actions/runs, …/runs/{id}/jobs (sim_actions.cpp);
  // nullopt: not one of them.
  std::optional<server_response> actions_rest(const server_request& r, const std::vector<std::string>& seg,
                                              lock_type& lock);
  // A job as the REST API and the workflow_job payload show it, with `status`.
  std::string job_json(const sim_job& j, const std::string& status);
  static std::string job_status(const sim_job& j);  // queued, in_progress, completed
  server_response service(const server_request& r, const std::vector<std::string>& seg, lock_type& lock);
  server_response queue(const server_request& r, const std::vector<std::string>& seg, lock_type& lock);
  server_response create_scale_set(std::int64_t tenant_id, const rapidjson::Document& body);
  server_response agent(const std::string& endpoint, std::int64_t tenant_id, std::int64_t runner_id);
  // Counts the call and serves an injected fault, if one matches (may unlock
  // for latency); an after_handling fault is kept in lost_answer instead.
  std::optional<server_response> enter(const std::string& endpoint, bool service_style, lock_type& lock);
  server_response fault_answer(const fault& f, bool service_style);
  void count(const std::string& endpoint);

  std::int64_t now() const;  // epoch seconds on the simulator's clock
  std::string new_token(const char* prefix) const;
  static std::string new_uuid();  // random (version 4), lower-case hex
  bool scope_known(const std::string& key);
  std::optional<server_response> check_rest_auth(const server_request& r, std::string& token);
  // Whether `token` may act on the scope "orgs/X", "repos/O/R" or
  // "enterprises/E": a PAT on any; an installation token on its
  // installation's account (and, for a repository, its granted ones).
  bool token_covers(const std::string& token, const std::string& scope_key) const;
  server_response rest_json(int status, std::string body, const std::string& token);
  // The tenant an admin token was issued for, if it is valid.
  std::optional<std::int64_t> admin_tenant(const server_request& r) const;
  sim_session* session_for_token(const server_request& r);
  sim_tenant& tenant_for(const std::string& scope_key);
  const sim_tenant* tenant_by_id(std::int64_t id) const;
  std::string tenant_url(std::int64_t tenant_id) const;
  // The runner group `id` as `scope_key` sees it (1: Default); nullopt if it has none such.
  std::optional<sim_runner_group> runner_group(const std::string& scope_key, std::int64_t id) const;
  std::vector<sim_runner_group> runner_groups_of(const std::string& scope_key) const;
  // Whether a job of `repository` may run on runners registered for `scope_key`.
  static bool scope_covers(const std::string& scope_key, const std::string& repository);

  std::string statistics_json(std::int64_t scale_set_id) const;
  std::string scale_set_json(const sim_scale_set& s) const;
  std::string session_json(const sim_session& s) const;
  std::string runner_json(const sim_runner& r) const;
  // `result`: JobCompleted's, if not the job's own.
  std::string job_message_json(const char* type, const sim_job& j, const std::string& result = {}) const;
  void post_message(std::int64_t scale_set_id, std::string job_json);
  // Hands out (JobAvailable) the scale set's waiting jobs while it is below its capacity.
  void offer_jobs(std::int64_t scale_set_id);
  void webhook_job(const char* action, const sim_job& j);
  void enqueue_delivery(delivery d);  // takes delivery_mu

  std::int64_t new_job(const job_spec& spec);
  void dispatch();  // idle online runners take waiting jobs
  void start_job(sim_job& j, sim_runner& r);
  void finish_job(sim_job& j, const std::string& result);
  void cancel(sim_job& j);  // any state but completed
  // An assignment no runner took in time: back to the scale set, or cancelled
  // after options.max_requeues.
  void assignment_expired(sim_job& j);
  // Completes the running jobs that are due and ends the assignments that
  // timed out; answers when the next falls due (nullopt: none pending).
  std::optional<clock_type::time_point> run_due();
  void advance(std::chrono::milliseconds by);  // advance_clock, mu held
  void lose(sim_runner& r);  // its process is gone: offline, its running job fails; may erase r
  sim_runner* runner_by_name(const std::string& scope_key, std::int64_t scale_set_id,
                             const std::string& name);
  sim_runner* runner_named(const std::string& name);

  void expire_all(bool admin);  // installation and queue tokens; admin tokens too when asked
  std::int64_t add_runner_group(const std::string& scope_key, const std::string& name);
  std::string state_locked() const;
  void run_sender();
  void run_timer();
};

server_response json_response(int status, std::string body);
// The slice [from, to) of `total` items a request's page and per_page (at
// most 100, default 30) ask for, and the Link header to the next page ("" on
// the last); `url` is the listing's URL without page parameters.
struct page_window {
  std::size_t from = 0, to = 0;
  std::string link;
};
page_window paginate(const server_request& r, std::size_t total, const std::string& url);
server_response rest_error(int status, const std::string& message);
server_response service_error(int status, const std::string& type_name, const std::string& message);
std::vector<std::string> split_path(const std::string& path);
bool labels_match(const std::vector<std::string>& job, const std::vector<std::string>& runner);
std::string strings_json(const std::vector<std::string>& v);

}  // namespace octorun::sim
