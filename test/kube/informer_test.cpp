// The CAF side against the real control plane: the request pool answering
// event-based actors, informers feeding subscribers (a typed one with a
// keep-filter among them), a forced 410 relist and an apiserver restart in
// the middle of a watch (both on private clusters).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "adapters/kube/events.hpp"
#include "adapters/kube/informer_impl.hpp"
#include "test/kube/support.hpp"

namespace octorun::kube::testing {
namespace {

using namespace std::chrono_literals;
using test::cluster;
using test::make_namespace;

class Informer : public ::testing::Test {
 protected:
  ~Informer() override {
    for (auto& a : actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  caf::actor informer_for(const config& cfg, const std::string& ns, const std::string& labels = {},
                          std::chrono::milliseconds silence_limit = 150s) {
    informer_options io;
    io.res = configmaps();
    io.ns = ns;
    io.label_selector = labels;
    io.watch_silence_limit = silence_limit;
    io.backoff_initial = 100ms;
    io.backoff_max = 1s;
    auto a = spawn_informer(sys, cfg, {}, io);
    actors.push_back(a);
    return a;
  }
  // A namespace of its own and a ConfigMap in it for Events to regard.
  std::pair<std::string, object_result> event_subject(client& api, const std::string& prefix) {
    auto ns = make_namespace(cluster(), prefix);
    return {ns, api.create(configmaps(), ns, configmap_json(ns, "subject", "1"))};
  }
  informer_stats stats(const caf::actor& informer) {
    informer_stats out;
    self->request(informer, 10s, stats_atom::value)
        .receive([&](informer_stats& s) { out = s; }, [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  }

  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  caf::scoped_actor self{sys};
  std::vector<caf::actor> actors;
};

TEST_F(Informer, SubscribersSeeAddModifyDeleteAndTheCacheConverges) {
  const auto& c = cluster();
  auto cfg = admin_config(c);
  client api(cfg);
  auto ns = make_namespace(c, "kube-informer");
  create_configmaps(cfg, ns, "pre", 3, 1, R"({"app":"web"})");
  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "unlabelled", "x")));

  auto inf = informer_for(cfg, ns, "app=web");
  self->send(inf, subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  mirror m;
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.synced == 1; }, 30s));
  EXPECT_EQ(m.added, 3u);

  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "new", "1", R"({"app":"web"})")));
  ASSERT_TRUE(api.patch(configmaps(), ns, "pre-0", patch_type::merge, R"({"data":{"value":"changed"}})"));
  ASSERT_TRUE(api.remove(configmaps(), ns, "pre-1"));
  ASSERT_TRUE(api.patch(configmaps(), ns, "unlabelled", patch_type::merge, R"({"data":{"value":"y"}})"));
  auto want = [&] {
    list_options o;
    o.label_selector = "app=web";
    std::map<std::string, std::string> t;
    auto listed = api.list(configmaps(), ns, o);
    EXPECT_TRUE(listed);
    if (listed)
      for (const auto& obj : listed->items) t[obj.key()] = std::string(obj.resource_version);
    return t;
  }();
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.rv_by_key == want; }, 30s));
  EXPECT_EQ(m.deleted_keys, std::vector<std::string>{ns + "/pre-1"});
  EXPECT_GE(m.modified, 1u);

  // A late subscriber gets the cache as ADDED events, then synced.
  caf::scoped_actor late{sys};
  self->send(inf, subscribe_atom::value, caf::actor_cast<caf::actor>(late));
  mirror m2;
  ASSERT_TRUE(m2.run_until(
      late, [&] { return m2.synced == 1; }, 10s));
  EXPECT_EQ(m2.rv_by_key, want);

  self->request(inf, 10s, snapshot_atom::value)
      .receive(
          [&](informer_snapshot& s) {
            EXPECT_TRUE(s.synced);
            EXPECT_EQ(s.items.size(), want.size());
          },
          [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  self->request(inf, 10s, snapshot_atom::value, ns + "/new")
      .receive([&](object& o) { EXPECT_EQ(o.name, "new"); },
               [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_EQ(stats(inf).lists, 1u);
}

// Issue 32: a typed informer with a keep-filter (as the controller's Pod
// informer, actors/watched.hpp watch_pods) drops an object that an update
// makes refused, telling its subscribers DELETED, as a relist would: it is
// not kept stale until deleted. An update it cannot read keeps what was
// cached. Here the filter keeps ConfigMaps labelled keep=yes and the
// decoder cannot read one whose value is "unreadable".
TEST_F(Informer, AnObjectItsFilterStopsKeepingLeavesTheCacheAndIsDeletedForSubscribers) {
  const auto& c = cluster();
  auto cfg = admin_config(c);
  client api(cfg);
  auto ns = make_namespace(c, "kube-refused");
  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "kept", "1", R"({"keep":"yes"})")));
  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "fence", "1", R"({"keep":"yes"})")));
  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "refused", "1", R"({"keep":"no"})")));

  informer_options io;
  io.res = configmaps();
  io.ns = ns;
  decoder<object> decode = [](const object& o) {
    const auto* data = o.member("data");
    const bool unreadable = data && data->IsObject() && data->HasMember("value") &&
                            (*data)["value"].IsString() &&
                            std::string_view((*data)["value"].GetString()) == "unreadable";
    return unreadable ? object{} : o;
  };
  keep_filter<object> keep = [](const object& o) { return o.label("keep") == "yes"; };
  auto inf = spawn_typed_informer<object>(sys, cfg, {}, io, decode, keep);
  actors.push_back(inf);
  self->send(inf, subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  mirror m;
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.synced == 1; }, 30s));
  EXPECT_EQ(m.rv_by_key.size(), 2u);  // the refused one is left out of the list
  EXPECT_EQ(m.rv_by_key.count(ns + "/refused"), 0u);
  const auto kept_rv = m.rv_by_key[ns + "/kept"];
  auto cached = [&](const std::string& name) {
    object out;
    self->request(inf, 10s, snapshot_atom::value, ns + "/" + name)
        .receive([&](object& o) { out = o; }, [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  };
  // Changes to one object reach the watch in order: a change to the fence
  // made after another has arrived once the fence's has.
  auto fence = [&](const std::string& value) {
    auto patched =
        api.patch(configmaps(), ns, "fence", patch_type::merge, R"({"data":{"value":")" + value + R"("}})");
    EXPECT_TRUE(patched);
    const auto rv = patched ? std::string(patched->resource_version) : std::string();
    return m.run_until(
        self, [&] { return m.rv_by_key[ns + "/fence"] == rv; }, 30s);
  };

  // Unreadable: what was cached stays, nobody is told anything.
  ASSERT_TRUE(api.patch(configmaps(), ns, "kept", patch_type::merge, R"({"data":{"value":"unreadable"}})"));
  ASSERT_TRUE(fence("2"));
  EXPECT_EQ(m.rv_by_key[ns + "/kept"], kept_rv);
  EXPECT_EQ(cached("kept").resource_version, kept_rv);
  EXPECT_TRUE(m.deleted_keys.empty());

  // Refused: it leaves the cache and subscribers hear it is gone.
  ASSERT_TRUE(api.patch(configmaps(), ns, "kept", patch_type::merge,
                        R"({"metadata":{"labels":{"keep":"no"}},"data":{"value":"3"}})"));
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.deleted == 1; }, 30s));
  EXPECT_EQ(m.deleted_keys, std::vector<std::string>{ns + "/kept"});
  EXPECT_FALSE(cached("kept"));
  self->request(inf, 10s, snapshot_atom::value)
      .receive([&](informer_snapshot& s) { EXPECT_EQ(s.items.size(), 1u); },
               [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  // Refused again: nothing more to tell.
  ASSERT_TRUE(api.patch(configmaps(), ns, "kept", patch_type::merge, R"({"data":{"value":"4"}})"));
  ASSERT_TRUE(fence("5"));
  EXPECT_EQ(m.deleted, 1u);
  EXPECT_EQ(m.rv_by_key.count(ns + "/kept"), 0u);

  // Kept again: ADDED anew.
  ASSERT_TRUE(
      api.patch(configmaps(), ns, "kept", patch_type::merge, R"({"metadata":{"labels":{"keep":"yes"}}})"));
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.rv_by_key.count(ns + "/kept") == 1; }, 30s));
  EXPECT_TRUE(cached("kept"));
  EXPECT_EQ(stats(inf).lists, 1u);  // all of it from the watch, no relist
}

