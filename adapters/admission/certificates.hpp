// The webhook's serving certificate: either generated here (a CA of our own,
// kept in a directory so restarts keep the same caBundle, and a serving
// certificate issued at start and again before it expires), or loaded from
// files that cert-manager (or anything else) keeps up to date.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace octorun::admission {

struct self_signed_config {
  std::string dir;                        // ca.crt, ca.key, tls.crt, tls.key, tls.pem are kept here
  std::vector<std::string> dns_names;     // e.g. octorun-webhook.octorun-system.svc
  std::vector<std::string> ip_addresses;  // e.g. 127.0.0.1 in tests
  std::chrono::hours ca_validity{24 * 365 * 5};
  std::chrono::hours serving_validity{24 * 90};
};

struct certificate_files {
  std::string cert_file;  // serving certificate chain (PEM), e.g. tls.crt
  std::string key_file;   // its private key (PEM), e.g. tls.key
  std::string ca_file;    // optional: the CA for caBundle, e.g. ca.crt
  std::string work_dir;   // where the combined key+chain PEM for civetweb is written
};

// What the HTTPS server and the webhook configurations need.
struct serving_material {
  std::string pem_file;     // private key + certificate chain, one file (civetweb's format)
  std::string certificate;  // serving certificate chain, PEM
  std::string ca_bundle;    // PEM of the CAs the apiserver should trust (may hold two during a CA rotation)
};

// Whether a certificate with `seconds_left` should be replaced now.
bool rotation_due(long long seconds_left, std::chrono::seconds rotate_before);

class certificate_source {
 public:
  static certificate_source self_signed(self_signed_config config);
  static certificate_source from_files(certificate_files files);

  // Self-signed: reuse the CA in `dir` if it is valid beyond `rotate_before`
  // (a new one otherwise, with the old one kept in the bundle), and issue a
  // fresh serving certificate. Files: read and combine them.
  expected<serving_material, std::string> issue(std::chrono::seconds rotate_before);

  // Seconds until the certificate last issued or read expires.
  expected<long long, std::string> seconds_left() const;

  // Files mode: whether the files changed since they were last read.
  bool files_changed() const;

  bool self_signed_mode() const { return self_signed_; }

 private:
  bool self_signed_ = true;
  self_signed_config config_;
  certificate_files files_;
  std::string current_certificate_;
  std::string files_snapshot_;
};

}  // namespace octorun::admission
