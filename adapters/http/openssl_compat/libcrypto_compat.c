/* Carries the SONAME "libcrypto.so" and links libcrypto.so.3, so civetweb's
 * dlopen("libcrypto.so") succeeds without the -dev package's unversioned
 * symlink (see libssl_compat.c). */
#include <openssl/crypto.h>

int octorun_crypto_compat_version(void) { return OPENSSL_VERSION_MAJOR; }
