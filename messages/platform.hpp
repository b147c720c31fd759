// What the platform declared (RunnerClasses, namespaces' labels), as the
// controller hands it to every RunnerSet actor: one immutable snapshot,
// replaced whole on every change.
#pragma once

#include <caf/all.hpp>

#include "model/runner_class.hpp"

namespace octorun::messages {

struct platform_update {
  model::platform_classes_ptr platform;  // never null
};

}  // namespace octorun::messages

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::messages::platform_update)
