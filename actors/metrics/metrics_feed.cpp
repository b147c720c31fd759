#include "actors/metrics/metrics_feed.hpp"

#include <algorithm>

#include "model/naming.hpp"

namespace octorun::metrics {

runner_record runner_record_of(const model::runner& r) {
  runner_record out;
  out.ns = r.metadata.namespace_;
  out.name = r.metadata.name;
  out.runnerset = r.spec->runner_set_name;
  if (out.runnerset.empty())
    if (auto it = r.metadata.labels.find(model::label_runnerset); it != r.metadata.labels.end())
      out.runnerset = it->second;
  out.variant = r.spec->variant;
  // A phase we do not publish reads as unset (model::parse_runner): not published.
  out.phase = r.status.phase;
  out.pod_ready = r.status.pod_ready;
  out.github_runner_id = r.status.runner_id;
  return out;
}

namespace {
void copy_counts(const model::runner_counts& from, variant_counts& to) {
  to.desired = from.desired_replicas;
  to.starting = from.pending_runners;
  to.idle = from.idle_runners;
  to.running = from.running_runners;
  to.failed = from.failed_runners;
  to.assigned_jobs = from.assigned_jobs;
}
}  // namespace

runnerset_record runnerset_record_of(const model::runnerset& s) {
  runnerset_record out;
  out.ns = s.metadata.namespace_;
  out.name = s.metadata.name;
  out.replicas = s.spec.replicas.value_or(0);
  const bool declared = !s.spec.variants.empty();
  for (const auto& v : model::effective_variants(s.spec)) {
    variant_counts c;
    c.variant = v.name;
    c.min_runners = v.min_runners;
    c.max_runners = v.max_runners;
    // A set without variants reports its counts at the top of its status.
    if (!declared) copy_counts(s.status.counts, c);
    for (const auto& vs : s.status.variants)
      if (declared && vs.name == v.name) copy_counts(vs.counts, c);
    out.variants.push_back(std::move(c));
  }
  // Variants removed from the spec whose runners still drain: the status
  // keeps them until they are gone.
  for (const auto& vs : s.status.variants) {
    if (!declared || std::any_of(out.variants.begin(), out.variants.end(),
                                 [&](const variant_counts& c) { return c.variant == vs.name; }))
      continue;
    variant_counts c;
    c.variant = vs.name;
    copy_counts(vs.counts, c);
    out.variants.push_back(std::move(c));
  }
  return out;
}

bool state_store::apply(const watched::runner_event& ev) {
  const object_key key{ev.obj->metadata.namespace_, ev.obj->metadata.name};
  if (ev.type == kube::event_type::deleted) return runners_.erase(key) > 0;
  runners_[key] = runner_record_of(*ev.obj);
  return true;
}

bool state_store::apply(const watched::runnerset_event& ev) {
  const object_key key{ev.obj->metadata.namespace_, ev.obj->metadata.name};
  if (ev.type == kube::event_type::deleted) return sets_.erase(key) > 0;
  sets_[key] = runnerset_record_of(*ev.obj);
  return true;
}

state_snapshot state_store::snapshot() const {
  state_snapshot out;
  out.runners = runners_;
  out.runnersets = sets_;
  return out;
}

namespace {

using publish_atom = caf::atom_constant<caf::atom("mpublish")>;

struct feed_state {
  state_store store;
  bool publish_scheduled = false;
  static constexpr const char* name = "metrics-feed";
};

// The interface plus the coalescing timer.
using feed_impl = watched::observer::extend<caf::reacts_to<publish_atom>>;
using self_ptr = feed_impl::stateful_pointer<feed_state>;

// Publishes a moment after the first change of a burst.
void on_change(self_ptr self, const metrics_feed_options& options, bool changed) {
  auto& st = self->state;
  if (!changed || st.publish_scheduled) return;
  st.publish_scheduled = true;
  self->delayed_send(self, options.coalesce, publish_atom::value);
}

feed_impl::behavior_type feed_behavior(self_ptr self, std::shared_ptr<state_collector> collector,
                                       metrics_feed_options options) {
  return {
      [=](const watched::runner_event& ev) { on_change(self, options, self->state.store.apply(ev)); },
      [=](const watched::runnerset_event& ev) { on_change(self, options, self->state.store.apply(ev)); },
      [=](publish_atom) {
        self->state.publish_scheduled = false;
        collector->publish(std::make_shared<const state_snapshot>(self->state.store.snapshot()));
      },
  };
}

}  // namespace

watched::observer spawn_metrics_feed(caf::actor_system& sys, std::shared_ptr<state_collector> collector,
                                     metrics_feed_options options) {
  return sys.spawn(feed_behavior, std::move(collector), options);
}

}  // namespace octorun::metrics
