/* SPDX-License-Identifier: Apache-2.0 */
/* dataset_save.c - SAVE: a list written to the dataset directory atomically, streamed
 * through one large buffer and converted to the configured charset. */
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset_core.h"
#include "base/log.h"

/* Big enough that a SAVE of millions of lines costs a few hundred write calls. */
#define SAVE_BUF_SIZE (1u << 20)

/* How many SAVEs of one list a second may name apart ("-2" to "-999"): beyond, a KO. */
#define SAVE_SUFFIX_MAX 999

/* Makes temp names unique between threads of this process; the pid covers other processes. */
static atomic_ulong tmp_counter;

/* Streams lines to a file through one large buffer, converting when needed. */
typedef struct writer {
    int fd;
    char *buf;
    size_t used;
    iconv_t cd;     /* (iconv_t)-1 when writing UTF-8 as is */
    int ascii;      /* the charset keeps ASCII as is */
    dataset_rc rc;  /* the first failure; writing stops there */
    int err;        /* errno of that failure when it is DATASET_IO */
} writer;

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Returns 0, or -1 with w->rc set. */
static int writer_flush(writer *w)
{
    if (w->used && write_all(w->fd, w->buf, w->used) != 0) {
        w->rc = DATASET_IO;
        w->err = errno;
        return -1;
    }
    w->used = 0;
    return 0;
}

/* Appends s[0..len) converted to the write charset. Returns 0, or -1 with w->rc set. */
static int writer_convert(writer *w, const char *s, size_t len)
{
    char *inp = (char *)s;
    size_t inleft = len;
    for (;;) {
        char *outp = w->buf + w->used;
        size_t outleft = SAVE_BUF_SIZE - w->used;
        size_t r = s ? iconv(w->cd, &inp, &inleft, &outp, &outleft)
                     : iconv(w->cd, NULL, NULL, &outp, &outleft);
        int e = errno;
        w->used = SAVE_BUF_SIZE - outleft;
        if (r != (size_t)-1)
            return 0;
        if (e == EILSEQ || e == EINVAL) {
            w->rc = DATASET_CHARSET;
            return -1;
        }
        /* E2BIG with an empty buffer would never make progress. */
        if (e != E2BIG || w->used == 0) {
            w->rc = DATASET_IO;
            w->err = e == E2BIG ? EIO : e;
            return -1;
        }
        if (writer_flush(w) != 0)
            return -1;
    }
}

/* Appends s[0..len) as is. Returns 0, or -1 with w->rc set. */
static int writer_raw(writer *w, const char *s, size_t len)
{
    if (len > SAVE_BUF_SIZE - w->used) {
        if (writer_flush(w) != 0)
            return -1;
        if (len >= SAVE_BUF_SIZE) { /* a huge line goes straight out, uncopied */
            if (write_all(w->fd, s, len) != 0) {
                w->rc = DATASET_IO;
                w->err = errno;
                return -1;
            }
            return 0;
        }
    }
    memcpy(w->buf + w->used, s, len);
    w->used += len;
    return 0;
}

/* list_foreach callback: one line and its '\n'. */
static int save_line(const char *s, size_t len, void *ctx)
{
    writer *w = ctx;
    int as_is = w->cd == (iconv_t)-1 || w->ascii;
    int rc = as_is && (w->cd == (iconv_t)-1 || dataset_ascii_only(s, len))
                 ? writer_raw(w, s, len)
                 : writer_convert(w, s, len);
    /* Otherwise '\n' goes through iconv too: it is not one 0x0a byte in UTF-16. */
    if (rc == 0)
        rc = as_is ? writer_raw(w, "\n", 1) : writer_convert(w, "\n", 1);
    return rc != 0;
}

/* Moves tmp to a name no file of the directory has: "<stamp>.<name>", else
 * "<stamp>-2.<name>", "<stamp>-3.<name>"... (the first that is free, written into out).
 * Returns 0 when tmp was renamed, 1 when it was linked (tmp still there, for the caller
 * to remove), or -1 with errno set (EEXIST once SAVE_SUFFIX_MAX names are all taken). */
