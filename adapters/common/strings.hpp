// Small string helpers shared by the adapters.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace octorun {

// ASCII lower case (HTTP header names, host names, labels).
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace octorun
