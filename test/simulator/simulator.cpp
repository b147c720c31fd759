// The simulator's core: lifecycle, routing, faults, counters and the C++
// scripting interface (simulator.hpp). Jobs move in sim_jobs.cpp, webhooks go
// out from sim_webhooks.cpp; the REST, Actions-service and control handlers
// live in sim_rest.cpp, sim_actions.cpp, sim_service.cpp and sim_control.cpp.
#include <algorithm>
#include <cctype>
#include <random>
#include <utility>

#include "model/runner_version.hpp"
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
  im->latest_release_published_at = im->now() - options.latest_runner_release_age.count();
  im->pats.insert(options.pats.begin(), options.pats.end());
  auto srv = http::server::start(
      options.http,
      {{"/", {}, http::request_body::accepted, [im](const server_request& r) { return im->handle(r); }}});
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
  return std::chrono::duration_cast<std::chrono::seconds>(wall_now().time_since_epoch()).count();
}

namespace {
std::mt19937_64& rng() {
  static thread_local std::mt19937_64 r{std::random_device{}()};
  return r;
}

std::string hex(std::uint64_t v, int digits) {
  static const char* d = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = d[v & 0xf];
  return out;
}

// GitHub's request ids look like "C2A4:1B2E:34F5A6:3B2C1D:6577A1B2".
std::string request_id() {
  auto r = rng()();
  std::string out;
  for (int digits : {4, 4, 6, 6, 8}) {
    out += (out.empty() ? "" : ":") + hex(r, digits);
    r = rng()();
  }
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string simulator::impl::new_uuid() {
  std::uint64_t hi = rng()(), lo = rng()();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;                         // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  auto h = hex(hi, 16), l = hex(lo, 16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + l.substr(0, 4) + "-" +
         l.substr(4, 12);
}

std::string simulator::impl::new_token(const char* prefix) const {
  static const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out = prefix;
  for (int i = 0; i < 36; ++i) out.push_back(chars[rng()() % 62]);
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
  if (f.after_handling) {
    lost_answer = fault_answer(f, service_style);
    return std::nullopt;
  }
  return fault_answer(f, service_style);
}

server_response simulator::impl::fault_answer(const fault& f, bool service_style) {
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

// Every answer of the Actions service (and its message queue) carries an
// ActivityId, every REST answer an X-GitHub-Request-Id, as GitHub's do; the
// clients quote them in their errors.
server_response simulator::impl::handle(const server_request& r) {
  auto seg = split_path(r.path);
  lock_type lock(mu);
  if (!seg.empty() && seg[0] == "_sim") return stopping ? rest_error(503, "shutting down") : control(r, seg);
  const bool actions_service = !seg.empty() && (seg[0] == "tenant" || seg[0] == "queue");
  server_response out;
  if (stopping)
    out = rest_error(503, "shutting down");
  else if (!seg.empty() && seg[0] == "tenant")
    out = service(r, seg, lock);
  else if (!seg.empty() && seg[0] == "queue")
    out = queue(r, seg, lock);
  else {
    if (seg.size() >= 2 && seg[0] == "api" && seg[1] == "v3") seg.erase(seg.begin(), seg.begin() + 2);
    out = rest(r, seg, lock);
  }
  if (lost_answer) out = *std::exchange(lost_answer, std::nullopt);
  if (actions_service)
    out.headers.emplace_back("ActivityId", new_uuid());
  else
    out.headers.emplace_back("X-GitHub-Request-Id", request_id());
  return out;
}

// ---- runner lookups ----

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
void simulator::add_app(const github_app& app) {
  std::lock_guard l(impl_->mu);
  impl_->apps[app.id] = app;
}
void simulator::add_app_installation(std::int64_t app_id, std::int64_t id, const std::string& account,
                                     std::vector<std::string> repositories) {
  std::lock_guard l(impl_->mu);
  impl_->installations[id] = {app_id, account, std::move(repositories)};
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
connect_answer simulator::connect_runner(const std::string& name, const std::string& version) {
  std::lock_guard l(impl_->mu);
  auto* r = impl_->runner_named(name);
  if (r == nullptr) return connect_answer::unknown;
  const auto minimum = model::parse_runner_version(impl_->options.minimum_runner_version);
  const auto reported = model::parse_runner_version(version);
  if (minimum && (!reported || *reported < *minimum)) {
    impl_->count("runner.deprecated");
    return connect_answer::deprecated;
  }
  r->online = true;
  impl_->dispatch();
  impl_->changed();
  return connect_answer::online;
}
std::string simulator::deprecation_message(const std::string& version) {
  return "An error occurred: Runner version v" + version +
         " is deprecated and cannot receive messages.\nRunner listener exit with terminated error, stop the "
         "service, no retry needed.\nExiting runner...\n";
}
void simulator::set_minimum_runner_version(const std::string& version) {
  std::lock_guard l(impl_->mu);
  impl_->options.minimum_runner_version = version;
}
void simulator::set_latest_runner_release(const std::string& tag, std::int64_t published_at) {
  std::lock_guard l(impl_->mu);
  impl_->options.latest_runner_release = tag;
  impl_->latest_release_published_at = published_at;
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
bool simulator::cancel_job(std::int64_t job_id) {
  std::lock_guard l(impl_->mu);
  auto it = impl_->jobs.find(job_id);
  if (it == impl_->jobs.end() || it->second.state == "completed") return false;
  impl_->cancel(it->second);
  return true;
}
bool simulator::lose_runner(const std::string& name) {
  std::lock_guard l(impl_->mu);
  auto* r = impl_->runner_named(name);
  if (r == nullptr) return false;
  impl_->lose(*r);
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
  impl_->expire_all(false);
}
void simulator::expire_admin_tokens() {
  std::lock_guard l(impl_->mu);
  impl_->expire_all(true);
}
std::int64_t simulator::add_runner_group(const std::string& scope_key, const std::string& name) {
  std::lock_guard l(impl_->mu);
  return impl_->add_runner_group(scope_key, name);
}
void simulator::advance_clock(std::chrono::milliseconds by) {
  std::lock_guard l(impl_->mu);
  impl_->advance(by);
}
bool simulator::drop_session(std::int64_t scale_set_id) {
  std::lock_guard l(impl_->mu);
  if (impl_->sessions.erase(scale_set_id) == 0) return false;
  impl_->queue_cv.notify_all();
  impl_->changed();
  return true;
}

bool simulator::session_open(const std::string& scale_set_name) const {
  for (const auto& s : scale_sets())
    if (s.name == scale_set_name && !s.session_id.empty()) return true;
  return false;
}

std::vector<simulator::scale_set_info> simulator::scale_sets() const {
  std::lock_guard l(impl_->mu);
  std::vector<scale_set_info> out;
  for (const auto& [id, s] : impl_->scale_sets) {
    scale_set_info info;
    info.id = id;
    info.name = s.name;
    info.labels = s.labels;
    if (const auto* t = impl_->tenant_by_id(s.tenant_id)) info.scope = t->scope_key;
    info.runner_group_id = s.group_id;
    info.max_capacity = s.max_capacity.value_or(-1);
    if (auto it = impl_->sessions.find(id); it != impl_->sessions.end()) {
      info.session_id = it->second.id;
      info.session_owner = it->second.owner;
    }
    out.push_back(std::move(info));
  }
  return out;
}

void simulator::impl::expire_all(bool admin) {
  for (auto& [t, exp] : installation_tokens) exp = 0;
  if (admin)
    for (auto& [t, token] : admin_tokens) token.expires = 0;
  for (auto& [id, s] : sessions) s.token = new_token("expired-");
  queue_cv.notify_all();
}
void simulator::send_ping() {
  std::lock_guard l(impl_->mu);
  if (impl_->options.webhook_url.empty()) return;
  impl_->enqueue_delivery(
      {"ping", impl_->new_uuid(),
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
std::vector<delivery_record> simulator::dropped_deliveries() const {
  std::lock_guard l(impl_->delivery_mu);
  std::vector<delivery_record> out;
  for (const auto& d : impl_->dropped) out.push_back({d.event, d.id, d.body});
  return out;
}
std::string simulator::job_state(std::int64_t job_id) const {
  std::lock_guard l(impl_->mu);
  auto it = impl_->jobs.find(job_id);
  return it == impl_->jobs.end() ? std::string{} : it->second.state;
}

int simulator::job_requeues(std::int64_t job_id) const {
  std::lock_guard l(impl_->mu);
  auto it = impl_->jobs.find(job_id);
  return it == impl_->jobs.end() ? -1 : it->second.requeues;
}

std::vector<std::string> simulator::runner_names() const {
  std::lock_guard l(impl_->mu);
  std::vector<std::string> out;
  for (const auto& [id, r] : impl_->runners) out.push_back(r.name);
  return out;
}

std::string simulator::state_json() const {
  std::lock_guard l(impl_->mu);
  return impl_->state_locked();
}

namespace {
// Wall-clock milliseconds of a job's event for /_sim/state (0: not yet), so
// load tests line it up with their own watches.
std::string unix_ms(std::optional<wall_clock::time_point> t) {
  return t ? std::to_string(
                 std::chrono::duration_cast<std::chrono::milliseconds>(t->time_since_epoch()).count())
           : std::string("0");
}
}  // namespace

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
           ",\"requeues\":" + std::to_string(j.requeues) + ",\"queued_at_ms\":" + unix_ms(j.queued_at) +
           ",\"started_at_ms\":" + unix_ms(j.runner_assigned_at) +
           ",\"completed_at_ms\":" + unix_ms(j.finished_at) + "}";
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

}  // namespace octorun::sim
