// Test wiring for the manager's actors: informers whose events all go to one
// actor (what the controller does for real, routing by owner).
#pragma once

#include <caf/all.hpp>
#include <string>
#include <vector>

#include "adapters/kube/config.hpp"
#include "adapters/kube/informer.hpp"
#include "messages/kube.hpp"

namespace octorun::test {

struct watched {
  kube::resource res;
  std::string label_selector;
  std::string field_selector;
};

inline caf::behavior forward_to(caf::event_based_actor*, caf::actor target) {
  return {
      [=](kube::informer_event& ev) { caf::anon_send(target, std::move(ev)); },
      [](kube::informer_synced&) {},
  };
}

// One informer per entry, in `ns`, forwarding to `target`. Stop the returned
// actors with anon_send_exit when done.
inline std::vector<caf::actor> forward_informers(caf::actor_system& sys, const kube::config& cfg,
                                                 const std::string& ns, const std::vector<watched>& what,
                                                 caf::actor target) {
  auto fwd = sys.spawn(forward_to, target);
  std::vector<caf::actor> out;
  for (const auto& w : what) {
    kube::informer_options io;
    io.res = w.res;
    io.ns = ns;
    io.label_selector = w.label_selector;
    io.field_selector = w.field_selector;
    auto inf = kube::spawn_informer(sys, cfg, {}, io);
    caf::anon_send(inf, kube::subscribe_atom::value, fwd);
    out.push_back(inf);
  }
  return out;
}

}  // namespace octorun::test
