// The CAs the manager trusts for GitHub: the system's bundle plus an extra
// PEM bundle (a GitHub Enterprise Server's private CA), as one PEM text for
// libcurl's CURLOPT_CAINFO_BLOB (http::tls_options::ca_pem): a blob replaces
// the CA file, so the system CAs are put in it too.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace octorun::tls {

// How many certificates `pem` holds; an error when it holds none or a block
// that does not parse (the error says which).
expected<int, std::string> count_pem_certificates(std::string_view pem);

// The system CA bundle's path: $SSL_CERT_FILE, else the first that exists of
// Debian's, Red Hat's and Alpine's; empty when none does.
std::string system_ca_bundle_path();

// The system bundle at `system_bundle` (none when empty or missing) followed
// by the certificates of `extra_file`, which must be a PEM bundle.
expected<std::string, std::string> trust_bundle_with(const std::string& extra_file,
                                                     const std::string& system_bundle);

// The same with the extra certificates given as PEM text (a RunnerSet's
// spec.caBundle); the error says why it is not a PEM bundle.
expected<std::string, std::string> trust_bundle_with_pem(std::string_view extra_pem,
                                                         const std::string& system_bundle);

}  // namespace octorun::tls
