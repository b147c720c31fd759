// Owning pointers for the OpenSSL objects the GitHub crypto code uses.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>

#include <memory>
#include <string>

namespace octorun::github::openssl {

struct bio_free {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct pkey_free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct md_ctx_free {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using bio_ptr = std::unique_ptr<BIO, bio_free>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, md_ctx_free>;

// A read-only memory BIO over `pem` (which must outlive it).
inline bio_ptr memory_bio(const std::string& pem) {
  return bio_ptr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace octorun::github::openssl
