// octorun-loadtest: the load test a platform team runs before a rollout (see
// README.md): jobs from the GitHub simulator against an Octorun installed in
// a cluster, a summary, a report with plots, and an exit status that says
// whether the targets were met.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench/loadtest/options.hpp"
#include "bench/loadtest/run.hpp"

int main(int argc, char** argv) {
  using namespace octorun::loadtest;
  auto o = parse_options(argc, argv);
  if (!o) {
    std::fprintf(stderr, "octorun-loadtest: %s\n", o.error().c_str());
    return exit_unusable;
  }
  if (o->help) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  // Signals are taken by one thread (before any other starts): the first
  // stops the run and cleans up, a second cuts the cleanup short.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  static std::atomic<bool> interrupted{false}, abandon{false};
  std::thread([set] {
    for (int n = 0;; ++n) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      const char* msg = n == 0 ? "\noctorun-loadtest: stopping: cleaning up (again to abandon the cleanup)\n"
                               : "\noctorun-loadtest: cleanup abandoned\n";
      (void)!write(STDERR_FILENO, msg, std::char_traits<char>::length(msg));
      (n == 0 ? interrupted : abandon) = true;
    }
  }).detach();
  return run(*o, interrupted, abandon);
}
