// The simulator's Actions service (tenant URL /tenant/1/) and message queue
// (/queue/{scaleSetId}): scale sets, sessions, long poll with acknowledgement,
// job acquisition, JIT configuration and agents.
#include <algorithm>
#include <functional>

#include "adapters/common/base64.hpp"
#include "adapters/github/crypto.hpp"
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
}  // namespace

std::string simulator::impl::scale_set_json(const sim_scale_set& s) const {
  std::string labels = "[";
  for (size_t i = 0; i < s.labels.size(); ++i)
    labels += (i ? "," : "") + std::string("{\"type\":\"System\",\"name\":") + json::quote(s.labels[i]) + "}";
  return "{\"id\":" + std::to_string(s.id) + ",\"name\":" + json::quote(s.name) +
         ",\"runnerGroupId\":" + std::to_string(s.group_id) +
         ",\"runnerGroupName\":\"Default\",\"labels\":" + labels +
         "],\"runnerSetting\":{\"disableUpdate\":" + (s.disable_update ? "true" : "false") +
         "},\"createdOn\":\"2026-01-01T00:00:00Z\",\"runnerJitConfigUrl\":" +
         json::quote(base + "/tenant/1/_apis/runtime/runnerscalesets/" + std::to_string(s.id) +
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

bool simulator::impl::admin_ok(const server_request& r) const {
  std::string_view h = r.header_value("authorization");
  if (!h.starts_with("Bearer ")) return false;
  auto it = admin_tokens.find(std::string(h.substr(7)));
  return it != admin_tokens.end() && it->second > now();
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
  if (seg.size() < 4 || seg[1] != "1" || seg[2] != "_apis") {
    if (auto f = enter("scaleset.unknown", true, lock)) return *f;
    return rest_error(404, "Not Found");
  }
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
  if (endpoint == "scaleset.acquire_jobs") {
    if (session_for_token(r) == nullptr) return rest_error(401, "unauthorized");
  } else if (!admin_ok(r)) {
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
    if (name != "Default" && name != "default") return json_response(200, "{\"count\":0,\"value\":[]}");
    return json_response(200, "{\"count\":1,\"value\":[{\"id\":1,\"name\":\"Default\",\"size\":" +
                                  std::to_string(scale_sets.size()) + ",\"isDefaultGroup\":true}]}");
  }
  if (endpoint == "scaleset.scale_sets") {
    auto name = r.query_param("name");
    auto group = std::atoll(r.query_param("runnerGroupId").c_str());
    std::string list = "[";
    int n = 0;
    for (const auto& [sid, s] : scale_sets)
      if (s.name == name && (group == 0 || s.group_id == group)) list += (n++ ? "," : "") + scale_set_json(s);
    return json_response(200, "{\"count\":" + std::to_string(n) + ",\"value\":" + list + "]}");
  }
  if (endpoint == "scaleset.create_scale_set") {
    if (!d.IsObject()) return service_error(400, "ArgumentException", "scale set must be an object");
    sim_scale_set s;
    s.name = json::str(d, "name");
    if (s.name.empty()) return service_error(400, "ArgumentException", "name is required");
    s.group_id = json::i64(d, "runnerGroupId", 1);
    if (s.group_id == 0) s.group_id = 1;
    for (const auto& [sid, other] : scale_sets)
      if (other.name == s.name && other.group_id == s.group_id)
        return service_error(409, "RunnerScaleSetExistsException",
                             "A runner scale set named " + s.name + " already exists");
    s.labels = label_names(d);
    if (s.labels.empty()) s.labels = {s.name};
    const auto* setting = json::member(d, "RunnerSetting");
    if (setting == nullptr) setting = json::member(d, "runnerSetting");
    s.disable_update = setting != nullptr && json::boolean(*setting, "disableUpdate");
    s.id = next_scale_set_id++;
    scale_sets[s.id] = s;
    // Jobs already queued that no scale set took and whose labels this one
    // carries are offered to it, as the service does for a new scale set.
    for (auto& [jid, j] : jobs)
      if (j.state == "queued" && j.scale_set_id == 0 && labels_match(j.spec.labels, s.labels)) {
        j.scale_set_id = s.id;
        post_message(s.id, job_message_json("JobAvailable", j));
      }
    changed();
    return json_response(200, scale_set_json(s));
  }
  auto ss = scale_sets.find(id);
  if (sets && ss == scale_sets.end())
    return service_error(404, "RunnerScaleSetNotFoundException",
                         "No runner scale set with id " + std::to_string(id));
  if (endpoint == "scaleset.get_scale_set") return json_response(200, scale_set_json(ss->second));
  if (endpoint == "scaleset.update_scale_set") {
    if (!d.IsObject()) return service_error(400, "ArgumentException", "scale set must be an object");
    auto name = json::str(d, "name");
    if (!name.empty()) ss->second.name = name;
    if (auto g = json::i64(d, "runnerGroupId"); g != 0) ss->second.group_id = g;
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
    queue_cv.notify_all();
    changed();
    auto resp = json_response(204, "");
    resp.content_type.clear();
    return resp;
  }
  if (endpoint == "scaleset.create_session") {
    if (auto held = sessions.find(id);
        held != sessions.end() && held->second.polls_in_flight == 0 &&
        clock_type::now() - held->second.last_poll > options.session_idle_timeout)
      sessions.erase(held);  // its listener is gone
    if (sessions.count(id))
      return service_error(
          409, session_conflict,
          "The actions runner scaleset " + ss->second.name + " already has an active session.");
    sim_session s{new_token(""), json::str(d, "ownerName"), new_token("mq_"), id};
    s.id = s.id.substr(0, 8) + "-" + s.id.substr(8, 4) + "-" + s.id.substr(12, 4) + "-" + s.id.substr(16, 4) +
           "-" + s.id.substr(20, 12);
    sessions[id] = s;
    changed();
    return json_response(200, session_json(s));
  }
  if (endpoint == "scaleset.refresh_session" || endpoint == "scaleset.delete_session") {
    auto it = sessions.find(id);
    if (it == sessions.end() || it->second.id != p[4])
      return service_error(404, "RunnerAdminException", "Cannot refresh a session ID that doesn't exist");
    if (endpoint == "scaleset.refresh_session") {
      it->second.token = new_token("mq_");
      return json_response(200, session_json(it->second));
    }
    sessions.erase(it);
    queue_cv.notify_all();
    changed();
    auto resp = json_response(204, "");
    resp.content_type.clear();
    return resp;
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
      if (j == jobs.end() || j->second.scale_set_id != id || j->second.state != "queued") continue;
      j->second.state = "assigned";
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
      if (rn.scale_set_id != 0 && rn.name == name)
        return service_error(
            409, "GitHub.DistributedTask.WebApi.AgentExistsException, GitHub.DistributedTask.WebApi",
            "A runner with the name " + name + " already exists.");
    sim_runner rn;
    rn.id = next_runner_id++;
    rn.name = name;
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
      if (rn.scale_set_id != 0 && rn.name == name) list += (n++ ? "," : "") + agent_json(rn);
    return json_response(200, "{\"count\":" + std::to_string(n) + ",\"value\":" + list + "]}");
  }
  auto agent = runners.find(std::atoll(p[4].c_str()));
  if (agent == runners.end() || agent->second.scale_set_id == 0)
    return service_error(
        404, "GitHub.DistributedTask.WebApi.AgentNotFoundException, GitHub.DistributedTask.WebApi",
        "No agent with id " + p[4]);
  if (endpoint == "scaleset.get_agent") return json_response(200, agent_json(agent->second));
  if (agent->second.busy)
    return service_error(
        400, "GitHub.DistributedTask.WebApi.JobStillRunningException, GitHub.DistributedTask.WebApi",
        "The runner is still running a job.");
  runners.erase(agent);
  changed();
  auto resp = json_response(204, "");
  resp.content_type.clear();
  return resp;
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
    auto resp = json_response(204, "");
    resp.content_type.clear();
    return resp;
  }
  // The session counts as alive while polled and for a while after.
  const auto session_id = sessions.at(ssid).id;
  auto polled = [&](int delta) {
    if (auto it = sessions.find(ssid); it != sessions.end() && it->second.id == session_id) {
      it->second.polls_in_flight += delta;
      it->second.last_poll = clock_type::now();
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
  auto deadline = clock_type::now() + options.long_poll;
  queue_cv.wait_until(lock, deadline, [&] { return stopping || !authorized() || pending() != nullptr; });
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
