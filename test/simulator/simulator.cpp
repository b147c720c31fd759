// The simulator's core: lifecycle, scripting, jobs, faults, counters, webhook
// deliveries and the control API. REST and scale-set handlers live in
// sim_rest.cpp and sim_service.cpp.
#include <algorithm>
#include <cctype>
#include <random>

#include "adapters/common/rfc3339.hpp"
#include "adapters/github/crypto.hpp"
#include "test/simulator/simulator_impl.hpp"

namespace octorun::sim {

namespace json = octorun::json;

server_response json_response(int status, std::string body) {
  server_response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

server_response rest_error(int status, const std::string& message) {
  return json_response(status, "{\"message\":" + json::quote(message) +
                                   ",\"documentation_url\":\"https://docs.github.com/rest\",\"status\":\"" +
                                   std::to_string(status) + "\"}");
}

server_response service_error(int status, const std::string& type_name, const std::string& message) {
  return json_response(status, "{\"typeName\":" + json::quote(type_name) +
                                   ",\"typeKey\":" + json::quote(type_name.substr(0, type_name.find(','))) +
                                   ",\"message\":" + json::quote(message) + "}");
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    if (i >= path.size()) break;
    auto j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    out.push_back(http::url_decode(path.substr(i, j - i)));
    i = j;
  }
  return out;
}

static std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Every self-hosted runner carries the default label "self-hosted", declared or not.
bool labels_match(const std::vector<std::string>& job, const std::vector<std::string>& runner) {
  return std::all_of(job.begin(), job.end(), [&](const std::string& l) {
    return lower(l) == "self-hosted" || std::any_of(runner.begin(), runner.end(), [&](const std::string& r) {
             return lower(r) == lower(l);
           });
  });
}

std::string strings_json(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + json::quote(v[i]);
  return out + "]";
}

// ---- lifecycle ----

expected<std::unique_ptr<simulator>, std::string> simulator::start(simulator_options options) {
  std::unique_ptr<simulator> s(new simulator());
  s->impl_ = std::make_unique<impl>();
  auto* im = s->impl_.get();
  im->options = options;
  im->pats.insert(options.pats.begin(), options.pats.end());
  auto srv =
      http::server::start(options.http, {{"/", {}, [im](const server_request& r) { return im->handle(r); }}});
  if (!srv) return unexpected{srv.error()};
  im->server = std::move(*srv);
  im->base = im->server->base_url();
  im->sender = std::thread([im] { im->run_sender(); });
  im->timer = std::thread([im] { im->run_timer(); });
  return s;
}

simulator::~simulator() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->queue_cv.notify_all();
  impl_->timer_cv.notify_all();
  {
    std::lock_guard lock(impl_->delivery_mu);
    impl_->sender_stop = true;
  }
  impl_->delivery_cv.notify_all();
  impl_->server.reset();
  if (impl_->sender.joinable()) impl_->sender.join();
  if (impl_->timer.joinable()) impl_->timer.join();
}

std::string simulator::base_url() const { return impl_->base; }
std::string simulator::ghes_url() const { return impl_->base; }
std::string simulator::api_url() const { return impl_->base + "/api/v3"; }
std::uint16_t simulator::port() const { return impl_->server->port(); }

void simulator::impl::changed() {
  {
    std::lock_guard lock(change_mu);
    ++version;
  }
  change_cv.notify_all();
}

bool simulator::wait_until(const std::function<bool(const simulator&)>& pred,
                           std::chrono::milliseconds timeout) const {
  auto deadline = clock_type::now() + timeout;
  for (;;) {
    std::uint64_t seen;
    {
      std::lock_guard lock(impl_->change_mu);
      seen = impl_->version;
    }
    if (pred(*this)) return true;
    std::unique_lock lock(impl_->change_mu);
    if (!impl_->change_cv.wait_until(lock, deadline, [&] { return impl_->version != seen; }))
      return pred(*this);
  }
}

