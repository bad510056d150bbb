/* SPDX-License-Identifier: Apache-2.0 */
/* strlist.h - walking the items of a list in a text: "a, b,c" (comma separated, items
 * trimmed) or "a b\nc,d" (words between commas and blanks), without copying. */
#ifndef STSD_STRLIST_H
#define STSD_STRLIST_H

#include <stddef.h>

/* The next item of a comma separated list, its blanks (space, tab, CR, LF) trimmed.
 * *cursor is the NUL-terminated text at first (NULL: no items) and is moved past the
 * item, to NULL after the last. A text of n commas holds n + 1 items, some perhaps empty
 * (*len 0: "a,,b", "a,", "" or "  "): the caller skips or refuses them. Returns 1 with
 * *item (pointing into the text, not NUL-terminated) and *len, or 0 when none is left.
 *     for (const char *c = text, *it; strlist_next(&c, &it, &n);) ... */
int strlist_next(const char **cursor, const char **item, size_t *len);

/* The next word of a text where commas and blanks (space, tab, CR, LF) all separate,
 * as in a file of tokens, one a line: never an empty one. *cursor as for strlist_next.
 * Returns 1 with *item and *len, or 0 when no word is left. */
int strlist_next_word(const char **cursor, const char **item, size_t *len);

#endif
