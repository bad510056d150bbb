/* SPDX-License-Identifier: Apache-2.0 */
/* snapshot.c - snapshot files of one list: streamed out atomically, checked on the way in. */
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1u << 20)

/* The writer's state while list_foreach walks the lines. */
typedef struct snap_out {
    int fd;
    buf chunk;          /* frame space, type byte, then lines */
    uint64_t lines, bytes, written;
    int err;            /* errno of the first failure (ENOMEM included) */
} snap_out;

static int chunk_start(snap_out *o)
{
    static const uint8_t head[WAL_FRAME_SIZE + 1] = {[WAL_FRAME_SIZE] = WAL_LINES};
    buf_clear(&o->chunk);
    return buf_append(&o->chunk, head, sizeof head);
}

/* Frames the chunk in place and writes it. */
static int chunk_flush(snap_out *o)
{
    uint8_t *p = (uint8_t *)o->chunk.data;
    size_t body = o->chunk.len - WAL_FRAME_SIZE;
    if (body <= 1)
        return 0;
    wal_frame_header(p, p + WAL_FRAME_SIZE, body);
    if (wal_write_all(o->fd, p, o->chunk.len) != 0) {
        o->err = errno;
        return -1;
    }
    o->written += o->chunk.len;
    if (chunk_start(o) != 0) {
        o->err = ENOMEM;
        return -1;
    }
    return 0;
}

static int put_line(const char *s, size_t len, void *ctx)
{
    snap_out *o = ctx;
    if (len > WAL_MAX_BODY - 16) {
        o->err = EFBIG;
        return -1;
    }
    if (o->chunk.len + len + 10 > CHUNK + WAL_FRAME_SIZE && chunk_flush(o) != 0)
        return -1;
    if (wal_put_varint(&o->chunk, len) != 0 || buf_append(&o->chunk, s, len) != 0) {
        o->err = ENOMEM;
        return -1;
    }
    o->lines++;
    o->bytes += len;
    return 0;
}

int snap_write(int dirfd, uint64_t id, const list *l, int sync_dir, uint64_t *bytes,
               buf *err)
{
    char name[64], tmp[80];
    uint8_t h[WAL_HEADER_SIZE];
    snap_out o = {-1, BUF_INIT, 0, 0, 0, 0};
    buf end = BUF_INIT;
    int rc = -1;
    wal_snap_name(name, sizeof name, id);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    o.fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (o.fd < 0) {
        o.err = errno;
        goto cleanup;
    }
    wal_header_make(h, WAL_MAGIC_SNAP, id);
    if (wal_write_all(o.fd, h, sizeof h) != 0) {
        o.err = errno;
        goto cleanup;
    }
    o.written = sizeof h;
    if (chunk_start(&o) != 0) {
        o.err = ENOMEM;
        goto cleanup;
    }
    if (list_foreach(l, put_line, &o) != 0 || chunk_flush(&o) != 0)
        goto cleanup;
    uint8_t t = WAL_END_LINES;
    buf_clear(&o.chunk);
    if (buf_append(&end, &t, 1) != 0 || wal_put_varint(&end, o.lines) != 0 ||
        wal_put_varint(&end, o.bytes) != 0 || wal_frame(&o.chunk, end.data, end.len) != 0) {
        o.err = ENOMEM;
        goto cleanup;
    }
    if (wal_write_all(o.fd, o.chunk.data, o.chunk.len) != 0 || wal_fsync(o.fd) != 0) {
        o.err = errno;
        goto cleanup;
    }
    o.written += o.chunk.len;
    if (close(o.fd) != 0) {
        o.fd = -1;
        o.err = errno;
        goto cleanup;
    }
    o.fd = -1;
    if (renameat(dirfd, tmp, dirfd, name) != 0 || (sync_dir && wal_fsync_dir(dirfd) != 0)) {
        o.err = errno;
        unlinkat(dirfd, name, 0);
        goto cleanup;
    }
    *bytes = o.written;
    rc = 0;
cleanup:
    if (rc != 0) {
        buf_printf(err, "cannot write snapshot %s: %s", name, strerror(o.err ? o.err : EIO));
        unlinkat(dirfd, tmp, 0);
    }
    if (o.fd >= 0)
        close(o.fd);
    buf_free(&o.chunk);
    buf_free(&end);
    return rc;
}

