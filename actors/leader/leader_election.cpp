#include "actors/leader/leader_election.hpp"

#include <spdlog/spdlog.h>

#include <memory>

namespace octorun::leader {
namespace {

using tick_atom = caf::atom_constant<caf::atom("ltick")>;

struct election_state {
  std::unique_ptr<kube::client> api;
  std::unique_ptr<kube::leader_elector> elector;
  election_options options;
  caf::actor subscriber;
  bool leading = false;
  std::chrono::steady_clock::time_point last_renewal{};
  static constexpr const char* name = "leader-election";
};

void set_leading(caf::stateful_actor<election_state>* self, bool leading) {
  if (self->state.leading == leading) return;
  self->state.leading = leading;
  spdlog::info("leader election: {} lease {}/{} as {}", leading ? "acquired" : "lost",
               self->state.options.lease.ns, self->state.options.lease.name,
               self->state.options.lease.identity);
  self->send(self->state.subscriber, leadership_atom::value, leading);
}

}  // namespace

bool still_leading(bool leading_now, std::chrono::steady_clock::time_point last_renewal,
                   std::chrono::steady_clock::time_point now, std::chrono::milliseconds renew_deadline) {
  return leading_now && now - last_renewal < renew_deadline;
}

// Spawned with arguments (CAF 0.17 dereferences a null tuple for a function
// spawned without any).
caf::behavior election(caf::stateful_actor<election_state>* self, kube::config cfg,
                       kube::client_options copts, election_options options, caf::actor subscriber) {
  auto& st = self->state;
  // A request must not outlive the renew deadline, or a hung call could
  // keep us "leading" past the point the others may take over.
  auto bounded = copts;
  bounded.timeout = std::min<std::chrono::milliseconds>(copts.timeout, options.renew_deadline / 2);
  bounded.max_retries = 0;
  st.api = std::make_unique<kube::client>(cfg, bounded);
  st.elector = std::make_unique<kube::leader_elector>(*st.api, options.lease);
  st.options = options;
  st.subscriber = subscriber;
  self->set_exit_handler([=](caf::exit_msg& em) {
    if (self->state.leading) {
      if (auto released = self->state.elector->release(); !released)
        spdlog::warn("leader election: could not release the lease: {}", kube::to_string(released.error()));
      set_leading(self, false);
    }
    self->quit(em.reason);
  });
  self->send(self, tick_atom::value);
  return {
      [=](tick_atom) {
        auto& s = self->state;
        auto now = std::chrono::steady_clock::now();
        auto held = s.elector->try_acquire_or_renew();
        if (held && *held) {
          s.last_renewal = now;
          set_leading(self, true);
        } else {
          if (!held) spdlog::warn("leader election: {}", kube::to_string(held.error()));
          // Someone else holds it, or we could not renew: we lead only
          // while the last renewal is recent enough.
          set_leading(self,
                      held ? false : still_leading(s.leading, s.last_renewal, now, s.options.renew_deadline));
        }
        self->delayed_send(self, s.options.retry_period, tick_atom::value);
      },
  };
}

caf::actor spawn_leader_election(caf::actor_system& sys, kube::config cfg, kube::client_options copts,
                                 election_options options, caf::actor subscriber) {
  return sys.spawn<caf::detached>(election, std::move(cfg), std::move(copts), options, std::move(subscriber));
}

}  // namespace octorun::leader
