#include "adapters/github/webhook.hpp"

#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/rfc3339.hpp"
#include "common/strings.hpp"
#include "model/naming.hpp"
#include "model/scope.hpp"

namespace octorun::github {
namespace {

// The repository ("owner/repo") and its server (model::server_identity),
// from repository.full_name and repository.html_url, which must agree.
expected<std::pair<std::string, std::string>, std::string> repository_of(const rapidjson::Value& d) {
  using R = expected<std::pair<std::string, std::string>, std::string>;
  const auto* repo = json::member(d, "repository");
  if (repo == nullptr || !repo->IsObject())
    return R(unexpected{std::string("payload has no repository object")});
  const auto full_name = json::str(*repo, "full_name");
  if (full_name.find('/') == std::string::npos)
    return R(unexpected{std::string("repository.full_name is not \"owner/repo\"")});
  const auto html_url = json::str(*repo, "html_url");
  if (html_url.empty()) return R(unexpected{std::string("repository.html_url is missing")});
  auto scope = model::parse_scope_url(html_url);
  if (!scope || scope->kind != model::github_scope::level::repository)
    return R(unexpected{std::string("repository.html_url is not a repository's web URL")});
  if (ascii_lower(scope->owner + "/" + scope->repository) != ascii_lower(full_name))
    return R(unexpected{std::string("repository.html_url does not name repository.full_name")});
  return R(std::pair{full_name, model::server_identity(*scope)});
}

// installation.id (GitHub adds it to an App's deliveries only); 0: none.
expected<std::int64_t, std::string> installation_of(const rapidjson::Value& d) {
  const auto* in = json::member(d, "installation");
  if (in == nullptr || in->IsNull()) return std::int64_t{0};
  const auto* id = in->IsObject() ? json::member(*in, "id") : nullptr;
  if (id == nullptr || !id->IsInt64() || id->GetInt64() <= 0)
    return unexpected{std::string("installation.id is not a positive 64-bit integer")};
  return id->GetInt64();
}

}  // namespace

intake_path intake_path_of(std::string_view path, std::string_view base) {
  if (path == base) return {intake_path::kind::platform, {}};
  if (!path.starts_with(base) || !path.substr(base.size()).starts_with(class_paths)) return {};
  auto name = path.substr(base.size() + class_paths.size());
  // A RunnerClass is named as any cluster-scoped object: a DNS subdomain.
  if (!model::is_dns_subdomain(name)) return {};
  return {intake_path::kind::runner_class, std::string(name)};
}

expected<std::optional<messages::job_message>, std::string> parse_workflow_job(std::string_view body) {
  using R = expected<std::optional<messages::job_message>, std::string>;
  auto parsed = json::parse(body, json::sources::github_webhook);
  if (!parsed) return R(unexpected{"payload: " + parsed.error()});
  const auto& d = *parsed;
  if (!d.IsObject()) return R(unexpected{std::string("payload is not a JSON object")});
  std::string action = json::str(d, "action");
  if (action.empty()) return R(unexpected{std::string("payload has no action")});
  const auto* job = json::member(d, "workflow_job");
  if (job == nullptr || !job->IsObject())
    return R(unexpected{std::string("payload has no workflow_job object")});
  const auto* id = json::member(*job, "id");
  if (id == nullptr || !id->IsInt64())
    return R(unexpected{std::string("workflow_job.id is not a 64-bit integer")});

  if (action == "waiting") return R(std::optional<messages::job_message>{});  // approval pending
  auto repository = repository_of(d);
  if (!repository) return R(unexpected{repository.error()});
  auto installation = installation_of(d);
  if (!installation) return R(unexpected{installation.error()});

  messages::job_info info;
  info.source = messages::job_source::webhook;
  info.repository = std::move(repository->first);
  info.server = std::move(repository->second);
  info.installation_id = *installation;
  info.job_id = json::i64(*job, "id");
  info.github_job_id = std::to_string(info.job_id);
  info.run_id = json::i64(*job, "run_id");
  info.labels = json::strings(*job, "labels");
  info.display_name = json::str(*job, "name");
  std::string workflow = json::str(*job, "workflow_name");
  std::string branch = json::str(*job, "head_branch");
  info.workflow_ref = branch.empty() ? workflow : workflow + "@" + branch;
  info.queued_at = parse_rfc3339(json::str(*job, "created_at")).value_or(0);
  info.started_at = parse_rfc3339(json::str(*job, "started_at")).value_or(0);
  info.completed_at = parse_rfc3339(json::str(*job, "completed_at")).value_or(0);

  std::string runner_name = json::str(*job, "runner_name");
  std::int64_t runner_id = json::i64(*job, "runner_id");
  if (action == "queued")
    return R(std::optional<messages::job_message>(messages::job_available{std::move(info)}));
  if (action == "in_progress")
    return R(
        std::optional<messages::job_message>(messages::job_started{std::move(info), runner_name, runner_id}));
  if (action == "completed") {
    std::string conclusion = json::str(*job, "conclusion");
    return R(std::optional<messages::job_message>(
        messages::job_completed{std::move(info), runner_name, runner_id, conclusion}));
  }
  return R(unexpected{"unknown workflow_job action '" + action + "'"});
}

void delivery_dedupe::expire(clock::time_point now) {
  while (!order_.empty() && (order_.front().first <= now || order_.size() > capacity_)) {
    auto it = expiry_.find(order_.front().second);
    if (it != expiry_.end() && it->second == order_.front().first) expiry_.erase(it);
    order_.pop_front();
  }
}

bool delivery_dedupe::first_seen(const std::string& id, clock::time_point now) {
  expire(now);
  const auto key = digest128_of(id);
  auto it = expiry_.find(key);
  if (it != expiry_.end() && it->second > now) return false;
  auto until = now + ttl_;
  expiry_[key] = until;
  order_.emplace_back(until, key);
  expire(now);
  return true;
}

std::optional<std::string> job_replays::replayed(const messages::job_message& m, clock::time_point now,
                                                 std::int64_t wall_now) {
  const auto& job = messages::job_of(m);
  const char* action = std::holds_alternative<messages::job_available>(m)   ? "queued"
                       : std::holds_alternative<messages::job_started>(m)   ? "in_progress"
                       : std::holds_alternative<messages::job_completed>(m) ? "completed"
                                                                            : nullptr;
  if (action == nullptr) return std::nullopt;  // job_assigned: the listener's, never a delivery's
  const auto id = std::to_string(job.job_id);
  // Each RunnerClass's path remembers its own: a body signed with one
  // class's secret must not mark another class's job as seen.
  const auto key = job.runner_class.empty() ? id : job.runner_class + " " + id;
  const bool queued = std::holds_alternative<messages::job_available>(m);
  if (queued && job.queued_at > 0 && wall_now - job.queued_at > window_.count())
    return "job " + id + " was queued " + std::to_string((wall_now - job.queued_at) / 3600) +
           " hours ago, longer than a job waits on GitHub's queue: a replayed body";
  if (!seen_.first_seen(key + " " + action, now))
    return "job " + id + " was " + action + " before (under another delivery id): a replayed body";
  if (!queued) seen_.first_seen(key + " queued", now);  // a later queued of a started job is a replay
  return std::nullopt;
}

}  // namespace octorun::github
