#include "adapters/kube/informer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/all.hpp>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "adapters/kube/events.hpp"
#include "adapters/kube/informer_impl.hpp"
#include "adapters/kube/request_trace.hpp"

namespace octorun::kube {
namespace {

// ---- event recorder -------------------------------------------------------

// The writer: its own connection, one Event at a time, asked by the queue.
struct writer_state {
  std::unique_ptr<client> api;
  std::unique_ptr<event_recorder> recorder;
  static inline const char* name = "kube-event-writer";
};

caf::behavior event_writer(caf::stateful_actor<writer_state>* self, config cfg, client_options opts,
                           std::string controller, std::string instance) {
  self->state.api = std::make_unique<client>(std::move(cfg), std::move(opts));
  self->state.recorder =
      std::make_unique<event_recorder>(*self->state.api, std::move(controller), std::move(instance));
  return {
      // Answers once the Event is written, spam-limited or failed (a failure
      // is logged here, never returned: an Event is worth one try).
      [=](const event_spec& e) {
        auto written = self->state.recorder->record(e);
        if (!written)
          spdlog::warn("kube event {} for {}/{}: {}", e.reason, e.regarding.namespace_, e.regarding.name,
                       to_string(written.error()));
        return written.has_value();
      },
  };
}

// Events wait here, in a queue of at most max_queued, rather than in the
// writer's mailbox: one connection writes a few dozen a second, and a
// burst of thousands of runners makes Events faster than that, which would
// hold the manager's memory in Events nobody reads before the burst is
// over. Beyond the bound a new Event is dropped and counted, as client-go's
// broadcaster drops beyond its 1,000 queued Events.
struct recorder_state {
  caf::actor writer;
  std::deque<event_spec> waiting;
  bool writing = false;
  std::uint64_t dropped = 0;  // in the current overflow, logged when it ends
  static inline const char* name = "kube-event-recorder";
};
using recorder_ptr = caf::stateful_actor<recorder_state>*;

void write_next(recorder_ptr self) {
  auto& st = self->state;
  if (st.writing || st.waiting.empty()) return;
  st.writing = true;
  auto e = std::move(st.waiting.front());
  st.waiting.pop_front();
  // No timeout: the writer answers every Event (its HTTP calls have their
  // own), and a linked writer that dies takes the recorder with it.
  auto next = [self] {
    self->state.writing = false;
    write_next(self);
  };
  self->request(st.writer, caf::infinite, std::move(e))
      .then([next](bool) { next(); }, [next](caf::error&) { next(); });
}

caf::behavior event_recorder_actor(recorder_ptr self, config cfg, client_options opts, std::string controller,
                                   std::string instance, event_queue_options q) {
  self->state.writer = self->spawn<caf::detached + caf::linked>(event_writer, std::move(cfg), std::move(opts),
                                                                std::move(controller), std::move(instance));
  const auto max_queued = std::max<std::size_t>(q.max_queued, 1);
  return {
      [=](event_spec& e) {
        auto& st = self->state;
        if (st.waiting.size() >= max_queued) {
          if (st.dropped++ == 0)
            spdlog::warn("kube events: {} wait to be written; new ones are dropped until the queue drains",
                         st.waiting.size());
          if (q.on_drop) q.on_drop();
          return;
        }
        if (st.dropped > 0 && st.waiting.size() < max_queued / 2) {
          spdlog::info("kube events: the queue drains; {} were dropped", st.dropped);
          st.dropped = 0;
        }
        st.waiting.push_back(std::move(e));
        write_next(self);
      },
  };
}

}  // namespace

caf::actor spawn_event_recorder(caf::actor_system& sys, const config& cfg, client_options opts,
                                std::string reporting_controller, std::string reporting_instance,
                                event_queue_options queue) {
  return sys.spawn(event_recorder_actor, cfg, std::move(opts), std::move(reporting_controller),
                   std::move(reporting_instance), std::move(queue));
}

std::string informer_source(const informer_options& o) {
  std::string s = o.res.id();
  if (!o.ns.empty()) s += " ns=" + o.ns;
  if (!o.label_selector.empty()) s += " labels=" + o.label_selector;
  if (!o.field_selector.empty()) s += " fields=" + o.field_selector;
  return s;
}

void run_reflector(client& c, const informer_options& o, const std::atomic<bool>& stop,
                   const reflector_callbacks& cb) {
  backoff retry(o.backoff_initial, o.backoff_max);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_int_distribution<int64_t> timeout(std::min(o.watch_timeout_min, o.watch_timeout_max),
                                                 std::max(o.watch_timeout_min, o.watch_timeout_max));
  auto wait_for = [&](const api_error& e) {
    auto d = retry.next();
    sleep_unless(&stop, std::max<std::chrono::milliseconds>(d, e.retry_after));
  };
  std::string rv;
  bool need_list = true;
  while (!stop.load()) {
    if (need_list) {
      list_options lo;
      lo.label_selector = o.label_selector;
      lo.field_selector = o.field_selector;
      auto listed = c.list(o.res, o.ns, lo);
      if (stop.load()) break;
      if (!listed) {
        if (cb.failed) cb.failed(listed.error(), "list");
        wait_for(listed.error());
        continue;
      }
      rv = listed->resource_version;
      need_list = false;
      if (cb.replaced) cb.replaced(std::move(*listed));
    }
    list_options wo;
    wo.label_selector = o.label_selector;
    wo.field_selector = o.field_selector;
    wo.resource_version = rv;
    wo.allow_watch_bookmarks = true;
    wo.timeout_seconds = timeout(rng);
    auto started = std::chrono::steady_clock::now();
    bool progressed = false;
    auto watched = c.watch(
        o.res, o.ns, wo,
        [&](watch_event& ev) {
          if (stop.load()) return false;
          if (!ev.obj.resource_version.empty()) rv = std::string(ev.obj.resource_version);
          progressed = true;
          if (ev.type != event_type::bookmark && cb.event) cb.event(std::move(ev));
          return true;
        },
        o.watch_silence_limit);
    if (stop.load()) break;
    if (progressed) retry.reset();
    if (watched && *watched == client::watch_end::silent) {
      if (cb.silent) cb.silent();
      continue;  // at once: the limit already waited
    }
    if (watched) {
      // A clean end (timeoutSeconds): watch again from the last version. One
      // that ends at once without events is a server shutting down: back off.
      if (!progressed && std::chrono::steady_clock::now() - started < std::chrono::seconds(1))
        sleep_unless(&stop, retry.next());
      continue;
    }
    if (watched.error().gone()) {
      need_list = true;  // our version is compacted away: relist and diff
      if (cb.failed) cb.failed(watched.error(), "watch (relisting)");
      continue;
    }
    if (cb.failed) cb.failed(watched.error(), "watch");
    if (cb.event) {
      watch_event note;
      note.type = event_type::error;
      note.error = watched.error();
      cb.event(std::move(note));
    }
    wait_for(watched.error());
  }
}

caf::actor spawn_informer(caf::actor_system& sys, const config& cfg, client_options opts,
                          informer_options io) {
  return spawn_typed_informer<object>(sys, cfg, std::move(opts), std::move(io),
                                      [](const object& o) { return o; });
}

}  // namespace octorun::kube
