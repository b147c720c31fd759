#include "adapters/github/webhook.hpp"

#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/rfc3339.hpp"

namespace octorun::github {

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

  messages::job_info info;
  info.source = messages::job_source::webhook;
  info.job_id = json::i64(*job, "id");
  info.github_job_id = std::to_string(info.job_id);
  info.run_id = json::i64(*job, "run_id");
  info.labels = json::strings(*job, "labels");
  info.display_name = json::str(*job, "name");
  if (const auto* repo = json::member(d, "repository")) info.repository = json::str(*repo, "full_name");
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
  if (action == "waiting") return R(std::optional<messages::job_message>{});
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

}  // namespace octorun::github
