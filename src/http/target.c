/* SPDX-License-Identifier: Apache-2.0 */
/* target.c - RFC 9112 section 3.2.2: a server must accept the absolute form of a request
 * target; this finds the origin form inside it, so every route serves both alike. */
#include "target.h"

#include <string.h>
#include <strings.h>

static int is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 3986 scheme characters after the first letter. */
static int is_scheme_char(unsigned char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

/* What an authority (host, port, IP literal) may hold: unreserved, pct-encoded,
 * sub-delims, ':' and the brackets of an IPv6 literal; '@' (userinfo) is left out. */
static int is_authority_char(unsigned char c)
{
    return is_scheme_char(c) || c == '_' || c == '~' || c == '%' || c == ':' || c == '[' ||
           c == ']' || (c && strchr("!$&'()*+,;=", c) != NULL);
}

int target_origin(const char *t, size_t len, size_t *off, int *empty_path)
{
    *off = 0;
    *empty_path = 0;
    if (len == 0 || !is_alpha((unsigned char)t[0]))
        return 0;
    size_t i = 1;
    while (i < len && is_scheme_char((unsigned char)t[i]))
        i++;
    if (i == len || t[i] != ':')
        return 0;               /* no scheme: not an absolute URI */
    int known = (i == 4 && strncasecmp(t, "http", 4) == 0) ||
                (i == 5 && strncasecmp(t, "https", 5) == 0);
    if (!known || len - i < 3 || t[i + 1] != '/' || t[i + 2] != '/')
        return -1;
    size_t host = i + 3, end = host;
    while (end < len && t[end] != '/' && t[end] != '?') {
        if (!is_authority_char((unsigned char)t[end]))
            return -1;
        end++;
    }
    if (end == host)
        return -1;
    *off = end;
    *empty_path = end == len || t[end] == '?';
    return 0;
}
