#include "adapters/admission/handlers.hpp"

#include <algorithm>

#include "adapters/admission/defaults.hpp"
#include "adapters/admission/validation.hpp"
#include "adapters/tls/ca_bundle.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"
#include "model/class_rules.hpp"
#include "model/namespace_cap.hpp"
#include "model/namespace_secrets.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"

namespace octorun::admission {
namespace {

admission_response deny(const admission_request& req, const std::string& kind, const field_errors& errors) {
  admission_response r;
  r.uid = req.uid;
  r.allowed = false;
  r.code = 422;
  r.reason = "Invalid";
  r.message = summarize(kind, req.name, errors);
  r.causes = errors;
  return r;
}

admission_response allow(const admission_request& req) {
  admission_response r;
  r.uid = req.uid;
  return r;
}

bool deleting(const rapidjson::Value& object) {
  const rapidjson::Value* meta = json::member(object, "metadata");
  return meta != nullptr && json::find_value(*meta, "deletionTimestamp") != nullptr;
}

bool writes_object(const admission_request& req) {
  return (req.operation == "CREATE" || req.operation == "UPDATE") && req.sub_resource.empty() &&
         req.object.IsObject();
}

// A set is judged against its class when it is created and when its spec
// changes: a write of its metadata alone (the manager's finalizer) must go
// through while the set breaks a class narrowed since (the manager judges
// again at use and says so in the set's status).
bool spec_changed(const admission_request& req) {
  if (req.operation != "UPDATE") return true;
  const auto* before = json::member(req.old_object, "spec");
  const auto* after = json::member(req.object, "spec");
  return before == nullptr || after == nullptr || *before != *after;
}

// What the set breaks of its class; `notes`: what its own fields mean under
// the class, for the response's warnings (model::connection_notes).
field_errors judge_class(const admission_request& req, const model::runnerset& set,
                         const admission_policy& policy, std::vector<std::string>& notes) {
  if (!policy.classes || !spec_changed(req)) return {};
  auto platform = policy.classes(req.namespace_);
  if (!platform)
    return {{"spec.runnerClassName",
             "cannot be judged now (the RunnerClasses cannot be read: " + platform.error() + "); try again"}};
  auto verdict = model::judge_set(
      req.namespace_, set.spec, *platform,
      {.allow_sets_without_class = policy.allow_sets_without_class, .scopes = policy.scopes});
  notes = model::connection_notes(set.spec, verdict, *platform);
  auto errors = std::move(verdict.refused);
  errors.insert(errors.end(), verdict.limits.begin(), verdict.limits.end());
  if (auto over =
          model::breaks_namespace_cap(req.namespace_, set.metadata.name, set.spec, verdict, *platform))
    errors.push_back(std::move(*over));
  if (auto shared = model::breaks_namespace_secrets(req.namespace_, set.metadata.name, set.spec, *platform))
    errors.push_back(std::move(*shared));
  return errors;
}

admission_response validate_set(const admission_request& req, const admission_policy& policy) {
  // An object on its way out (finalizers being removed) is never blocked.
  if (!writes_object(req) || deleting(req.object)) return allow(req);
  auto set = model::parse_runnerset(req.object);
  if (!set) return deny(req, "RunnerSet", set.error());
  if (auto errors = validate_runnerset(*set, policy); !errors.empty()) return deny(req, "RunnerSet", errors);
  std::vector<std::string> notes;
  if (auto errors = judge_class(req, *set, policy, notes); !errors.empty())
    return deny(req, "RunnerSet", errors);
  auto r = allow(req);
  r.warnings = std::move(notes);
  return r;
}

// Runners are the manager's: a Runner made by anyone else would get a JIT
// configuration from its set's credentials with labels and a pod of its
// maker's choosing (the manager also serves only the Runners its sets own,
// by uid); nor may anyone else move one to another owner.
admission_response forbid(const admission_request& req, const std::string& why) {
  admission_response r;
  r.uid = req.uid;
  r.allowed = false;
  r.code = 403;
  r.reason = "Forbidden";
  r.message = "Runner" + (req.name.empty() ? std::string() : " \"" + req.name + "\"") + " is refused: " + why;
  return r;
}

const rapidjson::Value* owner_references(const rapidjson::Value& object) {
  const rapidjson::Value* meta = json::member(object, "metadata");
  return meta == nullptr ? nullptr : json::member(*meta, "ownerReferences");
}

// Whether `after` keeps only references `before` had: none added, none
// changed. Adding or changing one could hand a Runner to another RunnerSet
// (the manager serves a Runner whose controller reference names the set's
// uid). Removing them cannot: a Runner no set made is served by none, and
// one a set made keeps its place in that set whatever is done to its
// references since. The garbage collector removes references this way when
// an owner is deleted with --cascade=orphan, and is not refused.
bool only_removes_owners(const rapidjson::Value& before, const rapidjson::Value& after) {
  const auto* kept = owner_references(after);
  if (kept == nullptr || (kept->IsArray() && kept->Empty())) return true;
  const auto* had = owner_references(before);
  if (had == nullptr || !had->IsArray() || !kept->IsArray()) return had != nullptr && *had == *kept;
  for (const auto& ref : kept->GetArray())
    if (std::find(had->Begin(), had->End(), ref) == had->End()) return false;
  return true;
}

// The label that routes a Runner to its RunnerSet's actor.
const rapidjson::Value* set_label(const rapidjson::Value& object) {
  const rapidjson::Value* meta = json::member(object, "metadata");
  const rapidjson::Value* labels = meta == nullptr ? nullptr : json::member(*meta, "labels");
  return labels == nullptr ? nullptr : json::member(*labels, model::label_runnerset);
}

bool same_set_label(const rapidjson::Value& before, const rapidjson::Value& after) {
  const auto* a = set_label(before);
  const auto* b = set_label(after);
  if (a == nullptr || b == nullptr) return a == b;
  return *a == *b;
}

admission_response validate_runner_request(const admission_request& req, const admission_policy& policy) {
  if (!writes_object(req)) return allow(req);
  const bool manager = !policy.runner_creator.empty() && req.username == policy.runner_creator;
  if (req.operation == "CREATE" && !manager)
    return forbid(req, "only the Octorun manager (" +
                           (policy.runner_creator.empty() ? std::string("unknown") : policy.runner_creator) +
                           ") creates Runners, " +
                           (req.username.empty() ? "not an anonymous user" : "not " + req.username) +
                           ": declare a RunnerSet instead");
  if (req.operation == "UPDATE") {
    // Checked on a Runner being deleted too: while its finalizer holds it,
    // moving it to another set would still hand it to that set.
    if (!manager && !only_removes_owners(req.old_object, req.object))
      return forbid(req,
                    "metadata.ownerReferences may be added or changed by the Octorun manager only "
                    "(removing them is allowed)");
    if (!manager && !same_set_label(req.old_object, req.object))
      return forbid(req, std::string("the label ") + model::label_runnerset +
                             " may be changed by the Octorun manager only");
    // An object on its way out (finalizers being removed) is not judged on its spec.
    if (deleting(req.object)) return allow(req);
    if (auto errors = validate_runner_update(req.old_object, req.object); !errors.empty())
      return deny(req, "Runner", errors);
    return allow(req);  // an unchanged spec was valid when it was created
  }
  if (deleting(req.object)) return allow(req);
  auto runner = model::parse_runner(req.object);
  if (!runner) return deny(req, "Runner", runner.error());
  if (auto errors = validate_runner(*runner); !errors.empty()) return deny(req, "Runner", errors);
  return allow(req);
}

// A RunnerClass is written by a cluster admin only (RBAC), and checked so
// that a mistake is said where it is made rather than as sets refused later.
admission_response validate_class(const admission_request& req, const admission_policy& policy) {
  if (!writes_object(req) || deleting(req.object)) return allow(req);
  auto c = model::parse_runner_class(req.object);
  if (!c) return deny(req, "RunnerClass", c.error());
  if (auto errors = model::check_runner_class(*c, policy.scopes); !errors.empty())
    return deny(req, "RunnerClass", errors);
  // Each certificate parsed, beyond the PEM markers the model checks.
  if (const auto& pem = c->spec.connection.ca_bundle; !pem.empty())
    if (auto counted = tls::count_pem_certificates(pem); !counted)
      return deny(req, "RunnerClass",
                  {{"spec.github.caBundle", "is not a PEM certificate bundle: " + counted.error()}});
  return allow(req);
}

admission_response mutate_set(const admission_request& req) {
  auto r = allow(req);
  if (writes_object(req) && !deleting(req.object)) r.patch = runnerset_defaults(req.object);
  return r;
}

}  // namespace

const char* path_of(endpoint e) {
  switch (e) {
    case endpoint::mutate_runnerset:
      return "/mutate-runnerset";
    case endpoint::validate_runnerset:
      return "/validate-runnerset";
    case endpoint::validate_runner:
      return "/validate-runner";
    case endpoint::validate_runnerclass:
      return "/validate-runnerclass";
  }
  return "";
}

admission_response review(endpoint e, const admission_request& request, const admission_policy& policy) {
  switch (e) {
    case endpoint::mutate_runnerset:
      return mutate_set(request);
    case endpoint::validate_runnerset:
      return validate_set(request, policy);
    case endpoint::validate_runner:
      return validate_runner_request(request, policy);
    case endpoint::validate_runnerclass:
      return validate_class(request, policy);
  }
  return allow(request);
}

http_reply handle_review(endpoint e, std::string_view body, const admission_policy& policy) {
  auto request = parse_admission_review(body);
  if (!request) {
    return {400, json::writer()
                     .open()
                     .field("message", "malformed AdmissionReview: " + request.error())
                     .close()
                     .str()};
  }
  return {200, encode_admission_review(review(e, *request, policy))};
}

}  // namespace octorun::admission
