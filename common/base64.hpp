// Base64 (RFC 4648): the standard alphabet with padding (Kubernetes Secret
// data, caBundle, kubeconfig *-data) and the URL-safe one without padding (JWTs).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace octorun {

std::string base64_encode(std::string_view data);
std::string base64url_encode(std::string_view data);  // no padding

// Accepts either alphabet, with or without padding, ignoring ASCII white
// space (PEM-style line breaks); nullopt on anything else.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace octorun
