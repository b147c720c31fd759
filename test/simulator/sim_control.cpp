// The simulator's control API (/_sim/...): scripting, faults, counters and
// state for tests, the demo and the bench (see README.md). Not GitHub's.
#include <algorithm>

#include "common/rfc3339.hpp"
#include "test/simulator/simulator_impl.hpp"

namespace octorun::sim {

namespace json = octorun::json;

server_response simulator::impl::control(const server_request& r, const std::vector<std::string>& seg) {
  rapidjson::Document d;
  if (!r.body.empty()) {
    d.Parse(r.body.data(), r.body.size());
    if (d.HasParseError() || !d.IsObject()) return rest_error(400, "control body must be a JSON object");
  } else {
    d.SetObject();
  }
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
  if (what == "apps" && post) {
    github_app app{json::i64(d, "id"), json::str(d, "client_id"), json::str(d, "public_key_pem")};
    if (app.id <= 0 || app.public_key_pem.empty())
      return rest_error(400, "apps needs an id and a public_key_pem");
    apps[app.id] = app;
    return ok();
  }
  if (what == "app-installations" && post) {
    auto app_id = json::i64(d, "app_id");
    auto id = json::i64(d, "id");
    auto account = json::str(d, "account");
    if (apps.count(app_id) == 0 || id <= 0 || account.empty())
      return rest_error(400, "app-installations needs the app_id of an App, an id and an account");
    installations[id] = {app_id, account, json::strings(d, "repositories")};
    return ok();
  }
  if (what == "clock" && post) {
    auto by = json::i64(d, "advance_ms");
    if (by <= 0) return rest_error(400, "clock needs advance_ms > 0");
    advance(std::chrono::milliseconds(by));
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
  if (what == "jobs" && post && seg.size() == 4 && seg[3] == "cancel") {
    auto it = jobs.find(std::atoll(seg[2].c_str()));
    if (it == jobs.end() || it->second.state == "completed") return rest_error(409, "job has completed");
    cancel(it->second);
    return ok();
  }
  if (what == "runners" && post && seg.size() == 4) {
    auto* rn = runner_named(seg[2]);
    if (rn == nullptr) return rest_error(404, "no runner named " + seg[2]);
    if (seg[3] == "lost") {
      lose(*rn);
      return ok();
    }
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
    f.after_handling = json::boolean(d, "after_handling");
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
    delivery_faults.drop = static_cast<int>(json::i64(d, "drop", 0));
    return ok();
  }
  if (what == "expire-tokens" && post) {
    expire_all(json::boolean(d, "admin"));
    return ok();
  }
  if (what == "runner-groups" && post) {
    auto org = json::str(d, "org");
    auto enterprise = json::str(d, "enterprise");
    auto name = json::str(d, "name");
    if (name.empty() || org.empty() == enterprise.empty())
      return rest_error(400, "runner-groups needs a name and one of org or enterprise");
    auto id = add_runner_group(org.empty() ? "enterprises/" + enterprise : "orgs/" + org, name);
    if (id == 0) return rest_error(409, "a runner group named " + name + " exists there");
    return json_response(201, "{\"id\":" + std::to_string(id) + "}");
  }
  if (what == "runner-release" && post) {
    options.latest_runner_release = json::str(d, "tag_name");
    latest_release_published_at = parse_rfc3339(json::str(d, "published_at")).value_or(0);
    return ok();
  }
  if (what == "minimum-runner-version" && post) {
    options.minimum_runner_version = json::str(d, "version");
    return ok();
  }
  if (what == "ping" && post) {
    if (!options.webhook_url.empty())
      enqueue_delivery(
          {"ping", new_uuid(), R"({"zen":"Keep it logically awesome.","hook_id":1,"hook":{"id":1}})"});
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
