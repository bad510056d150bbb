/* SPDX-License-Identifier: Apache-2.0 */
/* journal_fixture.h - what the journal's unit tests share: a temp state directory, a
 * store with its journal, a dump of every list to compare, and a workload that writes
 * every record type. Included by test_journal.c and test_journal_io.c. */
#ifndef STSD_JOURNAL_FIXTURE_H
#define STSD_JOURNAL_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal/journal.h"
#include "base/log.h"
#include "keys_fixture.h"
#include "meet/keys.h"
#include "store/store.h"
#include "journal/wal.h"

static char tmp[64], state[96];
static journal *fx_j;     /* the journal jopen opened last: helpers wait for it */

/* Waits until the change recorded at lsn is durable (0: nothing was recorded). */
static inline void settle(uint64_t lsn)
{
    if (fx_j && lsn)
        assert_int_equal(journal_wait(fx_j, lsn), 0);
}

static inline int setup(void **s)
{
    snprintf(tmp, sizeof tmp, "/tmp/stsd-jtest-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    snprintf(state, sizeof state, "%s/state", tmp);
    return 0;
}

static inline int teardown(void **s)
{
    char cmd[128];
    wal_io_reset();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static inline void sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    assert_int_equal(system(cmd), 0);
}

static inline char *path_of(const char *name)
{
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", state, name);
    return p[k];
}

static inline char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static inline void write_all(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static inline long size_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static inline journal *jopen(conf_fsync policy, int fresh, store **st)
{
    buf err = BUF_INIT;
    *st = keyed_store(NULL);
    assert_non_null(*st);
    journal *j = journal_open(state, policy, *st, fresh, &err);
    if (!j)
        fprintf(stderr, "journal_open: %s\n", err.data);
    assert_non_null(j);
    buf_free(&err);
    journal_attach(j, *st);
    fx_j = j;
    return j;
}

static inline void jclose(journal *j, store *st)
{
    journal_attach(NULL, st);
    journal_close(j);
    store_free(st);
    if (fx_j == j)
        fx_j = NULL;
}

/* The whole store as bytes: every list by name, every line with its length. */
typedef struct dump_ctx {
    store *st;
    buf *out;
} dump_ctx;

static inline int dump_line(const char *s, size_t len, void *ctx)
{
    buf *b = ctx;
    buf_printf(b, "  %zu:", len);
    buf_append(b, s, len);
    buf_puts(b, "\n");
    return 0;
}

static inline void dump_list(const char *name, size_t len, void *ctx)
{
    dump_ctx *d = ctx;
    list *copy;
    buf_printf(d->out, "%s (%zu)\n", name, len);
    assert_int_equal(store_snapshot(d->st, name, &copy), STORE_OK);
    list_foreach(copy, dump_line, d->out);
    list_free(copy);
}

static inline buf dump(store *st)
{
    buf b = BUF_INIT;
    dump_ctx d = {st, &b};
    buf_puts(&b, "");
    assert_true(store_status(st, dump_list, &d) >= 0);
    return b;
}

static inline void same(const buf *a, const buf *b)
{
    if (a->len != b->len || memcmp(a->data, b->data, a->len) != 0)
        fprintf(stderr, "--- expected\n%s--- got\n%s", a->data, b->data);
    assert_int_equal(a->len, b->len);
    assert_memory_equal(a->data, b->data, a->len);
}

/* Reopens the state directory into a new store and checks it holds exactly want. */
static inline void reopen_same(const buf *want, conf_fsync policy)
{
    store *st;
    journal *j = jopen(policy, 0, &st);
    buf got = dump(st);
    same(want, &got);
    buf_free(&got);
    jclose(j, st);
}

static inline void add(store *st, const char *name, const char *line, int at_tail)
{
    uint64_t lsn;
    assert_int_equal(store_add(st, name, line, strlen(line), at_tail, 0, &lsn), STORE_OK);
    settle(lsn);
}

static inline void take(store *st, const char *name, store_end end, int keep, size_t n)
{
    buf out = BUF_INIT;
    size_t count;
    uint64_t lsn;
    assert_int_equal(store_read(st, name, end, keep, n, &out, &count, &lsn), STORE_OK);
    assert_int_equal(count, n);
    settle(lsn);
    buf_free(&out);
}

static inline int starts_with_b(const char *s, size_t len, void *ctx)
{
    return len > 0 && s[0] == 'b';
}

static inline list *lines(const char *prefix, size_t n)
{
    list *l = list_create();
    char s[64];
    assert_non_null(l);
    for (size_t i = 0; i < n; i++) {
        snprintf(s, sizeof s, "%s-%zu", prefix, i);
        assert_int_equal(list_push_back(l, s, strlen(s)), 0);
    }
    return l;
}

/* Every kind of change, on several lists. */
static inline void workload(store *st)
{
    buf out = BUF_INIT;
    uint64_t lsn;
    for (int i = 0; i < 40; i++) {
        char s[32];
        snprintf(s, sizeof s, "%c%d", "abc"[i % 3], i);
        add(st, "q", s, i % 4 != 0);
    }
    assert_int_equal(store_add(st, "q", "a3", 2, 1, 1, &lsn), STORE_EXISTS);
    settle(lsn);
    take(st, "q", STORE_FIRST, 0, 1);
    take(st, "q", STORE_LAST, 1, 2);
    take(st, "q", STORE_RANDOM, 0, 3);
    take(st, "q", STORE_RANDOM, 1, 4);
    add(st, "q", "findme", 0);       /* random reads may have taken any other line */
    store_matcher eq = {NULL, NULL, "findme", 6, NULL, 0};
    assert_int_equal(store_find(st, "q", &eq, 1, &out, &lsn), STORE_OK);
    settle(lsn);
    store_matcher fn = {starts_with_b, NULL, NULL, 0, NULL, 0};
    assert_int_equal(store_find(st, "q", &fn, 0, &out, &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_add(st, "bin", "x\0y\nz\r", 6, 1, 0, &lsn), STORE_OK);
    settle(lsn);
    add(st, "bin", "", 1);
    add(st, "r", "gone", 1);
    assert_int_equal(store_reset(st, "r", &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_reset(st, "nothere", &lsn), STORE_OK);
    settle(lsn);
    add(st, "drained", "1", 1);
    add(st, "drained", "2", 1);
    take(st, "drained", STORE_FIRST, 0, 2);
    assert_int_equal(store_replace(st, "big", lines("big", 5000), &lsn), STORE_OK);
    settle(lsn);
    take(st, "big", STORE_RANDOM, 0, 10);
    add(st, "big", "tail", 1);
    assert_int_equal(store_replace(st, "none", list_create(), &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_replace(st, "twice", lines("first", 10), &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_replace(st, "twice", lines("second", 3), &lsn), STORE_OK);
    settle(lsn);
    buf_free(&out);
}

/* A key's value and version as "value/version", or "-" when absent (a static buffer). */
static inline const char *key_of(store *st, const char *name)
{
    static char out[128];
    buf b = BUF_INIT;
    uint64_t v;
    if (keys_get(st, name, &b, &v) != STORE_OK)
        snprintf(out, sizeof out, "-");
    else
        snprintf(out, sizeof out, "%.*s/%llu", (int)b.len, b.data ? b.data : "",
                 (unsigned long long)v);
    buf_free(&b);
    return out;
}

#endif