// An event-based actor that creates a ConfigMap, then patches it with a
// stale resourceVersion, and reports both outcomes.
caf::behavior writer(caf::event_based_actor* self, caf::actor pool, caf::actor report, std::string ns) {
  self->request(pool, 30s, create_request{configmaps(), ns, configmap_json(ns, "via-pool", "1")})
      .then(
          [=](object_result& created) {
            self->send(report, created);
            self->request(pool, 30s,
                          patch_request{configmaps(), ns, "via-pool", patch_type::merge,
                                        R"({"metadata":{"resourceVersion":"1"},"data":{"value":"2"}})", ""})
                .then([=](object_result& patched) { self->send(report, patched); },
                      [=](caf::error& e) { self->send(report, self->system().render(e)); });
          },
          [=](caf::error& e) { self->send(report, self->system().render(e)); });
  return {};
}

TEST_F(Informer, RequestPoolAnswersEventBasedActors) {
  const auto& c = cluster();
  auto ns = make_namespace(c, "kube-pool");
  client_options opts;
  opts.limiter = std::make_shared<token_bucket>(50, 100);
  auto pool = spawn_request_pool(sys, admin_config(c), opts, 2);
  actors.push_back(pool);
  sys.spawn(writer, pool, caf::actor_cast<caf::actor>(self), ns);
  std::vector<object_result> replies;
  for (int i = 0; i < 2; ++i)
    self->receive([&](object_result& r) { replies.push_back(r); },
                  [&](std::string& err) { ADD_FAILURE() << err; },
                  caf::after(30s) >> [&] { ADD_FAILURE() << "no reply"; });
  ASSERT_EQ(replies.size(), 2u);
  ASSERT_TRUE(replies[0]) << to_string(replies[0].error());
  EXPECT_EQ(replies[0]->name, "via-pool");
  ASSERT_FALSE(replies[1]);
  EXPECT_TRUE(replies[1].error().conflict());

  list_result listed = unexpected{api_error{}};
  self->request(pool, 30s, list_request{configmaps(), ns, {}})
      .receive([&](list_result& r) { listed = r; }, [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->items.size(), 1u);
}

TEST_F(Informer, EventRecorderActorWritesEvents) {
  auto cfg = admin_config(cluster());
  client api(cfg);
  auto [ns, subject] = event_subject(api, "kube-recorder");
  ASSERT_TRUE(subject) << to_string(subject.error());
  auto recorder = spawn_event_recorder(sys, cfg, {}, "tests.octorun.io/kube-test", "test-2");
  actors.push_back(recorder);
  event_spec e;
  e.regarding = reference_to(*subject);
  e.type = "Warning";
  e.reason = "Recorded";
  e.action = "Test";
  e.note = "through the recorder actor";
  for (int i = 0; i < 3; ++i) self->send(recorder, e);  // one Event; the repeats only count
  ASSERT_TRUE(eventually(
      [&] {
        auto listed = api.list(events_v1(), ns);
        return listed && listed->items.size() == 1;
      },
      30s));
  auto listed = api.list(events_v1(), ns);
  ASSERT_TRUE(listed);
  const auto* reason = listed->items[0].member("reason");
  ASSERT_TRUE(reason != nullptr && reason->IsString());
  EXPECT_STREQ(reason->GetString(), "Recorded");
}

// A burst beyond what the recorder's connection writes: Events beyond the
// queue's bound are dropped and counted, and every Event not dropped is
// written.
TEST_F(Informer, EventRecorderDropsBeyondItsQueueAndWritesTheRest) {
  auto cfg = admin_config(cluster());
  client api(cfg);
  auto [ns, subject] = event_subject(api, "kube-recorder-bound");
  ASSERT_TRUE(subject) << to_string(subject.error());
  auto dropped = std::make_shared<std::atomic<int>>(0);
  auto recorder = spawn_event_recorder(sys, cfg, {}, "tests.octorun.io/kube-test", "test-3",
                                       {3, [dropped] { ++*dropped; }});
  actors.push_back(recorder);
  constexpr int sent = 20;  // distinct reasons: the spam filter (25 per object) drops none
  for (int i = 0; i < sent; ++i) {
    event_spec e;
    e.regarding = reference_to(*subject);
    e.reason = "Burst" + std::to_string(i);
    e.action = "Test";
    self->send(recorder, e);
  }
  // One is being written and three wait: the rest of a burst sent at once
  // finds the queue full (unless a write finishes within microseconds).
  ASSERT_TRUE(eventually(
      [&] {
        auto listed = api.list(events_v1(), ns);
        return listed && dropped->load() > 0 &&
               static_cast<int>(listed->items.size()) == sent - dropped->load();
      },
      30s))
      << dropped->load() << " dropped";
  EXPECT_LE(sent - dropped->load(), 1 + 3 + 2)
      << "at most the one written, the three queued and a little slack";
}

TEST_F(Informer, RelistAfter410GoneEmitsTheDifference) {
  const auto& c = test::private_cluster();
  auto admin = admin_config(c);
  client api(admin);
  auto ns = make_namespace(c, "kube-gone");
  create_configmaps(admin, ns, "cm", 6);

  // The informer reaches the apiserver through a proxy the test can cut.
  tcp_proxy proxy(port_of(c.server));
  auto inf = informer_for(through(proxy, admin), ns);
  self->send(inf, subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  mirror m;
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.synced == 1 && m.added == 6; }, 30s));

  // While the informer is cut off: delete, modify and create; then compact
  // etcd and restart the apiserver (dropping its watch cache), so that the
  // informer's resourceVersion is gone everywhere.
  proxy.cut();
  ASSERT_TRUE(api.remove(configmaps(), ns, "cm-0"));
  ASSERT_TRUE(api.remove(configmaps(), ns, "cm-1"));
  ASSERT_TRUE(api.patch(configmaps(), ns, "cm-2", patch_type::merge, R"({"data":{"value":"changed"}})"));
  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "cm-new", "1")));
  auto compacted = test::compact_etcd(c);  // older resourceVersions are gone
  ASSERT_TRUE(compacted) << compacted.error();
  ASSERT_NO_FATAL_FAILURE(restart_apiserver(c));
  proxy.resume();

  client fresh(admin);
  auto want = truth(fresh, configmaps(), ns);
  ASSERT_EQ(want.size(), 5u);
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.rv_by_key == want; }, 120s))
      << "mirror has " << m.rv_by_key.size() << " objects, lists " << stats(inf).lists;
  std::sort(m.deleted_keys.begin(), m.deleted_keys.end());
  EXPECT_EQ(m.deleted_keys, (std::vector<std::string>{ns + "/cm-0", ns + "/cm-1"}));
  EXPECT_EQ(stats(inf).lists, 2u);  // the initial list and the relist after 410
}

