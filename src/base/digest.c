/* SPDX-License-Identifier: Apache-2.0 */
/* digest.c - SHA-256 in hex through gnutls_hash_fast (the audit log's hashed lines, the
 * names of tokens). */
#include "base/digest.h"

#include <gnutls/crypto.h>

int digest_sha256_hex(const void *p, size_t n, char out[DIGEST_SHA256_HEX])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char d[32];
    /* GnuTLS reads nothing when n is 0, but wants a pointer all the same. */
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, n ? p : "", n, d) < 0) {
        out[0] = '\0';
        return -1;
    }
    for (size_t i = 0; i < sizeof d; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[64] = '\0';
    return 0;
}
