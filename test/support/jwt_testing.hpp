// Test helpers for GitHub App authentication: what GitHub does on its side
// (verify an App JWT, mint an Actions-service admin token) and a fresh RSA key
// pair for a test App. The production library only signs (github::make_app_jwt)
// and reads claims (github::peek_jwt_claims); these live with the tests and
// the simulator.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adapters/github/crypto.hpp"
#include "common/expected.hpp"

namespace octorun::github::testing {

// Verifies an RS256 JWT with `public_key_pem` and its iat/exp/iss as GitHub
// does (expired, issued in the future, lifetime over 10 minutes: rejected).
expected<jwt_claims, std::string> verify_app_jwt(std::string_view token, const std::string& public_key_pem,
                                                 std::int64_t now_epoch);

// An HS256 JWT with the given claims (the simulator's admin tokens).
std::string make_hs256_jwt(std::string_view key, const jwt_claims& claims);

// A fresh RSA key pair in PEM (private: PKCS#8, public: SubjectPublicKeyInfo).
struct rsa_key_pem {
  std::string private_key;
  std::string public_key;
};
expected<rsa_key_pem, std::string> generate_rsa_key(int bits = 2048);

// One 2048-bit key for a whole test program, made on first use (making one
// takes a noticeable moment; the tests' Apps need not differ in keys).
inline const rsa_key_pem& shared_app_key() {
  static const auto key = [] {
    auto k = generate_rsa_key(2048);
    if (!k) std::abort();
    return *k;
  }();
  return key;
}

}  // namespace octorun::github::testing
