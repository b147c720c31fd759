// Small string helpers shared by every layer.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace octorun {

// `s` without the ASCII white space (space, tab, CR, LF, VT, FF) around it.
inline std::string_view trim_space(std::string_view s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// ASCII lower case (HTTP header names, host names, labels).
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Equal but for ASCII case, as GitHub compares runner names and labels.
inline bool ascii_iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
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

// Percent-encodes a query parameter value or path segment (RFC 3986
// unreserved characters kept).
inline std::string percent_encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

// Text from outside (an upstream error message) made fit for an Event, a
// condition or a log line: control characters (C0, DEL, C1) become spaces,
// bytes that are not UTF-8 become '?', and the result has at most
// `max_bytes` bytes (cut at a character boundary, "..." marking the cut).
inline std::string printable_excerpt(std::string_view s, std::size_t max_bytes) {
  std::string out;
  const auto continuation = [&](std::size_t i) { return i < s.size() && (s[i] & 0xC0) == 0x80; };
  for (std::size_t i = 0; i < s.size() && out.size() <= max_bytes;) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80             ? 1
                            : (c & 0xE0) == 0xC0 ? 2
                            : (c & 0xF0) == 0xE0 ? 3
                            : (c & 0xF8) == 0xF0 ? 4
                                                 : 0;
    bool whole = len > 0;
    for (std::size_t k = 1; whole && k < len; ++k) whole = continuation(i + k);
    if (!whole)
      out += '?';
    else if ((len == 1 && (c < 0x20 || c == 0x7F)) || (len == 2 && c == 0xC2 && (s[i + 1] & 0xE0) == 0x80))
      out += ' ';  // C0, DEL, C1 (U+0080..U+009F)
    else
      out += s.substr(i, len);
    i += whole ? len : 1;
  }
  if (out.size() <= max_bytes) return out;
  std::size_t cut = max_bytes >= 3 ? max_bytes - 3 : 0;
  while (cut > 0 && (out[cut] & 0xC0) == 0x80) --cut;  // not inside a character
  return out.substr(0, cut) + "...";
}

}  // namespace octorun
