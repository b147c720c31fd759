#include "adapters/github/github_workers.hpp"

#include <algorithm>

namespace octorun::github {
namespace {

caf::behavior rest_worker(caf::event_based_actor* self, rest_options options) {
  // Owned by the behavior's handlers; runs only on this detached actor's thread.
  auto client = std::make_shared<rest_client>(options);
  (void)self;
  return {
      [client](registration_token_atom) -> token_reply { return client->registration_token(); },
      [client](remove_token_atom) -> token_reply { return client->remove_token(); },
      [client](jit_config_atom, const jit_request& req) -> jit_reply {
        return client->generate_jit_config(req);
      },
      [client](list_runners_atom, const std::string& name) -> runners_reply {
        return client->list_runners(name);
      },
      [client](get_runner_atom, std::int64_t id) -> runner_reply { return client->get_runner(id); },
      [client](delete_runner_atom, std::int64_t id) -> delete_reply { return client->delete_runner(id); },
      [client](find_runner_atom, const std::string& name) -> maybe_reference_reply {
        auto found = client->runner_by_name(name);
        if (!found) return unexpected{found.error()};
        if (!*found) return std::optional<runner_reference>{};
        // A REST runner has no scale set: its labels say which set registered it.
        return std::optional<runner_reference>{
            runner_reference{(*found)->id, (*found)->name, 0, std::move((*found)->labels)}};
      },
      [client](active_work_atom, const sweep_request& ask) -> active_work_reply {
        return client->list_active_work(ask);
      },
      [client](runner_group_atom, const std::string& name) -> group_reply {
        return client->runner_group_by_name(name);
      },
      [client](latest_release_atom) -> release_reply { return client->latest_runner_release(); },
      [client](rate_budget_atom) -> rate_limit_snapshot {
        rate_limit_snapshot s;
        if (auto& b = client->options().call.budget) {
          s.limit = b->limit.load();
          s.remaining = b->remaining.load();
          s.reset_epoch = b->reset_epoch.load();
          s.rate_limited_responses = b->rate_limited_responses.load();
        } else {
          s.limit = client->last_rate_limit().limit;
          s.remaining = client->last_rate_limit().remaining;
          s.reset_epoch = client->last_rate_limit().reset_epoch;
        }
        return s;
      },
  };
}

caf::behavior scaleset_worker(caf::event_based_actor*, std::shared_ptr<scaleset_client> c) {
  return {
      [c](find_scale_set_atom, std::int64_t group, const std::string& name) -> maybe_scale_set_reply {
        return c->scale_set_by_name(group, name);
      },
      [c](create_scale_set_atom, const scale_set& s) -> scale_set_reply { return c->create_scale_set(s); },
      [c](update_scale_set_atom, std::int64_t id, const scale_set& s) -> scale_set_reply {
        return c->update_scale_set(id, s);
      },
      [c](delete_scale_set_atom, std::int64_t id) -> ok_reply { return c->delete_scale_set(id); },
      [c](runner_group_atom, const std::string& name) -> group_reply {
        return c->runner_group_by_name(name);
      },
      [c](open_session_atom, std::int64_t id, const std::string& owner,
          const std::string& previous) -> session_reply { return c->take_over_session(id, owner, previous); },
      [c](close_session_atom) -> ok_reply { return c->delete_session(); },
      [c](poll_atom, std::int64_t last, std::int32_t capacity) -> message_reply {
        return c->get_message(last, capacity);
      },
      [c](ack_atom, std::int64_t id) -> ok_reply { return c->delete_message(id); },
      [c](acquire_jobs_atom, std::int64_t id, const std::vector<std::int64_t>& ids) -> ids_reply {
        return c->acquire_jobs(id, ids);
      },
      [c](jit_config_atom, std::int64_t id, const std::string& name) -> scaleset_jit_reply {
        return c->generate_jit_config(id, name);
      },
      [c](get_runner_atom, std::int64_t id) -> reference_reply { return c->get_runner(id); },
      [c](delete_runner_atom, std::int64_t id) -> delete_reply { return c->remove_runner(id); },
      [c](find_runner_atom, const std::string& name) -> maybe_reference_reply {
        return c->runner_by_name(name);
      },
  };
}

}  // namespace

caf::actor spawn_rest_pool(caf::actor_system& sys, rest_options options, std::size_t workers) {
  if (!options.call.budget) options.call.budget = std::make_shared<rate_limit_budget>();
  return caf::actor_pool::make(
      sys.dummy_execution_unit(), std::max<std::size_t>(1, workers),
      [&sys, options] { return sys.spawn<caf::detached>(rest_worker, options); },
      caf::actor_pool::round_robin());
}

expected<caf::actor, std::string> spawn_scaleset_pool(caf::actor_system& sys, scaleset_options options,
                                                      std::size_t workers) {
  if (auto probe = scaleset_client::make(options); !probe) return unexpected{probe.error()};
  if (!options.call.budget) options.call.budget = std::make_shared<rate_limit_budget>();
  return caf::actor_pool::make(
      sys.dummy_execution_unit(), std::max<std::size_t>(1, workers),
      [&sys, options] {
        auto made = scaleset_client::make(options);  // the URL parsed above
        std::shared_ptr<scaleset_client> client(std::move(*made));
        return sys.spawn<caf::detached>(scaleset_worker, client);
      },
      caf::actor_pool::round_robin());
}

expected<caf::actor, std::string> spawn_scaleset_worker(caf::actor_system& sys, scaleset_options options) {
  auto client = scaleset_client::make(std::move(options));
  if (!client) return unexpected{client.error()};
  std::shared_ptr<scaleset_client> shared(std::move(*client));
  return sys.spawn<caf::detached>(scaleset_worker, shared);
}

}  // namespace octorun::github
