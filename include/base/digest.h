/* SPDX-License-Identifier: Apache-2.0 */
/* digest.h - SHA-256 in hex, by GnuTLS (already linked for TLS): no crypto of our own. */
#ifndef STSD_DIGEST_H
#define STSD_DIGEST_H

#include <stddef.h>

/* 64 hex digits and a NUL. */
#define DIGEST_SHA256_HEX 65

/* The SHA-256 of p[0..n) in lower-case hex, into out. Returns 0, or -1 if GnuTLS failed
 * (out is then empty). */
int digest_sha256_hex(const void *p, size_t n, char out[DIGEST_SHA256_HEX]);

#endif
