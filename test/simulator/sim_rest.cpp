// The simulator's GitHub REST API: App installation tokens, runner tokens,
// JIT configuration, runner listing/deletion, runner groups, and the Actions
// service registration (POST /actions/runner-registration).
#include <algorithm>

#include "adapters/github/crypto.hpp"
#include "adapters/github/scope.hpp"
#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "test/simulator/simulator_impl.hpp"
#include "test/support/jwt_testing.hpp"

namespace octorun::sim {

namespace json = octorun::json;

std::string simulator::impl::runner_json(const sim_runner& r) const {
  std::string labels = "[";
  for (size_t i = 0; i < r.labels.size(); ++i)
    labels += (i ? "," : "") + std::string("{\"id\":") + std::to_string(i + 1) +
              ",\"name\":" + json::quote(r.labels[i]) + ",\"type\":\"custom\"}";
  return "{\"id\":" + std::to_string(r.id) + ",\"name\":" + json::quote(r.name) +
         ",\"os\":\"Linux\",\"status\":\"" + (r.online ? "online" : "offline") +
         "\",\"busy\":" + (r.busy ? "true" : "false") +
         ",\"ephemeral\":true,\"runner_group_id\":" + std::to_string(r.group_id) + ",\"labels\":" + labels +
         "]}";
}

server_response simulator::impl::rest_json(int status, std::string body, const std::string& token) {
  auto r = json_response(status, std::move(body));
  if (status == 204) r.content_type.clear();
  auto it = budgets.find(token);
  if (it != budgets.end()) {
    auto [start, used] = it->second;
    r.headers.emplace_back("x-ratelimit-limit", std::to_string(options.rate_limit));
    r.headers.emplace_back("x-ratelimit-remaining",
                           std::to_string(std::max<std::int64_t>(0, options.rate_limit - used)));
    r.headers.emplace_back("x-ratelimit-used", std::to_string(used));
    r.headers.emplace_back("x-ratelimit-reset", std::to_string(start + options.rate_limit_window.count()));
    r.headers.emplace_back("x-ratelimit-resource", "core");
  }
  return r;
}

std::optional<server_response> simulator::impl::check_rest_auth(const server_request& r, std::string& token) {
  std::string_view h = r.header_value("authorization");
  if (h.starts_with("Bearer "))
    token = h.substr(7);
  else if (h.starts_with("token "))
    token = h.substr(6);
  else
    return rest_error(401, "Requires authentication");
  bool valid = pats.count(token) > 0;
  if (!valid) {
    auto it = installation_tokens.find(token);
    valid = it != installation_tokens.end() && it->second > now();
  }
  if (!valid) return rest_error(401, "Bad credentials");
  auto& [start, used] = budgets[token];
  if (start == 0 || now() - start >= options.rate_limit_window.count()) {
    start = now();
    used = 0;
  }
  if (used >= options.rate_limit) {
    auto e = rest_json(403, "{\"message\":\"API rate limit exceeded\"}", token);
    return e;
  }
  ++used;
  return std::nullopt;
}

bool simulator::impl::token_covers(const std::string& token, const std::string& scope_key) const {
  auto of = token_installation.find(token);
  if (of == token_installation.end()) return true;  // a PAT
  auto in = installations.find(of->second);
  if (in == installations.end()) return false;
  const auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  auto parts = scope_key.substr(scope_key.find('/') + 1);
  auto owner = parts.substr(0, parts.find('/'));
  if (lower(owner) != lower(in->second.account)) return false;
  if (!scope_key.starts_with("repos/") || in->second.repositories.empty()) return true;
  auto repo = lower(parts.substr(owner.size() + 1));
  return std::any_of(in->second.repositories.begin(), in->second.repositories.end(),
                     [&](const std::string& r) { return lower(r) == repo; });
}

// The App is the one the JWT's iss names (its id or its client id), and the
// JWT must verify with that App's key. GitHub's answers: "Integration not
// found" (404) for an iss that names no App (actions/create-github-app-token
// issue 76); "A JSON web token could not be decoded" (401) for a JWT the
// named App's key does not verify (octokit's auth-app.js issue 375: a valid
// key with another App's id gets that); and 404 "Not Found" for an
// installation that is not the App's.
server_response simulator::impl::installation_token(const server_request& r, std::int64_t installation) {
  const auto undecodable = "A JSON web token could not be decoded";
  std::string_view h = r.header_value("authorization");
  if (!h.starts_with("Bearer ")) return rest_error(401, undecodable);
  const auto jwt = h.substr(7);
  auto named = github::peek_jwt_claims(jwt);
  if (!named) return rest_error(401, undecodable);
  auto app = std::find_if(apps.begin(), apps.end(), [&](const auto& kv) {
    return std::to_string(kv.first) == named->iss ||
           (!kv.second.client_id.empty() && kv.second.client_id == named->iss);
  });
  if (app == apps.end()) return rest_error(404, "Integration not found");
  // The client signed with its own clock, which advance_clock does not move:
  // against the simulator's, a skip of ten minutes would expire every JWT.
  const auto real_now =
      std::chrono::duration_cast<std::chrono::seconds>(wall_clock::now().time_since_epoch()).count();
  auto claims = github::testing::verify_app_jwt(jwt, app->second.public_key_pem, real_now);
  if (!claims) return rest_error(401, std::string(undecodable) + ": " + claims.error());
  auto owned = installations.find(installation);
  if (owned == installations.end() || owned->second.app_id != app->first) return rest_error(404, "Not Found");
  auto token = new_token("ghs_");
  auto expires = now() + options.installation_token_ttl.count();
  installation_tokens[token] = expires;
  token_installation[token] = installation;
  return json_response(
      201, "{\"token\":" + json::quote(token) + ",\"expires_at\":\"" + format_rfc3339(expires) +
               "\",\"permissions\":{\"administration\":\"write\",\"organization_self_hosted_runners\":"
               "\"write\"},\"repository_selection\":\"" +
               (owned->second.repositories.empty() ? "all" : "selected") + "\"}");
}

server_response simulator::impl::rest(const server_request& r, const std::vector<std::string>& seg,
                                      lock_type& lock) {
  const bool post = r.method == "POST";
  // App installation token: Bearer <App JWT>.
  if (seg.size() == 4 && seg[0] == "app" && seg[1] == "installations" && seg[3] == "access_tokens" && post) {
    if (auto f = enter("rest.app_token", false, lock)) return *f;
    return installation_token(r, std::atoll(seg[2].c_str()));
  }
  // Actions service registration: RemoteAuth <registration token>. The body
  // names the configuration URL (github.com, *.ghe.com or GHES form); its path
  // must be the scope the registration token was issued for, and the answer
  // is that scope's tenant with an admin token for it.
  if (seg.size() == 2 && seg[0] == "actions" && seg[1] == "runner-registration" && post) {
    if (auto f = enter("rest.runner_registration", false, lock)) return *f;
    std::string_view h = r.header_value("authorization");
    if (!h.starts_with("RemoteAuth ")) return rest_error(401, "Requires authentication");
    auto it = registration_tokens.find(std::string(h.substr(11)));
    if (it == registration_tokens.end() || it->second.expires <= now())
      return rest_error(401, "Bad credentials");
    rapidjson::Document d;
    d.Parse(r.body.data(), r.body.size());
    if (d.HasParseError() || !d.IsObject()) return rest_error(400, "Problems parsing JSON");
    auto target = github::parse_config_url(json::str(d, "url"));
    if (!target) return rest_error(422, "url: " + target.error());
    if (target->where.api_path().substr(1) != it->second.scope_key)
      return rest_error(404, "Not Found");  // the token is for another scope
    const auto& tenant = tenant_for(it->second.scope_key);
    auto exp = now() + options.admin_token_ttl.count();
    // A unique iss: two registrations within a second must not get the same token.
    auto token = github::testing::make_hs256_jwt("simulator", {"simulator:" + new_uuid(), now(), exp});
    admin_tokens[token] = scoped_token{exp, tenant.scope_key, tenant.id};
    return json_response(200, "{\"url\":" + json::quote(tenant_url(tenant.id)) + ",\"token\":" +
                                  json::quote(token) + ",\"token_schema\":\"OAuthAccessToken\"}");
  }
  // GitHub's newest runner release (public: no credentials needed).
  if (seg.size() == 5 && seg[0] == "repos" && seg[1] == "actions" && seg[2] == "runner" &&
      seg[3] == "releases" && seg[4] == "latest" && r.method == "GET") {
    if (auto f = enter("rest.latest_runner_release", false, lock)) return *f;
    const auto& tag = options.latest_runner_release;
    return json_response(200, "{\"id\":1,\"tag_name\":" + json::quote(tag) + ",\"name\":" + json::quote(tag) +
                                  ",\"draft\":false,\"prerelease\":false,\"published_at\":\"" +
                                  format_rfc3339(latest_release_published_at) + "\",\"html_url\":" +
                                  json::quote("https://github.com/actions/runner/releases/tag/" + tag) + "}");
  }
  if (auto actions = actions_rest(r, seg, lock)) return std::move(*actions);
  // Scoped runner endpoints.
  size_t scope_len = 0;
  if (seg.size() >= 3 && seg[0] == "repos")
    scope_len = 3;
  else if (seg.size() >= 2 && (seg[0] == "orgs" || seg[0] == "enterprises"))
    scope_len = 2;
  if (scope_len == 0 || seg.size() < scope_len + 2 || seg[scope_len] != "actions") {
    if (auto f = enter("rest.unknown", false, lock)) return *f;
    return rest_error(404, "Not Found");
  }
  std::string scope_key = seg[0] + "/" + seg[1] + (scope_len == 3 ? "/" + seg[2] : "");
  std::vector<std::string> rest(seg.begin() + static_cast<long>(scope_len) + 1, seg.end());
  std::string endpoint;
  if (rest.size() == 2 && rest[0] == "runners" && rest[1] == "registration-token" && post)
    endpoint = "rest.registration_token";
  else if (rest.size() == 2 && rest[0] == "runners" && rest[1] == "remove-token" && post)
    endpoint = "rest.remove_token";
  else if (rest.size() == 2 && rest[0] == "runners" && rest[1] == "generate-jitconfig" && post)
    endpoint = "rest.generate_jitconfig";
  else if (rest.size() == 1 && rest[0] == "runners" && r.method == "GET")
    endpoint = "rest.list_runners";
  else if (rest.size() == 2 && rest[0] == "runners" && r.method == "GET")
    endpoint = "rest.get_runner";
  else if (rest.size() == 2 && rest[0] == "runners" && r.method == "DELETE")
    endpoint = "rest.delete_runner";
  else if (rest.size() == 1 && rest[0] == "runner-groups" && r.method == "GET")
    endpoint = "rest.runner_groups";
  else {
    if (auto f = enter("rest.unknown", false, lock)) return *f;
    return rest_error(404, "Not Found");
  }
  if (auto f = enter(endpoint, false, lock)) return *f;
  std::string token;
  if (auto denied = check_rest_auth(r, token)) return *denied;
  if (!scope_known(scope_key) || !token_covers(token, scope_key))
    return rest_json(404, "{\"message\":\"Not Found\"}", token);

  if (endpoint == "rest.registration_token" || endpoint == "rest.remove_token") {
    auto t = new_token("AAREG");
    auto exp = now() + 3600;
    if (endpoint == "rest.registration_token") registration_tokens[t] = scoped_token{exp, scope_key, 0};
    return rest_json(201, "{\"token\":" + json::quote(t) + ",\"expires_at\":\"" + format_rfc3339(exp) + "\"}",
                     token);
  }
  if (endpoint == "rest.generate_jitconfig") {
    rapidjson::Document d;
    d.Parse(r.body.data(), r.body.size());
    if (d.HasParseError() || !d.IsObject())
      return rest_json(400, "{\"message\":\"Problems parsing JSON\"}", token);
    auto name = json::str(d, "name");
    const auto* group = json::member(d, "runner_group_id");
    const auto* labels = json::member(d, "labels");
    if (name.empty())
      return rest_json(422, "{\"message\":\"Invalid request.\\n\\n\\\"name\\\" wasn't supplied.\"}", token);
    if (group == nullptr || !group->IsInt64())
      return rest_json(
          422, "{\"message\":\"Invalid request.\\n\\n\\\"runner_group_id\\\" wasn't supplied.\"}", token);
    if (labels == nullptr || !labels->IsArray() || labels->Size() < 1 || labels->Size() > 100)
      return rest_json(422, "{\"message\":\"Invalid request.\\n\\nlabels must have 1 to 100 items.\"}",
                       token);
    if (!runner_group(scope_key, group->GetInt64()))
      return rest_json(404, "{\"message\":\"Not Found\"}", token);  // no such group here
    if (runner_by_name(scope_key, 0, name) != nullptr)
      return rest_json(409, "{\"message\":\"Already exists - A runner with the name *** already exists.\"}",
                       token);
    sim_runner rn;
    rn.id = next_runner_id++;
    rn.name = name;
    rn.scope_key = scope_key;
    rn.group_id = group->GetInt64();
    rn.labels = json::strings(d, "labels");
    rn.online = options.auto_online;
    auto& stored = runners[rn.id] = rn;
    std::string config = octorun::base64url_encode("{\"name\":" + json::quote(name) +
                                                   ",\"id\":" + std::to_string(rn.id) + "}");
    auto body = "{\"runner\":" + runner_json(stored) + ",\"encoded_jit_config\":" + json::quote(config) + "}";
    if (stored.online) dispatch();
    changed();
    return rest_json(201, body, token);
  }
  if (endpoint == "rest.list_runners") {
    auto name = r.query_param("name");
    std::vector<const sim_runner*> found;
    for (const auto& [id, rn] : runners)
      if (rn.scope_key == scope_key && rn.scale_set_id == 0 && (name.empty() || rn.name == name))
        found.push_back(&rn);
    const auto w = paginate(r, found.size(), base + "/" + scope_key + "/actions/runners");
    std::string list = "[";
    for (auto i = w.from; i < w.to; ++i) list += (i > w.from ? "," : "") + runner_json(*found[i]);
    auto resp = rest_json(
        200, "{\"total_count\":" + std::to_string(found.size()) + ",\"runners\":" + list + "]}", token);
    if (!w.link.empty()) resp.headers.emplace_back("Link", w.link);
    return resp;
  }
  if (endpoint == "rest.get_runner" || endpoint == "rest.delete_runner") {
    auto it = runners.find(std::atoll(rest[1].c_str()));
    if (it == runners.end() || it->second.scope_key != scope_key || it->second.scale_set_id != 0)
      return rest_json(404, "{\"message\":\"Not Found\"}", token);
    if (endpoint == "rest.get_runner") return rest_json(200, runner_json(it->second), token);
    if (it->second.busy)
      return rest_json(
          422,
          "{\"message\":" +
              json::quote("Bad request - Runner \"" + it->second.name + "\" is still running a job\"") + "}",
          token);
    runners.erase(it);
    changed();
    return rest_json(204, "", token);
  }
  // rest.runner_groups: organizations and enterprises have them, repositories not.
  if (seg[0] == "repos") return rest_json(404, "{\"message\":\"Not Found\"}", token);
  const auto groups = runner_groups_of(scope_key);
  std::string list;
  for (const auto& g : groups)
    list += (list.empty() ? "" : ",") + std::string("{\"id\":") + std::to_string(g.id) +
            ",\"name\":" + json::quote(g.name) +
            ",\"visibility\":\"all\",\"default\":" + (g.id == 1 ? "true" : "false") +
            ",\"inherited\":false,\"allows_public_repositories\":false}";
  return rest_json(
      200, "{\"total_count\":" + std::to_string(groups.size()) + ",\"runner_groups\":[" + list + "]}", token);
}

}  // namespace octorun::sim
