// The request pool (informer.hpp: spawn_request_pool): detached workers,
// each with a client of its own (its own connection), behind one dispatcher.
// The dispatcher queues requests per turn (request_turn: a RunnerSet's
// own, else its namespace's) and hands the next one to a free worker round
// robin over the turns with requests waiting (common/fair_queue.hpp): one
// set's burst of creates waits behind itself, never in front of another
// set's first write, in its namespace or another. A worker gets
// a request only when it is free, so nothing queues in its mailbox; the
// request's promise goes with it (delegation), so the worker answers the
// requester directly.
#include <spdlog/spdlog.h>

#include <caf/all.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "adapters/kube/informer.hpp"
#include "adapters/kube/request_trace.hpp"
#include "common/fair_queue.hpp"

namespace octorun::kube {
namespace {

using clock_type = std::chrono::steady_clock;
using worker_free_atom = caf::atom_constant<caf::atom("kpfree")>;

// The time each request entered the pool, handed to the worker that serves
// it, so the worker learns how long the request queued: for the trace
// (request_trace.hpp) and to answer a request nobody waits for.
struct enqueue_stamps {
  std::mutex mu;
  std::vector<std::deque<clock_type::time_point>> per_worker;
};

struct worker_state {
  std::unique_ptr<client> api;
  std::shared_ptr<enqueue_stamps> stamps;
  size_t index = 0;
  std::chrono::milliseconds max_queue_wait{0};
  caf::actor dispatcher;
  static inline const char* name = "kube-request-worker";
};

using worker_actor = caf::stateful_actor<worker_state>;

// How long the request in hand waited in the pool.
std::optional<std::chrono::microseconds> take_queue_wait(worker_actor* self) {
  auto& st = self->state;
  std::lock_guard lock(st.stamps->mu);
  auto& q = st.stamps->per_worker[st.index];
  if (q.empty()) return std::nullopt;
  auto waited = std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - q.front());
  q.pop_front();
  return waited;
}

api_error unsent(std::chrono::microseconds waited, std::chrono::milliseconds limit) {
  api_error e;
  e.transport = true;  // nothing reached the apiserver: worth retrying
  e.message = fmt::format("not sent: it waited {:.1f} s in the request queue, past its requester's {} s",
                          std::chrono::duration<double>(waited).count(),
                          std::chrono::duration_cast<std::chrono::seconds>(limit).count());
  return e;
}

// Sends the request in hand with the worker's client — unless it waited in
// the pool longer than its requester waits for an answer: then the
// requester has already given up (and will retry), and sending it would
// spend the apiserver's time on an answer nobody reads, at the moment the
// queue shows it has none to spare. Either way the worker is free again.
template <class Result, class Send>
Result serve(worker_actor* self, Send send) {
  auto& st = self->state;
  auto answer = [&]() -> Result {
    auto waited = take_queue_wait(self);
    if (waited) {
      if (st.max_queue_wait.count() > 0 && *waited > st.max_queue_wait) {
        auto e = unsent(*waited, st.max_queue_wait);
        spdlog::debug("kube request dropped: {}", e.message);  // its requester logs that it got no answer
        return unexpected{std::move(e)};
      }
      st.api->note_queue_wait(*waited);
    }
    return send(*st.api);
  }();
  self->send(st.dispatcher, worker_free_atom::value, st.index);
  return answer;
}

caf::behavior request_worker(worker_actor* self, config cfg, client_options opts,
                             std::shared_ptr<enqueue_stamps> stamps, size_t index,
                             std::chrono::milliseconds max_queue_wait, caf::actor dispatcher) {
  self->state.api = std::make_unique<client>(std::move(cfg), std::move(opts));
  self->state.stamps = std::move(stamps);
  self->state.index = index;
  self->state.max_queue_wait = max_queue_wait;
  self->state.dispatcher = std::move(dispatcher);
  return {
      [=](get_request& r) {
        return serve<object_result>(self,
                                    [&](client& c) { return c.get(r.res, r.ns, r.name, r.subresource); });
      },
      [=](list_request& r) {
        return serve<list_result>(self, [&](client& c) { return c.list(r.res, r.ns, r.options); });
      },
      [=](create_request& r) {
        return serve<object_result>(self, [&](client& c) { return c.create(r.res, r.ns, r.body); });
      },
      [=](update_request& r) {
        return serve<object_result>(
            self, [&](client& c) { return c.update(r.res, r.ns, r.name, r.body, r.subresource); });
      },
      [=](patch_request& r) {
        return serve<object_result>(
            self, [&](client& c) { return c.patch(r.res, r.ns, r.name, r.type, r.body, r.subresource); });
      },
      [=](delete_request& r) {
        return serve<object_result>(self,
                                    [&](client& c) { return c.remove(r.res, r.ns, r.name, r.options); });
      },
  };
}

// A request waiting for a worker: it hands itself, with its requester's
// promise, to the worker it is given.
struct waiting_request {
  std::function<void(const caf::actor& worker)> hand_to;
  clock_type::time_point arrived;
};

struct dispatcher_state {
  std::vector<caf::actor> workers;
  std::vector<size_t> free;             // indexes of workers with nothing in hand
  fair_queue<waiting_request> waiting;  // by request_turn
  std::shared_ptr<enqueue_stamps> stamps;
  static inline const char* name = "kube-request-pool";
};

using dispatcher_actor = caf::stateful_actor<dispatcher_state>;

void dispatch(dispatcher_actor* self) {
  auto& st = self->state;
  while (!st.free.empty()) {
    auto next = st.waiting.pop();
    if (!next) return;
    const auto i = st.free.back();
    st.free.pop_back();
    {
      std::lock_guard lock(st.stamps->mu);
      st.stamps->per_worker[i].push_back(next->arrived);
    }
    next->hand_to(st.workers[i]);
  }
}

template <class Result, class Request>
caf::result<Result> accept(dispatcher_actor* self, Request& r) {
  auto promise = self->make_response_promise();
  auto turn = request_turn(r.ns, r.set);
  self->state.waiting.push(
      turn, waiting_request{[promise, request = std::move(r)](const caf::actor& worker) mutable {
                              promise.delegate(worker, std::move(request));
                            },
                            clock_type::now()});
  dispatch(self);
  return caf::delegated<Result>{};
}

caf::behavior request_dispatcher(dispatcher_actor* self, config cfg, client_options opts, size_t size,
                                 std::chrono::milliseconds max_queue_wait) {
  auto& st = self->state;
  st.stamps = std::make_shared<enqueue_stamps>();
  st.stamps->per_worker.resize(size);
  auto me = caf::actor_cast<caf::actor>(self);
  for (size_t i = 0; i < size; ++i) {
    // Linked: the pool stops its workers, and a worker that dies stops the pool.
    st.workers.push_back(self->spawn<caf::detached + caf::linked>(request_worker, cfg, opts, st.stamps, i,
                                                                  max_queue_wait, me));
    st.free.push_back(size - 1 - i);  // the first worker first
  }
  return {
      [=](worker_free_atom, size_t i) {
        self->state.free.push_back(i);
        dispatch(self);
      },
      [=](get_request& r) { return accept<object_result>(self, r); },
      [=](list_request& r) { return accept<list_result>(self, r); },
      [=](create_request& r) { return accept<object_result>(self, r); },
      [=](update_request& r) { return accept<object_result>(self, r); },
      [=](patch_request& r) { return accept<object_result>(self, r); },
      [=](delete_request& r) { return accept<object_result>(self, r); },
  };
}

}  // namespace

caf::actor spawn_request_pool(caf::actor_system& sys, const config& cfg, client_options opts, size_t size,
                              std::chrono::milliseconds max_queue_wait) {
  return sys.spawn(request_dispatcher, cfg, std::move(opts), std::max<size_t>(size, 1), max_queue_wait);
}

}  // namespace octorun::kube
