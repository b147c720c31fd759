// The RunnerSet's ClassAdmitted condition: whether its RunnerClass admits
// it (model/class_rules.hpp), and if not, every rule it breaks (pure).
#pragma once

#include "model/class_rules.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

// True: Admitted (a class admits it) or WithoutClass (none, and the platform
// allows that); False: Refused (nothing is sent for it) or OverLimits (no
// new runner starts). The message names the class, the fields and the rules.
model::condition class_condition(const model::class_verdict& verdict);

}  // namespace octorun::runnerset
