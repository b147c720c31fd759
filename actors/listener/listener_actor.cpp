#include "actors/listener/listener_actor.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <variant>

#include "actors/listener/session_decisions.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "adapters/github/github_workers.hpp"

namespace octorun::listener {
namespace {

struct listener_state {
  listener_config cfg;
  protocols::listener_setup setup;
  caf::actor worker;  // this incarnation's scale-set worker: its session, its long poll
  std::int64_t last_message_id = 0;
  static constexpr const char* name = "listener";
};

using self_ptr = caf::stateful_actor<listener_state>*;

std::string id(self_ptr self) {
  const auto& c = self->state.cfg;
  return c.set_id + (c.variant.empty() ? "" : "/" + c.variant);
}

// The session gauge and the failure counter, labelled by namespace, set and variant.
template <class Record>
void record(const listener_config& c, Record r) {
  if (!c.metrics) return;
  const auto slash = c.set_id.find('/');
  r(*c.metrics, std::string_view(c.set_id).substr(0, slash),
    slash == std::string::npos ? std::string_view{} : std::string_view(c.set_id).substr(slash + 1));
}

// Ends this incarnation; the supervisor decides when the next one starts.
void fail(self_ptr self, const std::string& what, const std::string& why) {
  spdlog::warn("listener {}: {}: {}", id(self), what, why);
  record(self->state.cfg, [&](metrics::recorder& m, std::string_view ns, std::string_view set) {
    m.listener_failed(ns, set, self->state.cfg.variant);
  });
  self->quit(caf::make_error(caf::sec::runtime_error, what + ": " + why));
}

void poll(self_ptr self);

void acknowledge(self_ptr self, std::int64_t message_id) {
  auto& st = self->state;
  self->request(st.worker, st.cfg.request_timeout, github::ack_atom::value, message_id)
      .then(
          [=](github::ok_reply& r) {
            if (!r)
              return fail(self, "acknowledging message " + std::to_string(message_id), r.error().describe());
            poll(self);
          },
          [=](caf::error& e) { fail(self, "acknowledging", self->system().render(e)); });
}

// Hands what one message of the session (or its opening) says to its set
// as one session message, named after the set: the set applies the jobs and
// the statistics together (messages/jobs.hpp).
void report(self_ptr self, std::vector<messages::job_message> jobs,
            std::optional<messages::job_statistics> stats) {
  self->send(self->state.cfg.jobs,
             messages::session_message{self->state.cfg.set_id, std::move(jobs), std::move(stats)});
}

// Hands the message's jobs and statistics to its set, acquires what
// it offers, then acknowledges. They go out before the acquisition so the
// set counts demand as early as possible; the statistics that follow the
// acquisition (next message) carry the assigned count it scales on.
void handle(self_ptr self, github::queue_message& m) {
  auto& st = self->state;
  // What the client could not take is bad input: logged once, counted, acknowledged with the rest.
  for (const auto& part : m.skipped)
    if (metrics::reject_input("listener", part.reason, part.detail))
      spdlog::warn("listener {}: skipped: {} (logged once; counted in octorun_rejected_input_total)",
                   id(self), part.detail);
  st.last_message_id = m.message_id;
  auto ids = jobs_to_acquire(m);
  if (!m.jobs.empty() || m.statistics) report(self, std::move(m.jobs), m.statistics);
  if (ids.empty()) return acknowledge(self, m.message_id);
  const auto message_id = m.message_id;
  self->request(st.worker, st.cfg.request_timeout, github::acquire_jobs_atom::value, st.setup.scale_set_id,
                std::move(ids))
      .then(
          [=](github::ids_reply& r) {
            if (!r) return fail(self, "acquiring jobs", r.error().describe());
            spdlog::debug("listener {}: acquired {} job(s)", id(self), r->size());
            acknowledge(self, message_id);
          },
          [=](caf::error& e) { fail(self, "acquiring jobs", self->system().render(e)); });
}

void poll(self_ptr self) {
  auto& st = self->state;
  // The service holds a poll for up to its long-poll window; leave room for it.
  const auto timeout = st.setup.options.long_poll + st.cfg.request_timeout;
  self->request(st.worker, timeout, github::poll_atom::value, st.last_message_id, st.setup.max_capacity)
      .then(
          [=](github::message_reply& r) {
            if (!r) return fail(self, "getting a message", r.error().describe());
            if (!*r) return poll(self);  // nothing within the window
            handle(self, **r);
          },
          [=](caf::error& e) { fail(self, "getting a message", self->system().render(e)); });
}

void open_session(self_ptr self) {
  auto& st = self->state;
  st.setup.options.stop_polling = std::make_shared<std::atomic<bool>>(false);
  auto worker = github::spawn_scaleset_worker(self->system(), st.setup.options);
  if (!worker) return fail(self, "starting the scale-set client", worker.error());
  st.worker = *worker;
  // However this incarnation ends, its long poll is cut short, its session
  // deleted and its worker stopped, so the next incarnation (or the next
  // leader) can open a session at once.
  auto w = st.worker;
  auto stop_polling = st.setup.options.stop_polling;
  self->attach_functor([w, stop_polling](const caf::error&) {
    stop_polling->store(true);  // a long poll in flight ends now
    caf::anon_send(w, github::close_session_atom::value);
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  });
  self->request(st.worker, st.cfg.request_timeout, github::open_session_atom::value, st.setup.scale_set_id,
                st.setup.owner, st.setup.previous_session_id)
      .then(
          [=](github::session_reply& r) {
            if (!r) return fail(self, "opening the message session", r.error().describe());
            spdlog::info("listener {}: session open on scale set {}", id(self),
                         self->state.setup.scale_set_id);
            self->send(self->state.cfg.runnerset, protocols::listener_session_atom::value,
                       self->state.cfg.variant, r->session_id);
            record(self->state.cfg, [&](metrics::recorder& m, std::string_view ns, std::string_view set) {
              m.listener_session(ns, set, self->state.cfg.variant, true);
            });
            report(self, {}, r->statistics);
            poll(self);
          },
          [=](caf::error& e) { fail(self, "opening the message session", self->system().render(e)); });
}

caf::behavior listener_behavior(self_ptr self, listener_config cfg) {
  self->state.cfg = std::move(cfg);
  // However an incarnation ends, it holds no session: 0 while it waits to
  // be restarted (also when it never opened one, so an alert on it fires);
  // no series once stopped for good (its variant or set is gone).
  self->attach_functor([cfg = self->state.cfg](const caf::error& reason) {
    record(cfg, [&](metrics::recorder& m, std::string_view ns, std::string_view set) {
      if (reason == caf::exit_reason::user_shutdown)
        m.listener_stopped(ns, set, cfg.variant);
      else
        m.listener_session(ns, set, cfg.variant, false);
    });
  });
  self->request(self->state.cfg.runnerset, self->state.cfg.request_timeout,
                protocols::listener_setup_atom::value, self->state.cfg.variant)
      .then(
          [=](protocols::listener_setup_reply& r) {
            if (!r) return fail(self, "setting up", r.error());
            self->state.setup = std::move(*r);
            open_session(self);
          },
          [=](caf::error& e) { fail(self, "setting up", self->system().render(e)); });
  // Every message it handles is a reply to its own requests.
  return {[](caf::unit_t) {}};
}

}  // namespace

caf::actor spawn_listener(caf::local_actor* parent, listener_config cfg) {
  return parent->spawn(listener_behavior, std::move(cfg));
}

}  // namespace octorun::listener
