/* SPDX-License-Identifier: Apache-2.0 */
/* dataset_header.c - a file's first line as the names of its columns (INITFILE and LOAD
 * with HEADER=TRUE, the files loaded at start-up), and the same line written back (SAVE,
 * COLUMNS). */
#include "dataset/dataset.h"

#include <stdlib.h>
#include <string.h>

#include "base/csv.h"

/* The names of the header line s[0..len) into names (each NUL-terminated, one after the
 * other) and *n. Returns 0, -1 with the reason in why, or -2 on ENOMEM. */
static int header_names(const char *s, size_t len, char sep, buf *names, size_t *n,
                        buf *why)
{
    csv_cur c;
    csv_field f;
    int rc;
    *n = 0;
    csv_start(&c, s, len, sep);
    while ((rc = csv_next(&c, &f)) == 1) {
        size_t at = names->len;
        if (++*n > LIST_COLUMNS_MAX) {
            buf_printf(why, "The header names more than %d columns !", LIST_COLUMNS_MAX);
            return -1;
        }
        if (csv_field_append(names, &f) != 0 || buf_append(names, "", 1) != 0)
            return -2;
        const char *name = names->data + at;
        size_t nlen = names->len - 1 - at;
        if (nlen == 0 || memchr(name, '\0', nlen)) {
            buf_printf(why, "Column %zu of the header has an empty name or a NUL byte !", *n);
            return -1;
        }
        for (const char *o = names->data; o < name; o += strlen(o) + 1)
            if (strcmp(o, name) == 0) {
                buf_printf(why, "Column %zu of the header repeats the name of an earlier one !",
                           *n);
                return -1;
            }
    }
    if (rc < 0) {
        buf_puts(why, "The header line has a quote not closed or followed by text !");
        return -1;
    }
    return 0;
}

typedef struct line_check {
    char sep;
    size_t need, at;       /* fields each line needs; the line's number in the file */
    buf *why;
} line_check;

static int check_line(const char *s, size_t len, void *ctx)
{
    line_check *c = ctx;
    c->at++;
    long got = csv_count(s, len, c->sep);
    if (got < 0) {
        buf_printf(c->why, "Line %zu has a quote not closed or followed by text !", c->at);
        return 1;
    }
    if ((size_t)got < c->need) {
        buf_printf(c->why, "Line %zu has %ld fields, the header names %zu !", c->at, got,
                   c->need);
        return 1;
    }
    return 0;
}

int dataset_take_header(list *l, char sep, buf *why)
{
    size_t len, n;
    const char *first = list_get(l, 0, &len);
    if (!first) {
        buf_puts(why, "HEADER=TRUE needs a first line naming the columns !");
        return -1;
    }
    buf names = BUF_INIT;
    int rc = header_names(first, len, sep, &names, &n, why);
    /* The walk starts at the header itself, line 1 of the file, which passes by
     * construction: so the numbers it reports are the file's. */
    line_check chk = {sep, n, 0, why};
    if (rc == 0 && list_foreach(l, check_line, &chk) != 0)
        rc = -1;
    const char **v = rc == 0 ? malloc(n * sizeof *v) : NULL;
    size_t *lens = rc == 0 ? malloc(n * sizeof *lens) : NULL;
    if (rc == 0 && (!v || !lens))
        rc = -2;
    for (size_t i = 0, off = 0; rc == 0 && i < n; i++) {
        v[i] = names.data + off;
        lens[i] = strlen(v[i]);
        off += lens[i] + 1;
    }
    if (rc == 0 && (list_remove(l, 0) != 0 || list_set_columns(l, v, lens, n, sep) != 0))
        rc = -2;
    free(v);
    free(lens);
    buf_free(&names);
    return rc;
}

int dataset_header_line(const list *l, buf *out)
{
    char sep = list_column_sep(l);
    for (size_t k = 0; k < list_column_count(l); k++) {
        size_t len;
        const char *name = list_column_name(l, k, &len);
        if ((k && buf_append(out, &sep, 1) != 0) || csv_put(out, name, len, sep) != 0)
            return -1;
    }
    return 0;
}
