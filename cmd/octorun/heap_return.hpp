// Gives the heap that bursts freed back to the system (malloc_trim) when
// common/heap_return_rule.hpp says enough was freed: a thread of its own
// looks at the heap every `every`, for as long as the object lives.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace octorun::manager {

class heap_return {
 public:
  heap_return(std::chrono::milliseconds every, std::size_t threshold_bytes);
  ~heap_return();
  heap_return(const heap_return&) = delete;
  heap_return& operator=(const heap_return&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace octorun::manager
