/* SPDX-License-Identifier: Apache-2.0 */
/* num.c - strict decimal numbers: one parser for config keys, CIDR prefixes and command params. */
#include "base/num.h"

#include <inttypes.h>
#include <stdio.h>

#define KIB ((uint64_t)1024)
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)

/* Digits only into *out; NUM_ERANGE past UINT64_MAX (the digits still all checked). */
static int digits(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    int over = 0;
    if (len == 0)
        return NUM_EINVAL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return NUM_EINVAL;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    if (over)
        return NUM_ERANGE;
    *out = v;
    return 0;
}

int num_parse_u64(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    int rc = digits(s, len, &v);
    if (rc != 0)
        return rc;
    if (v < min || v > max)
        return NUM_ERANGE;
    *out = v;
    return 0;
}

int num_parse_i64(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
    int neg = len > 0 && s[0] == '-';
    size_t at = len > 0 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    uint64_t mag;
    int64_t v;
    int rc = digits(s + at, len - at, &mag);
    if (rc != 0)
        return rc;
    if (mag > (uint64_t)INT64_MAX + (neg ? 1 : 0))
        return NUM_ERANGE;
    if (neg)
        v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    else
        v = (int64_t)mag;
    if (v < min || v > max)
        return NUM_ERANGE;
    *out = v;
    return 0;
}

int num_parse_int32(const char *s, size_t len, int32_t *out)
{
    int64_t v;
    int rc = num_parse_i64(s, len, INT32_MIN, INT32_MAX, &v);
    if (rc == 0)
        *out = (int32_t)v;
    return rc;
}

int num_parse_seconds_ms(const char *s, size_t len, int64_t max_s, int64_t *ms)
{
    size_t i = 0, ndig = 0;
    int64_t whole = 0, frac = 0, scale = 100;
    int over = 0;
    if (max_s > INT64_MAX / 1000 - 1)
        max_s = INT64_MAX / 1000 - 1;   /* so that whole * 10 + 9 and the milliseconds fit */
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndig++) {
        if (whole > max_s)
            over = 1;   /* go on to check the rest */
        else
            whole = whole * 10 + (s[i] - '0');
    }
    if (i < len && s[i] == '.')
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndig++) {
            frac += (s[i] - '0') * scale;
            scale /= 10;
        }
    if (i != len || ndig == 0)
        return NUM_EINVAL;
    if (over || whole > max_s || (whole == max_s && frac > 0))
        return NUM_ERANGE;
    *ms = whole * 1000 + frac;
    return 0;
}

int num_parse_size(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t mult = 1, v;
    if (len > 0) {
        switch (s[len - 1]) {
        case 'k': case 'K': mult = KIB; len--; break;
        case 'm': case 'M': mult = MIB; len--; break;
        case 'g': case 'G': mult = GIB; len--; break;
        default: break;
        }
    }
    int rc = digits(s, len, &v);
    if (rc != 0)
        return rc;
    if (v > UINT64_MAX / mult || v * mult < min || v * mult > max)
        return NUM_ERANGE;
    *out = v * mult;
    return 0;
}

void num_size_text(char *out, size_t n, uint64_t v)
{
    if (v >= GIB && v % GIB == 0)
        snprintf(out, n, "%" PRIu64 "G", v / GIB);
    else if (v >= MIB && v % MIB == 0)
        snprintf(out, n, "%" PRIu64 "M", v / MIB);
    else if (v >= KIB && v % KIB == 0)
        snprintf(out, n, "%" PRIu64 "K", v / KIB);
    else
        snprintf(out, n, "%" PRIu64, v);
}
