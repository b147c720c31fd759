#include "adapters/tls/ca_bundle.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace octorun::tls {
namespace {

expected<std::string, std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected<std::string>{"cannot read " + path};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

expected<int, std::string> count_pem_certificates(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                &BIO_free);
  if (!bio) return unexpected<std::string>{"out of memory"};
  ERR_clear_error();
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_free(cert);
    ++count;
  }
  // The loop ends at the end of the text (no further BEGIN line), or at a
  // block that does not parse.
  const unsigned long err = ERR_peek_last_error();
  ERR_clear_error();
  if (err != 0 && !(ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE)) {
    char why[256];
    ERR_error_string_n(err, why, sizeof why);
    return unexpected<std::string>{"certificate " + std::to_string(count + 1) + " does not parse (" + why +
                                   ")"};
  }
  if (count == 0) return unexpected<std::string>{"no PEM certificate in it"};
  return count;
}

std::string system_ca_bundle_path() {
  if (const char* env = std::getenv("SSL_CERT_FILE"); env != nullptr && *env != '\0') return env;
  for (const char* path :
       {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return path;
  }
  return {};
}

expected<std::string, std::string> trust_bundle_with(const std::string& extra_file,
                                                     const std::string& system_bundle) {
  auto extra = read_file(extra_file);
  if (!extra) return unexpected<std::string>{extra.error()};
  auto bundle = trust_bundle_with_pem(*extra, system_bundle);
  if (!bundle) return unexpected<std::string>{extra_file + " " + bundle.error()};
  return bundle;
}

expected<std::string, std::string> trust_bundle_with_pem(std::string_view extra,
                                                         const std::string& system_bundle) {
  if (auto counted = count_pem_certificates(extra); !counted)
    return unexpected<std::string>{"is not a PEM certificate bundle: " + counted.error()};
  std::string bundle;
  std::error_code ec;
  if (!system_bundle.empty() && std::filesystem::is_regular_file(system_bundle, ec)) {
    auto system = read_file(system_bundle);
    if (!system) return unexpected<std::string>{system.error()};
    bundle = std::move(*system);
    if (!bundle.empty() && bundle.back() != '\n') bundle += '\n';
  }
  return bundle.append(extra);
}

}  // namespace octorun::tls
