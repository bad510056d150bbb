/* SPDX-License-Identifier: Apache-2.0 */
/* utf8.h - UTF-8 sequences: how long one is, and whether bytes are well-formed. */
#ifndef STSD_UTF8_H
#define STSD_UTF8_H

#include <stddef.h>

/* The bytes a sequence that starts with byte c claims by its lead byte alone: 1 for
 * ASCII and for a byte that starts none (a continuation byte, 0xc0, 0xc1, 0xf5-0xff),
 * else 2, 3 or 4. Reads nothing after c: what to skip past a character that iconv refuses. */
size_t utf8_lead_len(unsigned char c);

/* Length of the well-formed UTF-8 sequence at s (at most left > 0 bytes), or 0 if none
 * starts there (a bad lead byte, an overlong, a surrogate, past U+10FFFF, or cut short). */
size_t utf8_seq(const char *s, size_t left);

/* 1 if s[0..len) is well-formed UTF-8 (no overlongs, surrogates or values past
 * U+10FFFF; NUL is a character), else 0. */
int utf8_valid(const char *s, size_t len);

#endif
