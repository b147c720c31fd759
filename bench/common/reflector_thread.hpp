// The benches' watches: one reflector on a thread of its own, as the
// lifecycle watch and the load test's placement watch both run theirs.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <utility>

#include "adapters/kube/client.hpp"
#include "adapters/kube/informer.hpp"

namespace octorun::bench {

// Lists and watches `res` in `ns` (empty: every namespace or a cluster
// kind) matching `labels`, handing what it sees to `cb`, until `stop` is
// set: the flag is read between watches, which last two seconds, and
// cancels a request in flight. Join the thread after setting `stop`.
inline std::thread start_reflector(const kube::config& cfg, kube::resource res, std::string ns,
                                   std::string labels, kube::reflector_callbacks cb,
                                   const std::atomic<bool>& stop) {
  kube::informer_options o;
  o.res = std::move(res);
  o.ns = std::move(ns);
  o.label_selector = std::move(labels);
  o.watch_timeout_min = o.watch_timeout_max = 2;
  return std::thread([cfg, o, cb = std::move(cb), &stop] {
    kube::client_options co;
    co.drop_managed_fields = true;
    kube::client c(cfg, co);
    c.set_cancel_flag(&stop);
    kube::run_reflector(c, o, stop, cb);
  });
}

}  // namespace octorun::bench
