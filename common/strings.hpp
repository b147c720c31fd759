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

// %XX sequences decoded (a malformed one kept as it is); '+' becomes a
// space only when asked, as in a query string (a URL's userinfo keeps it).
inline std::string percent_decode(std::string_view s, bool plus_is_space = false) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  auto value = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
      out.push_back(static_cast<char>(value(s[i + 1]) * 16 + value(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i] == '+' && plus_is_space ? ' ' : s[i]);
    }
  }
  return out;
}

}  // namespace octorun