// ---- helpers ----

std::int64_t simulator::impl::now() const {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t simulator::impl::unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string simulator::impl::new_token(const char* prefix) const {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out = prefix;
  for (int i = 0; i < 36; ++i) out.push_back(chars[rng() % 62]);
  return out;
}

bool simulator::impl::scope_known(const std::string& key) {
  if (scopes.count(key)) return true;
  if (options.auto_scopes) {
    scopes.insert(key);
    return true;
  }
  return false;
}

void simulator::impl::count(const std::string& endpoint) {
  ++counts[endpoint];
  changed();
}

std::optional<server_response> simulator::impl::enter(const std::string& endpoint, bool service_style,
                                                      lock_type& lock) {
  count(endpoint);
  auto it = std::find_if(faults.begin(), faults.end(),
                         [&](const fault& f) { return f.endpoint == "*" || f.endpoint == endpoint; });
  if (it == faults.end()) return std::nullopt;
  fault f = *it;
  if (it->count > 0 && --it->count == 0) faults.erase(it);
  if (f.latency.count() > 0) {
    lock.unlock();
    std::this_thread::sleep_for(f.latency);  // simulated slowness, not synchronisation
    lock.lock();
  }
  if (f.status == 0) return std::nullopt;
  std::string message = f.message;
  if (message.empty()) {
    if (f.status == 401)
      message = "Bad credentials";
    else if (f.status == 403 || f.status == 429)
      message =
          f.exhausted
              ? "API rate limit exceeded"
              : "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
    else if (f.status == 409)
      message = "Conflict";
    else if (f.status == 422)
      message = "Unprocessable Entity";
    else
      message = "Server Error";
  }
  server_response r;
  if (service_style) {
    std::string type = f.type_name;
    if (type.empty() && f.status == 409)
      type =
          "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException, "
          "GitHub.Actions.Runtime.WebApi";
    r = type.empty() ? rest_error(f.status, message) : service_error(f.status, type, message);
  } else {
    r = rest_error(f.status, message);
  }
  if (f.retry_after >= 0) r.headers.emplace_back("Retry-After", std::to_string(f.retry_after));
  if (f.exhausted) {
    r.headers.emplace_back("x-ratelimit-limit", std::to_string(options.rate_limit));
    r.headers.emplace_back("x-ratelimit-remaining", "0");
    r.headers.emplace_back("x-ratelimit-used", std::to_string(options.rate_limit));
    r.headers.emplace_back("x-ratelimit-reset", std::to_string(now() + f.reset_in));
    r.headers.emplace_back("x-ratelimit-resource", "core");
  }
  return r;
}

// ---- routing ----

server_response simulator::impl::handle(const server_request& r) {
  auto seg = split_path(r.path);
  lock_type lock(mu);
  if (stopping) return rest_error(503, "shutting down");
  if (!seg.empty() && seg[0] == "_sim") return control(r, seg, lock);
  if (!seg.empty() && seg[0] == "tenant") return service(r, seg, lock);
  if (!seg.empty() && seg[0] == "queue") return queue(r, seg, lock);
  if (seg.size() >= 2 && seg[0] == "api" && seg[1] == "v3") seg.erase(seg.begin(), seg.begin() + 2);
  return rest(r, seg, lock);
}

// ---- jobs ----

sim_runner* simulator::impl::runner_named(const std::string& name) {
  for (auto& [id, r] : runners)
    if (r.name == name) return &r;
  return nullptr;
}

sim_runner* simulator::impl::runner_by_name(const std::string& scope_key, std::int64_t scale_set_id,
                                            const std::string& name) {
  for (auto& [id, r] : runners)
    if (lower(r.name) == lower(name) && r.scope_key == scope_key &&
        (scale_set_id == 0) == (r.scale_set_id == 0))
      return &r;
  return nullptr;
}

std::string simulator::impl::statistics_json(std::int64_t ssid) const {
  std::int64_t available = 0, acquired = 0, assigned = 0, running = 0, registered = 0, busy = 0;
  for (const auto& [id, j] : jobs) {
    if (j.scale_set_id != ssid) continue;
    if (j.state == "queued") ++available;
    if (j.state == "assigned") ++acquired;
    if (j.state == "assigned" || j.state == "running") ++assigned;
    if (j.state == "running") ++running;
  }
  for (const auto& [id, r] : runners) {
    if (r.scale_set_id != ssid || ssid == 0) continue;
    ++registered;
    if (r.busy) ++busy;
  }
  return "{\"totalAvailableJobs\":" + std::to_string(available) +
         ",\"totalAcquiredJobs\":" + std::to_string(acquired) +
         ",\"totalAssignedJobs\":" + std::to_string(assigned) +
         ",\"totalRunningJobs\":" + std::to_string(running) +
         ",\"totalRegisteredRunners\":" + std::to_string(registered) +
         ",\"totalBusyRunners\":" + std::to_string(busy) +
         ",\"totalIdleRunners\":" + std::to_string(registered - busy) + "}";
}

std::string simulator::impl::job_message_json(const char* type, const sim_job& j) const {
  auto slash = j.spec.repository.find('/');
  std::string owner = j.spec.repository.substr(0, slash);
  std::string repo = slash == std::string::npos ? j.spec.repository : j.spec.repository.substr(slash + 1);
  std::string out =
      std::string("{\"messageType\":\"") + type + "\",\"runnerRequestId\":" + std::to_string(j.id) +
      ",\"repositoryName\":" + json::quote(repo) + ",\"ownerName\":" + json::quote(owner) +
      ",\"jobId\":\"job-" + std::to_string(j.id) + "\",\"jobWorkflowRef\":" +
      json::quote(j.spec.repository + "/.github/workflows/" + j.spec.workflow + "@refs/heads/main") +
      ",\"jobDisplayName\":" + json::quote(j.spec.name) +
      ",\"eventName\":\"push\",\"workflowRunId\":" + std::to_string(j.run_id) +
      ",\"requestLabels\":" + strings_json(j.spec.labels) + ",\"queueTime\":\"" + format_rfc3339(now()) +
      "\"";
  std::string t = type;
  if (t == "JobAvailable")
    out += ",\"acquireJobUrl\":" + json::quote(base + "/tenant/1/_apis/runtime/runnerscalesets/" +
                                               std::to_string(j.scale_set_id) + "/acquirejobs");
  if (t == "JobStarted" || t == "JobCompleted")
    out += ",\"runnerId\":" + std::to_string(j.runner_id) + ",\"runnerName\":" + json::quote(j.runner_name) +
           ",\"runnerAssignTime\":\"" + format_rfc3339(now()) + "\"";
  if (t == "JobCompleted")
    out += ",\"result\":" + json::quote(j.result) + ",\"finishTime\":\"" + format_rfc3339(now()) + "\"";
  return out + "}";
}

void simulator::impl::post_message(std::int64_t ssid, std::string job_json) {
  auto& q = queues[ssid];
  if (!q.empty() && !q.back().delivered && q.back().jobs.size() < 50) {
    q.back().jobs.push_back(std::move(job_json));
  } else {
    q.push_back(sim_message{next_message_id++, {std::move(job_json)}, false});
  }
  queue_cv.notify_all();
}

void simulator::impl::webhook_job(const char* action, const sim_job& j) {
  if (options.webhook_url.empty()) return;
  auto slash = j.spec.repository.find('/');
  std::string owner = j.spec.repository.substr(0, slash);
  std::string action_s = action;
  std::string status = action_s == "queued"        ? "queued"
                       : action_s == "in_progress" ? "in_progress"
                                                   : "completed";
  std::string conclusion = "null";
  if (action_s == "completed")
    conclusion = json::quote(j.result == "succeeded"  ? "success"
                             : j.result == "failed"   ? "failure"
                             : j.result == "canceled" ? "cancelled"
                                                      : j.result);
  bool has_runner = action_s != "queued";
  std::string body =
      "{\"action\":\"" + action_s + "\",\"workflow_job\":{\"id\":" + std::to_string(j.id) +
      ",\"run_id\":" + std::to_string(j.run_id) + ",\"run_attempt\":1,\"node_id\":\"WJ_" +
      std::to_string(j.id) +
      "\",\"head_sha\":\"0000000000000000000000000000000000000000\",\"head_branch\":\"main\",\"url\":" +
      json::quote(base + "/api/v3/repos/" + j.spec.repository + "/actions/jobs/" + std::to_string(j.id)) +
      ",\"html_url\":" +
      json::quote("https://github.com/" + j.spec.repository + "/actions/runs/" + std::to_string(j.run_id)) +
      ",\"status\":\"" + status + "\",\"conclusion\":" + conclusion + ",\"created_at\":\"" +
      format_rfc3339(now()) +
      "\",\"started_at\":" + (has_runner ? "\"" + format_rfc3339(now()) + "\"" : "null") +
      ",\"completed_at\":" + (action_s == "completed" ? "\"" + format_rfc3339(now()) + "\"" : "null") +
      ",\"name\":" + json::quote(j.spec.name) + ",\"steps\":[],\"labels\":" + strings_json(j.spec.labels) +
      ",\"runner_id\":" + (has_runner ? std::to_string(j.runner_id) : "null") +
      ",\"runner_name\":" + (has_runner ? json::quote(j.runner_name) : "null") +
      ",\"runner_group_id\":" + (has_runner ? "1" : "null") +
      ",\"runner_group_name\":" + (has_runner ? "\"Default\"" : "null") +
      ",\"workflow_name\":" + json::quote(j.spec.workflow) + "},\"repository\":{\"id\":1,\"name\":" +
      json::quote(slash == std::string::npos ? j.spec.repository : j.spec.repository.substr(slash + 1)) +
      ",\"full_name\":" + json::quote(j.spec.repository) + ",\"owner\":{\"login\":" + json::quote(owner) +
      "}},\"organization\":{\"login\":" + json::quote(owner) + "},\"sender\":{\"login\":\"octocat\"}}";
  enqueue_delivery({"workflow_job", new_token("d-"), std::move(body)});
}

std::int64_t simulator::impl::new_job(const job_spec& spec) {
  sim_job j;
  j.id = next_job_id++;
  j.run_id = j.id + 3'000'000'000;
  j.spec = spec;
  j.queued_at_ms = unix_ms();
  for (const auto& [id, s] : scale_sets) {
    if (labels_match(spec.labels, s.labels)) {
      j.scale_set_id = id;
      break;
    }
  }
  auto& stored = jobs[j.id] = j;
  if (stored.scale_set_id != 0) post_message(stored.scale_set_id, job_message_json("JobAvailable", stored));
  webhook_job("queued", stored);
  dispatch();
  changed();
  return stored.id;
}

void simulator::impl::start_job(sim_job& j, sim_runner& r) {
  j.state = "running";
  j.runner_name = r.name;
  j.runner_id = r.id;
  r.busy = true;
  r.job_id = j.id;
  j.started_at_ms = unix_ms();
  if (j.scale_set_id != 0) post_message(j.scale_set_id, job_message_json("JobStarted", j));
  webhook_job("in_progress", j);
  if (j.spec.duration.count() >= 0) {
    j.due = clock_type::now() + j.spec.duration;
    timer_cv.notify_all();
  }
}

void simulator::impl::finish_job(sim_job& j, const std::string& result) {
  j.state = "completed";
  j.result = result;
  j.due.reset();
  j.completed_at_ms = unix_ms();
  if (j.scale_set_id != 0) post_message(j.scale_set_id, job_message_json("JobCompleted", j));
  webhook_job("completed", j);
  runners.erase(j.runner_id);  // JIT runners are ephemeral: one job, then gone
  changed();
}

void simulator::impl::dispatch() {
  for (auto& [rid, r] : runners) {
    if (!r.online || r.busy) continue;
    for (auto& [jid, j] : jobs) {
      bool fits = false;
      if (r.scale_set_id != 0) {
        fits = j.scale_set_id == r.scale_set_id && j.state == "assigned";
      } else if (j.scale_set_id == 0 && j.state == "queued" && labels_match(j.spec.labels, r.labels)) {
        auto owner = j.spec.repository.substr(0, j.spec.repository.find('/'));
        fits = r.scope_key == "repos/" + j.spec.repository || r.scope_key == "orgs/" + owner ||
               r.scope_key.starts_with("enterprises/");
      }
      if (fits) {
        start_job(j, r);
        break;
      }
    }
  }
}

void simulator::impl::run_timer() {
  lock_type lock(mu);
  while (!stopping) {
    std::optional<clock_type::time_point> next;
    auto now_tp = clock_type::now();
    for (auto& [id, j] : jobs) {
      if (j.state != "running" || !j.due) continue;
      if (*j.due <= now_tp) {
        finish_job(j, j.spec.result);
        dispatch();
      } else if (!next || *j.due < *next) {
        next = j.due;
      }
    }
    if (next)
      timer_cv.wait_until(lock, *next);
    else
      timer_cv.wait(lock);
  }
}

// ---- webhook deliveries ----

void simulator::impl::enqueue_delivery(delivery d) {
  {
    std::lock_guard lock(delivery_mu);
    auto push = [&](delivery x) {
      if (delivery_faults.duplicate > 0) {
        --delivery_faults.duplicate;
        outbox.push_back(x);
      }
      outbox.push_back(std::move(x));
    };
    if (held) {
      push(std::move(d));
      push(std::move(*held));
      held.reset();
    } else if (delivery_faults.reorder > 0) {
      --delivery_faults.reorder;
      held = std::move(d);
    } else {
      push(std::move(d));
    }
  }
  delivery_cv.notify_all();
}

void simulator::impl::run_sender() {
  http::client client;
  for (;;) {
    delivery d;
    std::string url, secret;
    std::chrono::milliseconds delay{0};
    {
      std::unique_lock lock(delivery_mu);
      // Never takes mu here: handlers hold mu while they enqueue (lock order mu -> delivery_mu).
      delivery_cv.wait(lock, [&] { return sender_stop || !outbox.empty(); });
      if (sender_stop) return;
      d = std::move(outbox.front());
      outbox.pop_front();
      delay = delivery_faults.delay;
    }
    {
      std::lock_guard g(mu);
      if (stopping) return;
      url = options.webhook_url;
      secret = options.webhook_secret;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);  // simulated slow delivery
    http::request req;
    req.method = "POST";
    req.url = url;
    req.body = d.body;
    req.timeout = std::chrono::seconds(10);  // GitHub's delivery deadline
    req.headers = {{"Content-Type", "application/json"},
                   {"User-Agent", "GitHub-Hookshot/simulator"},
                   {"X-GitHub-Event", d.event},
                   {"X-GitHub-Delivery", d.id},
                   {"X-GitHub-Hook-ID", "1"},
                   {"X-GitHub-Hook-Installation-Target-Type", "repository"},
                   {"X-GitHub-Hook-Installation-Target-ID", "1"}};
    if (!secret.empty())
      req.headers.emplace_back("X-Hub-Signature-256", github::webhook_signature(secret, d.body));
    (void)client.perform(req);  // GitHub does not retry failed deliveries
    ++sent;
    std::lock_guard g(mu);
    count("webhook." + d.event);
  }
}

// ---- scripting ----

void simulator::add_repository(const std::string& full_name) {
  std::lock_guard l(impl_->mu);
  impl_->scopes.insert("repos/" + full_name);
}
void simulator::add_organization(const std::string& login) {
  std::lock_guard l(impl_->mu);
  impl_->scopes.insert("orgs/" + login);
}
void simulator::add_enterprise(const std::string& slug) {
  std::lock_guard l(impl_->mu);
  impl_->scopes.insert("enterprises/" + slug);
}
void simulator::add_pat(const std::string& token) {
  std::lock_guard l(impl_->mu);
  impl_->pats.insert(token);
}
void simulator::set_webhook(const std::string& url, const std::string& secret) {
  std::lock_guard l(impl_->mu);
  impl_->options.webhook_url = url;
  impl_->options.webhook_secret = secret;
}
std::int64_t simulator::add_job(const job_spec& spec) {
  std::lock_guard l(impl_->mu);
  return impl_->new_job(spec);
}
bool simulator::runner_online(const std::string& name) {
  std::lock_guard l(impl_->mu);
  auto* r = impl_->runner_named(name);
  if (r == nullptr) return false;
  r->online = true;
  impl_->dispatch();
  impl_->changed();
  return true;
}
bool simulator::set_runner_busy(const std::string& name, bool busy) {
  std::lock_guard l(impl_->mu);
  auto* r = impl_->runner_named(name);
  if (r == nullptr) return false;
  r->busy = busy;
  impl_->changed();
  return true;
}
bool simulator::complete_job(std::int64_t job_id, const std::string& result) {
  std::lock_guard l(impl_->mu);
  auto it = impl_->jobs.find(job_id);
  if (it == impl_->jobs.end() || it->second.state != "running") return false;
  impl_->finish_job(it->second, result);
  impl_->dispatch();
  return true;
}
void simulator::add_fault(const fault& f) {
  std::lock_guard l(impl_->mu);
  impl_->faults.push_back(f);
}
void simulator::set_delivery_fault(const delivery_fault& f) {
  std::lock_guard l(impl_->delivery_mu);
  impl_->delivery_faults = f;
}
void simulator::clear_faults() {
  {
    std::lock_guard l(impl_->mu);
    impl_->faults.clear();
  }
  std::lock_guard l(impl_->delivery_mu);
  impl_->delivery_faults = {};
}
void simulator::expire_tokens() {
  std::lock_guard l(impl_->mu);
  impl_->expire_all();
}
bool simulator::drop_session(std::int64_t scale_set_id) {
  std::lock_guard l(impl_->mu);
  if (impl_->sessions.erase(scale_set_id) == 0) return false;
  impl_->queue_cv.notify_all();
  impl_->changed();
  return true;
}

std::vector<simulator::scale_set_info> simulator::scale_sets() const {
  std::lock_guard l(impl_->mu);
  std::vector<scale_set_info> out;
  for (const auto& [id, s] : impl_->scale_sets) {
    scale_set_info info{id, s.name, s.labels, {}, {}};
    if (auto it = impl_->sessions.find(id); it != impl_->sessions.end()) {
      info.session_id = it->second.id;
      info.session_owner = it->second.owner;
    }
    out.push_back(std::move(info));
  }
  return out;
}

void simulator::impl::expire_all() {
  for (auto& [t, exp] : installation_tokens) exp = 0;
  for (auto& [id, s] : sessions) s.token = new_token("expired-");
  queue_cv.notify_all();
}
void simulator::send_ping() {
  std::lock_guard l(impl_->mu);
  if (impl_->options.webhook_url.empty()) return;
  impl_->enqueue_delivery(
      {"ping", impl_->new_token("d-"),
       R"({"zen":"Keep it logically awesome.","hook_id":1,"hook":{"type":"Repository","id":1,"active":true,"events":["workflow_job"]}})"});
}
std::map<std::string, std::int64_t> simulator::call_counts() const {
  std::lock_guard l(impl_->mu);
  return impl_->counts;
}
std::int64_t simulator::calls(const std::string& endpoint) const {
  std::lock_guard l(impl_->mu);
  auto it = impl_->counts.find(endpoint);
  return it == impl_->counts.end() ? 0 : it->second;
}
void simulator::reset_counts() {
  std::lock_guard l(impl_->mu);
  impl_->counts.clear();
}
std::int64_t simulator::deliveries_sent() const { return impl_->sent.load(); }
std::string simulator::job_state(std::int64_t job_id) const {
  std::lock_guard l(impl_->mu);
  auto it = impl_->jobs.find(job_id);
  return it == impl_->jobs.end() ? std::string{} : it->second.state;
}

std::string simulator::state_json() const {
  std::lock_guard l(impl_->mu);
  return impl_->state_locked();
}

std::string simulator::impl::state_locked() const {
  std::string out = "{\"runners\":[";
  bool first = true;
  for (const auto& [id, r] : runners) {
    out += (first ? "" : ",") + runner_json(r);
    first = false;
  }
  out += "],\"jobs\":[";
  first = true;
  for (const auto& [id, j] : jobs) {
    out += std::string(first ? "" : ",") + "{\"id\":" + std::to_string(id) + ",\"state\":\"" + j.state +
           "\",\"repository\":" + json::quote(j.spec.repository) +
           ",\"labels\":" + strings_json(j.spec.labels) +
           ",\"scale_set_id\":" + std::to_string(j.scale_set_id) +
           ",\"runner_name\":" + json::quote(j.runner_name) + ",\"result\":" + json::quote(j.result) +
           ",\"queued_at_ms\":" + std::to_string(j.queued_at_ms) +
           ",\"started_at_ms\":" + std::to_string(j.started_at_ms) +
           ",\"completed_at_ms\":" + std::to_string(j.completed_at_ms) + "}";
    first = false;
  }
  out += "],\"scale_sets\":[";
  first = true;
  for (const auto& [id, s] : scale_sets) {
    out += (first ? "" : ",") + scale_set_json(s);
    first = false;
  }
  out += "],\"sessions\":" + std::to_string(sessions.size()) +
         ",\"deliveries_sent\":" + std::to_string(sent.load()) + "}";
  return out;
}

// ---- control API ----

server_response simulator::impl::control(const server_request& r, const std::vector<std::string>& seg,
                                         lock_type& lock) {
  rapidjson::Document d;
  if (!r.body.empty()) {
    d.Parse(r.body.data(), r.body.size());
    if (d.HasParseError() || !d.IsObject()) return rest_error(400, "control body must be a JSON object");
  } else {
    d.SetObject();
  }
  (void)lock;
  const std::string what = seg.size() > 1 ? seg[1] : "";
  const bool post = r.method == "POST";
  auto ok = [] { return json_response(200, "{\"ok\":true}"); };
  if (what == "repos" && post) {
    auto name = json::str(d, "full_name");
    if (name.find('/') == std::string::npos) return rest_error(400, "full_name must be owner/repo");
    scopes.insert("repos/" + name);
    return ok();
  }
  if (what == "orgs" && post) {
    auto login = json::str(d, "login");
    if (login.empty()) return rest_error(400, "login required");
    scopes.insert("orgs/" + login);
    return ok();
  }
  if (what == "enterprises" && post) {
    auto slug = json::str(d, "slug");
    if (slug.empty()) return rest_error(400, "slug required");
    scopes.insert("enterprises/" + slug);
    return ok();
  }
  if (what == "pats" && post) {
    auto token = json::str(d, "token");
    if (token.empty()) return rest_error(400, "token required");
    pats.insert(token);
    return ok();
  }
  if (what == "webhook" && post) {
    options.webhook_url = json::str(d, "url");
    options.webhook_secret = json::str(d, "secret");
    return ok();
  }
  if (what == "jobs" && post && seg.size() == 2) {
    job_spec spec;
    spec.repository = json::str(d, "repository", spec.repository);
    auto labels = json::strings(d, "labels");
    if (!labels.empty()) spec.labels = labels;
    spec.duration = std::chrono::milliseconds(json::i64(d, "duration_ms", 0));
    spec.name = json::str(d, "name", spec.name);
    spec.workflow = json::str(d, "workflow", spec.workflow);
    spec.result = json::str(d, "result", spec.result);
    int n = static_cast<int>(std::clamp<std::int64_t>(json::i64(d, "count", 1), 1, 100000));
    std::string ids = "[";
    for (int i = 0; i < n; ++i) ids += (i ? "," : "") + std::to_string(new_job(spec));
    return json_response(
        201, "{\"ids\":" + ids + "],\"id\":" + ids.substr(1, ids.find_first_of(",]", 1) - 1) + "}");
  }
  if (what == "jobs" && post && seg.size() == 4 && seg[3] == "complete") {
    auto it = jobs.find(std::atoll(seg[2].c_str()));
    if (it == jobs.end() || it->second.state != "running") return rest_error(409, "job is not running");
    finish_job(it->second, json::str(d, "result", "succeeded"));
    dispatch();
    return ok();
  }
  if (what == "runners" && post && seg.size() == 4) {
    auto* rn = runner_named(seg[2]);
    if (rn == nullptr) return rest_error(404, "no runner named " + seg[2]);
    if (seg[3] == "online")
      rn->online = true;
    else if (seg[3] == "offline")
      rn->online = false;
    else if (seg[3] == "busy")
      rn->busy = true;
    else if (seg[3] == "idle")
      rn->busy = false;
    else
      return rest_error(404, "unknown runner action");
    dispatch();
    changed();
    return ok();
  }
  if (what == "faults" && post) {
    fault f;
    f.endpoint = json::str(d, "endpoint", "*");
    f.status = static_cast<int>(json::i64(d, "status", 500));
    f.count = static_cast<int>(json::i64(d, "count", 1));
    f.retry_after = json::i64(d, "retry_after", -1);
    f.exhausted = json::boolean(d, "exhausted");
    f.reset_in = json::i64(d, "reset_in", 60);
    f.latency = std::chrono::milliseconds(json::i64(d, "latency_ms", 0));
    f.type_name = json::str(d, "type_name");
    f.message = json::str(d, "message");
    faults.push_back(f);
    return ok();
  }
  if (what == "faults" && r.method == "DELETE") {
    faults.clear();
    std::lock_guard g(delivery_mu);
    delivery_faults = {};
    return ok();
  }
  if (what == "delivery-faults" && post) {
    std::lock_guard g(delivery_mu);
    delivery_faults.duplicate = static_cast<int>(json::i64(d, "duplicate", 0));
    delivery_faults.reorder = static_cast<int>(json::i64(d, "reorder", 0));
    delivery_faults.delay = std::chrono::milliseconds(json::i64(d, "delay_ms", 0));
    return ok();
  }
  if (what == "expire-tokens" && post) {
    expire_all();
    return ok();
  }
  if (what == "ping" && post) {
    if (!options.webhook_url.empty())
      enqueue_delivery(
          {"ping", new_token("d-"), R"({"zen":"Keep it logically awesome.","hook_id":1,"hook":{"id":1}})"});
    return ok();
  }
  if (what == "calls" && r.method == "GET") {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : counts) {
      out += (first ? "" : ",") + json::quote(k) + ":" + std::to_string(v);
      first = false;
    }
    return json_response(200, out + "}");
  }
  if (what == "calls" && r.method == "DELETE") {
    counts.clear();
    return ok();
  }
  if (what == "state" && r.method == "GET") {
    return json_response(200, state_locked());
  }
  return rest_error(404, "unknown control endpoint");
}

}  // namespace octorun::sim
