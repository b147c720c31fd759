#include "adapters/github/rest_client.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "adapters/github/crypto.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "common/rfc3339.hpp"
#include "common/strings.hpp"
#include "common/url.hpp"

namespace octorun::github {

runner parse_runner(const rapidjson::Value& v) {
  runner out;
  out.id = json::i64(v, "id");
  out.name = json::str(v, "name");
  out.os = json::str(v, "os");
  out.status = json::str(v, "status");
  out.busy = json::boolean(v, "busy");
  out.ephemeral = json::boolean(v, "ephemeral");
  out.runner_group_id = json::i64(v, "runner_group_id");
  out.labels = json::strings(v, "labels", "name");
  return out;
}

workflow_job parse_workflow_job_item(const rapidjson::Value& v, const std::string& repository) {
  workflow_job out;
  out.id = json::i64(v, "id");
  out.run_id = json::i64(v, "run_id");
  out.repository = repository;
  out.status = json::str(v, "status");
  out.labels = json::strings(v, "labels");
  out.runner_name = json::str(v, "runner_name");
  out.conclusion = json::str(v, "conclusion");
  return out;
}

expected<model::runner_release, std::string> parse_latest_release(const rapidjson::Value& v) {
  if (!v.IsObject()) return unexpected<std::string>{"the latest release is not an object"};
  const auto tag = json::str(v, "tag_name");
  auto version = model::parse_runner_version(tag);
  if (!version)
    return unexpected<std::string>{"the latest release's tag_name names no runner version (vX.Y.Z)"};
  return model::runner_release{*version, parse_rfc3339(json::str(v, "published_at")).value_or(0)};
}

namespace {

// The latest runner release by API base URL, shared by every client of the
// process (latest_runner_release).
struct release_cache {
  std::mutex mutex;
  std::map<std::string, std::pair<model::runner_release, std::chrono::steady_clock::time_point>> by_host;
};
release_cache& releases() {
  static release_cache cache;
  return cache;
}

// A GitHub configured as http:// (the tests' simulator, a GHES the
// platform reaches without TLS) is called over plain HTTP; any other only
// over https.
rest_options with_scheme_policy(rest_options options) {
  options.call.plain_http = url_scheme(options.api_base) == "http";
  return options;
}

}  // namespace

rest_client::rest_client(rest_options options)
    : options_(with_scheme_policy(std::move(options))), caller_(options_.call) {}

result<rapidjson::Document> rest_client::answer(const result<http::response>& r, long success) const {
  if (!r) return unexpected{r.error()};
  if (r->status != success) return unexpected{fail(*r)};
  return json_object(*r);
}

error rest_client::fail(const http::response& r) const {
  return error_from_response(r, caller_.now(), options_.call.retry);
}

result<http::response> rest_client::call(std::string method, std::string path, std::string body) {
  http::request req;
  req.method = std::move(method);
  req.url = options_.api_base + path;  // every caller's path is under the API base
  req.headers = {{"Accept", "application/vnd.github+json"}, {"X-GitHub-Api-Version", "2022-11-28"}};
  if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  req.body = std::move(body);
  authorizer auth;
  if (options_.auth) {
    auth = [this](bool refresh) -> result<std::string> {
      auto t = options_.auth->token(caller_, refresh);
      if (!t) return unexpected{t.error()};
      return "Bearer " + *t;
    };
  }
  return caller_.perform(std::move(req), auth);
}

result<model::runner_release> rest_client::latest_runner_release(std::chrono::seconds ttl) {
  auto& cache = releases();
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(cache.mutex);
    auto it = cache.by_host.find(options_.api_base);
    if (it != cache.by_host.end() && now < it->second.second + ttl) return it->second.first;
  }
  auto r = call("GET", "/repos/actions/runner/releases/latest");
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  auto release = parse_latest_release(*d);
  if (!release) return unexpected{error{error_kind::bad_response, r->status, release.error()}};
  std::lock_guard lock(cache.mutex);
  cache.by_host[options_.api_base] = {*release, now};
  return *release;
}

result<auth_token> rest_client::token_call(const char* suffix) {
  auto r = call("POST", options_.where.api_path() + "/actions/runners/" + suffix);
  auto d = answer(r, 201);
  if (!d) return unexpected{d.error()};
  auth_token t{json::str(*d, "token"), parse_rfc3339(json::str(*d, "expires_at")).value_or(0)};
  if (t.token.empty()) return unexpected{error{error_kind::bad_response, r->status, "token missing"}};
  return t;
}