// The chaos soak's finding: after an apiserver restart behind a proxy, the
// manager's Runner watch brought nothing for minutes while its writes went
// through. A watch held open but silent is ended at its silence limit and
// watched again, not waited on until timeoutSeconds (5-10 min) + 30 s.
TEST_F(Informer, AWatchHeldOpenButSilentIsWatchedAgainWithinItsSilenceLimit) {
  const auto& c = cluster();
  auto admin = admin_config(c);
  client api(admin);
  auto ns = make_namespace(c, "kube-silent");
  create_configmaps(admin, ns, "cm", 3);
  tcp_proxy proxy(port_of(c.server));
  auto inf = informer_for(through(proxy, admin), ns, {}, 3s);
  self->send(inf, subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  mirror m;
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.synced == 1 && m.added == 3; }, 30s));

  proxy.freeze_open_connections();  // the watch's connection among them
  ASSERT_TRUE(api.create(configmaps(), ns, configmap_json(ns, "after-freeze", "1")));
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.rv_by_key.count(ns + "/after-freeze") == 1; }, 30s))
      << "the change made while the watch was frozen never arrived; silent watches ended: "
      << stats(inf).silent_watches;
  // Ended silent (or, when the freeze caught a watch before its response
  // headers, failed for the same silence and was retried).
  auto s = stats(inf);
  EXPECT_GE(s.silent_watches + s.watch_errors, 1u);
  EXPECT_EQ(s.lists, 1u);  // watched again from its resourceVersion, not relisted
}

