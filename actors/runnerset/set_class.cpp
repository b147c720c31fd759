// The RunnerSet actor and its RunnerClass: judging the set again when the
// platform's classes or the set's spec change, and letting go of what a
// refused set must not use (model/class_rules.hpp).
#include <spdlog/spdlog.h>

#include "actors/runnerset/set_state.hpp"
#include "model/namespace_cap.hpp"

namespace octorun::runnerset::detail {
namespace {

// Nothing more goes to GitHub on the credentials loaded: the clients go,
// and the set plans as one whose credentials are not loaded.
void drop_github_clients(self_ptr self) {
  auto& st = self->state;
  auto& w = st.world;
  if (st.github && st.github != st.cfg.github)
    caf::anon_send_exit(st.github, caf::exit_reason::user_shutdown);
  if (st.scaleset_admin) caf::anon_send_exit(st.scaleset_admin, caf::exit_reason::user_shutdown);
  st.github = st.owned->rest = st.scaleset_admin = nullptr;
  st.scaleset_options.reset();
  st.credentials_version.clear();
  w.credentials_loaded = false;
  w.scale_set_client = false;
  w.runner_group_id.reset();
}

std::string summary(const model::class_verdict& v) {
  std::string out;
  for (const auto* errors : {&v.refused, &v.limits})
    for (const auto& e : *errors) out += (out.empty() ? "" : "; ") + e.field + ": " + e.message;
  return out;
}

}  // namespace

void judge_class(self_ptr self) {
  auto& st = self->state;
  auto& w = st.world;
  if (!w.set) return;
  auto verdict =
      model::judge_set_at_use(st.cfg.ns, st.cfg.name, w.set->spec, st.platform.get(), st.cfg.classes);
  static const model::platform_classes no_classes;
  const auto& platform = st.platform ? *st.platform : no_classes;
  std::optional<model::credentials_location> where;
  if (verdict && (verdict->refused.empty() || verdict->drains))  // a drain removes with them
    where = model::credentials_of(st.cfg.ns, w.set->spec, *verdict, platform, st.cfg.platform_namespace);
  // A class's proxy or CA changed under the set reloads its clients as a move of its credentials does.
  auto connection = model::manager_connection_of(w.set->spec, verdict, platform);
  if (verdict == w.class_verdict && where == st.credentials_at && connection == st.connection) return;
  if (verdict && verdict != w.class_verdict) {
    if (verdict->admitted())
      spdlog::info("runnerset {}: {}", id(self),
                   verdict->classless ? std::string("served without a RunnerClass")
                                      : "RunnerClass " + verdict->class_name + " admits it");
    else
      spdlog::warn("runnerset {}: {} RunnerClass {}: {}", id(self),
                   verdict->refused.empty() ? "over the limits of" : "refused by", verdict->class_name,
                   summary(*verdict));
  }
  w.class_verdict = std::move(verdict);
  if (where != st.credentials_at || connection != st.connection) {
    st.credentials_at = std::move(where);
    w.tenant_credentials = st.credentials_at && !st.credentials_at->platform;
    st.connection = std::move(connection);
    drop_github_clients(self);
    if (st.credentials_at && !w.in_flight.contains(action_kind::read_credentials)) read_credentials(self);
  }
  start_sweeps(self);  // a set that drained is admitted again on the credentials it kept
  mark_dirty(self);
}

std::optional<github::error> class_refuses(self_ptr self) {
  const auto& verdict = self->state.world.class_verdict;
  if (verdict && verdict->refused.empty()) return std::nullopt;
  return github::error{
      github::error_kind::rejected,
      0,
      "RunnerSet " + id(self) +
          (verdict ? " is refused by its RunnerClass" : " is not judged against its RunnerClass yet"),
      {},
      0};
}

}  // namespace octorun::runnerset::detail
