/* SPDX-License-Identifier: Apache-2.0 */
/* wal_rec.c - the bodies of the log's records: encoders and the decoder (wal.h; framing,
 * files and varints are wal.c's), and the COLUMNS record's. */
#include "wal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/csv.h"

static int put_name(buf *out, int type, const char *name)
{
    uint8_t t = (uint8_t)type;
    size_t n = strlen(name);
    return buf_append(out, &t, 1) == 0 && wal_put_varint(out, n) == 0 &&
           buf_append(out, name, n) == 0 ? 0 : -1;
}

int wal_enc_push(buf *out, const char *name, int at_tail, const char *line, size_t len)
{
    uint8_t f = at_tail ? 1 : 0;
    return put_name(out, WAL_PUSH, name) == 0 && buf_append(out, &f, 1) == 0 &&
           buf_append(out, line, len) == 0 ? 0 : -1;
}

int wal_enc_take(buf *out, const char *name, int keep, const size_t *pos, size_t n)
{
    uint8_t f = keep ? 1 : 0;
    if (put_name(out, WAL_TAKE, name) != 0 || buf_append(out, &f, 1) != 0 ||
        wal_put_varint(out, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (wal_put_varint(out, pos[i]) != 0)
            return -1;
    return 0;
}

int wal_enc_name(buf *out, int type, const char *name)
{
    return put_name(out, type, name);
}

int wal_enc_ref(buf *out, int type, const char *name, uint64_t id)
{
    return put_name(out, type, name) == 0 && wal_put_varint(out, id) == 0 ? 0 : -1;
}

int wal_enc_done(buf *out, uint64_t gen, uint64_t lists)
{
    uint8_t t = WAL_COMPACT_DONE;
    return buf_append(out, &t, 1) == 0 && wal_put_varint(out, gen) == 0 &&
           wal_put_varint(out, lists) == 0 ? 0 : -1;
}

int wal_enc_noop(buf *out)
{
    uint8_t t = WAL_NOOP;
    return buf_append(out, &t, 1);
}

int wal_enc_lease(buf *out, const char *name, uint64_t id, int64_t until, const char *line,
                  size_t len)
{
    return put_name(out, WAL_LEASE, name) == 0 && wal_put_varint(out, id) == 0 &&
           wal_put_varint(out, (uint64_t)until) == 0 && buf_append(out, line, len) == 0
               ? 0 : -1;
}

int wal_enc_own(buf *out, const char *name, uint64_t id, int64_t until, const char *owner,
                size_t olen, const char *line, size_t len)
{
    return put_name(out, WAL_OWN, name) == 0 && wal_put_varint(out, id) == 0 &&
           wal_put_varint(out, (uint64_t)until) == 0 && wal_put_varint(out, olen) == 0 &&
           buf_append(out, owner, olen) == 0 && buf_append(out, line, len) == 0 ? 0 : -1;
}

int wal_enc_renew(buf *out, const char *name, uint64_t id, int64_t until)
{
    return put_name(out, WAL_RENEW, name) == 0 && wal_put_varint(out, id) == 0 &&
           wal_put_varint(out, (uint64_t)until) == 0 ? 0 : -1;
}

int wal_enc_settle(buf *out, const char *name, uint64_t id, int release, const char *line,
                   size_t len)
{
    uint8_t f = release ? 1 : 0;
    return put_name(out, WAL_SETTLE, name) == 0 && buf_append(out, &f, 1) == 0 &&
           wal_put_varint(out, id) == 0 && buf_append(out, line, len) == 0 ? 0 : -1;
}

int wal_enc_push_many(buf *out, const char *name, int at_tail, size_t n)
{
    uint8_t f = at_tail ? 1 : 0;
    return put_name(out, WAL_PUSH_MANY, name) == 0 && buf_append(out, &f, 1) == 0 &&
           wal_put_varint(out, n) == 0 ? 0 : -1;
}

int wal_enc_line(buf *out, const char *line, size_t len)
{
    return wal_put_varint(out, len) == 0 && buf_append(out, line, len) == 0 ? 0 : -1;
}

int wal_enc_key(buf *out, int type, const char *name, int flag, uint64_t id, int64_t until,
                int64_t by, uint64_t version, const char *value, size_t len)
{
    uint8_t f = flag ? 1 : 0;
    if (type == WAL_KEY_SET && until)
        f |= WAL_KEY_SET_TTL;
    if (put_name(out, type, name) != 0)
        return -1;
    if (type == WAL_KEY_DEL)
        return 0;
    if (type == WAL_KEY_EXPIRE)
        return wal_put_varint(out, (uint64_t)until);
    if (type == WAL_KEY_RUN)
        /* The ttl only when there is one: records of runs without it keep their bytes. */
        return wal_put_varint(out, id) == 0 && wal_put_varint(out, (uint64_t)until) == 0 &&
               (!by || wal_put_varint(out, (uint64_t)by) == 0) ? 0 : -1;
    if ((type == WAL_KEY_SET || type == WAL_KEY_SETTLE) && buf_append(out, &f, 1) != 0)
        return -1;
    if (type == WAL_KEY_SET && until && wal_put_varint(out, (uint64_t)until) != 0)
        return -1;
    if ((type == WAL_KEY_LEASE || type == WAL_KEY_SETTLE) && wal_put_varint(out, id) != 0)
        return -1;
    if (type == WAL_KEY_LEASE &&
        (wal_put_varint(out, (uint64_t)until) != 0 ||
         wal_put_varint(out, ((uint64_t)by << 1) ^ (uint64_t)(by >> 63)) != 0))
        return -1;
    return wal_put_varint(out, version) == 0 && buf_append(out, value, len) == 0 ? 0 : -1;
}

/* The bodies of the lease records after the list's name: LEASE, OWN, RENEW, SETTLE.
 * Returns 0, or -1 if malformed. */
static int decode_lease(const uint8_t **pp, const uint8_t *end, wal_rec *r)
{
    const uint8_t *p = *pp;
    uint64_t v;
    if (r->type == WAL_SETTLE) {
        if (p == end || *p > 1)
            return -1;
        r->flag = *p++;
    }
    if (wal_get_varint(&p, end, &r->id) != 0 || r->id == 0)
        return -1;
    if (r->type != WAL_SETTLE && wal_get_varint(&p, end, &r->n) != 0)
        return -1;
    if (r->type == WAL_RENEW && p != end)
        return -1;
    if (r->type == WAL_OWN) {
        if (wal_get_varint(&p, end, &v) != 0 || v == 0 || v > (uint64_t)(end - p) ||
            memchr(p, '\0', (size_t)v))
            return -1;
        r->owner = (const char *)p;
        r->owner_len = (size_t)v;
        p += v;
    }
    *pp = p;
    return 0;
}

/* The bodies of the key records after the key's name: KEY_SET, KEY_LEASE, KEY_SETTLE.
 * Returns 0, or -1 if malformed. */
static int decode_key(const uint8_t **pp, const uint8_t *end, wal_rec *r)
{
    const uint8_t *p = *pp;
    uint64_t v;
    if (r->name_len == 0)
        return -1;
    if (r->type != WAL_KEY_LEASE) {
        int most = r->type == WAL_KEY_SET ? (1 | WAL_KEY_SET_TTL) : 1;
        if (p == end || *p > most)
            return -1;
        r->flag = *p & 1;
        if (*p++ & WAL_KEY_SET_TTL) {
            if (wal_get_varint(&p, end, &v) != 0 || v == 0 || v > INT64_MAX)
                return -1;
            r->expires = (int64_t)v;
        }
    }
    if (r->type != WAL_KEY_SET && (wal_get_varint(&p, end, &r->id) != 0 || r->id == 0))
        return -1;
    if (r->type == WAL_KEY_LEASE) {
        if (wal_get_varint(&p, end, &r->n) != 0 || wal_get_varint(&p, end, &v) != 0)
            return -1;
        r->by = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    }
    if (wal_get_varint(&p, end, &r->version) != 0 || r->version == 0)
        return -1;
    *pp = p;
    return 0;
}

int wal_decode(const uint8_t *body, size_t len, wal_rec *r, const char **why)
{
    const uint8_t *p = body + 1, *end = body + len;
    uint64_t v;
    memset(r, 0, sizeof *r);
    r->type = body[0];
    *why = "malformed record";
    if (r->type == WAL_COMPACT_DONE)
        return wal_get_varint(&p, end, &r->id) == 0 && wal_get_varint(&p, end, &r->n) == 0 &&
               p == end ? 0 : -1;
    if (r->type == WAL_NOOP)
        return p == end ? 0 : -1;
    if (!WAL_IS_LOG(r->type)) {
        *why = "unknown record type";
        return -1;
    }
    if (wal_get_varint(&p, end, &v) != 0 || v > (uint64_t)(end - p) ||
        (v && memchr(p, '\0', (size_t)v))) {
        *why = "bad list name in record";
        return -1;
    }
    r->name = (const char *)p;
    r->name_len = (size_t)v;
    p += v;
    switch (r->type) {
    case WAL_PUSH:
    case WAL_TAKE:
        if (p == end || *p > 1)
            return -1;
        r->flag = *p++;
        if (r->type == WAL_PUSH)
            break;
        /* Each position takes at least one byte: a count beyond the bytes left is a lie. */
        if (wal_get_varint(&p, end, &r->n) != 0 || r->n > (uint64_t)(end - p))
            return -1;
        break;
    case WAL_RESET:
        if (p != end)
            return -1;
        break;
    case WAL_LEASE:
    case WAL_OWN:
    case WAL_RENEW:
    case WAL_SETTLE:
        if (decode_lease(&p, end, r) != 0)
            return -1;
        break;
    case WAL_KEY_RUN:
        if (r->name_len == 0 || wal_get_varint(&p, end, &r->id) != 0 ||
            wal_get_varint(&p, end, &r->n) != 0)
            return -1;
        if (p != end) {             /* the ttl its DONE gives the key */
            if (wal_get_varint(&p, end, &v) != 0 || v == 0 || v > INT64_MAX || p != end)
                return -1;
            r->by = (int64_t)v;
        }
        break;
    case WAL_KEY_EXPIRE:
        if (r->name_len == 0 || wal_get_varint(&p, end, &r->n) != 0 || r->n == 0 ||
            r->n > INT64_MAX || p != end)
            return -1;
        break;
    case WAL_PUSH_MANY: {
        if (p == end || *p > 1)
            return -1;
        r->flag = *p++;
        if (wal_get_varint(&p, end, &r->n) != 0 || r->n > (uint64_t)(end - p))
            return -1;
        /* The count must match the lines that follow, so that replay need not check. */
        const uint8_t *q = p;
        const char *s;
        size_t l;
        uint64_t seen = 0;
        int more;
        while ((more = wal_next_line(&q, end, &s, &l)) == 1)
            seen++;
        if (more < 0 || seen != r->n)
            return -1;
        break;
    }
    case WAL_DROP:
        if (p != end)
            return -1;
        break;
    case WAL_KEY_DEL:
        if (p != end || r->name_len == 0)
            return -1;
        break;
    case WAL_COLUMNS:         /* the names are checked where they are used */
        if (p == end || !csv_sep_ok((char)*p))
            return -1;
        r->flag = *p++;
        break;
    case WAL_KEY_SET:
    case WAL_KEY_LEASE:
    case WAL_KEY_SETTLE:
        if (decode_key(&p, end, r) != 0)
            return -1;
        break;
    default:        /* REPLACE, SNAPSHOT */
        if (wal_get_varint(&p, end, &r->id) != 0)
            return -1;
        if (r->type == WAL_SNAPSHOT && r->id == 0 &&
            (wal_get_varint(&p, end, &r->n) != 0 || r->n > (uint64_t)(end - p)))
            return -1;
        if (p != end && !(r->type == WAL_SNAPSHOT && r->id == 0))
            return -1;
        break;
    }
    r->data = p;
    r->data_len = (size_t)(end - p);
    return 0;
}

/* The COLUMNS record: a list's named columns, written after the REPLACE or SNAPSHOT that
 * defines the list, since neither those records nor snapshot files carry them (logs and
 * snapshots written before columns stay readable as they are). */
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