TEST_F(Informer, ApiserverRestartMidWatchLosesAndDuplicatesNothing) {
  const auto& c = test::private_cluster();
  auto admin = admin_config(c);
  auto ns = make_namespace(c, "kube-restart");
  create_configmaps(admin, ns, "base", 20);
  auto inf = informer_for(admin, ns);
  self->send(inf, subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  mirror m;
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.synced == 1 && m.added == 20; }, 30s));

  // A writer keeps creating, modifying and deleting while the apiserver is
  // killed and restarted; each write is retried until the server has it. It
  // writes until it is stopped: a fixed number of writes could all be done
  // before the restart returns (the apiserver serves well before /readyz
  // answers ok), leaving none for after it. Its client is paced, so that the
  // objects it leaves stay a few hundred however long the restart takes.
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  struct stop_on_exit {
    std::atomic<bool>& flag;
    ~stop_on_exit() { flag = true; }
  };
  // Stopped and joined on every exit from this test, failed assertions included.
  std::jthread writer([&] {
    client_options paced;
    paced.limiter = std::make_shared<token_bucket>(20, 20);
    client api(admin, paced);
    // True once the server has the write (maybe from an earlier try).
    auto land = [&](const std::function<expected<object, api_error>()>& op) {
      while (!stop) {
        auto r = op();
        if (r || r.error().already_exists() || r.error().not_found()) return true;
        std::this_thread::sleep_for(100ms);  // the apiserver is down: try again
      }
      return false;
    };
    for (int i = 0; !stop; ++i) {
      auto name = "w-" + std::to_string(i);
      if (!land([&] { return api.create(configmaps(), ns, configmap_json(ns, name, "0")); })) return;
      if (!land([&] {
            return api.patch(configmaps(), ns, "base-" + std::to_string(i % 20), patch_type::merge,
                             R"({"data":{"value":")" + std::to_string(i) + R"("}})");
          }))
        return;
      if (i % 3 == 0 && !land([&] { return api.remove(configmaps(), ns, name); })) return;
      ++writes;
    }
  });
  stop_on_exit stop_writer{stop};  // destroyed (stopping the writer) before `writer` joins
  ASSERT_TRUE(eventually([&] { return writes >= 20; }, 60s)) << writes << " writes";
  ASSERT_NO_FATAL_FAILURE(restart_apiserver(c));
  int after_restart = writes;
  ASSERT_TRUE(eventually([&] { return writes >= after_restart + 20; }, 120s))
      << writes << " writes, " << after_restart << " of them before the restart returned";
  stop = true;
  writer.join();

  client fresh(admin);
  auto want = truth(fresh, configmaps(), ns);
  ASSERT_TRUE(m.run_until(
      self, [&] { return m.rv_by_key == want; }, 120s))
      << "mirror " << m.rv_by_key.size() << " objects, truth " << want.size() << ", lists "
      << stats(inf).lists;
  auto s = stats(inf);
  EXPECT_EQ(s.size, want.size());
  EXPECT_GE(s.watch_errors + s.lists, 2u);  // the watch broke and was resumed (or relisted)
}

}  // namespace
}  // namespace octorun::kube::testing
