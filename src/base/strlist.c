/* SPDX-License-Identifier: Apache-2.0 */
/* strlist.c - the items of comma separated lists, and words between commas and blanks. */
#include "base/strlist.h"

#include <string.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_sep(char c)
{
    return c == ',' || is_blank(c);
}

int strlist_next(const char **cursor, const char **item, size_t *len)
{
    const char *b = *cursor;
    if (!b)
        return 0;
    const char *comma = strchr(b, ',');
    const char *e = comma ? comma : b + strlen(b);
    *cursor = comma ? comma + 1 : NULL;
    while (b < e && is_blank(*b))
        b++;
    while (e > b && is_blank(e[-1]))
        e--;
    *item = b;
    *len = (size_t)(e - b);
    return 1;
}

int strlist_next_word(const char **cursor, const char **item, size_t *len)
{
    const char *b = *cursor;
    if (!b)
        return 0;
    while (*b && is_sep(*b))
        b++;
    const char *e = b;
    while (*e && !is_sep(*e))
        e++;
    *cursor = *e ? e : NULL;
    if (e == b)
        return 0;
    *item = b;
    *len = (size_t)(e - b);
    return 1;
}
