#include "adapters/github/crypto.hpp"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <rapidjson/document.h>

#include <ctime>
#include <memory>

#include "adapters/github/openssl_ptr.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"

namespace octorun::github {
namespace {

std::string hex(const unsigned char* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[data[i] >> 4]);
    out.push_back(digits[data[i] & 0xf]);
  }
  return out;
}

using openssl::md_ctx_ptr;
using openssl::memory_bio;
using openssl::pkey_ptr;

std::string claims_json(const jwt_claims& c) {
  return json::writer().open().field("iat", c.iat).field("exp", c.exp).field("iss", c.iss).close().str();
}

expected<jwt_claims, std::string> parse_claims(std::string_view payload_b64) {
  auto payload = base64_decode(payload_b64);
  if (!payload) return unexpected{std::string("JWT payload is not base64url")};
  auto parsed = json::parse(*payload, json::sources::jwt_payload);
  if (!parsed) return unexpected{"JWT payload: " + parsed.error()};
  const auto& d = *parsed;
  if (!d.IsObject()) return unexpected{std::string("JWT payload is not a JSON object")};
  jwt_claims c;
  auto iss = d.FindMember("iss");
  if (iss != d.MemberEnd()) {
    if (iss->value.IsString())
      c.iss = iss->value.GetString();
    else if (iss->value.IsInt64())
      c.iss = std::to_string(iss->value.GetInt64());
  }
  auto num = [&](const char* key, std::int64_t& out) {
    auto it = d.FindMember(key);
    if (it == d.MemberEnd() || !it->value.IsNumber()) return false;
    out = json::i64(d, key);  // a float outside int64 reads as 0 (casting it is undefined)
    return true;
  };
  num("iat", c.iat);
  if (!num("exp", c.exp)) return unexpected{std::string("JWT has no numeric exp")};
  return c;
}

struct jwt_parts {
  std::string_view header, payload, signature, signing_input;
};

expected<jwt_parts, std::string> split_jwt(std::string_view token) {
  auto a = token.find('.');
  if (a == std::string_view::npos) return unexpected{std::string("not a JWT")};
  auto b = token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos)
    return unexpected{std::string("not a JWT")};
  return jwt_parts{token.substr(0, a), token.substr(a + 1, b - a - 1), token.substr(b + 1),
                   token.substr(0, b)};
}

}  // namespace

std::string hmac_sha256_hex(std::string_view secret, std::string_view body) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &len);
  return hex(mac, len);
}

std::string webhook_signature(std::string_view secret, std::string_view body) {
  return "sha256=" + hmac_sha256_hex(secret, body);
}

bool webhook_signature_matches(std::string_view secret, std::string_view body, std::string_view header) {
  const std::string expected = webhook_signature(secret, body);
  return header.size() == expected.size() &&
         CRYPTO_memcmp(header.data(), expected.data(), expected.size()) == 0;
}

expected<std::string, std::string> make_app_jwt(const std::string& private_key_pem, const std::string& issuer,
                                                std::int64_t now_epoch) {
  auto bio = memory_bio(private_key_pem);
  pkey_ptr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) return unexpected{std::string("cannot read the GitHub App private key (PEM)")};
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA)
    return unexpected{std::string("the GitHub App private key is not an RSA key")};
  jwt_claims claims{issuer, now_epoch - 60, now_epoch + 9 * 60};
  std::string input =
      base64url_encode(R"({"alg":"RS256","typ":"JWT"})") + "." + base64url_encode(claims_json(claims));
  md_ctx_ptr ctx(EVP_MD_CTX_new());
  size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1)
    return unexpected{std::string("RS256 signing failed")};
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    return unexpected{std::string("RS256 signing failed")};
  sig.resize(len);
  return input + "." + base64url_encode(sig);
}

expected<jwt_claims, std::string> peek_jwt_claims(std::string_view token) {
  auto parts = split_jwt(token);
  if (!parts) return unexpected{parts.error()};
  return parse_claims(parts->payload);
}

}  // namespace octorun::github
