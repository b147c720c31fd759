#include "adapters/github/scaleset_client.hpp"

#include <algorithm>

#include "adapters/github/crypto.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "common/rfc3339.hpp"
#include "common/strings.hpp"

namespace octorun::github {
namespace {

constexpr const char* api_version = "api-version=6.0-preview";

std::string join_url(const std::string& base, std::string_view path) {
  std::string out = base;
  if (!out.empty() && out.back() != '/') out.push_back('/');
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  out += path;
  out += (out.find('?') == std::string::npos ? "?" : "&");
  return out + api_version;
}

runner_reference parse_runner_reference(const rapidjson::Value& v) {
  return {json::i64(v, "id"), json::str(v, "name"), json::i64(v, "runnerScaleSetId"), {}};
}

messages::job_info parse_job_info(const rapidjson::Value& v, std::int64_t scale_set_id) {
  messages::job_info j;
  j.source = messages::job_source::listener;
  j.job_id = json::i64(v, "runnerRequestId");
  j.github_job_id = json::str(v, "jobId");
  j.scale_set_id = scale_set_id;
  auto owner = json::str(v, "ownerName");
  auto repo = json::str(v, "repositoryName");
  j.repository = owner.empty() ? repo : owner + "/" + repo;
  j.workflow_ref = json::str(v, "jobWorkflowRef");
  j.run_id = json::i64(v, "workflowRunId");
  j.labels = json::strings(v, "requestLabels");
  j.display_name = json::str(v, "jobDisplayName");
  j.queued_at = parse_rfc3339(json::str(v, "queueTime")).value_or(0);
  j.started_at = parse_rfc3339(json::str(v, "runnerAssignTime")).value_or(0);
  j.completed_at = parse_rfc3339(json::str(v, "finishTime")).value_or(0);
  return j;
}

// {"count":n,"value":[x]}: nothing for 0, the one element for 1, an error for more.
template <class T, class Parse>
result<std::optional<T>> at_most_one(const rapidjson::Document& d, const std::string& what, Parse parse) {
  const auto* v = json::member(d, "value");
  auto count = json::i64(d, "count");
  if (count == 0) return std::optional<T>{};
  if (count > 1 || v == nullptr || !v->IsArray() || v->GetArray().Size() != 1)
    return unexpected{error{error_kind::bad_response, 200, "expected at most one " + what}};
  return std::optional<T>(parse(v->GetArray()[0]));
}

}  // namespace

messages::job_statistics parse_statistics(const rapidjson::Value& v) {
  messages::job_statistics s;
  s.total_available_jobs = json::i64(v, "totalAvailableJobs");
  s.total_acquired_jobs = json::i64(v, "totalAcquiredJobs");
  s.total_assigned_jobs = json::i64(v, "totalAssignedJobs");
  s.total_running_jobs = json::i64(v, "totalRunningJobs");
  s.total_registered_runners = json::i64(v, "totalRegisteredRunners");
  s.total_busy_runners = json::i64(v, "totalBusyRunners");
  s.total_idle_runners = json::i64(v, "totalIdleRunners");
  return s;
}

scale_set parse_scale_set(const rapidjson::Value& v) {
  scale_set s;
  s.id = json::i64(v, "id");
  s.name = json::str(v, "name");
  s.runner_group_id = json::i64(v, "runnerGroupId");
  s.runner_group_name = json::str(v, "runnerGroupName");
  s.labels = json::strings(v, "labels", "name");
  const auto* setting = json::member(v, "runnerSetting");
  if (setting == nullptr) setting = json::member(v, "RunnerSetting");
  s.disable_update = setting != nullptr && json::boolean(*setting, "disableUpdate");
  if (const auto* st = json::member(v, "statistics")) s.statistics = parse_statistics(*st);
  s.statistics.scale_set_id = s.id;
  return s;
}

namespace {

// A session id as the service makes them (a UUID): it goes into request
// paths (refresh, delete) and into the RunnerSet's status (at most 64
// characters in the CRD), so anything else from a server, or from a status
// someone edited, is refused rather than sent or written.
bool well_formed_session_id(std::string_view id) {
  return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

}  // namespace

expected<scaleset_session, std::string> parse_session(std::string_view body) {
  auto parsed = json::parse(body, json::sources::actions_service_response);
  if (!parsed) return unexpected{"session: " + parsed.error()};
  const auto& d = *parsed;
  if (!d.IsObject()) return unexpected{std::string("session is not a JSON object")};
  scaleset_session s;
  s.session_id = json::str(d, "sessionId");
  s.owner_name = json::str(d, "ownerName");
  s.message_queue_url = json::str(d, "messageQueueUrl");
  s.message_queue_token = json::str(d, "messageQueueAccessToken");
  if (const auto* ss = json::member(d, "runnerScaleSet")) s.scale_set_id = json::i64(*ss, "id");
  const auto* st = json::member(d, "statistics");
  if (s.session_id.empty() || s.session_id == "00000000-0000-0000-0000-000000000000" ||
      s.message_queue_url.empty() || s.message_queue_token.empty() || st == nullptr || !st->IsObject())
    return unexpected{
        std::string("session lacks sessionId, messageQueueUrl, messageQueueAccessToken or statistics")};
  if (!well_formed_session_id(s.session_id))
    return unexpected{std::string("session's sessionId is not an id (letters, digits and '-', at most 64)")};
  s.statistics = parse_statistics(*st);
  s.statistics.scale_set_id = s.scale_set_id;
  return s;
}

expected<queue_message, std::string> parse_queue_message(std::string_view body, std::int64_t scale_set_id) {
  auto parsed = json::parse(body, json::sources::actions_service_response);
  if (!parsed) return unexpected{"message: " + parsed.error()};
  const auto& d = *parsed;
  if (!d.IsObject()) return unexpected{std::string("message is not a JSON object")};
  queue_message m;
  m.message_id = json::i64(d, "messageId");
  // Without an id it cannot be acknowledged: the session fails, as on any bad response.
  if (m.message_id == 0) return unexpected{std::string("message has no messageId")};
  if (const auto type = json::str(d, "messageType"); type != "RunnerScaleSetJobMessages") {
    m.skipped.push_back({"unknown_message_type", "message " + std::to_string(m.message_id) +
                                                     " has the unknown messageType '" +
                                                     printable_excerpt(type, 64) + "'"});
    return m;
  }
  if (const auto* st = json::member(d, "statistics"); st != nullptr && st->IsObject()) {
    m.statistics = parse_statistics(*st);
    m.statistics->scale_set_id = scale_set_id;
  }
  std::string inner = json::str(d, "body");
  if (inner.empty()) return m;
  auto jobs = json::parse(inner, json::sources::actions_service_response);
  if (!jobs || !jobs->IsArray()) {
    m.skipped.push_back(
        {"malformed_message", "message " + std::to_string(m.message_id) + ": its body " +
                                  (jobs ? std::string("is not a JSON array") : jobs.error())});
    return m;
  }
  for (const auto& j : jobs->GetArray()) {
    if (!j.IsObject()) {
      m.skipped.push_back({"malformed_message", "message " + std::to_string(m.message_id) +
                                                    ": a job message that is not a JSON object"});
      continue;
    }
    auto type = json::str(j, "messageType");
    if (type != "JobAvailable" && type != "JobAssigned" && type != "JobStarted" && type != "JobCompleted") {
      m.skipped.push_back({"unknown_message_type", "message " + std::to_string(m.message_id) +
                                                       " has a job message of the unknown type '" +
                                                       printable_excerpt(type, 64) + "'"});
      continue;
    }
    auto info = parse_job_info(j, scale_set_id);
    if (info.job_id == 0) {
      m.skipped.push_back({"malformed_message", "message " + std::to_string(m.message_id) + ": a " + type +
                                                    " without a runnerRequestId"});
      continue;
    }
    if (type == "JobAvailable")
      m.jobs.emplace_back(messages::job_available{std::move(info)});
    else if (type == "JobAssigned")
      m.jobs.emplace_back(messages::job_assigned{std::move(info)});
    else if (type == "JobStarted")
      m.jobs.emplace_back(
          messages::job_started{std::move(info), json::str(j, "runnerName"), json::i64(j, "runnerId")});
    else
      m.jobs.emplace_back(messages::job_completed{std::move(info), json::str(j, "runnerName"),
                                                  json::i64(j, "runnerId"), json::str(j, "result")});
  }
  return m;
}

result<actions_registration> parse_registration(const http::response& r, const server_url_policy& urls) {
  auto d = json_object(r);
  if (!d) return unexpected{d.error()};
  actions_registration out{json::str(*d, "url"), json::str(*d, "token"), 0};
  if (out.tenant_url.empty() || out.token.empty())
    return unexpected{error{error_kind::bad_response, r.status, "runner-registration lacks url/token"}};
  if (auto trusted = check_server_url(out.tenant_url, urls, "the Actions service URL"); !trusted)
    return unexpected{error{error_kind::bad_response, r.status, trusted.error()}};
  auto claims = peek_jwt_claims(out.token);
  if (!claims) return unexpected{error{error_kind::bad_response, r.status, "admin token: " + claims.error()}};
  out.expires_at = claims->exp;
  return out;
}

std::string scale_set_json(const scale_set& s, bool for_update) {
  json::writer w;
  w.open().optional("name", s.name);
  if (s.runner_group_id != 0) w.field("runnerGroupId", s.runner_group_id);
  auto labels = s.labels;
  if (labels.empty() && !for_update && !s.name.empty()) labels.push_back(s.name);
  if (!labels.empty()) {
    w.open_array("labels");
    for (const auto& label : labels) w.open().field("type", "System").field("name", label).close();
    w.close_array();
  }
  w.open("RunnerSetting");
  if (s.disable_update && !for_update) w.field("disableUpdate", true);
  return w.close().field("createdOn", "0001-01-01T00:00:00Z").close().str();
}

expected<std::unique_ptr<scaleset_client>, std::string> scaleset_client::make(scaleset_options options) {
  if (options.where) {
    auto target = target_for(*options.where);
    return std::unique_ptr<scaleset_client>(new scaleset_client(std::move(options), std::move(target)));
  }
  auto target = parse_config_url(options.config_url);
  if (!target) return unexpected{target.error()};
  return std::unique_ptr<scaleset_client>(new scaleset_client(std::move(options), std::move(*target)));
}

scaleset_client::scaleset_client(scaleset_options options, github_target target)
    : options_(std::move(options)),
      target_(std::move(target)),
      urls_(server_url_policy_for(target_)),
      rest_(rest_options{target_.api_base, target_.where, options_.auth, options_.call}) {}

result<rapidjson::Document> scaleset_client::answer(const result<http::response>& r, long success) const {
  if (!r) return unexpected{r.error()};
  if (r->status != success) return unexpected{fail(*r)};
  return json_object(*r);
}

error scaleset_client::fail(const http::response& r) const {
  return error_from_response(r, rest_.caller().now(), options_.call.retry);
}

result<ok_t> scaleset_client::ensure_admin() {
  const auto now = rest_.caller().now();
  if (!tenant_url_.empty() && now + 60 < admin_expires_) return ok;
  auto reg = rest_.registration_token();
  if (!reg) return unexpected{reg.error()};
  http::request req;
  req.method = "POST";
  req.url = target_.api_base + "/actions/runner-registration";
  req.headers = {{"Authorization", "RemoteAuth " + reg->token}, {"Content-Type", "application/json"}};
  req.body =
      json::writer().open().field("url", target_.config_url).field("runner_event", "register").close().str() +
      "\n";
  auto r = rest_.caller().perform(req);
  if (!r) return unexpected{r.error()};
  if (r->status < 200 || r->status >= 300) return unexpected{fail(*r)};
  auto admin = parse_registration(*r, urls_);
  if (!admin) return unexpected{admin.error()};
  tenant_url_ = std::move(admin->tenant_url);
  admin_token_ = std::move(admin->token);
  admin_expires_ = admin->expires_at;
  return ok;
}

result<http::response> scaleset_client::service(std::string method, std::string path, std::string body,
                                                bool queue_token) {
  // The admin token is renewed ahead of its exp; one the service refuses
  // before that (401: revoked, or clocks apart) is renewed once, at once,
  // and the request sent again to the tenant URL that came with it.
  for (bool renewed = false;; renewed = true) {
    if (renewed) admin_expires_ = 0;  // refused: register again now
    auto admin = ensure_admin();
    if (!admin) return unexpected{admin.error()};
    http::request req;
    req.method = method;
    req.url = join_url(tenant_url_, path);
    req.headers = {{"Content-Type", "application/json"}};
    req.body = body;
    if (queue_token) return queue_call(std::move(req));
    req.headers.emplace_back("Authorization", "Bearer " + admin_token_);
    auto r = rest_.caller().perform(std::move(req));
    if (!r || r->status != 401 || renewed) return r;
  }
}

result<http::response> scaleset_client::queue_call(http::request req) {
  if (!session_) return unexpected{error{error_kind::rejected, 0, "no message session"}};
  return rest_.caller().perform(std::move(req), [this](bool refresh) -> result<std::string> {
    if (refresh) {
      auto s = refresh_session();
      if (!s) return unexpected{s.error()};
    }
    return "Bearer " + session_->message_queue_token;
  });
}

result<runner_group> scaleset_client::runner_group_by_name(const std::string& name) {
  auto r = service("GET", "_apis/runtime/runnergroups/?groupName=" + http::url_encode(name));
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  const auto* v = json::member(*d, "value");
  auto count = json::i64(*d, "count");
  if (count != 1 || v == nullptr || !v->IsArray() || v->GetArray().Size() != 1)
    return unexpected{error{count == 0 ? error_kind::not_found : error_kind::bad_response, r->status,
                            "expected one runner group named " + name + ", got " + std::to_string(count)}};
  const auto& g = v->GetArray()[0];
  return runner_group{json::i64(g, "id"), json::str(g, "name"), json::boolean(g, "isDefaultGroup")};
}

result<std::optional<scale_set>> scaleset_client::scale_set_by_name(std::int64_t runner_group_id,
                                                                    const std::string& name) {
  auto r = service("GET", "_apis/runtime/runnerscalesets?runnerGroupId=" + std::to_string(runner_group_id) +
                              "&name=" + http::url_encode(name));
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  return at_most_one<scale_set>(*d, "scale set named " + name, parse_scale_set);
}

result<scale_set> scaleset_client::scale_set_answer(const result<http::response>& r) const {
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  auto s = parse_scale_set(*d);
  if (s.id == 0) return unexpected{error{error_kind::bad_response, 200, "scale set without id"}};
  return s;
}

result<scale_set> scaleset_client::get_scale_set(std::int64_t id) {
  return scale_set_answer(service("GET", "_apis/runtime/runnerscalesets/" + std::to_string(id)));
}

result<scale_set> scaleset_client::create_scale_set(const scale_set& s) {
  if (s.name.empty()) return unexpected{error{error_kind::rejected, 0, "a scale set needs a name"}};
  return scale_set_answer(service("POST", "_apis/runtime/runnerscalesets", scale_set_json(s, false)));
}

result<scale_set> scaleset_client::update_scale_set(std::int64_t id, const scale_set& changes) {
  return scale_set_answer(
      service("PATCH", "_apis/runtime/runnerscalesets/" + std::to_string(id), scale_set_json(changes, true)));
}

result<ok_t> scaleset_client::delete_scale_set(std::int64_t id) {
  auto r = service("DELETE", "_apis/runtime/runnerscalesets/" + std::to_string(id));
  if (!r) return unexpected{r.error()};
  if (r->status != 204) return unexpected{fail(*r)};
  return ok;
}

result<scaleset_session> scaleset_client::create_session(std::int64_t scale_set_id,
                                                         const std::string& owner_name) {
  auto r = service("POST", "_apis/runtime/runnerscalesets/" + std::to_string(scale_set_id) + "/sessions",
                   json::writer()
                       .open()
                       .field("sessionId", "00000000-0000-0000-0000-000000000000")
                       .field("ownerName", owner_name)
                       .close()
                       .str());
  if (!r) return unexpected{r.error()};
  if (r->status != 200) return unexpected{fail(*r)};
  return session_answer(*r, scale_set_id);
}

result<scaleset_session> scaleset_client::take_over_session(std::int64_t scale_set_id,
                                                            const std::string& owner_name,
                                                            const std::string& previous_session_id) {
  auto created = create_session(scale_set_id, owner_name);
  if (created || created.error().kind != error_kind::conflict || !well_formed_session_id(previous_session_id))
    return created;
  auto r = service("DELETE", "_apis/runtime/runnerscalesets/" + std::to_string(scale_set_id) + "/sessions/" +
                                 previous_session_id);
  if (!r) return unexpected{r.error()};
  // 404: the previous session is gone already, so another owner holds the
  // conflicting one; the conflict stands.
  if (r->status == 404) return created;
  if (r->status != 204) return unexpected{fail(*r)};
  return create_session(scale_set_id, owner_name);
}

result<scaleset_session> scaleset_client::session_answer(const http::response& r, std::int64_t scale_set_id) {
  auto s = parse_session(r.body);
  if (!s) return unexpected{error{error_kind::bad_response, r.status, s.error()}};
  if (auto trusted = check_server_url(s->message_queue_url, urls_, "the message queue URL"); !trusted)
    return unexpected{error{error_kind::bad_response, r.status, trusted.error()}};
  if (s->scale_set_id == 0) s->scale_set_id = s->statistics.scale_set_id = scale_set_id;
  session_ = *s;
  return *s;
}

result<scaleset_session> scaleset_client::refresh_session() {
  if (!session_) return unexpected{error{error_kind::rejected, 0, "no message session"}};
  auto r = service("PATCH", "_apis/runtime/runnerscalesets/" + std::to_string(session_->scale_set_id) +
                                "/sessions/" + session_->session_id);
  if (!r) return unexpected{r.error()};
  if (r->status != 200) return unexpected{fail(*r)};
  return session_answer(*r, session_->scale_set_id);
}

result<ok_t> scaleset_client::delete_session() {
  if (!session_) return ok;
  auto r = service("DELETE", "_apis/runtime/runnerscalesets/" + std::to_string(session_->scale_set_id) +
                                 "/sessions/" + session_->session_id);
  if (!r) return unexpected{r.error()};
  if (r->status != 204 && r->status != 404) return unexpected{fail(*r)};
  session_.reset();
  return ok;
}

result<std::optional<queue_message>> scaleset_client::get_message(std::int64_t last_message_id,
                                                                  int max_capacity) {
  if (!session_) return unexpected{error{error_kind::rejected, 0, "no message session"}};
  http::request req;
  req.url = session_->message_queue_url;
  if (last_message_id > 0)
    req.url += (req.url.find('?') == std::string::npos ? "?" : "&") + std::string("lastMessageId=") +
               std::to_string(last_message_id);
  req.headers = {{"Accept", "application/json; api-version=6.0-preview"},
                 {"X-ScaleSetMaxCapacity", std::to_string(std::max(0, max_capacity))}};
  req.timeout = options_.long_poll + std::chrono::seconds(30);
  if (options_.stop_polling && options_.stop_polling->load())
    return unexpected{error{error_kind::transport, 0, "cancelled: the listener is stopping"}};
  rest_.caller().set_cancel_flag(options_.stop_polling.get());
  auto r = queue_call(std::move(req));
  rest_.caller().set_cancel_flag(nullptr);
  if (!r) return unexpected{r.error()};
  if (r->status == 202) return std::optional<queue_message>{};
  if (r->status != 200) return unexpected{fail(*r)};
  auto m = parse_queue_message(r->body, session_->scale_set_id);
  if (!m) return unexpected{error{error_kind::bad_response, 200, m.error()}};
  return std::optional<queue_message>(std::move(*m));
}

result<ok_t> scaleset_client::delete_message(std::int64_t message_id) {
  if (!session_) return unexpected{error{error_kind::rejected, 0, "no message session"}};
  http::request req;
  req.method = "DELETE";
  std::string url = session_->message_queue_url;
  auto q = url.find('?');
  std::string query = q == std::string::npos ? "" : url.substr(q);
  url = url.substr(0, q);
  req.url = url + (url.ends_with("/") ? "" : "/") + std::to_string(message_id) + query;
  req.headers = {{"Content-Type", "application/json"}};
  auto r = queue_call(std::move(req));
  if (!r) return unexpected{r.error()};
  if (r->status != 204) return unexpected{fail(*r)};
  return ok;
}

result<std::vector<std::int64_t>> scaleset_client::acquire_jobs(
    std::int64_t scale_set_id, const std::vector<std::int64_t>& request_ids) {
  std::string body = "[";
  for (size_t i = 0; i < request_ids.size(); ++i) body += (i ? "," : "") + std::to_string(request_ids[i]);
  auto r = service("POST", "_apis/runtime/runnerscalesets/" + std::to_string(scale_set_id) + "/acquirejobs",
                   body + "]", true);
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  std::vector<std::int64_t> out;
  if (const auto* v = json::member(*d, "value"); v != nullptr && v->IsArray())
    for (const auto& id : v->GetArray())
      if (id.IsInt64()) out.push_back(id.GetInt64());
  return out;
}

result<scaleset_jit> scaleset_client::generate_jit_config(std::int64_t scale_set_id, const std::string& name,
                                                          const std::string& work_folder) {
  auto once = [&]() -> result<scaleset_jit> {
    auto r = service(
        "POST", "_apis/runtime/runnerscalesets/" + std::to_string(scale_set_id) + "/generatejitconfig",
        json::writer().open().field("name", name).field("workFolder", work_folder).close().str());
    if (!r) return unexpected{r.error()};
    if (r->status != 200) {
      auto e = fail(*r);
      if (error_type_name(*r).find("AgentExistsException") != std::string::npos)
        e.kind = error_kind::conflict;
      return unexpected{e};
    }
    auto d = json_object(*r);
    if (!d) return unexpected{d.error()};
    scaleset_jit j;
    j.encoded_jit_config = json::str(*d, "encodedJITConfig");
    const auto* rn = json::member(*d, "runner");
    if (rn == nullptr || j.encoded_jit_config.empty())
      return unexpected{error{error_kind::bad_response, 200, "JIT response lacks runner/encodedJITConfig"}};
    j.runner = parse_runner_reference(*rn);
    return j;
  };
  auto first = once();
  if (first || first.error().kind != error_kind::conflict) return first;
  // The name is taken: say by which runner (the caller decides what to do).
  auto existing = runner_by_name(name);
  if (!existing) return unexpected{existing.error()};
  auto conflict = first.error();
  if (*existing)
    conflict.holder =
        name_holder{(*existing)->id, false, (*existing)->scale_set_id != scale_set_id, {}, false};
  return unexpected{conflict};
}

result<runner_reference> scaleset_client::get_runner(std::int64_t runner_id) {
  auto r = service("GET", "_apis/distributedtask/pools/0/agents/" + std::to_string(runner_id));
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  return parse_runner_reference(*d);
}

result<std::optional<runner_reference>> scaleset_client::runner_by_name(const std::string& name) {
  auto r = service("GET", "_apis/distributedtask/pools/0/agents?agentName=" + http::url_encode(name));
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  return at_most_one<runner_reference>(*d, "runner named " + name, parse_runner_reference);
}

result<delete_outcome> scaleset_client::remove_runner(std::int64_t runner_id) {
  auto r = service("DELETE", "_apis/distributedtask/pools/0/agents/" + std::to_string(runner_id));
  if (!r) return unexpected{r.error()};
  if (r->status == 204) return delete_outcome::deleted;
  if (r->status == 404) return delete_outcome::not_found;
  if (error_type_name(*r).find("JobStillRunningException") != std::string::npos) return delete_outcome::busy;
  return unexpected{fail(*r)};
}

}  // namespace octorun::github
