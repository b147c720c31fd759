// The simulator's Actions service (one tenant per scope, /tenant/{id}/) and
// message queue (/queue/{scaleSetId}): scale sets, sessions, long poll with
// acknowledgement, job acquisition, JIT configuration and agents.
#include <algorithm>
#include <cctype>
#include <functional>

#include "adapters/github/crypto.hpp"
#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "test/simulator/simulator_impl.hpp"

namespace octorun::sim {

namespace json = octorun::json;

namespace {
const char* session_conflict =
    "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException, GitHub.Actions.Runtime.WebApi";

std::string agent_json(const sim_runner& r) {
  return "{\"id\":" + std::to_string(r.id) + ",\"name\":" + json::quote(r.name) +
         ",\"runnerScaleSetId\":" + std::to_string(r.scale_set_id) + ",\"status\":\"" +
         (r.online ? "online" : "offline") + "\",\"busy\":" + (r.busy ? "true" : "false") + "}";
}

std::vector<std::string> label_names(const rapidjson::Value& d) { return json::strings(d, "labels", "name"); }

bool same_name(std::string a, std::string b) {
  auto lower = [](std::string& s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  lower(a);
  lower(b);
  return a == b;
}

server_response no_content() {
  auto resp = json_response(204, "");
  resp.content_type.clear();
  return resp;
}

const char* agent_not_found =
    "GitHub.DistributedTask.WebApi.AgentNotFoundException, GitHub.DistributedTask.WebApi";
}  // namespace

std::string simulator::impl::scale_set_json(const sim_scale_set& s) const {
  std::string labels = "[";
  for (size_t i = 0; i < s.labels.size(); ++i)
    labels += (i ? "," : "") + std::string("{\"type\":\"System\",\"name\":") + json::quote(s.labels[i]) + "}";
  const auto* tenant = tenant_by_id(s.tenant_id);
  auto group = tenant ? runner_group(tenant->scope_key, s.group_id) : std::nullopt;
  return "{\"id\":" + std::to_string(s.id) + ",\"name\":" + json::quote(s.name) +
         ",\"runnerGroupId\":" + std::to_string(s.group_id) +
         ",\"runnerGroupName\":" + json::quote(group ? group->name : "Default") + ",\"labels\":" + labels +
         "],\"runnerSetting\":{\"disableUpdate\":" + (s.disable_update ? "true" : "false") +
         "},\"createdOn\":\"" + format_rfc3339_micros(s.created_on) + "\",\"runnerJitConfigUrl\":" +
         json::quote(tenant_url(s.tenant_id) + "_apis/runtime/runnerscalesets/" + std::to_string(s.id) +
                     "/generatejitconfig") +
         ",\"statistics\":" + statistics_json(s.id) + "}";
}

std::string simulator::impl::session_json(const sim_session& s) const {
  auto ss = scale_sets.find(s.scale_set_id);
  return "{\"sessionId\":" + json::quote(s.id) + ",\"ownerName\":" + json::quote(s.owner) +
         ",\"runnerScaleSet\":" +
         (ss == scale_sets.end() ? std::string("null") : scale_set_json(ss->second)) +
         ",\"messageQueueUrl\":" + json::quote(base + "/queue/" + std::to_string(s.scale_set_id)) +
         ",\"messageQueueAccessToken\":" + json::quote(s.token) +
         ",\"statistics\":" + statistics_json(s.scale_set_id) + "}";
}

std::optional<std::int64_t> simulator::impl::admin_tenant(const server_request& r) const {
  std::string_view h = r.header_value("authorization");
  if (!h.starts_with("Bearer ")) return std::nullopt;
  auto it = admin_tokens.find(std::string(h.substr(7)));
  if (it == admin_tokens.end() || it->second.expires <= now()) return std::nullopt;
  return it->second.tenant_id;
}

sim_session* simulator::impl::session_for_token(const server_request& r) {
  std::string_view h = r.header_value("authorization");
  if (!h.starts_with("Bearer ")) return nullptr;
  for (auto& [id, s] : sessions)
    if (s.token == h.substr(7)) return &s;
  return nullptr;
}

server_response simulator::impl::service(const server_request& r, const std::vector<std::string>& seg,
                                         lock_type& lock) {
  const std::int64_t tenant_id = seg.size() >= 2 ? std::atoll(seg[1].c_str()) : 0;
  if (seg.size() < 4 || tenant_by_id(tenant_id) == nullptr || seg[2] != "_apis") {
    if (auto f = enter("scaleset.unknown", true, lock)) return *f;
    return rest_error(404, "Not Found");
  }
  const auto scope_key = tenant_by_id(tenant_id)->scope_key;
  std::vector<std::string> p(seg.begin() + 3, seg.end());
  const auto& m = r.method;
  std::string endpoint;
  const bool sets = p.size() >= 2 && p[0] == "runtime" && p[1] == "runnerscalesets";
  const bool agents = p.size() >= 4 && p[0] == "distributedtask" && p[1] == "pools" && p[3] == "agents";
  if (p.size() == 2 && p[0] == "runtime" && p[1] == "runnergroups" && m == "GET")
    endpoint = "scaleset.runner_groups";
  else if (sets && p.size() == 2 && m == "GET")
    endpoint = "scaleset.scale_sets";
  else if (sets && p.size() == 2 && m == "POST")
    endpoint = "scaleset.create_scale_set";
  else if (sets && p.size() == 3 && m == "GET")
    endpoint = "scaleset.get_scale_set";
  else if (sets && p.size() == 3 && m == "PATCH")
    endpoint = "scaleset.update_scale_set";
  else if (sets && p.size() == 3 && m == "DELETE")
    endpoint = "scaleset.delete_scale_set";
  else if (sets && p.size() == 4 && p[3] == "sessions" && m == "POST")
    endpoint = "scaleset.create_session";
  else if (sets && p.size() == 5 && p[3] == "sessions" && m == "PATCH")
    endpoint = "scaleset.refresh_session";
  else if (sets && p.size() == 5 && p[3] == "sessions" && m == "DELETE")
    endpoint = "scaleset.delete_session";
  else if (sets && p.size() == 4 && p[3] == "acquirejobs" && m == "POST")
    endpoint = "scaleset.acquire_jobs";
  else if (sets && p.size() == 4 && p[3] == "generatejitconfig" && m == "POST")
    endpoint = "scaleset.generate_jitconfig";
  else if (agents && p.size() == 4 && m == "GET")
    endpoint = "scaleset.list_agents";
  else if (agents && p.size() == 5 && m == "GET")
    endpoint = "scaleset.get_agent";
  else if (agents && p.size() == 5 && m == "DELETE")
    endpoint = "scaleset.delete_agent";
  else {
    if (auto f = enter("scaleset.unknown", true, lock)) return *f;
    return rest_error(404, "Not Found");
  }
  if (auto f = enter(endpoint, true, lock)) return *f;
  if (r.query_param("api-version").empty())
    return service_error(400, "VssInvalidPreviewVersionException", "api-version is required");
  // Admin tokens are good for the tenant they were issued for, until they expire.
  if (endpoint == "scaleset.acquire_jobs") {
    const auto* session = session_for_token(r);
    if (session == nullptr || session->scale_set_id != std::atoll(p[2].c_str()))
      return rest_error(401, "unauthorized");
  } else if (admin_tenant(r) != tenant_id) {
    return rest_error(401, "unauthorized");
  }
  const std::int64_t id = p.size() >= 3 ? std::atoll(p[2].c_str()) : 0;
  rapidjson::Document d;
  if (m == "POST" || m == "PATCH") {
    d.Parse(r.body.data(), r.body.size());
    if (!r.body.empty() && d.HasParseError())
      return service_error(400, "ArgumentException", "request body is not JSON");
    if (r.body.empty()) d.SetObject();
  }

  if (endpoint == "scaleset.runner_groups") {
    auto name = r.query_param("groupName");
    std::string list;
    int n = 0;
    for (const auto& g : runner_groups_of(scope_key))
      if (same_name(g.name, name))
        list += (n++ ? "," : "") + std::string("{\"id\":") + std::to_string(g.id) +
                ",\"name\":" + json::quote(g.name) + ",\"size\":" +
                std::to_string(std::count_if(scale_sets.begin(), scale_sets.end(),
                                             [&](const auto& kv) {
                                               return kv.second.tenant_id == tenant_id &&
                                                      kv.second.group_id == g.id;
                                             })) +
                ",\"isDefaultGroup\":" + (g.id == 1 ? "true" : "false") + "}";
    return json_response(200, "{\"count\":" + std::to_string(n) + ",\"value\":[" + list + "]}");
  }
  if (endpoint == "scaleset.scale_sets") {
    auto name = r.query_param("name");
    auto group = std::atoll(r.query_param("runnerGroupId").c_str());
    std::string list = "[";
    int n = 0;
    for (const auto& [sid, s] : scale_sets)
      // As on create: the service compares scale-set names case-insensitively.
      if (s.tenant_id == tenant_id && same_name(s.name, name) && (group == 0 || s.group_id == group))
        list += (n++ ? "," : "") + scale_set_json(s);
    return json_response(200, "{\"count\":" + std::to_string(n) + ",\"value\":" + list + "]}");
  }
  if (endpoint == "scaleset.create_scale_set") return create_scale_set(tenant_id, d);
  auto ss = scale_sets.find(id);
  if (sets && (ss == scale_sets.end() || ss->second.tenant_id != tenant_id))
    return service_error(404, "RunnerScaleSetNotFoundException",
                         "No runner scale set with id " + std::to_string(id));
  if (endpoint == "scaleset.get_scale_set") return json_response(200, scale_set_json(ss->second));
  if (endpoint == "scaleset.update_scale_set") {
    if (!d.IsObject()) return service_error(400, "ArgumentException", "scale set must be an object");
    auto g = json::i64(d, "runnerGroupId");
    if (g != 0 && !runner_group(scope_key, g))
      return service_error(404, "RunnerGroupNotFoundException",
                           "No runner group with id " + std::to_string(g));
    auto name = json::str(d, "name");
    if (!name.empty()) ss->second.name = name;
    if (g != 0) ss->second.group_id = g;
    if (auto labels = label_names(d); !labels.empty()) ss->second.labels = labels;
    const auto* setting = json::member(d, "RunnerSetting");
    if (setting == nullptr) setting = json::member(d, "runnerSetting");
    if (setting != nullptr && json::member(*setting, "disableUpdate") != nullptr)
      ss->second.disable_update = json::boolean(*setting, "disableUpdate");
    changed();
    return json_response(200, scale_set_json(ss->second));
  }
  if (endpoint == "scaleset.delete_scale_set") {
    scale_sets.erase(ss);
    sessions.erase(id);
    queues.erase(id);
    std::erase_if(runners, [&](const auto& kv) { return kv.second.scale_set_id == id; });
    for (auto jid : open_jobs)  // queued jobs wait for another runner
      if (auto& j = jobs.at(jid); j.scale_set_id == id && j.state == "queued") {
        j.scale_set_id = 0;
        j.offered = false;
      }
    queue_cv.notify_all();
    changed();
    return no_content();
  }
  if (endpoint == "scaleset.create_session") {
    if (auto held = sessions.find(id); held != sessions.end() && held->second.polls_in_flight == 0 &&
                                       steady_now() - held->second.last_poll > options.session_idle_timeout)
      sessions.erase(held);  // its listener is gone
    if (sessions.count(id))
      return service_error(
          409, session_conflict,
          "The actions runner scaleset " + ss->second.name + " already has an active session.");
    sim_session s{new_uuid(), json::str(d, "ownerName"), new_token("mq_"), id, 0, steady_now()};
    sessions[id] = s;
    changed();
    return json_response(200, session_json(s));
  }
  if (endpoint == "scaleset.refresh_session" || endpoint == "scaleset.delete_session") {
    auto it = sessions.find(id);
    if (it == sessions.end() || !same_name(it->second.id, p[4]))
      return service_error(404, "RunnerAdminException", "Cannot refresh a session ID that doesn't exist");
    if (endpoint == "scaleset.refresh_session") {
      it->second.token = new_token("mq_");
      return json_response(200, session_json(it->second));
    }
    sessions.erase(it);
    queue_cv.notify_all();
    changed();
    return no_content();
  }
  if (endpoint == "scaleset.acquire_jobs") {
    rapidjson::Document ids;
    ids.Parse(r.body.data(), r.body.size());
    if (ids.HasParseError() || !ids.IsArray())
      return service_error(400, "ArgumentException", "expected an array of ids");
    std::string out = "[";
    int n = 0;
    for (const auto& v : ids.GetArray()) {
      if (!v.IsInt64()) continue;
      auto j = jobs.find(v.GetInt64());
      if (j == jobs.end() || j->second.scale_set_id != id || j->second.state != "queued" ||
          !j->second.offered)
        continue;
      j->second.state = "assigned";
      j->second.scale_set_assigned_at = wall_now();
      // Requeued if no runner of the scale set starts it by then (run_due).
      j->second.assignment_due = steady_now() + options.assignment_timeout;
      timer_cv.notify_all();
      post_message(id, job_message_json("JobAssigned", j->second));
      out += (n++ ? "," : "") + std::to_string(j->first);
    }
    dispatch();
    changed();
    return json_response(200, "{\"count\":" + std::to_string(n) + ",\"value\":" + out + "]}");
  }
  if (endpoint == "scaleset.generate_jitconfig") {
    auto name = json::str(d, "name");
    if (name.empty()) return service_error(400, "ArgumentException", "name is required");
    for (const auto& [rid, rn] : runners)
      if (rn.scale_set_id != 0 && rn.tenant_id == tenant_id && same_name(rn.name, name))
        return service_error(
            409, "GitHub.DistributedTask.WebApi.AgentExistsException, GitHub.DistributedTask.WebApi",
            "A runner with the name " + name + " already exists.");
    sim_runner rn;
    rn.id = next_runner_id++;
    rn.name = name;
    rn.tenant_id = tenant_id;
    rn.scale_set_id = id;
    rn.group_id = ss->second.group_id;
    rn.labels = ss->second.labels;
    rn.online = options.auto_online;
    runners[rn.id] = rn;
    if (rn.online) dispatch();
    changed();
    auto config = octorun::base64url_encode("{\"name\":" + json::quote(name) +
                                            ",\"scaleSetId\":" + std::to_string(id) + "}");
    return json_response(
        200, "{\"runner\":" + agent_json(rn) + ",\"encodedJITConfig\":" + json::quote(config) + "}");
  }
  if (endpoint == "scaleset.list_agents") {
    auto name = r.query_param("agentName");
    std::string list = "[";
    int n = 0;
    for (const auto& [rid, rn] : runners)
      if (rn.scale_set_id != 0 && rn.tenant_id == tenant_id && same_name(rn.name, name))
        list += (n++ ? "," : "") + agent_json(rn);
    return json_response(200, "{\"count\":" + std::to_string(n) + ",\"value\":" + list + "]}");
  }
  return agent(endpoint, tenant_id, std::atoll(p[4].c_str()));
}

// GET/DELETE of one agent. A JIT runner the service removed after its job is
// gone for GET (404 AgentNotFoundException), while DELETE of it answers 204:
// GitHub's own scale-set controller (ARC) removes every runner after its job
// and accepts only 204 (README.md, "Runner removal").
server_response simulator::impl::agent(const std::string& endpoint, std::int64_t tenant_id,
                                       std::int64_t runner_id) {
  auto it = runners.find(runner_id);
  if (it == runners.end() || it->second.scale_set_id == 0 || it->second.tenant_id != tenant_id) {
    auto removed = removed_after_job.find(runner_id);
    if (endpoint == "scaleset.delete_agent" && removed != removed_after_job.end() &&
        removed->second == tenant_id)
      return no_content();
    return service_error(404, agent_not_found, "No agent with id " + std::to_string(runner_id));
  }
  if (endpoint == "scaleset.get_agent") return json_response(200, agent_json(it->second));
  if (it->second.busy)
    return service_error(
        400, "GitHub.DistributedTask.WebApi.JobStillRunningException, GitHub.DistributedTask.WebApi",
        "The runner is still running a job.");
  runners.erase(it);
  changed();
  return no_content();
}

server_response simulator::impl::create_scale_set(std::int64_t tenant_id, const rapidjson::Document& d) {
  if (!d.IsObject()) return service_error(400, "ArgumentException", "scale set must be an object");
  const auto scope_key = tenant_by_id(tenant_id)->scope_key;
  sim_scale_set s;
  s.tenant_id = tenant_id;
  s.name = json::str(d, "name");
  if (s.name.empty()) return service_error(400, "ArgumentException", "name is required");
  s.group_id = json::i64(d, "runnerGroupId", 1);
  if (s.group_id == 0) s.group_id = 1;
  if (!runner_group(scope_key, s.group_id))
    return service_error(404, "RunnerGroupNotFoundException",
                         "No runner group with id " + std::to_string(s.group_id));
  for (const auto& [sid, other] : scale_sets)
    if (other.tenant_id == tenant_id && same_name(other.name, s.name) && other.group_id == s.group_id)
      return service_error(409, "RunnerScaleSetExistsException",
                           "A runner scale set named " + s.name + " already exists");
  s.labels = label_names(d);
  if (s.labels.empty()) s.labels = {s.name};
  const auto* setting = json::member(d, "RunnerSetting");
  if (setting == nullptr) setting = json::member(d, "runnerSetting");
  s.disable_update = setting != nullptr && json::boolean(*setting, "disableUpdate");
  s.created_on = wall_now();
  s.id = next_scale_set_id++;
  scale_sets[s.id] = s;
  // Jobs already queued that no scale set took and whose labels this one
  // carries are offered to it, as the service does for a new scale set.
  for (auto jid : open_jobs)
    if (auto& j = jobs.at(jid); j.state == "queued" && j.scale_set_id == 0 &&
                                scope_covers(scope_key, j.spec.repository) &&
                                labels_match(j.spec.labels, s.labels))
      j.scale_set_id = s.id;
  offer_jobs(s.id);
  changed();
  return json_response(200, scale_set_json(s));
}

server_response simulator::impl::queue(const server_request& r, const std::vector<std::string>& seg,
                                       lock_type& lock) {
  const std::int64_t ssid = seg.size() >= 2 ? std::atoll(seg[1].c_str()) : 0;
  const bool get = seg.size() == 2 && r.method == "GET";
  const bool del = seg.size() == 3 && r.method == "DELETE";
  if (!get && !del) {
    if (auto f = enter("scaleset.unknown", true, lock)) return *f;
    return rest_error(404, "Not Found");
  }
  if (auto f = enter(get ? "scaleset.get_message" : "scaleset.delete_message", true, lock)) return *f;
  auto authorized = [&] {
    auto it = sessions.find(ssid);
    std::string_view h = r.header_value("authorization");
    return it != sessions.end() && h.starts_with("Bearer ") && h.substr(7) == it->second.token;
  };
  if (!authorized()) return rest_error(401, "unauthorized");
  if (del) {
    auto& q = queues[ssid];
    auto id = std::atoll(seg[2].c_str());
    auto it = std::find_if(q.begin(), q.end(), [&](const sim_message& msg) { return msg.id == id; });
    if (it == q.end()) return service_error(404, "MessageNotFoundException", "No message with id " + seg[2]);
    q.erase(it);
    changed();
    return no_content();
  }
  // X-ScaleSetMaxCapacity: how many jobs this listener can run; more of the
  // waiting ones are handed out when it grows.
  if (auto capacity = r.header_value("x-scalesetmaxcapacity"); !capacity.empty()) {
    char* end = nullptr;
    const std::string text(capacity);
    const auto value = std::strtoll(text.c_str(), &end, 10);
    if (end != text.c_str() && *end == '\0' && value >= 0) {
      scale_sets.at(ssid).max_capacity = value;
      offer_jobs(ssid);
    }
  }
  // The session counts as alive while polled and for a while after.
  const auto session_id = sessions.at(ssid).id;
  auto polled = [&](int delta) {
    if (auto it = sessions.find(ssid); it != sessions.end() && it->second.id == session_id) {
      it->second.polls_in_flight += delta;
      it->second.last_poll = steady_now();
    }
  };
  polled(+1);
  struct poll_end {
    std::function<void()> f;
    ~poll_end() { f(); }
  } end_poll{[&] { polled(-1); }};
  const std::int64_t last = std::atoll(r.query_param("lastMessageId").c_str());
  auto pending = [&]() -> sim_message* {
    for (auto& msg : queues[ssid])
      if (msg.id > last) return &msg;
    return nullptr;
  };
  // Long poll: released by a new message, the session going away, a token expiry, or shutdown.
  // The deadline is on the simulator's clock (advance_clock moves it nearer).
  const auto deadline = steady_now() + options.long_poll;
  while (!stopping && authorized() && pending() == nullptr && steady_now() < deadline)
    queue_cv.wait_until(lock, deadline - skipped);
  if (stopping) return json_response(202, "");
  if (!authorized()) return rest_error(401, "unauthorized");
  auto* msg = pending();
  if (msg == nullptr) {
    auto resp = json_response(202, "");
    resp.content_type.clear();
    return resp;
  }
  msg->delivered = true;
  std::string body = "[";
  for (size_t i = 0; i < msg->jobs.size(); ++i) body += (i ? "," : "") + msg->jobs[i];
  body += "]";
  return json_response(200, "{\"messageId\":" + std::to_string(msg->id) +
                                ",\"messageType\":\"RunnerScaleSetJobMessages\",\"statistics\":" +
                                statistics_json(ssid) + ",\"body\":" + json::quote(body) + "}");
}

}  // namespace octorun::sim
