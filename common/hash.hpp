// Non-cryptographic digests of strings, for keys that stand in for the
// strings themselves (fingerprints, dedupe and spam-filter keys): stable
// across runs and builds, unlike std::hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace octorun {

// 64-bit FNV-1a; `h` seeds it (the FNV offset basis by default).
inline std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// 128 bits: FNV-1a from two bases, so two different strings share a digest
// with a chance of about 2^-128 — a set of ids can be kept as digests.
struct digest128 {
  std::uint64_t a = 0, b = 0;
  bool operator==(const digest128&) const = default;
};
inline digest128 digest128_of(std::string_view s) { return {fnv1a(s), fnv1a(s, 0x6c62272e07bb0142ull)}; }
struct digest128_hash {
  std::size_t operator()(const digest128& d) const { return static_cast<std::size_t>(d.a ^ (d.b >> 1)); }
};

}  // namespace octorun
