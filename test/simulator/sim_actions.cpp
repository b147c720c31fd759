// The simulator's REST API for workflow runs and jobs, as GitHub documents
// it: an organisation's repositories (GET /orgs/{org}/repos), a
// repository's workflow runs filtered by status (GET
// /repos/{o}/{r}/actions/runs?status=) and the jobs of a run (GET
// …/actions/runs/{run_id}/jobs). Pagination by page and per_page (at most
// 100, default 30) with a Link header. Each simulated job is the one job of
// its own run; a run's status is its job's (queued, in_progress, completed).
#include <algorithm>
#include <set>

#include "common/rfc3339.hpp"
#include "test/simulator/simulator_impl.hpp"

namespace octorun::sim {

namespace json = octorun::json;

page_window paginate(const server_request& r, std::size_t total, const std::string& url) {
  const auto per_page = static_cast<std::size_t>(std::clamp<long long>(
      r.query_param("per_page").empty() ? 30 : std::atoll(r.query_param("per_page").c_str()), 1, 100));
  const auto page = static_cast<std::size_t>(
      std::max<long long>(1, r.query_param("page").empty() ? 1 : std::atoll(r.query_param("page").c_str())));
  page_window w;
  w.from = std::min(total, (page - 1) * per_page);
  w.to = std::min(total, w.from + per_page);
  if (w.to < total)
    w.link = "<" + url + (url.find('?') == std::string::npos ? "?" : "&") +
             "per_page=" + std::to_string(per_page) + "&page=" + std::to_string(page + 1) + ">; rel=\"next\"";
  return w;
}

namespace {

server_response with_link(server_response resp, const page_window& w) {
  if (!w.link.empty()) resp.headers.emplace_back("Link", w.link);
  return resp;
}

}  // namespace

std::optional<server_response> simulator::impl::actions_rest(const server_request& r,
                                                             const std::vector<std::string>& seg,
                                                             lock_type& lock) {
  if (r.method != "GET") return std::nullopt;
  const bool org_repos = seg.size() == 3 && seg[0] == "orgs" && seg[2] == "repos";
  const bool runs = seg.size() == 5 && seg[0] == "repos" && seg[3] == "actions" && seg[4] == "runs";
  const bool run_jobs =
      seg.size() == 7 && seg[0] == "repos" && seg[3] == "actions" && seg[4] == "runs" && seg[6] == "jobs";
  if (!org_repos && !runs && !run_jobs) return std::nullopt;
  const std::string endpoint = org_repos ? "rest.org_repos" : runs ? "rest.list_runs" : "rest.run_jobs";
  if (auto f = enter(endpoint, false, lock)) return *f;
  std::string token;
  if (auto denied = check_rest_auth(r, token)) return *denied;
  const std::string owner = seg[1];
  if (!token_covers(token, org_repos ? "orgs/" + owner : "repos/" + owner + "/" + seg[2]))
    return rest_json(404, "{\"message\":\"Not Found\"}", token);
  if (org_repos) {
    if (!scope_known("orgs/" + owner)) return rest_json(404, "{\"message\":\"Not Found\"}", token);
    // The organisation's repositories: those added and those jobs ran in.
    std::set<std::string> names;
    for (const auto& key : scopes)
      if (key.starts_with("repos/" + owner + "/")) names.insert(key.substr(7 + owner.size()));
    for (const auto& [id, j] : jobs)
      if (j.spec.repository.starts_with(owner + "/"))
        names.insert(j.spec.repository.substr(owner.size() + 1));
    const std::vector<std::string> list(names.begin(), names.end());
    const auto w = paginate(r, list.size(), base + "/api/v3/orgs/" + owner + "/repos");
    std::string body = "[";
    for (auto i = w.from; i < w.to; ++i)
      body += std::string(i > w.from ? "," : "") + "{\"id\":" + std::to_string(i + 1) +
              ",\"name\":" + json::quote(list[i]) + ",\"full_name\":" + json::quote(owner + "/" + list[i]) +
              ",\"private\":true,\"owner\":{\"login\":" + json::quote(owner) + "}}";
    return with_link(rest_json(200, body + "]", token), w);
  }
  const std::string repository = owner + "/" + seg[2];
  if (!scope_known("repos/" + repository) && !scope_known("orgs/" + owner))
    return rest_json(404, "{\"message\":\"Not Found\"}", token);
  const std::string repo_api = base + "/api/v3/repos/" + repository;
  if (runs) {
    const auto status = r.query_param("status");
    std::vector<const sim_job*> found;  // newest first, as GitHub lists runs
    for (auto it = jobs.rbegin(); it != jobs.rend(); ++it)
      if (it->second.spec.repository == repository && (status.empty() || job_status(it->second) == status))
        found.push_back(&it->second);
    const auto w =
        paginate(r, found.size(), repo_api + "/actions/runs" + (status.empty() ? "" : "?status=" + status));
    std::string list;
    for (auto i = w.from; i < w.to; ++i) {
      const auto& j = *found[i];
      list += std::string(i > w.from ? "," : "") + "{\"id\":" + std::to_string(j.run_id) +
              ",\"name\":" + json::quote(j.spec.workflow) +
              ",\"head_branch\":\"main\",\"head_sha\":\"0000000000000000000000000000000000000000\""
              ",\"run_number\":" +
              std::to_string(j.id) + ",\"run_attempt\":1,\"event\":\"push\",\"status\":\"" + job_status(j) +
              "\",\"conclusion\":null,\"workflow_id\":1,\"url\":" +
              json::quote(repo_api + "/actions/runs/" + std::to_string(j.run_id)) + ",\"created_at\":\"" +
              format_rfc3339(wall_clock::to_time_t(j.queued_at)) + "\"}";
    }
    return with_link(
        rest_json(200,
                  "{\"total_count\":" + std::to_string(found.size()) + ",\"workflow_runs\":[" + list + "]}",
                  token),
        w);
  }
  const auto run_id = std::atoll(seg[5].c_str());
  const sim_job* job = nullptr;
  for (const auto& [id, j] : jobs)
    if (j.run_id == run_id && j.spec.repository == repository) job = &j;
  if (job == nullptr) return rest_json(404, "{\"message\":\"Not Found\"}", token);
  const auto w = paginate(r, 1, repo_api + "/actions/runs/" + seg[5] + "/jobs");
  const std::string list = w.from < w.to ? job_json(*job, job_status(*job)) : "";
  return with_link(rest_json(200, "{\"total_count\":1,\"jobs\":[" + list + "]}", token), w);
}

}  // namespace octorun::sim