result<auth_token> rest_client::registration_token() { return token_call("registration-token"); }
result<auth_token> rest_client::remove_token() { return token_call("remove-token"); }

result<jit_config> rest_client::jit_once(const jit_request& req) {
  json::writer w;
  w.open().field("name", req.name).field("runner_group_id", req.runner_group_id).open_array("labels");
  for (const auto& label : req.labels) w.value(label);
  w.close_array().field("work_folder", req.work_folder).close();
  auto r = call("POST", options_.where.api_path() + "/actions/runners/generate-jitconfig", w.str());
  auto d = answer(r, 201);
  if (!d) return unexpected{d.error()};
  const auto* rn = json::member(*d, "runner");
  jit_config out;
  out.encoded_jit_config = json::str(*d, "encoded_jit_config");
  if (rn == nullptr || !rn->IsObject() || out.encoded_jit_config.empty())
    return unexpected{
        error{error_kind::bad_response, r->status, "JIT response lacks runner/encoded_jit_config"}};
  out.registered = parse_runner(*rn);
  return out;
}

result<jit_config> rest_client::generate_jit_config(const jit_request& req) {
  auto first = jit_once(req);
  if (first || first.error().kind != error_kind::conflict) return first;
  // 409: a runner with this name exists (often our own earlier attempt): say which.
  auto existing = runner_by_name(req.name);
  if (!existing) return unexpected{existing.error()};
  auto conflict = first.error();
  if (*existing)
    conflict.holder = name_holder{(*existing)->id, (*existing)->busy, false, (*existing)->labels, false};
  return unexpected{conflict};
}

result<std::optional<runner>> rest_client::runner_by_name(std::string_view name) {
  auto listed = list_runners(name);
  if (!listed) return unexpected{listed.error()};
  for (auto& r : *listed)
    if (ascii_iequals(r.name, name)) return std::optional<runner>{std::move(r)};
  return std::optional<runner>{};
}

result<std::vector<runner>> rest_client::list_runners(std::string_view name) {
  std::vector<runner> out;
  for (int page = 1; page <= 1000; ++page) {
    std::string path =
        options_.where.api_path() + "/actions/runners?per_page=100&page=" + std::to_string(page);
    if (!name.empty()) path += "&name=" + http::url_encode(name);
    auto r = call("GET", path);
    auto d = answer(r, 200);
    if (!d) return unexpected{d.error()};
    const auto* list = json::member(*d, "runners");
    if (list == nullptr || !list->IsArray())
      return unexpected{error{error_kind::bad_response, 200, "runner list lacks runners"}};
    for (const auto& v : list->GetArray())
      if (v.IsObject()) out.push_back(parse_runner(v));
    auto total = json::i64(*d, "total_count", 0);
    if (list->GetArray().Empty() || static_cast<std::int64_t>(out.size()) >= total) break;
  }
  return out;
}

// Every page of a listing (per_page=100): `take(page)` reads one page's items
// and answers how many it held; a page shorter than 100 is the last.
template <class Take>
result<ok_t> rest_client::each_page(const std::string& path, Take take) {
  const char* sep = path.find('?') == std::string::npos ? "?" : "&";
  for (int page = 1; page <= 1000; ++page) {
    auto r = call("GET", path + sep + "per_page=100&page=" + std::to_string(page));
    if (!r) return unexpected{r.error()};
    if (r->status != 200) return unexpected{fail(*r)};
    // A list is an object holding an array, or (GET /orgs/{org}/repos) an array.
    auto d = json::parse(r->body, json::sources::github_response);
    if (!d) return unexpected{error{error_kind::bad_response, r->status, d.error()}};
    if (!(d->IsObject() || d->IsArray()))
      return unexpected{error{error_kind::bad_response, r->status, "response is not a JSON list or object"}};
    auto items = take(*d);
    if (!items) return unexpected{items.error()};
    if (*items < 100) break;
  }
  return ok;
}

