// Kubernetes resource quantities ("500m", "2", "1.5Gi", "1e3", "128974848"),
// as a Pod's resources.requests writes them: what the manager reads of a
// runner pod's requests to count its cost (model/timeline.hpp). Pure.
#pragma once

#include <optional>
#include <string_view>

namespace octorun::model {

// The quantity in base units (cores, bytes): a decimal number, optionally
// signed and with an exponent (e3, E-2), then at most one suffix: the binary
// Ki Mi Gi Ti Pi Ei or the decimal n u m k M G T P E. Nothing for anything
// else, for a negative value and for a value that is not finite.
std::optional<double> parse_quantity(std::string_view text);

}  // namespace octorun::model
