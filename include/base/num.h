/* SPDX-License-Identifier: Apache-2.0 */
/* num.h - strict decimal numbers: digits only (no blanks, no empty text, nothing after
 * them), within bounds the caller names; Java's Integer.parseInt; decimal seconds; byte
 * sizes with a K, M or G suffix. One parser for config keys, CIDRs and command params. */
#ifndef STSD_NUM_H
#define STSD_NUM_H

#include <stddef.h>
#include <stdint.h>

/* What the parsers return besides 0; callers that need not tell them apart test != 0. */
#define NUM_EINVAL (-1)   /* not a number of the kind asked: empty, a stray byte, a sign */
#define NUM_ERANGE (-2)   /* a well-formed number outside [min, max], however long */

/* s[0..len): ASCII digits only, no sign, in [min, max] ("007" is 7). Returns 0 with *out
 * set, or NUM_EINVAL / NUM_ERANGE with *out unchanged. s need not be NUL-terminated. */
int num_parse_u64(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out);

/* s[0..len): an optional '+' or '-', then ASCII digits, in [min, max] ("-0" is 0). Returns
 * 0 with *out set, or NUM_EINVAL / NUM_ERANGE with *out unchanged. */
int num_parse_i64(const char *s, size_t len, int64_t min, int64_t max, int64_t *out);

/* Java's Integer.parseInt over ASCII: an optional sign, digits, INT32_MIN..INT32_MAX.
 * Returns 0 with *out set, or NUM_EINVAL / NUM_ERANGE with *out unchanged. */
int num_parse_int32(const char *s, size_t len, int32_t *out);

/* Seconds as digits with an optional '.' and fraction ("5", "0.25", ".5", "2."; at least
 * one digit), at most max_s, into milliseconds: fraction digits past the third are checked
 * and dropped. Returns 0 with *ms set, or NUM_EINVAL / NUM_ERANGE with *ms unchanged. */
int num_parse_seconds_ms(const char *s, size_t len, int64_t max_s, int64_t *ms);

/* Bytes as digits with an optional K, M or G suffix (either case, powers of 1024), in
 * [min, max]. Returns 0 with *out set, or NUM_EINVAL / NUM_ERANGE with *out unchanged. */
int num_parse_size(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out);

/* Writes v into out[n] as num_parse_size reads it, with the largest suffix that divides it
 * exactly ("16M", "1K", "1500"); truncated to fit, always NUL-terminated if n > 0. */
void num_size_text(char *out, size_t n, uint64_t v);

#endif
