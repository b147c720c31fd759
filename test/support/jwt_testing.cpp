#include "test/support/jwt_testing.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <rapidjson/document.h>

#include <memory>

#include "adapters/github/openssl_ptr.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"

namespace octorun::github::testing {
namespace {

using openssl::bio_ptr;
using openssl::md_ctx_ptr;
using openssl::memory_bio;
using openssl::pkey_ptr;

std::string pem_text(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string{};
}

bool header_says_rs256(std::string_view header_b64) {
  auto header = base64_decode(header_b64);
  if (!header) return false;
  rapidjson::Document h;
  h.Parse(header->data(), header->size());
  return !h.HasParseError() && h.IsObject() && json::str(h, "alg") == "RS256";
}

}  // namespace

expected<jwt_claims, std::string> verify_app_jwt(std::string_view token, const std::string& public_key_pem,
                                                 std::int64_t now_epoch) {
  // peek_jwt_claims checks the three-part shape and reads the claims.
  auto claims = peek_jwt_claims(token);
  if (!claims) return claims;
  const auto first_dot = token.find('.');
  const auto last_dot = token.rfind('.');
  if (!header_says_rs256(token.substr(0, first_dot))) return unexpected{std::string("JWT alg is not RS256")};
  auto sig = base64_decode(token.substr(last_dot + 1));
  if (!sig) return unexpected{std::string("JWT signature is not base64url")};
  const std::string_view signing_input = token.substr(0, last_dot);
  auto bio = memory_bio(public_key_pem);
  pkey_ptr key(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) return unexpected{std::string("cannot read the App public key")};
  md_ctx_ptr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()), sig->size(),
                       reinterpret_cast<const unsigned char*>(signing_input.data()),
                       signing_input.size()) != 1)
    return unexpected{std::string("JWT signature does not verify")};
  if (claims->exp <= now_epoch) return unexpected{std::string("JWT expired")};
  if (claims->iat > now_epoch + 60) return unexpected{std::string("JWT issued in the future")};
  if (claims->exp - claims->iat > 10 * 60 + 60)
    return unexpected{std::string("JWT lifetime exceeds 10 minutes")};
  if (claims->iss.empty()) return unexpected{std::string("JWT has no iss")};
  return claims;
}

std::string make_hs256_jwt(std::string_view key, const jwt_claims& claims) {
  const std::string payload = "{\"iat\":" + std::to_string(claims.iat) +
                              ",\"exp\":" + std::to_string(claims.exp) +
                              ",\"iss\":" + json::quote(claims.iss) + "}";
  std::string input = base64url_encode(R"({"alg":"HS256","typ":"JWT"})") + "." + base64url_encode(payload);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." + base64url_encode(std::string_view(reinterpret_cast<const char*>(mac), len));
}

expected<rsa_key_pem, std::string> generate_rsa_key(int bits) {
  pkey_ptr key(EVP_RSA_gen(static_cast<unsigned>(bits)));
  if (!key) return unexpected{std::string("RSA key generation failed")};
  bio_ptr priv(BIO_new(BIO_s_mem())), pub(BIO_new(BIO_s_mem()));
  if (!priv || !pub ||
      PEM_write_bio_PrivateKey(priv.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_PUBKEY(pub.get(), key.get()) != 1)
    return unexpected{std::string("cannot write the RSA key as PEM")};
  return rsa_key_pem{pem_text(priv.get()), pem_text(pub.get())};
}

}  // namespace octorun::github::testing