int snap_parse(const uint8_t *p, size_t len, uint64_t id, list **out, size_t *off,
               const char **why)
{
    uint64_t got, lines = 0, bytes = 0, want_lines, want_bytes;
    size_t at = 0, next, blen;
    const uint8_t *body;
    list *l = list_create();
    *out = NULL;
    *off = 0;
    if (!l) {
        *why = "out of memory";
        return -1;
    }
    if (wal_header_check(p, len, WAL_MAGIC_SNAP, &got, why) != 0)
        goto fail;
    if (got != id) {
        *why = "header names another snapshot";
        goto fail;
    }
    for (at = WAL_HEADER_SIZE;; at = next) {
        /* Snapshot files are renamed into place whole: a torn one is damage too. */
        wal_scan s = wal_next(p, len, at, &body, &blen, &next, why);
        if (s == WAL_END) {
            *why = "no end record (file cut short)";
            goto fail;
        }
        if (s != WAL_OK)
            goto fail;
        const uint8_t *q = body + 1, *end = body + blen;
        if (body[0] == WAL_END_LINES) {
            if (wal_get_varint(&q, end, &want_lines) != 0 ||
                wal_get_varint(&q, end, &want_bytes) != 0 || q != end) {
                *why = "malformed end record";
                goto fail;
            }
            if (want_lines != lines || want_bytes != bytes) {
                *why = "line count does not match the end record";
                goto fail;
            }
            if (next != len) {
                at = next;
                *why = "data after the end record";
                goto fail;
            }
            break;
        }
        if (body[0] != WAL_LINES) {
            *why = "unknown record type in snapshot";
            goto fail;
        }
        const char *s_line;
        size_t s_len;
        int r;
        while ((r = wal_next_line(&q, end, &s_line, &s_len)) == 1) {
            if (list_push_back(l, s_line, s_len) != 0) {
                *why = "out of memory";
                goto fail;
            }
            lines++;
            bytes += s_len;
        }
        if (r < 0) {
            *why = "malformed line in snapshot";
            goto fail;
        }
    }
    *out = l;
    return 0;
fail:
    *off = at;
    list_free(l);
    return -1;
}

int snap_read(int dirfd, uint64_t id, list **out, buf *err)
{
    char name[64];
    const uint8_t *p;
    size_t len, off;
    const char *why;
    wal_snap_name(name, sizeof name, id);
    if (wal_map(dirfd, name, &p, &len) != 0) {
        buf_printf(err, "snapshot %s: %s", name, strerror(errno));
        return -1;
    }
    int rc = snap_parse(p, len, id, out, &off, &why);
    if (rc != 0)
        buf_printf(err, "snapshot %s, offset %zu: %s", name, off, why);
    wal_unmap(p, len);
    return rc;
}

static int put_inline(const char *s, size_t len, void *ctx)
{
    buf *out = ctx;
    return wal_put_varint(out, len) == 0 && buf_append(out, s, len) == 0 ? 0 : -1;
}

int snap_enc_inline(buf *out, const char *name, const list *l)
{
    if (wal_enc_ref(out, WAL_SNAPSHOT, name, 0) != 0 || wal_put_varint(out, list_length(l)) != 0)
        return -1;
    return list_foreach(l, put_inline, out) == 0 ? 0 : -1;
}

int snap_inline_lines(const wal_rec *r, list *l, const char **why)
{
    const uint8_t *p = r->data, *end = r->data + r->data_len;
    const char *s;
    size_t len;
    uint64_t n = 0;
    int rc;
    while ((rc = wal_next_line(&p, end, &s, &len)) == 1) {
        if (list_push_back(l, s, len) != 0) {
            *why = "out of memory";
            return -1;
        }
        n++;
    }
    if (rc < 0 || n != r->n) {
        *why = "malformed inline snapshot";
        return -1;
    }
    return 0;
}
