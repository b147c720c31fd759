#include "adapters/tls/certificates.hpp"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace octorun::tls {
namespace {

template <class T, void (*F)(T*)>
struct deleter {
  void operator()(T* p) const { F(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;
using bio_ptr = std::unique_ptr<BIO, deleter<BIO, BIO_free_all>>;
using ext_ptr = std::unique_ptr<X509_EXTENSION, deleter<X509_EXTENSION, X509_EXTENSION_free>>;

std::string openssl_error(const std::string& what) {
  unsigned long e = ERR_get_error();
  char buf[256] = {0};
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return what + (e != 0 ? std::string(": ") + buf : std::string());
}

std::string bio_string(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return std::string(data, static_cast<size_t>(n));
}

pkey_ptr new_key() { return pkey_ptr(EVP_EC_gen("P-256")); }

bool add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ext_ptr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

x509_ptr new_cert(const std::string& cn, std::chrono::hours validity, EVP_PKEY* key) {
  x509_ptr cert(X509_new());
  if (!cert) return cert;
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);  // tolerate clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()),
                  static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(validity).count()));
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()),
                             -1, -1, 0);
  return cert;
}

expected<key_pair_pem, std::string> to_pem(X509* cert, EVP_PKEY* key) {
  bio_ptr cb(BIO_new(BIO_s_mem())), kb(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cb.get(), cert) != 1 ||
      PEM_write_bio_PrivateKey(kb.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return unexpected{openssl_error("cannot encode PEM")};
  return key_pair_pem{bio_string(cb.get()), bio_string(kb.get())};
}

}  // namespace

expected<key_pair_pem, std::string> make_ca(const std::string& common_name, std::chrono::hours validity) {
  auto key = new_key();
  if (!key) return unexpected{openssl_error("cannot generate a CA key")};
  auto cert = new_cert(common_name, validity, key.get());
  if (!cert) return unexpected{openssl_error("cannot allocate a certificate")};
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!add_ext(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !add_ext(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_ext(cert.get(), cert.get(), NID_subject_key_identifier, "hash"))
    return unexpected{openssl_error("cannot add CA extensions")};
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return unexpected{openssl_error("cannot sign the CA certificate")};
  return to_pem(cert.get(), key.get());
}

expected<key_pair_pem, std::string> issue_serving_certificate(const key_pair_pem& ca,
                                                              const certificate_request& req) {
  bio_ptr cab(BIO_new_mem_buf(ca.certificate.data(), static_cast<int>(ca.certificate.size())));
  bio_ptr cakb(BIO_new_mem_buf(ca.private_key.data(), static_cast<int>(ca.private_key.size())));
  x509_ptr ca_cert(PEM_read_bio_X509(cab.get(), nullptr, nullptr, nullptr));
  pkey_ptr ca_key(PEM_read_bio_PrivateKey(cakb.get(), nullptr, nullptr, nullptr));
  if (!ca_cert || !ca_key) return unexpected{openssl_error("cannot read the CA certificate or key")};

  auto key = new_key();
  if (!key) return unexpected{openssl_error("cannot generate a key")};
  auto cert = new_cert(req.common_name, req.validity, key.get());
  if (!cert) return unexpected{openssl_error("cannot allocate a certificate")};
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  std::string san;
  for (const auto& d : req.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : req.ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  if (san.empty()) return unexpected{std::string("a serving certificate needs a DNS name or an IP address")};
  if (!add_ext(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !add_ext(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth") ||
      !add_ext(cert.get(), ca_cert.get(), NID_subject_alt_name, san) ||
      !add_ext(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always"))
    return unexpected{openssl_error("cannot add certificate extensions")};
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0)
    return unexpected{openssl_error("cannot sign the certificate")};
  return to_pem(cert.get(), key.get());
}

expected<long long, std::string> seconds_until_expiry(const std::string& pem) {
  bio_ptr b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  x509_ptr cert(PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr));
  if (!cert) return unexpected{openssl_error("not a PEM certificate")};
  int days = 0, secs = 0;
  if (ASN1_TIME_diff(&days, &secs, nullptr, X509_get0_notAfter(cert.get())) != 1)
    return unexpected{openssl_error("cannot read the certificate's expiry")};
  return static_cast<long long>(days) * 86400 + secs;
}

}  // namespace octorun::tls
