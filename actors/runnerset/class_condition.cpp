#include "actors/runnerset/class_condition.hpp"

namespace octorun::runnerset {
namespace {

std::string listed(const model::field_errors& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "; ") + e.field + ": " + e.message;
  return out;
}

}  // namespace

model::condition class_condition(const model::class_verdict& verdict) {
  model::condition c;
  c.type = "ClassAdmitted";
  c.status = verdict.admitted() ? "True" : "False";
  if (!verdict.refused.empty()) {
    c.reason = "Refused";
    c.message = verdict.drains ? "No new runners start; idle ones are removed from GitHub and busy ones "
                                 "finish: " +
                                     listed(verdict.refused)
                               : "Nothing is sent to GitHub for this set: " + listed(verdict.refused);
  } else if (!verdict.limits.empty()) {
    c.reason = "OverLimits";
    c.message = "No new runners start (busy ones finish, idle ones go): " + listed(verdict.limits);
  } else if (verdict.classless) {
    c.reason = "WithoutClass";
    c.message =
        "No RunnerClass applies: served under the rules from before classes (the manager's "
        "--allow-sets-without-class)";
  } else {
    c.reason = "Admitted";
    c.message = "RunnerClass \"" + verdict.class_name + "\" admits the set";
  }
  return c;
}

}  // namespace octorun::runnerset
