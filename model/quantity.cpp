#include "model/quantity.hpp"

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

namespace octorun::model {
namespace {

// The suffix's factor; nothing for an unknown suffix.
std::optional<double> suffix_factor(std::string_view s) {
  static const std::pair<std::string_view, double> suffixes[] = {
      {"", 1},
      {"n", 1e-9},
      {"u", 1e-6},
      {"m", 1e-3},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
      {"Ki", 1024.0},
      {"Mi", 1024.0 * 1024},
      {"Gi", 1024.0 * 1024 * 1024},
      {"Ti", 1024.0 * 1024 * 1024 * 1024},
      {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
      {"Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
  };
  for (const auto& [suffix, factor] : suffixes)
    if (s == suffix) return factor;
  return std::nullopt;
}

}  // namespace

std::optional<double> parse_quantity(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  // The number: digits with at most one point, then an exponent only when
  // the rest is not a suffix ("1E" is one exa, "1e3" a thousand).
  std::size_t end = 0;
  if (text[end] == '+' || text[end] == '-') ++end;
  bool digits = false;
  bool point = false;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c >= '0' && c <= '9')
      digits = true;
    else if (c == '.' && !point)
      point = true;
    else
      break;
  }
  if (!digits) return std::nullopt;
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    std::size_t exp = end + 1;
    if (exp < text.size() && (text[exp] == '+' || text[exp] == '-')) ++exp;
    std::size_t exp_digits = exp;
    while (exp_digits < text.size() && text[exp_digits] >= '0' && text[exp_digits] <= '9') ++exp_digits;
    if (exp_digits > exp && exp_digits == text.size()) end = exp_digits;
  }
  const auto factor = suffix_factor(text.substr(end));
  if (!factor) return std::nullopt;
  // strtod accepts the sign from_chars refuses; the text checked above is all it reads.
  const std::string number(text.substr(0, end));
  char* parsed_end = nullptr;
  const double value = std::strtod(number.c_str(), &parsed_end);
  if (parsed_end != number.c_str() + number.size()) return std::nullopt;
  const double result = value * *factor;
  if (!std::isfinite(result) || result < 0) return std::nullopt;
  return result;
}

}  // namespace octorun::model
