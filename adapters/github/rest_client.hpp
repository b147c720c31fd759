// GitHub REST for self-hosted runners at repository, organization or
// enterprise scope, on github.com or GHES. Blocking: one instance per thread
// (see github_workers.hpp for the actor front).
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/github/auth.hpp"
#include "adapters/github/caller.hpp"
#include "adapters/github/scope.hpp"
#include "messages/active_work.hpp"
#include "model/runner_version.hpp"

namespace octorun::github {

struct auth_token {
  std::string token;
  std::int64_t expires_at = 0;
};

struct runner {
  std::int64_t id = 0;
  std::string name;
  std::string os;
  std::string status;  // "online" / "offline"
  bool busy = false;
  bool ephemeral = false;
  std::int64_t runner_group_id = 0;
  std::vector<std::string> labels;  // label names
};

struct jit_request {
  std::string name;
  std::int64_t runner_group_id = 1;
  std::vector<std::string> labels;
  std::string work_folder = "_work";
};

struct jit_config {
  runner registered;
  std::string encoded_jit_config;
};

// DELETE of a runner: a busy runner is an answer, not a failure to retry blindly.
enum class delete_outcome { deleted, not_found, busy };

struct runner_group {
  std::int64_t id = 0;
  std::string name;
  bool is_default = false;
};

using messages::active_work;
using messages::sweep_request;
using messages::workflow_job;

struct rest_options {
  std::string api_base;  // from target_for
  scope where;
  std::shared_ptr<token_source> auth;
  call_options call;
};

class rest_client {
 public:
  explicit rest_client(rest_options options);

  result<auth_token> registration_token();
  result<auth_token> remove_token();
  // On 409 (name taken, e.g. a retried request GitHub had completed) the
  // conflict names the runner holding the name (error::holder), if any.
  result<jit_config> generate_jit_config(const jit_request& req);
  result<std::vector<runner>> list_runners(std::string_view name = {});  // all pages
  // The runner of exactly this name (GitHub compares names case-insensitively), if any.
  result<std::optional<runner>> runner_by_name(std::string_view name);
  result<runner> get_runner(std::int64_t id);
  result<delete_outcome> delete_runner(std::int64_t id);
  // "default" (or empty) finds the default group; repository scope only has the default group (id 1).
  result<runner_group> runner_group_by_name(std::string_view name);

  // The workflow runs queued or in progress in the scope's repositories (an
  // organisation's from GET /orgs/{org}/repos; enterprises: unsupported), the
  // jobs of each such run neither followed nor listed before, and the jobs of
  // each followed run that is over. All pages.
  result<active_work> list_active_work(const sweep_request& ask);

  // GitHub's newest runner release (GET /repos/actions/runner/releases/latest
  // on this client's host: github.com's API, or a GHES's, which may have
  // none: not_found). One answer per host serves every client in the
  // process for `ttl`: the release is public and changes every few weeks.
  result<model::runner_release> latest_runner_release(std::chrono::seconds ttl = latest_release_ttl);
  static constexpr std::chrono::seconds latest_release_ttl{6 * 3600};

  // Any REST call on this client's credentials; `path` is appended to api_base.
  result<http::response> call(std::string method, std::string path, std::string body = {});

  api_caller& caller() { return caller_; }
  const api_caller& caller() const { return caller_; }
  const rest_options& options() const { return options_; }
  const rate_limit_info& last_rate_limit() const { return caller_.last_rate_limit(); }

 private:
  result<auth_token> token_call(const char* suffix);
  result<jit_config> jit_once(const jit_request& req);
  error fail(const http::response& r) const;
  template <class Take>
  result<ok_t> each_page(const std::string& path, Take take);
  // The JSON object of a `success` answer, or the error.
  result<rapidjson::Document> answer(const result<http::response>& r, long success) const;
  rest_options options_;
  api_caller caller_;
};

// Pure: the runner object of the REST API (labels are objects with a name).
runner parse_runner(const rapidjson::Value& v);
// Pure: the release of GET /repos/actions/runner/releases/latest (tag_name
// "vX.Y.Z", published_at); an error for a tag that names no version.
expected<model::runner_release, std::string> parse_latest_release(const rapidjson::Value& v);
// Pure: a job of GET …/actions/runs/{id}/jobs.
workflow_job parse_workflow_job_item(const rapidjson::Value& v, const std::string& repository);

}  // namespace octorun::github
