#include "bench/loadtest/simulator_client.hpp"

#include <rapidjson/document.h>

#include "common/json.hpp"

namespace octorun::loadtest {

using namespace std::chrono_literals;

simulator_client::simulator_client(std::string base_url) : base_(std::move(base_url)), http_({}, 5s) {
  http_.set_plain_http(true);  // the simulator serves plain HTTP
  while (base_.ends_with('/')) base_.pop_back();
}

expected<std::string, std::string> simulator_client::call(const std::string& method, const std::string& path,
                                                          const std::string& body,
                                                          std::chrono::milliseconds timeout) {
  http::request r;
  r.method = method;
  r.url = base_ + path;
  r.body = body;
  r.timeout = timeout;
  if (!body.empty()) r.headers.push_back({"Content-Type", "application/json"});
  auto resp = http_.perform(r);
  if (!resp) return unexpected{"the GitHub simulator at " + base_ + ": " + resp.error().message};
  if (resp->status >= 300)
    return unexpected{"the GitHub simulator at " + base_ + " answered " + method + " " + path + " with " +
                      std::to_string(resp->status) + ": " + resp->body.substr(0, 200)};
  return std::move(resp->body);
}

expected<ok_t, std::string> simulator_client::reachable() {
  auto r = call("GET", "/_sim/calls", "", 5s);
  if (!r) return unexpected{r.error()};
  return ok;
}

expected<ok_t, std::string> simulator_client::add_organization(const std::string& login) {
  auto r = call("POST", "/_sim/orgs", "{\"login\":" + json::quote(login) + "}", 10s);
  if (!r) return unexpected{r.error()};
  return ok;
}

expected<ok_t, std::string> simulator_client::add_pat(const std::string& token) {
  auto r = call("POST", "/_sim/pats", "{\"token\":" + json::quote(token) + "}", 10s);
  if (!r) return unexpected{r.error()};
  return ok;
}

expected<ok_t, std::string> simulator_client::set_webhook(const std::string& url, const std::string& secret) {
  auto r = call("POST", "/_sim/webhook",
                "{\"url\":" + json::quote(url) + ",\"secret\":" + json::quote(secret) + "}", 10s);
  if (!r) return unexpected{r.error()};
  return ok;
}

expected<std::int64_t, std::string> simulator_client::add_job(const std::string& repository,
                                                              const std::vector<std::string>& labels,
                                                              std::int64_t duration_ms) {
  std::string l;
  for (const auto& x : labels) l += (l.empty() ? "" : ",") + json::quote(x);
  auto r = call("POST", "/_sim/jobs",
                "{\"repository\":" + json::quote(repository) + ",\"labels\":[" + l +
                    "],\"duration_ms\":" + std::to_string(duration_ms) + ",\"name\":\"loadtest\"}",
                10s);
  if (!r) return unexpected{r.error()};
  rapidjson::Document d;
  d.Parse(r->data(), r->size());
  if (d.HasParseError() || !d.IsObject())
    return unexpected{std::string("the simulator's job reply is not JSON")};
  return json::i64(d, "id");
}

expected<ok_t, std::string> simulator_client::runner_online(const std::string& name) {
  auto r = call("POST", "/_sim/runners/" + http::url_encode(name) + "/online", "{}", 10s);
  if (!r) return unexpected{r.error()};
  return ok;
}

expected<ok_t, std::string> simulator_client::complete_job(std::int64_t id) {
  auto r = call("POST", "/_sim/jobs/" + std::to_string(id) + "/complete", "{}", 10s);
  if (!r) return unexpected{r.error()};
  return ok;
}

expected<std::map<std::string, std::int64_t>, std::string> simulator_client::calls() {
  auto r = call("GET", "/_sim/calls", "", 10s);
  if (!r) return unexpected{r.error()};
  rapidjson::Document d;
  d.Parse(r->data(), r->size());
  std::map<std::string, std::int64_t> out;
  if (d.HasParseError() || !d.IsObject())
    return unexpected{std::string("the simulator's call counts are not JSON")};
  for (auto it = d.MemberBegin(); it != d.MemberEnd(); ++it)
    if (it->value.IsInt64()) out[it->name.GetString()] = it->value.GetInt64();
  return out;
}

expected<std::string, std::string> simulator_client::state() { return call("GET", "/_sim/state", "", 30s); }

}  // namespace octorun::loadtest
