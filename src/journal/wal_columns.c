/* SPDX-License-Identifier: Apache-2.0 */
/* wal_columns.c - the COLUMNS record: a list's named columns, written after the REPLACE
 * or SNAPSHOT that defines the list, since neither those records nor snapshot files
 * carry them (logs and snapshots written before columns stay readable as they are). */
#include <stdlib.h>
#include <string.h>

#include "wal.h"

int wal_enc_columns(buf *out, const char *name, const list *l)
{
    uint8_t t = WAL_COLUMNS;
    char sep = list_column_sep(l);
    size_t nlen = strlen(name);
    if (buf_append(out, &t, 1) != 0 || wal_put_varint(out, nlen) != 0 ||
        buf_append(out, name, nlen) != 0 || buf_append(out, &sep, 1) != 0)
        return -1;
    for (size_t k = 0; k < list_column_count(l); k++) {
        size_t len;
        const char *s = list_column_name(l, k, &len);
        if (wal_put_varint(out, len) != 0 || buf_append(out, s, len) != 0)
            return -1;
    }
    return 0;
}

int wal_columns_apply(const wal_rec *r, list *l, const char **why)
{
    const uint8_t *p = r->data, *end = r->data + r->data_len;
    const char *names[LIST_COLUMNS_MAX];
    size_t lens[LIST_COLUMNS_MAX], n = 0;
    const char *s;
    size_t len;
    int rc;
    *why = "malformed columns record";
    while ((rc = wal_next_line(&p, end, &s, &len)) == 1) {
        if (n == LIST_COLUMNS_MAX || len == 0 || memchr(s, '\0', len))
            return -1;
        names[n] = s;
        lens[n++] = len;
    }
    if (rc < 0 || n == 0)
        return -1;
    *why = "out of memory";
    return list_set_columns(l, names, lens, n, (char)r->flag);
}
