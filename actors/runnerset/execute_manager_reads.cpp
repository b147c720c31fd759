// The RunnerSet actor asking the API server whether the manager may read
// the set's namespace through its reads binding (pod_resources.hpp,
// manager_reads), and recording the answer; plan_pod_resources decides from
// that record when to ask again and when to say why not.
#include <spdlog/spdlog.h>

#include "actors/kinds.hpp"
#include "actors/runnerset/set_state.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"

namespace octorun::runnerset::detail {
namespace {

void reads_refused(self_ptr self, const std::string& why) {
  auto& w = self->state.world;
  if (++w.reads_refusals == reads_refusals_reported)
    spdlog::warn("runnerset {}: the manager may not read namespace {} yet: {}", id(self), self->state.cfg.ns,
                 why);
  w.reads_refused_at = self->clock().now();
  mark_dirty(self);
}

}  // namespace

void confirm_reads(self_ptr self) {
  auto& st = self->state;
  // Secrets stand for both: the one ClusterRole grants Secrets and ConfigMaps.
  auto review = json::writer()
                    .open()
                    .field("apiVersion", "authorization.k8s.io/v1")
                    .field("kind", "SelfSubjectAccessReview")
                    .open("spec")
                    .open("resourceAttributes")
                    .field("namespace", st.cfg.ns)
                    .field("verb", "get")
                    .field("resource", "secrets")
                    .close()
                    .close()
                    .close()
                    .str();
  request_in_flight<kube::object_result>(
      self, {action_kind::confirm_reads, ""}, st.cfg.kube,
      [=](kube::object_result& r) {
        if (!r) return reads_refused(self, kube::to_string(r.error()));
        const auto* status = r->member("status");
        if (status == nullptr || !json::boolean(*status, "allowed"))
          return reads_refused(self, status != nullptr ? json::str(*status, "reason") : std::string());
        auto& w = self->state.world;
        w.reads_granted = true;
        if (w.reads_refusals >= reads_refusals_reported)
          spdlog::info("runnerset {}: the manager may read namespace {} now", id(self), self->state.cfg.ns);
        mark_dirty(self);
      },
      [=](const std::string& why) { reads_refused(self, why); },
      kube::create_request{kinds::self_subject_access_reviews(), "", std::move(review)});
}

void reads_lost(self_ptr self) {
  auto& w = self->state.world;
  if (!w.reads.wanted() || !w.reads_granted) return;
  spdlog::warn("runnerset {}: a read in namespace {} was refused: binding the manager's reads again",
               id(self), self->state.cfg.ns);
  w.reads_granted = false;
  w.reads_refusals = 0;
  w.applied_objects.erase(manager_reads_key(self->state.cfg.name));
  mark_dirty(self);
}

}  // namespace octorun::runnerset::detail
