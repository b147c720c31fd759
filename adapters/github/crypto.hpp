// The cryptography GitHub needs, over OpenSSL 3, without I/O: webhook HMAC
// signatures, signing GitHub App JWTs (RS256) and reading JWT claims.
// Base64 and RFC 3339: common. What only GitHub's side does (verifying
// App JWTs, minting admin tokens) and test keys: test/support/jwt_testing.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace octorun::github {

// Lower-case hex HMAC-SHA256 of `body` keyed with `secret`.
std::string hmac_sha256_hex(std::string_view secret, std::string_view body);

// The X-Hub-Signature-256 value GitHub sends: "sha256=<hex>".
std::string webhook_signature(std::string_view secret, std::string_view body);

// Constant-time check of an X-Hub-Signature-256 header against the body.
bool webhook_signature_matches(std::string_view secret, std::string_view body, std::string_view header);

// A GitHub App JWT: {"alg":"RS256","typ":"JWT"}, iat = now - 60, exp = now + 9 min, iss = issuer.
expected<std::string, std::string> make_app_jwt(const std::string& private_key_pem, const std::string& issuer,
                                                std::int64_t now_epoch);

struct jwt_claims {
  std::string iss;
  std::int64_t iat = 0;
  std::int64_t exp = 0;
};

// Reads the claims of any JWT without checking its signature (the Actions
// service admin token: the client only needs `exp`).
expected<jwt_claims, std::string> peek_jwt_claims(std::string_view token);

}  // namespace octorun::github