static int install_new(dataset *d, const char *tmp, const char *stamp, const char *name,
                       char *out, size_t size)
{
    for (unsigned i = 1; i <= SAVE_SUFFIX_MAX; i++) {
        int n = i == 1 ? snprintf(out, size, "%s.%s", stamp, name)
                       : snprintf(out, size, "%s-%u.%s", stamp, i, name);
        if (n < 0 || (size_t)n >= size || n > NAME_MAX) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (renameat2(d->dirfd, tmp, d->dirfd, out, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno == EEXIST)
            continue;
        if (errno != EINVAL && errno != ENOSYS)
            return -1;
        /* A file system without RENAME_NOREPLACE: a hard link refuses an existing name
         * too; the temp name is then removed by the caller's cleanup. */
        if (linkat(d->dirfd, tmp, d->dirfd, out, 0) == 0)
            return 1;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* dataset_save and dataset_save_new: stamp NULL writes name (replacing it), otherwise a
 * new name made of stamp and name by install_new, copied into out. */
static dataset_rc save_to(dataset *d, const char *stamp, const char *name, const list *l,
                          char *out, size_t size)
{
    writer w = {.fd = -1, .cd = (iconv_t)-1, .ascii = d->write_ascii, .rc = DATASET_OK};
    char tmp[NAME_MAX + 1];
    int tmp_exists = 0;
    if (dataset_name_unsafe(name))
        return DATASET_ILLEGAL;
    /* Starts with '.', so dataset_list_files never offers a half-written file. */
    int n = snprintf(tmp, sizeof tmp, ".%s.tmp.%ld.%lu", name, (long)getpid(),
                     atomic_fetch_add(&tmp_counter, 1));
    if (n < 0 || (size_t)n >= sizeof tmp) {
        w.rc = DATASET_IO;
        w.err = ENAMETOOLONG;
        goto cleanup;
    }
    if (d->write_cs) {
        w.cd = iconv_open(d->write_cs, "UTF-8");
        if (w.cd == (iconv_t)-1) {
            w.rc = DATASET_IO;
            w.err = errno;
            goto cleanup;
        }
    }
    w.buf = malloc(SAVE_BUF_SIZE);
    if (!w.buf) {
        w.rc = DATASET_NOMEM;
        goto cleanup;
    }
    w.fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (w.fd < 0) {
        w.rc = DATASET_IO;
        w.err = errno;
        goto cleanup;
    }
    tmp_exists = 1;
    if (list_column_count(l)) {
        buf head = BUF_INIT;
        int failed = dataset_header_line(l, &head) != 0;
        if (failed)
            w.rc = DATASET_NOMEM;
        else
            failed = save_line(head.data, head.len, &w) != 0;
        buf_free(&head);
        if (failed)
            goto cleanup;
    }
    if (list_foreach(l, save_line, &w) != 0)
        goto cleanup;
    if (w.cd != (iconv_t)-1 && writer_convert(&w, NULL, 0) != 0)
        goto cleanup;
    if (writer_flush(&w) != 0)
        goto cleanup;
    /* The data must be on disk before the rename makes it the file of record. */
    if (fsync(w.fd) != 0) {
        w.rc = DATASET_IO;
        w.err = errno;
        goto cleanup;
    }
    int closed = close(w.fd);
    w.fd = -1; /* not retried: the descriptor is gone even when close fails */
    if (closed != 0) {
        w.rc = DATASET_IO;
        w.err = errno;
        goto cleanup;
    }
    if (stamp) {
        int linked = install_new(d, tmp, stamp, name, out, size);
        if (linked < 0) {
            w.rc = DATASET_IO;
            w.err = errno;
            goto cleanup;
        }
        tmp_exists = linked; /* a link leaves the temp name for the cleanup to remove */
    } else {
        /* rename replaces a symlink at name itself, never the file it points to. */
        if (renameat(d->dirfd, tmp, d->dirfd, name) != 0) {
            w.rc = DATASET_IO;
            w.err = errno;
            goto cleanup;
        }
        tmp_exists = 0;
    }
    if (fsync(d->dirfd) != 0) {
        w.rc = DATASET_IO;
        w.err = errno;
        goto cleanup;
    }
cleanup:
    if (w.fd >= 0)
        close(w.fd);
    if (tmp_exists && unlinkat(d->dirfd, tmp, 0) != 0)
        log_warn("dataset: cannot remove temp file %s/%s: %s", d->path, tmp, strerror(errno));
    if (w.cd != (iconv_t)-1)
        iconv_close(w.cd);
    free(w.buf);
    if (w.rc == DATASET_IO)
        dataset_set_errno(w.err);
    return w.rc;
}


dataset_rc dataset_save(dataset *d, const char *name, const list *l)
{
    return save_to(d, NULL, name, l, NULL, 0);
}

dataset_rc dataset_save_new(dataset *d, const char *stamp, const char *name, const list *l,
                            char *out, size_t size)
{
    return save_to(d, stamp, name, l, out, size);
}
