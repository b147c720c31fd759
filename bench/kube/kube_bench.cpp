// list+watch of many objects: time until an informer's cache is synced and
// the heap it holds per object, against `kubectl get -o json` of the same
// objects, in the same run. See README.md.
//
//   kube_bench [--objects N] [--reps R] [--keep]
// Uses the cluster in $OCTORUN_TEST_CLUSTER, or starts a private one.
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kube/client.hpp"
#include "adapters/kube/informer.hpp"
#include "adapters/kube/protocol.hpp"
#include "test/support/test_cluster.hpp"

extern char** environ;

namespace {

using namespace octorun;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

// Bytes the allocator has handed out and not taken back (arena + mmapped).
size_t heap_in_use() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

size_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

void create_objects(const kube::config& cfg, const std::string& ns, int count) {
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 8; ++w) {
    workers.emplace_back([&] {
      kube::client api(cfg);
      for (int i = next++; i < count; i = next++) {
        auto name = "cm-" + std::to_string(i);
        auto body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                    R"(","labels":{"app":"bench","shard":")" + std::to_string(i % 16) +
                    R"("}},"data":{"index":")" + std::to_string(i) + R"(","payload":")" +
                    std::string(64, 'x') + R"("}})";
        for (int attempt = 0; attempt < 10; ++attempt) {
          auto r = api.create(kube::configmaps(), ns, body);
          if (r || r.error().already_exists()) break;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
}

struct kubectl_run {
  double seconds = 0;
  long max_rss_kb = 0;
  bool ok = false;
};

kubectl_run run_kubectl(const test::cluster_info& c, const std::string& ns) {
  std::string kubectl = c.bin + "/kubectl";
  std::vector<std::string> args = {
      kubectl, "--kubeconfig=" + c.kubeconfig, "-n", ns, "get", "configmaps", "-o", "json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  kubectl_run out;
  auto start = clock_type::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, kubectl.c_str(), &fa, nullptr, argv.data(), environ) != 0) return out;
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  out.seconds = seconds_since(start);
  out.max_rss_kb = ru.ru_maxrss;
  out.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  posix_spawn_file_actions_destroy(&fa);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int objects = 10000, reps = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--objects" && i + 1 < argc)
      objects = std::atoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--objects N] [--reps R]\n", argv[0]);
      return 2;
    }
  }
  const auto& c = test::cluster();
  auto cfg = kube::load_kubeconfig(c.kubeconfig);
  if (!cfg) {
    std::fprintf(stderr, "%s\n", cfg.error().c_str());
    return 1;
  }
  auto ns = test::make_namespace(c, "kube-bench");
  std::printf("cluster %s, namespace %s: creating %d ConfigMaps...\n", c.server.c_str(), ns.c_str(), objects);
  std::fflush(stdout);
  auto created_at = clock_type::now();
  create_objects(*cfg, ns, objects);
  std::printf("created in %.1f s\n", seconds_since(created_at));

  std::vector<double> sync_s, heap_per_obj, rss_per_obj, list_s, kubectl_s, kubectl_rss;
  caf::actor_system_config sys_cfg;
  sys_cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{sys_cfg};
  for (int rep = 0; rep < reps; ++rep) {
    // Plain paged LIST + parse into objects, no cache.
    {
      kube::client api(*cfg);
      auto t = clock_type::now();
      auto l = api.list(kube::configmaps(), ns);
      list_s.push_back(seconds_since(t));
      if (!l || static_cast<int>(l->items.size()) != objects) {
        std::fprintf(stderr, "list: %s\n", l ? "wrong count" : kube::to_string(l.error()).c_str());
        return 1;
      }
    }
    malloc_trim(0);
    size_t heap_before = heap_in_use(), rss_before = rss_bytes();
    auto t = clock_type::now();
    kube::informer_options io;
    io.res = kube::configmaps();
    io.ns = ns;
    auto inf = kube::spawn_informer(sys, *cfg, {}, io);
    caf::scoped_actor self{sys};
    self->send(inf, kube::subscribe_atom::value, caf::actor_cast<caf::actor>(self));
    bool synced = false;
    size_t events = 0;
    while (!synced) {
      bool timed_out = false;
      self->receive([&](kube::informer_event&) { ++events; }, [&](kube::informer_synced&) { synced = true; },
                    caf::after(std::chrono::seconds(120)) >> [&] { timed_out = true; });
      if (timed_out) {
        std::fprintf(stderr, "informer did not sync\n");
        return 1;
      }
    }
    sync_s.push_back(seconds_since(t));
    // What stays: the cache (plus the informer's and reflector's fixed cost).
    self->request(inf, std::chrono::seconds(30), kube::stats_atom::value)
        .receive([&](kube::informer_stats& s) { events = s.size; }, [&](caf::error&) { events = 0; });
    malloc_trim(0);
    heap_per_obj.push_back(static_cast<double>(heap_in_use() - heap_before) / objects);
    rss_per_obj.push_back(static_cast<double>(rss_bytes() - rss_before) / objects);
    if (static_cast<int>(events) != objects) std::fprintf(stderr, "cache holds %zu objects\n", events);
    caf::anon_send_exit(inf, caf::exit_reason::user_shutdown);

    auto k = run_kubectl(c, ns);
    if (!k.ok) std::fprintf(stderr, "kubectl failed\n");
    kubectl_s.push_back(k.seconds);
    kubectl_rss.push_back(static_cast<double>(k.max_rss_kb));
    std::printf(
        "rep %d: informer synced %.3f s (heap %.0f B/object, RSS %.0f B/object), LIST %.3f s, "
        "kubectl %.3f s (max RSS %ld MiB)\n",
        rep + 1, sync_s.back(), heap_per_obj.back(), rss_per_obj.back(), list_s.back(), k.seconds,
        k.max_rss_kb / 1024);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the informer's reflector wind down
  }
  std::printf("\nmedians over %d reps, %d ConfigMaps:\n", reps, objects);
  std::printf("  informer list+watch to synced cache : %.3f s\n", median(sync_s));
  std::printf("  cache heap per object               : %.0f bytes\n", median(heap_per_obj));
  std::printf("  cache RSS delta per object          : %.0f bytes\n", median(rss_per_obj));
  std::printf("  client LIST (paged, parsed)         : %.3f s\n", median(list_s));
  std::printf("  kubectl get configmaps -o json      : %.3f s (max RSS %.0f MiB)\n", median(kubectl_s),
              median(kubectl_rss) / 1024);
  kube::client api(*cfg);
  api.remove(kube::namespaces(), "", ns);
  return 0;
}