result<active_work> rest_client::list_active_work(const sweep_request& ask) {
  std::vector<std::string> repositories;
  if (options_.where.kind == scope_kind::repository) {
    repositories.push_back(options_.where.owner + "/" + options_.where.repository);
  } else if (options_.where.kind == scope_kind::organization) {
    auto listed = each_page("/orgs/" + options_.where.owner + "/repos", [&](const rapidjson::Document& d) {
      if (!d.IsArray())
        return result<std::size_t>{unexpected{error{error_kind::bad_response, 200, "not a list"}}};
      for (const auto& v : d.GetArray())
        if (v.IsObject() && !json::str(v, "full_name").empty())
          repositories.push_back(json::str(v, "full_name"));
      return result<std::size_t>{d.GetArray().Size()};
    });
    if (!listed) return unexpected{listed.error()};
  } else {
    return unexpected{error{error_kind::rejected, 0, "an enterprise's repositories cannot be listed"}};
  }
  active_work out;
  auto member_list = [](const rapidjson::Document& d, const char* key) -> const rapidjson::Value* {
    const auto* list = json::member(d, key);
    return list != nullptr && list->IsArray() ? list : nullptr;
  };
  // The jobs of `run` (a run that ended between two calls: none).
  auto list_jobs = [&](const std::string& repository, std::int64_t run) -> result<ok_t> {
    auto listed = each_page("/repos/" + repository + "/actions/runs/" + std::to_string(run) + "/jobs",
                            [&](const rapidjson::Document& d) -> result<std::size_t> {
                              const auto* jobs = member_list(d, "jobs");
                              if (jobs == nullptr)
                                return unexpected{error{error_kind::bad_response, 200, "no jobs"}};
                              for (const auto& job : jobs->GetArray())
                                if (job.IsObject())
                                  out.jobs.push_back(parse_workflow_job_item(job, repository));
                              return jobs->GetArray().Size();
                            });
    if (!listed && listed.error().status != 404) return unexpected{listed.error()};
    return ok;
  };
  for (const auto& repository : repositories) {
    std::vector<std::int64_t> unknown;
    for (const char* status : {"queued", "in_progress"}) {
      auto listed = each_page("/repos/" + repository + "/actions/runs?status=" + status,
                              [&](const rapidjson::Document& d) -> result<std::size_t> {
                                const auto* runs = member_list(d, "workflow_runs");
                                if (runs == nullptr)
                                  return unexpected{error{error_kind::bad_response, 200, "no workflow_runs"}};
                                for (const auto& run : runs->GetArray()) {
                                  const auto id = json::i64(run, "id");
                                  if (out.runs.insert(id).second && !ask.followed_runs.contains(id) &&
                                      !ask.listed_runs.contains(id))
                                    unknown.push_back(id);
                                }
                                return runs->GetArray().Size();
                              });
      if (!listed) return unexpected{listed.error()};
    }
    for (auto run : unknown)
      if (auto listed = list_jobs(repository, run); !listed) return unexpected{listed.error()};
  }
  for (const auto& [run, repository] : ask.followed_runs)
    if (!out.runs.contains(run))
      if (auto listed = list_jobs(repository, run); !listed) return unexpected{listed.error()};
  return out;
}

result<runner> rest_client::get_runner(std::int64_t id) {
  auto r = call("GET", options_.where.api_path() + "/actions/runners/" + std::to_string(id));
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  return parse_runner(*d);
}

result<delete_outcome> rest_client::delete_runner(std::int64_t id) {
  auto r = call("DELETE", options_.where.api_path() + "/actions/runners/" + std::to_string(id));
  if (!r) return unexpected{r.error()};
  if (r->status == 204 || r->status == 200) return delete_outcome::deleted;
  if (r->status == 404) return delete_outcome::not_found;
  if (r->status == 422) return delete_outcome::busy;
  return unexpected{fail(*r)};
}

result<runner_group> rest_client::runner_group_by_name(std::string_view name) {
  const bool want_default = name.empty() || ascii_iequals(name, "default");
  if (options_.where.kind == scope_kind::repository) {
    if (want_default) return runner_group{1, "Default", true};
    return unexpected{
        error{error_kind::rejected, 0, "runner groups exist only for organizations and enterprises"}};
  }
  auto r = call("GET", options_.where.api_path() + "/actions/runner-groups?per_page=100");
  auto d = answer(r, 200);
  if (!d) return unexpected{d.error()};
  const auto* groups = json::member(*d, "runner_groups");
  if (groups == nullptr || !groups->IsArray())
    return unexpected{error{error_kind::bad_response, 200, "runner group list lacks runner_groups"}};
  for (const auto& g : groups->GetArray()) {
    runner_group rg{json::i64(g, "id"), json::str(g, "name"), json::boolean(g, "default")};
    if ((want_default && rg.is_default) || ascii_iequals(rg.name, name)) return rg;
  }
  return unexpected{error{error_kind::not_found, 404, "no runner group named " + std::string(name)}};
}

}  // namespace octorun::github
