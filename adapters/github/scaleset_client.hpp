// The runner scale-set protocol (listener side): registration with the
// Actions service, scale sets, the message session with its long poll and
// acknowledgement, job acquisition, JIT configuration and runner removal.
// Blocking: one instance per listener thread (a detached actor).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/github/rest_client.hpp"
#include "adapters/github/server_urls.hpp"
#include "messages/jobs.hpp"

namespace octorun::github {

struct scale_set {
  std::int64_t id = 0;
  std::string name;
  std::int64_t runner_group_id = 0;
  std::string runner_group_name;
  std::vector<std::string> labels;
  bool disable_update = true;
  messages::job_statistics statistics;
};

struct scaleset_session {
  std::string session_id;
  std::string owner_name;
  std::int64_t scale_set_id = 0;
  std::string message_queue_url;
  std::string message_queue_token;
  messages::job_statistics statistics;
};

// What the service sent that the client does not take (an unknown message
// type, a body that is not a list of job messages, an unknown or broken job
// message): skipped, the rest of the message kept; the listener logs and
// counts it and acknowledges the message all the same (otherwise the service
// redelivers it to every session, for ever).
struct skipped_part {
  std::string reason;  // a metric label: unknown_message_type, malformed_message
  std::string detail;  // for the log
};

struct queue_message {
  std::int64_t message_id = 0;
  std::vector<messages::job_message> jobs;
  // None (or a message of an unknown type): demand is not touched.
  std::optional<messages::job_statistics> statistics;
  std::vector<skipped_part> skipped;
};

struct runner_reference {
  std::int64_t id = 0;
  std::string name;
  std::int64_t scale_set_id = 0;    // 0: a REST runner (no scale set)
  std::vector<std::string> labels;  // a REST runner's label names (the scale-set API's: not read)
};

struct scaleset_jit {
  runner_reference runner;
  std::string encoded_jit_config;
};

struct scaleset_options {
  // https://github.com/org, .../owner/repo, .../enterprises/e: for callers
  // that hold only the text (make() parses it); ignored when `where` is set.
  std::string config_url;
  std::shared_ptr<token_source> auth;
  call_options call;
  std::chrono::seconds long_poll{50};  // the service holds get-message about 50 s
  // Set by the owner to end a long poll in flight at once (shutdown), so the
  // session can be deleted without waiting out the poll.
  std::shared_ptr<std::atomic<bool>> stop_polling;
  // The scope, parsed already (a set's, when the set was decoded).
  std::optional<model::github_scope> where{};
};

class scaleset_client {
 public:
  // Fails on an unparseable config URL.
  static expected<std::unique_ptr<scaleset_client>, std::string> make(scaleset_options options);

  result<runner_group> runner_group_by_name(const std::string& name);
  result<std::optional<scale_set>> scale_set_by_name(std::int64_t runner_group_id, const std::string& name);
  result<scale_set> get_scale_set(std::int64_t id);
  result<scale_set> create_scale_set(const scale_set& s);
  result<scale_set> update_scale_set(std::int64_t id, const scale_set& changes);  // non-default fields only
  result<ok_t> delete_scale_set(std::int64_t id);

  // A 409 (another listener holds the session) comes back as error_kind::conflict.
  result<scaleset_session> create_session(std::int64_t scale_set_id, const std::string& owner_name);
  // As create_session, but on a 409 deletes `previous_session_id` (a session
  // this owner opened before, e.g. before a crash, which the service still
  // holds) and tries once more. Only that one session is ever deleted: a
  // session someone else holds stays a conflict.
  result<scaleset_session> take_over_session(std::int64_t scale_set_id, const std::string& owner_name,
                                             const std::string& previous_session_id);
  result<scaleset_session> refresh_session();
  result<ok_t> delete_session();
  const std::optional<scaleset_session>& session() const { return session_; }

  // Long poll: nullopt on 202 (nothing within the poll window). A 401
  // refreshes the session once and retries.
  result<std::optional<queue_message>> get_message(std::int64_t last_message_id, int max_capacity);
  result<ok_t> delete_message(std::int64_t message_id);  // acknowledge
  result<std::vector<std::int64_t>> acquire_jobs(std::int64_t scale_set_id,
                                                 const std::vector<std::int64_t>& request_ids);

  // 409 AgentExists: a conflict naming the runner that holds the name (error::holder), if any.
  result<scaleset_jit> generate_jit_config(std::int64_t scale_set_id, const std::string& name,
                                           const std::string& work_folder = {});
  result<runner_reference> get_runner(std::int64_t runner_id);
  result<std::optional<runner_reference>> runner_by_name(const std::string& name);
  result<delete_outcome> remove_runner(std::int64_t runner_id);

  rest_client& rest() { return rest_; }
  const std::string& tenant_url() const { return tenant_url_; }

 private:
  scaleset_client(scaleset_options options, github_target target);
  result<ok_t> ensure_admin();
  result<http::response> service(std::string method, std::string path, std::string body = {},
                                 bool queue_token = false);
  result<http::response> queue_call(http::request req);
  error fail(const http::response& r) const;
  result<rapidjson::Document> answer(const result<http::response>& r, long success) const;
  result<scale_set> scale_set_answer(const result<http::response>& r) const;
  // A session from `r`, its message queue URL checked (server_urls.hpp).
  result<scaleset_session> session_answer(const http::response& r, std::int64_t scale_set_id);

  scaleset_options options_;
  github_target target_;
  server_url_policy urls_;
  rest_client rest_;
  std::string tenant_url_;
  std::string admin_token_;
  std::int64_t admin_expires_ = 0;
  std::optional<scaleset_session> session_;
};

// The Actions service's answer to runner-registration: where the service
// is (checked against `urls`) and the admin token with its exp.
struct actions_registration {
  std::string tenant_url;
  std::string token;
  std::int64_t expires_at = 0;
};
result<actions_registration> parse_registration(const http::response& r, const server_url_policy& urls);

// Pure parsers of the service's JSON (tolerant: missing fields are zero/empty).
messages::job_statistics parse_statistics(const rapidjson::Value& v);
scale_set parse_scale_set(const rapidjson::Value& v);
expected<scaleset_session, std::string> parse_session(std::string_view body);
// The get-message envelope; `body` is a JSON array serialized into a string.
expected<queue_message, std::string> parse_queue_message(std::string_view body, std::int64_t scale_set_id);
std::string scale_set_json(const scale_set& s, bool for_update);

}  // namespace octorun::github
