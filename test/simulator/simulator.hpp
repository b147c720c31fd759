// A faithful, scriptable stand-in for GitHub in one process: the REST API for
// self-hosted runners (PATs, GitHub App JWTs and expiring installation tokens,
// x-ratelimit-* headers), the runner scale-set protocol (Actions service
// registration, scale sets, message sessions with long poll and
// acknowledgement, job acquisition and assignment to a JIT runner once it comes
// online, requeued when none does in time) and signed workflow_job webhook
// deliveries. Faults are injected on demand; calls are counted per endpoint;
// tests move its clock. Everything is also reachable over the control API
// under /_sim/ (see README.md). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adapters/http/http_server.hpp"
#include "common/expected.hpp"

namespace octorun::sim {

struct simulator_options {
  // Generous: the manager's clients keep their connections and hold long
  // polls, and benchmarks open many at once.
  http::server_options http{.bind_address = "127.0.0.1",
                            .port = 0,
                            .tls_pem_file = {},
                            .threads = 48,
                            .connection_queue = 64,
                            .listen_backlog = 256,
                            .header_timeout_ms = 10'000,
                            .keep_alive_timeout_ms = 10'000,
                            .body_timeout_ms = 60'000,
                            .min_body_bytes_per_second = 0};
  std::vector<std::string> pats{"ghp_simulator"};
  std::string webhook_url;  // workflow_job/ping deliveries go here when set
  std::string webhook_secret;
  std::chrono::milliseconds long_poll{50'000};
  // A session nobody polls for this long is dropped when another listener
  // asks for one (as the service lets a dead listener's session go); until
  // then creating a session answers 409.
  std::chrono::milliseconds session_idle_timeout{120'000};
  std::chrono::seconds installation_token_ttl{3600};
  std::chrono::seconds admin_token_ttl{3600};    // the admin JWT's exp; refused after it
  std::int64_t rate_limit = 5000;                // per token and window (REST)
  std::chrono::seconds rate_limit_window{3600};  // GitHub's: an hour; shorter for tests of the reset
  bool auto_online = false;                      // a JIT runner connects as soon as its config is generated
  bool auto_scopes = false;                      // unknown repos/orgs/enterprises exist on first use
  // GitHub's reassignment (actions/scaleset README, "Job Reassignment"): a
  // job assigned to a scale set (JobAssigned) that no runner of the scale
  // set starts within this goes back to it: the assignment ends with a
  // JobCompleted "canceled" and a new JobAvailable follows. GitHub's, as its
  // support traced one: five minutes.
  std::chrono::milliseconds assignment_timeout{300'000};
  int max_requeues = 3;  // requeues of a job; the next assignment that times out cancels it
  // GitHub's newest runner release (GET /repos/actions/runner/releases/latest):
  // its tag and how long before the simulator's start it was published.
  std::string latest_runner_release = "v2.331.0";
  std::chrono::seconds latest_runner_release_age{24 * 3600};
  // Runners older than this are refused as deprecated when they connect
  // (connect_runner); empty: every version is taken.
  std::string minimum_runner_version;
};

// What a runner that connects is told (connect_runner).
enum class connect_answer {
  online,      // it connected; it gets a waiting job
  unknown,     // no runner of that name is registered
  deprecated,  // its version is older than the minimum: GitHub refuses it, and it exits
};

// A GitHub App: a JWT names it in `iss` by its id (in decimal) or its client
// id, and is verified with its public key.
struct github_app {
  std::int64_t id = 0;
  std::string client_id;  // "Iv1.…"
  std::string public_key_pem;
};

struct job_spec {
  std::string repository = "octo/app";  // owner/repo
  std::vector<std::string> labels{"self-hosted"};
  std::chrono::milliseconds duration{
      0};  // run time once a runner picks it up; negative: until completed by hand
  std::string name = "build";
  std::string workflow = "ci.yml";
  std::string result = "succeeded";  // scale-set JobCompleted result ("success" in the webhook)
};

// A fault served instead of (or before) the real answer of an endpoint.
struct fault {
  std::string endpoint = "*";     // endpoint key as in call_counts(), or "*" for any GitHub endpoint
  int status = 500;               // 0: only latency
  int count = 1;                  // how many calls it hits; -1: until cleared
  std::int64_t retry_after = -1;  // seconds; adds Retry-After
  bool exhausted = false;         // adds x-ratelimit-remaining: 0 and a reset in `reset_in` seconds
  std::int64_t reset_in = 60;
  std::chrono::milliseconds latency{0};
  std::string type_name;  // scale-set error typeName
  std::string message;
  // The request takes effect and the fault replaces its answer: an answer
  // lost on its way back (a proxy's 502 or 503 after GitHub did the work).
  bool after_handling = false;
};

// Webhook delivery faults.
struct delivery_fault {
  int duplicate = 0;                   // the next n deliveries are sent twice with the same X-GitHub-Delivery
  int reorder = 0;                     // the next n pairs of deliveries are sent in swapped order
  std::chrono::milliseconds delay{0};  // before each delivery
  int drop = 0;                        // the next n deliveries are lost outright (never sent)
};

// A webhook delivery as the simulator made it.
struct delivery_record {
  std::string event;
  std::string id;  // X-GitHub-Delivery
  std::string body;
};

class simulator {
 public:
  static expected<std::unique_ptr<simulator>, std::string> start(simulator_options options);
  ~simulator();
  simulator(const simulator&) = delete;
  simulator& operator=(const simulator&) = delete;

  std::string base_url() const;  // http://127.0.0.1:PORT
  std::string ghes_url() const;  // base_url(): a GHES-style host, so REST is at /api/v3
  std::string api_url() const;   // base_url() + "/api/v3"
  std::uint16_t port() const;

  // Scripting (the control API does the same).
  void add_repository(const std::string& full_name);
  void add_organization(const std::string& login);
  void add_enterprise(const std::string& slug);
  void add_pat(const std::string& token);
  // A GitHub App whose JWTs get installation tokens (for its installations).
  void add_app(const github_app& app);
  // An installation `id` of the App `app_id` on `account` (an organisation,
  // user or enterprise), granted `repositories` of it (empty: all). Only the
  // App that owns it gets tokens for it, and a token serves only its
  // installation's account and repositories (404 otherwise, as GitHub).
  void add_app_installation(std::int64_t app_id, std::int64_t id, const std::string& account,
                            std::vector<std::string> repositories = {});
  void set_webhook(const std::string& url, const std::string& secret);
  std::int64_t add_job(const job_spec& spec);
  bool runner_online(const std::string& name);  // the JIT runner connects; it gets a waiting job
  // The runner connects reporting `version` ("2.330.0"); one older than the
  // minimum (set_minimum_runner_version) is refused and stays offline, as
  // GitHub refuses a deprecated runner, which then prints
  // deprecation_message(version) and exits.
  connect_answer connect_runner(const std::string& name, const std::string& version);
  static std::string deprecation_message(const std::string& version);
  void set_minimum_runner_version(const std::string& version);  // "" : none
  // The release GET /repos/actions/runner/releases/latest answers.
  void set_latest_runner_release(const std::string& tag, std::int64_t published_at);
  bool set_runner_busy(const std::string& name, bool busy);
  bool complete_job(std::int64_t job_id, const std::string& result = "succeeded");
  // The job is cancelled: a queued or assigned one completes "canceled" with
  // no runner, a running one as complete_job(id, "canceled"). False: no such
  // job, or it has completed.
  bool cancel_job(std::int64_t job_id);
  // The runner's process is gone (its pod killed): it goes offline, and a job
  // it was running fails ("failed"), as GitHub fails a job whose runner lost
  // communication. False: no such runner.
  bool lose_runner(const std::string& name);
  void add_fault(const fault& f);
  void set_delivery_fault(const delivery_fault& f);
  void clear_faults();
  void expire_tokens();  // installation and message-queue tokens expire now (admin tokens by admin_token_ttl)
  void expire_admin_tokens();  // the above, and every Actions-service admin token is revoked (401)
  // A runner group beside Default in an organization or enterprise ("orgs/o",
  // "enterprises/e"): its id, or 0 for another kind of scope.
  std::int64_t add_runner_group(const std::string& scope_key, const std::string& name);
  // The simulator's clock moves forward by `by` (job run times, assignment
  // timeouts, token expiry, idle sessions, the times in messages) and what
  // falls due is done before this returns: tests pass time without waiting.
  void advance_clock(std::chrono::milliseconds by);
  // The service drops a scale set's message session (as GitHub does when it
  // expires one): its polls get 401 and refreshing it 404. False: none open.
  bool drop_session(std::int64_t scale_set_id);

  struct scale_set_info {
    std::int64_t id = 0;
    std::string name;
    std::vector<std::string> labels;
    std::string session_id;  // empty: no session open
    std::string session_owner;
    std::string scope;  // the tenant's scope: "orgs/o", "repos/o/r", "enterprises/e"
    std::int64_t runner_group_id = 1;
    std::int64_t max_capacity = -1;  // X-ScaleSetMaxCapacity of the latest poll; -1: not polled yet
  };
  std::vector<scale_set_info> scale_sets() const;
  // A scale set of that name has a message session open (its listener polls).
  bool session_open(const std::string& scale_set_name) const;
  void send_ping();

  std::map<std::string, std::int64_t> call_counts() const;
  std::int64_t calls(const std::string& endpoint) const;
  void reset_counts();
  std::int64_t deliveries_sent() const;
  std::vector<delivery_record> dropped_deliveries() const;  // lost by delivery_fault::drop
  std::string job_state(std::int64_t job_id) const;         // queued/assigned/running/completed or ""
  // How often the job went back to its scale set after an assignment no
  // runner took (options.assignment_timeout); -1: no such job.
  int job_requeues(std::int64_t job_id) const;
  std::vector<std::string> runner_names() const;  // every registered runner's
  std::string state_json() const;

  // Blocks until `pred` holds (checked after every call and state change) or the deadline passes.
  bool wait_until(const std::function<bool(const simulator&)>& pred, std::chrono::milliseconds timeout) const;

  struct impl;

 private:
  simulator() = default;
  std::unique_ptr<impl> impl_;
};

}  // namespace octorun::sim
