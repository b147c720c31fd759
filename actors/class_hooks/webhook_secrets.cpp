#include "actors/class_hooks/webhook_secrets.hpp"

#include "common/base64.hpp"
#include "common/json.hpp"

namespace octorun::class_hooks {

class_secret read_webhook_secret(const rapidjson::Value& secret, const model::secret_key_ref& ref) {
  const auto key = "key " + ref.key + " of Secret " + ref.name;
  const auto* data = json::find_value(secret, "data");
  const auto* value =
      data != nullptr && data->IsObject() ? json::find_value(*data, ref.key.c_str()) : nullptr;
  if (value == nullptr) return unexpected{key + " is absent"};
  auto decoded = value->IsString()
                     ? base64_decode(std::string_view(value->GetString(), value->GetStringLength()))
                     : std::nullopt;
  if (!decoded) return unexpected{key + " is not valid base64"};
  auto s = std::move(*decoded);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty()) return unexpected{key + " is empty"};
  return s;
}

std::map<std::string, model::secret_key_ref> webhook_secret_refs(
    const std::map<std::string, model::runner_class>& classes) {
  std::map<std::string, model::secret_key_ref> out;
  for (const auto& [name, c] : classes)
    if (!c.spec.webhook_secret.name.empty()) out.emplace(name, c.spec.webhook_secret);
  return out;
}

class_secret after_read(const std::optional<class_secret>& before, const secret_read& read,
                        const model::secret_key_ref& ref, const std::string& ns) {
  if (read.secret != nullptr) {
    auto got = read_webhook_secret(*read.secret, ref);
    if (!got) return unexpected{got.error() + " (namespace " + ns + ")"};
    return got;
  }
  if (read.not_found) return unexpected{"Secret " + ns + "/" + ref.name + " does not exist"};
  if (before && *before) return *before;
  return unexpected{"Secret " + ns + "/" + ref.name + " cannot be read: " + read.error};
}

}  // namespace octorun::class_hooks
