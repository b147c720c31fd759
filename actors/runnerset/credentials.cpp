#include "actors/runnerset/credentials.hpp"

#include <cctype>
#include <optional>

#include "common/base64.hpp"
#include "common/json.hpp"

namespace octorun::runnerset {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

expected<credentials, std::string> read_credentials(const rapidjson::Value& secret) {
  const auto* data = json::find_value(secret, "data");
  if (data == nullptr || !data->IsObject()) return unexpected{std::string("the Secret has no data")};
  std::string bad;
  auto field = [&](const char* key) -> std::optional<std::string> {
    const auto* v = json::find_value(*data, key);
    if (v == nullptr) return std::nullopt;
    auto decoded =
        v->IsString() ? base64_decode(std::string_view(v->GetString(), v->GetStringLength())) : std::nullopt;
    if (!decoded) {
      bad = key;
      return std::nullopt;
    }
    return *decoded;
  };
  auto token = field("github_token");
  auto app_id = field("github_app_id");
  auto installation = field("github_app_installation_id");
  auto key = field("github_app_private_key");
  if (!bad.empty()) return unexpected{"key " + bad + " is not valid base64"};

  if (token && (app_id || installation || key))
    return unexpected{std::string("the Secret has both github_token and GitHub App keys; keep one kind")};
  if (token) {
    auto t = trim(*token);
    if (t.empty()) return unexpected{std::string("key github_token is empty")};
    return credentials{pat_credentials{t}};
  }
  if (!app_id && !installation && !key)
    return unexpected{
        std::string("the Secret has neither github_token nor github_app_id, github_app_installation_id and "
                    "github_app_private_key")};
  for (auto [value, name] :
       {std::pair{&app_id, "github_app_id"}, std::pair{&installation, "github_app_installation_id"},
        std::pair{&key, "github_app_private_key"}})
    if (!*value || trim(**value).empty())
      return unexpected{std::string("GitHub App credentials need key ") + name};
  app_credentials app{trim(*app_id), 0, *key};
  try {
    size_t used = 0;
    auto text = trim(*installation);
    app.installation_id = std::stoll(text, &used);
    if (used != text.size() || app.installation_id <= 0) throw std::invalid_argument("not positive");
  } catch (const std::exception&) {
    return unexpected{std::string("key github_app_installation_id must be a positive number")};
  }
  if (app.private_key_pem.find("-----BEGIN") == std::string::npos)
    return unexpected{std::string("key github_app_private_key is not a PEM private key")};
  return credentials{app};
}

}  // namespace octorun::runnerset
