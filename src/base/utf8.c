/* SPDX-License-Identifier: Apache-2.0 */
/* utf8.c - UTF-8 sequence lengths and validation (RFC 3629, Unicode table 3-7). */
#include "base/utf8.h"

size_t utf8_lead_len(unsigned char c)
{
    if (c >= 0xc2 && c <= 0xdf)
        return 2;
    if (c >= 0xe0 && c <= 0xef)
        return 3;
    if (c >= 0xf0 && c <= 0xf4)
        return 4;
    return 1;
}

size_t utf8_seq(const char *str, size_t left)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = utf8_lead_len(c);
    if (n == 1)
        return 0;
    /* The second byte's range narrows after some lead bytes. */
    unsigned char lo = 0x80, hi = 0xbf;
    if (c == 0xe0)
        lo = 0xa0;                /* overlong */
    else if (c == 0xed)
        hi = 0x9f;                /* UTF-16 surrogates */
    else if (c == 0xf0)
        lo = 0x90;                /* overlong */
    else if (c == 0xf4)
        hi = 0x8f;                /* past U+10FFFF */
    if (left < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

int utf8_valid(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t n = utf8_seq(s + i, len - i);
        if (!n)
            return 0;
        i += n;
    }
    return 1;
}
