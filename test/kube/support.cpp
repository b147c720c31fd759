#include "test/kube/support.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <fstream>

#include "test/support/poll.hpp"

namespace octorun::kube::testing {

config admin_config(const test::cluster_info& c) {
  auto cfg = load_kubeconfig(c.kubeconfig);
  if (!cfg) {
    ADD_FAILURE() << cfg.error();
    std::abort();
  }
  return *cfg;
}

config config_with_token(const test::cluster_info& c, std::shared_ptr<token_source> token) {
  config cfg;
  cfg.server = c.server;
  cfg.tls.ca_file = c.ca_file;
  cfg.token = std::move(token);
  return cfg;
}

std::string configmap_json(const std::string& ns, const std::string& name, const std::string& value,
                           const std::string& labels_json) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","labels":)" + labels_json + R"(},"data":{"value":")" + value + R"("}})";
}

void create_configmaps(const config& cfg, const std::string& ns, const std::string& prefix, int count,
                       int parallel, const std::string& labels_json) {
  std::vector<std::thread> workers;
  std::atomic<int> next{0};
  for (int w = 0; w < parallel; ++w) {
    workers.emplace_back([&] {
      client api(cfg);
      for (int i = next++; i < count; i = next++) {
        auto name = prefix + "-" + std::to_string(i);
        for (int attempt = 0;; ++attempt) {
          auto r = api.create(configmaps(), ns, configmap_json(ns, name, std::to_string(i), labels_json));
          if (r || r.error().already_exists()) break;
          if (attempt > 20) {
            ADD_FAILURE() << "create " << name << ": " << to_string(r.error());
            break;
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds deadline) {
  auto held = [](bool h) { return h; };
  return bool(test::poll(done, held, deadline));
}

void mirror::apply(const informer_event& e) {
  auto key = e.obj.key();
  auto rv = std::string(e.obj.resource_version);
  auto it = rv_by_key.find(key);
  switch (e.type) {
    case event_type::added:
      EXPECT_TRUE(it == rv_by_key.end()) << "duplicate ADDED for " << key;
      rv_by_key[key] = rv;
      ++added;
      break;
    case event_type::modified:
      EXPECT_TRUE(it != rv_by_key.end()) << "MODIFIED of unknown " << key;
      if (it != rv_by_key.end()) {
        EXPECT_NE(it->second, rv) << "MODIFIED without change for " << key;
      }
      rv_by_key[key] = rv;
      ++modified;
      break;
    case event_type::deleted:
      EXPECT_TRUE(it != rv_by_key.end()) << "DELETED of unknown " << key;
      rv_by_key.erase(key);
      deleted_keys.push_back(key);
      ++deleted;
      break;
    default:
      ADD_FAILURE() << "unexpected event type " << to_string(e.type);
  }
}

bool mirror::run_until(caf::scoped_actor& self, const std::function<bool()>& done,
                       std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    self->receive([&](informer_event& e) { apply(e); }, [&](informer_synced&) { ++synced; },
                  caf::after(std::min(left, std::chrono::milliseconds(100))) >> [] {});
  }
  return true;
}

std::map<std::string, std::string> truth(client& api, const resource& r, const std::string& ns) {
  std::map<std::string, std::string> out;
  auto listed = api.list(r, ns);
  EXPECT_TRUE(listed) << (listed ? "" : to_string(listed.error()));
  if (listed)
    for (const auto& o : listed->items) out[o.key()] = std::string(o.resource_version);
  return out;
}

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

config through(const tcp_proxy& proxy, config cfg) {
  cfg.server = "https://127.0.0.1:" + std::to_string(proxy.port());
  return cfg;
}

void restart_apiserver(const test::cluster_info& c) {
  try {
    test::cluster_control(c, "restart-apiserver");
  } catch (const std::exception& e) {
    std::ifstream log(c.dir + "/logs/kube-apiserver.log");
    std::string text((std::istreambuf_iterator<char>(log)), {});
    FAIL() << e.what() << "\n--- end of kube-apiserver.log ---\n"
           << text.substr(text.size() > 6000 ? text.size() - 6000 : 0);
  }
}

}  // namespace octorun::kube::testing
