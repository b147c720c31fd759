// CAF integration: the request pool (detached workers with blocking
// clients), the event recorder and informers (a cache per watched resource type + namespace +
// selector, fed by list-then-watch). Message types: adapters/kube/protocol.hpp.
#pragma once

#include <atomic>
#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "adapters/kube/client.hpp"
#include "adapters/kube/protocol.hpp"

namespace octorun::kube {

// `size` detached workers, each owning a client (and its connection), serve
// get/list/create/update/patch/delete requests. Requests wait in the pool by
// turn (request_turn: the RunnerSet a request names, else its namespace)
// and are served round robin over the turns with requests waiting, so one
// set's burst does not delay another set's first request by more than
// about one request per worker (request_pool.cpp). A request
// that waited longer than `max_queue_wait` (0: no limit; the manager gives
// its actors' request timeout) is answered with a transport api_error
// without being sent: its requester stopped waiting. Stop the pool with
// caf::anon_send_exit(pool, caf::exit_reason::user_shutdown).
caf::actor spawn_request_pool(caf::actor_system& sys, const config& cfg, client_options opts = {},
                              size_t size = 4, std::chrono::milliseconds max_queue_wait = {});

struct informer_options {
  resource res;
  std::string ns;  // empty: all namespaces
  std::string label_selector;
  std::string field_selector;
  std::chrono::milliseconds backoff_initial{800};
  std::chrono::milliseconds backoff_max{30'000};
  int64_t watch_timeout_min = 300;  // seconds; each watch picks one in [min, max]
  int64_t watch_timeout_max = 600;
  // A watch that brings no event and no bookmark for this long is ended and
  // watched again from its last resourceVersion (0 = never): something
  // between us and the apiserver (a proxy, a load balancer, a restart) may
  // hold a connection open that will never carry anything, and HTTP/1.1 has
  // no ping to tell. The limit is longer than the longest silence
  // kube-apiserver leaves a healthy watch that allows bookmarks (its bookmark
  // intervals are measured in bench/chaos/README.md, finding 5a), so only a
  // watch nothing will ever reach is cut.
  std::chrono::milliseconds watch_silence_limit{150'000};
  bool keep_managed_fields = false;  // cached objects leave out metadata.managedFields
};

// "configmaps ns=a labels=app=x": the `source` of its events.
std::string informer_source(const informer_options& o);

// What a reflector reports besides the data (for logs and tests).
struct reflector_callbacks {
  std::function<void(object_list)> replaced;                         // a complete (re)list
  std::function<void(watch_event)> event;                            // ADDED / MODIFIED / DELETED
  std::function<void(const api_error&, const char* during)> failed;  // list/watch failure, retried
  std::function<void()> silent;  // a watch ended by watch_silence_limit, watched again
};

// The blocking list-then-watch loop, until `stop` is set: LIST (paged), WATCH
// from its resourceVersion with bookmarks, re-WATCH from the last seen
// resourceVersion on a clean end or after a silence, re-LIST on 410 Gone,
// capped jittered backoff on failures. Runs on the calling thread.
void run_reflector(client& c, const informer_options& o, const std::atomic<bool>& stop,
                   const reflector_callbacks& cb);

// An informer actor: the cache (namespace/name -> object) and the fan-out
// of its changes to subscribers; its list-then-watch loop runs on a
// detached actor of its own. Protocol (adapters/kube/protocol.hpp):
//   (subscribe_atom, actor)   -> ADDED for everything cached, informer_synced if synced, then changes
//                                (informer_event)
//   (unsubscribe_atom, actor)
//   (snapshot_atom)           -> informer_snapshot
//   (snapshot_atom, string key) -> object (empty when absent)
//   (stats_atom)              -> informer_stats
// Stop it with caf::anon_send_exit(informer, caf::exit_reason::user_shutdown).
caf::actor spawn_informer(caf::actor_system& sys, const config& cfg, client_options opts,
                          informer_options io);

// What a typed informer keeps of a listed or watched object (as client-go's
// cache transforms do): a handle to the decoded value, or an empty handle
// when the object cannot be read (the decoder logs why). An unreadable
// object stays out of the cache, an update of one cached keeps what was
// cached, and its deletion still removes what was kept.
template <class Handle>
using decoder = std::function<Handle(const object&)>;

// Whether a typed informer keeps an object it could read (a filter:
// actors/watched.hpp watch_pods). A refused object stays out of the list
// and the cache; one cached that an update makes refused leaves the cache
// and its subscribers get DELETED (kube::apply_decoded_event), as a relist
// would tell them: an object that stops qualifying is not kept stale.
template <class Handle>
using keep_filter = std::function<bool(const Handle&)>;

// An informer that decodes (and filters, when `keep` is given) each object
// once, on its reflector's thread, and keeps only the decoded handles: the
// same protocol with informer_update<Handle> and snapshot_of<Handle>.
// Defined in adapters/kube/informer_impl.hpp, which the one .cpp
// instantiating it for a Handle includes (actors/watched.cpp).
template <class Handle>
caf::actor spawn_typed_informer(caf::actor_system& sys, const config& cfg, client_options opts,
                                informer_options io, decoder<Handle> decode, keep_filter<Handle> keep = {});

struct event_queue_options {
  // Events waiting to be written beyond which a new one is dropped (as
  // client-go's broadcaster, 1,000).
  std::size_t max_queued = 1000;
  std::function<void()> on_drop;  // called for each dropped Event (a metric), by the recorder actor
};

// An actor that writes events.k8s.io/v1 Events on a connection of its own
// (a detached writer): send it an event_spec (fire and forget); repeats are
// spam-limited (events.hpp), failed writes are logged, never returned, and
// beyond `queue.max_queued` waiting a new Event is dropped. Recording never
// blocks the sender.
caf::actor spawn_event_recorder(caf::actor_system& sys, const config& cfg, client_options opts,
                                std::string reporting_controller, std::string reporting_instance,
                                event_queue_options queue = {});

}  // namespace octorun::kube
