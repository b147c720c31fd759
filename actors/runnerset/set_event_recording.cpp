// The RunnerSet actor's Events about its set: what changed since the last
// plan (set_events.hpp decides them), and one-off ones other steps send.
#include <caf/all.hpp>

#include "actors/runnerset/set_state.hpp"
#include "adapters/kube/events.hpp"

namespace octorun::runnerset::detail {

void send_set_event(self_ptr self, set_event e) {
  auto& st = self->state;
  if (!st.cfg.events || !st.world.set) return;
  const auto& set = *st.world.set;
  kube::event_spec spec;
  spec.regarding = {model::api_version, "RunnerSet", set.metadata.namespace_, set.metadata.name,
                    set.metadata.uid};
  spec.type = e.warning ? "Warning" : "Normal";
  spec.reason = std::move(e.reason);
  spec.action = std::move(e.action);
  spec.note = std::move(e.note);
  caf::anon_send(st.cfg.events, std::move(spec));
}

// Records the Events of what changed since the last plan (fire and forget;
// the recorder spam-limits).
void record_events(self_ptr self, const set_plan& p) {
  auto& st = self->state;
  if (!st.cfg.events) return;
  const auto& set = *st.world.set;
  if (!st.summary) st.summary = summary_from_status(set);
  auto now = summarize(*st.summary, st.world, p);
  for (auto& e : set_events(*st.summary, now, set.spec.credentials_secret_name))
    send_set_event(self, std::move(e));
  st.summary = std::move(now);
}

}  // namespace octorun::runnerset::detail
