#include "common/base64.hpp"

namespace octorun {
namespace {

std::string encode(std::string_view data, const char* table, bool pad) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  auto byte = [&](size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(data[k])); };
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    unsigned v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += {table[v >> 18 & 63], table[v >> 12 & 63], table[v >> 6 & 63], table[v & 63]};
  }
  const size_t rest = data.size() - i;
  if (rest == 1) {
    unsigned v = byte(i) << 16;
    out += {table[v >> 18 & 63], table[v >> 12 & 63]};
    if (pad) out += "==";
  } else if (rest == 2) {
    unsigned v = byte(i) << 16 | byte(i + 1) << 8;
    out += {table[v >> 18 & 63], table[v >> 12 & 63], table[v >> 6 & 63]};
    if (pad) out += '=';
  }
  return out;
}

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

}  // namespace

std::string base64_encode(std::string_view data) {
  return encode(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", true);
}

std::string base64url_encode(std::string_view data) {
  return encode(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", false);
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  unsigned buffer = 0;
  int bits = 0;
  size_t symbols = 0, padding = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    int v = value_of(c);
    if (v < 0 || padding > 0) return std::nullopt;  // not base64, or data after padding
    ++symbols;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  // One symbol alone cannot hold a byte; padding may only fill the last quantum.
  if (symbols % 4 == 1 || padding > 2 || (padding > 0 && (symbols + padding) % 4 != 0)) return std::nullopt;
  return out;
}

}  // namespace octorun
