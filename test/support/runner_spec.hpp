// Tests change a Runner's spec in place; the model shares one spec between
// Runners (model::shared_runner_spec), so a test first takes its own copy.
#pragma once

#include <memory>

#include "model/types.hpp"

namespace octorun::test {

// `r`'s spec, copied for `r` alone and writable while `r` holds it.
inline model::runner_spec& own_spec(model::runner& r) {
  auto copy = std::make_shared<model::runner_spec>(*r.spec);
  r.spec = copy;
  return *copy;
}

}  // namespace octorun::test
