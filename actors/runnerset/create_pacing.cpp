#include "actors/runnerset/create_pacing.hpp"

#include <algorithm>

namespace octorun::runnerset {

std::int32_t creates_allowed(const create_pacing& p) { return std::max(0, p.window - p.unanswered); }

void note_create_sent(create_pacing& p) { ++p.unanswered; }

void note_create_answered(create_pacing& p, bool succeeded) {
  p.unanswered = std::max(0, p.unanswered - 1);
  p.window = succeeded ? std::min(p.window + 1, most_creates_in_flight) : 1;
}

void note_plan_done(create_pacing& p) {
  if (p.unanswered == 0) p.window = first_create_batch;
}

}  // namespace octorun::runnerset
