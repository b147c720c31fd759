// The admission rules for RunnerSet and Runner as pure functions. Each
// returns every problem found, as field path + a reason a user can act on.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "adapters/admission/policy.hpp"
#include "model/types.hpp"

namespace octorun::admission {

using model::field_errors;

// The whole RunnerSet: names, scope URL (and the hosts `policy` allows),
// credentials, labels, runner counts (up to policy.max_runners), template
// and variants.
field_errors validate_runnerset(const model::runnerset& set, const admission_policy& policy = {});

// A Runner on creation.
field_errors validate_runner(const model::runner& runner);

// A Runner update: the spec must be unchanged (labels, annotations and status
// may change). Compares the raw objects so fields we do not model count too.
field_errors validate_runner_update(const rapidjson::Value& old_object, const rapidjson::Value& new_object);

// The single rules, exposed for the manager and for tests.
// A RunnerSet's scope URL, as parsed when the set was decoded (runnerset_spec::scope).
void check_scope_url(const std::string& path, const model::runnerset_spec& spec,
                     const model::scope_rules& rules, field_errors& out);
void check_credentials_secret(const std::string& path, const std::string& name, field_errors& out);
void check_runner_labels(const std::string& path, const std::vector<std::string>& labels, field_errors& out);
void check_runner_counts(const std::string& path, const std::optional<std::int32_t>& min,
                         const std::optional<std::int32_t>& max, std::int32_t cap, field_errors& out);
void check_pod_template(const std::string& path, const model::pod_template& t, field_errors& out);
void check_generated_names(const std::string& path, const std::string& set, const std::string& variant,
                           field_errors& out);
void check_variants(const model::runnerset& set, std::int32_t cap, field_errors& out);

// "RunnerSet \"ci\" is invalid: a: x; b: y" for the denial message.
std::string summarize(const std::string& kind, const std::string& name, const field_errors& errors);

}  // namespace octorun::admission
