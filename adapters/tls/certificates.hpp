// Self-managed X.509 material: a CA and serving certificates issued by it,
// generated in-process with OpenSSL (the manager's admission webhook needs no
// cert-manager; tests get TLS without shelling out).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace octorun::tls {

struct key_pair_pem {
  std::string certificate;  // PEM
  std::string private_key;  // PEM (PKCS#8)
};

struct certificate_request {
  std::string common_name;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  std::chrono::hours validity{24 * 365};
};

// A self-signed CA (ECDSA P-256).
expected<key_pair_pem, std::string> make_ca(const std::string& common_name, std::chrono::hours validity);

// A serverAuth certificate for `req`, signed by `ca`.
expected<key_pair_pem, std::string> issue_serving_certificate(const key_pair_pem& ca,
                                                              const certificate_request& req);

// Seconds from now until the certificate in `pem` expires (negative once expired).
expected<long long, std::string> seconds_until_expiry(const std::string& pem);

}  // namespace octorun::tls
