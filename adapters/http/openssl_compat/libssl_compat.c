/* Debian bookworm's civetweb 1.15 dlopen()s "libssl.so" and resolves OpenSSL
 * 1.1 names; OpenSSL 3 no longer exports SSL_get_peer_certificate (it is a
 * macro for SSL_get1_peer_certificate), so the first TLS handshake crashes
 * (civetweb issue #1334).
 *
 * This library carries the SONAME "libssl.so" and links the real libssl.so.3.
 * Our binaries load it at start-up, so civetweb's dlopen("libssl.so") finds it
 * among the loaded objects by SONAME; dlsym() on that handle then resolves the
 * missing symbol here and every other one in libssl.so.3 / libcrypto.so.3. */
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate
X509* SSL_get_peer_certificate(const SSL* s) { return SSL_get1_peer_certificate(s); }

/* Referenced by the server adapter so the linker keeps this library needed. */
int octorun_openssl_compat_version(void) { return OPENSSL_VERSION_MAJOR; }
