// A RunnerSet's GitHub credentials, read from its Secret: either a personal
// access token (key github_token) or a GitHub App (github_app_id,
// github_app_installation_id, github_app_private_key). Pure: a broken Secret
// gets a message that names the key and what is wrong with it.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <variant>

#include "common/expected.hpp"

namespace octorun::runnerset {

struct pat_credentials {
  std::string token;
};
struct app_credentials {
  std::string app_id;  // the App ID or client ID (the JWT issuer)
  std::int64_t installation_id = 0;
  std::string private_key_pem;
};
using credentials = std::variant<pat_credentials, app_credentials>;

// `secret` is the Secret object as the API returns it (data base64-encoded).
expected<credentials, std::string> read_credentials(const rapidjson::Value& secret);

}  // namespace octorun::runnerset
