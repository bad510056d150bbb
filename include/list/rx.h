/* SPDX-License-Identifier: Apache-2.0 */
/* rx.h - FIND's regular expressions: pcre2 with JIT, match limits, and a cache of
 * compiled patterns shared by all threads. */
#ifndef STSD_RX_H
#define STSD_RX_H

#include <stddef.h>

typedef struct rx rx;

/* Compiles (or takes from the cache) pattern p[0..len). whole: the match must cover the
 * whole line (REGEX_MATCH) rather than occur anywhere (REGEX_FIND). Returns a reference
 * the caller gives back with rx_release, or NULL if the pattern does not compile. */
rx *rx_get(const char *p, size_t len, int whole);
void rx_release(rx *r);

/* Why pattern p[0..len) does not compile (as rx_get with whole would): pcre2's message
 * into msg (size bytes) and the offset in the pattern where it stopped. Returns 0, or -1
 * if the pattern compiles after all. */
int rx_explain(const char *p, size_t len, int whole, char *msg, size_t size, size_t *offset);

/* 1 if r matches s[0..len), 0 if not, RX_LIMIT if the match or depth limit was hit (or
 * another matching error). Uses a per-thread match data block: no allocation per call.
 * Fits list_match_fn's contract: list_scan passes RX_LIMIT through, distinct from its -1. */
#define RX_LIMIT (-2)
int rx_match(const char *s, size_t len, void *r);

/* Frees the cache (at exit). */
void rx_shutdown(void);

#endif
