// One webhook CA for every manager replica. In self-generated certificate
// mode each replica issues its own serving certificate, and the apiserver,
// which may call any replica, trusts one caBundle: so the CA is kept in a
// Secret. The first replica to start creates it (create is atomic; a loser
// of the race reads the winner's), and each replica writes it into its
// certificate directory, where certificate_source::self_signed reuses it.
#pragma once

#include <chrono>
#include <string>

#include "adapters/kube/client.hpp"
#include "common/expected.hpp"

namespace octorun::admission {

// Reads the Secret `ns`/`name` (keys ca.crt and ca.key), creating it with a
// new CA valid for `validity` when it does not exist, and writes ca.crt and
// ca.key (0600) into `dir`.
expected<ok_t, std::string> fetch_shared_ca(kube::client& client, const std::string& ns,
                                            const std::string& name, const std::string& dir,
                                            std::chrono::hours validity = std::chrono::hours(24 * 365 * 5));

}  // namespace octorun::admission
