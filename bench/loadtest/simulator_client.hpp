// The GitHub simulator's control API (test/simulator/README.md) over HTTP:
// the same calls whether the simulator runs in this process or elsewhere.
// One instance per thread (it keeps its connection).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "adapters/http/http_client.hpp"
#include "common/expected.hpp"

namespace octorun::loadtest {

class simulator_client {
 public:
  explicit simulator_client(std::string base_url);

  // Answers at all (a GET of the call counts within 5 s).
  expected<ok_t, std::string> reachable();
  expected<ok_t, std::string> add_organization(const std::string& login);
  expected<ok_t, std::string> add_pat(const std::string& token);
  expected<ok_t, std::string> set_webhook(const std::string& url, const std::string& secret);
  expected<std::int64_t, std::string> add_job(const std::string& repository,
                                              const std::vector<std::string>& labels,
                                              std::int64_t duration_ms);
  expected<ok_t, std::string> runner_online(const std::string& name);
  expected<ok_t, std::string> complete_job(std::int64_t id);
  expected<std::map<std::string, std::int64_t>, std::string> calls();
  expected<std::string, std::string> state();  // GET /_sim/state

  const std::string& base_url() const { return base_; }

 private:
  expected<std::string, std::string> call(const std::string& method, const std::string& path,
                                          const std::string& body, std::chrono::milliseconds timeout);
  std::string base_;
  http::client http_;
};

}  // namespace octorun::loadtest
