// When the manager gives freed heap back to the system. glibc returns
// memory by itself only from the top of its heap: what a burst freed below
// objects still alive stays resident (an informer's cache after a flood
// of Pods, a RunnerSet's Runners once gone). malloc_trim
// returns those pages too, but it walks every free chunk: so it runs only
// once enough was freed since it last ran. The heap's free bytes (glibc's
// mallinfo2 fordblks) have risen `threshold` above their lowest since then:
// that much free space was allocated again (which made it resident) or the
// heap grew, and has been freed since. A trim leaves the free bytes as they
// were, none of them resident: they are the new lowest. Pure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>

namespace octorun {

class heap_return_rule {
 public:
  explicit heap_return_rule(std::size_t threshold_bytes) : threshold_(threshold_bytes) {}

  // Told the heap's free bytes now: whether to trim now.
  bool due(std::size_t free_bytes) {
    lowest_ = std::min(lowest_, free_bytes);
    if (free_bytes - lowest_ < threshold_) return false;
    lowest_ = free_bytes;
    return true;
  }

 private:
  std::size_t threshold_;
  // Since the last trim (or the first look).
  std::size_t lowest_ = std::numeric_limits<std::size_t>::max();
};

}  // namespace octorun
