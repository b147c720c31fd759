// The RunnerClasses' own webhook secrets (spec.github.webhookSecretRef), as
// the webhook intake verifies a class's path with them: which classes have
// one, and what a read of a class's Secret makes of it. Pure; the reader
// (class_hooks_actor.hpp) reads the Secrets as a RunnerSet reads its class's
// credentials Secret: by name, in the platform's namespace, again at every
// resync (a rotated Secret) and whenever the class changes.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "model/runner_class.hpp"

namespace octorun::class_hooks {

// A class's secret, or why its path cannot verify anything (answered 503).
using class_secret = expected<std::string, std::string>;

// The class's webhook secret in `secret` (a Secret as the API returns it,
// data base64-encoded), at `ref.key`; trailing line breaks dropped (a file
// written by `echo`). Absent, not base64 or empty: why, naming the key.
class_secret read_webhook_secret(const rapidjson::Value& secret, const model::secret_key_ref& ref);

// The classes that name a webhook secret, and where it is.
std::map<std::string, model::secret_key_ref> webhook_secret_refs(
    const std::map<std::string, model::runner_class>& classes);

// What one read of a class's Secret (in namespace `ns`) brought.
struct secret_read {
  const rapidjson::Value* secret = nullptr;  // the Secret, when read
  bool not_found = false;
  std::string error;  // another failure (the apiserver unreachable, forbidden)
};

// The class's secret after `read`. A read that failed for another reason
// than the Secret's absence keeps a secret that worked (a blip must not
// turn a working path off); otherwise it says why.
class_secret after_read(const std::optional<class_secret>& before, const secret_read& read,
                        const model::secret_key_ref& ref, const std::string& ns);

}  // namespace octorun::class_hooks
