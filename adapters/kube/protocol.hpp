// The Kubernetes adapter's request/reply protocol: the messages actors
// exchange with the request pool, the informers and the event recorder.
//
// Requests go to the request pool (kube::spawn_request_pool) and are answered
// with an object_result / list_result — API failures are values in them:
//
//   self->request(pool, std::chrono::seconds(30), kube::patch_request{res, ns, name,
//                 kube::patch_type::merge, body})
//       .then([=](kube::object_result& r) { if (!r) log(kube::to_string(r.error())); },
//             [=](caf::error& e) { /* timeout, pool gone */ });
//
// An informer (kube::spawn_informer) sends kube::informer_event to each
// subscriber (send it `kube::subscribe_atom::value, self`), then
// kube::informer_synced once the cache holds the first full list.
//
// Events: send a kube::event_spec to kube::spawn_event_recorder's actor.
//
// These types hold shared_ptrs and string_views into shared JSON and never
// leave the process: they are local-only message types.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "adapters/kube/api.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/events.hpp"
#include "adapters/kube/object.hpp"
#include "adapters/kube/watch.hpp"
#include "common/expected.hpp"

namespace octorun::kube {

using subscribe_atom = caf::atom_constant<caf::atom("ksubscribe")>;
using unsubscribe_atom = caf::atom_constant<caf::atom("kunsub")>;
using snapshot_atom = caf::atom_constant<caf::atom("ksnapshot")>;
using stats_atom = caf::atom_constant<caf::atom("kstats")>;
using silent_atom = caf::atom_constant<caf::atom("ksilent")>;  // reflector -> informer: a watch went silent

using object_result = expected<object, api_error>;
using list_result = expected<object_list, api_error>;

// The requests. Each names in `set` the RunnerSet it is made for (empty:
// none), which decides its turn in the request pool (request_turn).
struct get_request {
  resource res;
  std::string ns, name, subresource;
  std::string set = {};
};
struct list_request {
  resource res;
  std::string ns;
  list_options options;  // every page is fetched
  std::string set = {};
};
struct create_request {
  resource res;
  std::string ns, body;
  std::string set = {};
};
struct update_request {
  resource res;
  std::string ns, name, body, subresource;  // body carries metadata.resourceVersion
  std::string set = {};
};
struct patch_request {
  resource res;
  std::string ns, name;
  patch_type type = patch_type::merge;
  std::string body, subresource;
  std::string set = {};
};
struct delete_request {
  resource res;
  std::string ns, name;
  delete_options options;
  std::string set = {};
};

// Whose turn a request waits for in the request pool (spawn_request_pool):
// its set's, "namespace/set", when it names one; else its namespace's ("" for
// a cluster-scoped request). Neither a namespace nor a set name holds a '/',
// so no set shares a turn with another set or with its namespace's other
// requests.
inline std::string request_turn(const std::string& ns, const std::string& set) {
  return set.empty() ? ns : ns + "/" + set;
}

// One change of an informer's cache. `source` names the informer
// (resource id, namespace, selector) so one actor can follow several.
// `Handle` is what the informer keeps of each object: the kube::object of
// a plain informer (informer_event), or the typed value a typed informer
// decoded it into (std::shared_ptr<const V>; see spawn_typed_informer), so
// subscribers dispatch on the message type, one per kind.
template <class Handle>
struct informer_update {
  std::string source;
  event_type type = event_type::added;  // added, modified or deleted
  Handle obj;
};
using informer_event = informer_update<object>;

// The cache holds a complete list (sent once per subscriber, after the
// ADDED events of everything already cached).
struct informer_synced {
  std::string source;
  size_t count = 0;
};

// Reply to snapshot_atom: the cache's objects.
template <class Handle>
struct snapshot_of {
  bool synced = false;
  std::vector<Handle> items;
};
using informer_snapshot = snapshot_of<object>;

// Reply to stats_atom: what an informer has done so far.
struct informer_stats {
  uint64_t lists = 0;           // complete lists: 1 + relists (after 410 Gone)
  uint64_t watch_errors = 0;    // watches that ended in an error (retried)
  uint64_t silent_watches = 0;  // watches ended for bringing nothing within the silence limit
  uint64_t events = 0;          // changes applied to the cache
  size_t size = 0;              // objects cached
};

}  // namespace octorun::kube

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::object_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::list_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::get_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::list_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::create_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::update_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::patch_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::delete_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::informer_synced)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::informer_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::object)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::kube::event_spec)

namespace caf {
template <class Handle>
struct allowed_unsafe_message_type<octorun::kube::informer_update<Handle>> : std::true_type {};
template <class Handle>
struct allowed_unsafe_message_type<octorun::kube::snapshot_of<Handle>> : std::true_type {};
}  // namespace caf
