#include "cmd/octorun/heap_return.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>

#include "common/heap_return_rule.hpp"

namespace octorun::manager {
namespace {

// The process's resident memory (VmRSS), in KiB; 0 if unreadable.
long resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

}  // namespace

heap_return::heap_return(std::chrono::milliseconds every, std::size_t threshold_bytes)
    : thread_([this, every, threshold_bytes] {
        heap_return_rule rule(threshold_bytes);
        std::unique_lock lock(mu_);
        while (!stop_cv_.wait_for(lock, every, [this] { return stop_; })) {
          const auto info = mallinfo2();
          // What the heap holds at each look, beside VmRSS: kept objects
          // (in use) apart from the free holes a burst leaves. (VmRSS is
          // read from /proc only when the line is logged.)
          if (spdlog::should_log(spdlog::level::debug))
            spdlog::debug("memory: heap {} KiB in use, {} KiB free; VmRSS {} KiB", info.uordblks / 1024,
                          info.fordblks / 1024, resident_kib());
          if (!rule.due(info.fordblks)) continue;
          const auto before = resident_kib();
          const auto start = std::chrono::steady_clock::now();
          malloc_trim(0);
          const auto took =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
          spdlog::info(
              "memory: freed heap given back to the system: VmRSS {} -> {} KiB ({} KiB in use, {} KiB "
              "free in the heap; the trim took {:.1f} ms)",
              before, resident_kib(), info.uordblks / 1024, info.fordblks / 1024, took.count());
        }
      }) {}

heap_return::~heap_return() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_one();
  thread_.join();
}

}  // namespace octorun::manager
