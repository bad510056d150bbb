/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_lease.c - leases in the store against a model: lines lent by READ and FIND,
 * settled by ACK and RELEASE (by id or by line), put back by their deadlines in deadline
 * order, dropped by RESET; ids that settle only in their own list, and only once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "store/store.h"

enum { MAX_L = 256, MAX_LEASES = 512, HOUR = 3600 * 1000 };

typedef struct mlease {
    uint64_t id;
    int list;
    char line[8];
    int64_t ms;        /* its length: unique, so deadlines have one order */
    int open;
} mlease;

static const char *names[2] = {"a", "b"};
static char mlist[2][MAX_L][8];
static int mlen[2];
static mlease ml[MAX_LEASES];
static int nml;

static void m_push_front(int k, const char *s)
{
    memmove(&mlist[k][1], &mlist[k][0], (size_t)mlen[k] * sizeof mlist[k][0]);
    strcpy(mlist[k][0], s);
    mlen[k]++;
}

static int m_open(int k)
{
    int n = 0;
    for (int i = 0; i < nml; i++)
        n += ml[i].open && ml[i].list == k;
    return n;
}

static void check(store *st)
{
    for (int k = 0; k < 2; k++) {
        size_t len, n, count;
        if (store_length(st, names[k], &len) == STORE_NOT_LOADED)
            len = 0;
        assert_int_equal(len, (size_t)mlen[k]);
        if (store_leases(st, names[k], &n) == STORE_NOT_LOADED)
            n = 0;
        assert_int_equal(n, (size_t)m_open(k));
        if (!len)
            continue;
        buf out = BUF_INIT;
        assert_int_equal(store_read(st, names[k], STORE_FIRST, 1, len, &out, &count, NULL), STORE_OK);
        size_t off = 0, l;
        for (int i = 0; i < mlen[k]; i++) {
            const char *s = store_next_line(&out, &off, &l);
            assert_non_null(s);
            assert_int_equal(l, strlen(mlist[k][i]));
            assert_memory_equal(s, mlist[k][i], l);
        }
        buf_free(&out);
    }
}

static int equal_v(const char *s, size_t len, void *ctx)
{
    return len == strlen(ctx) && memcmp(s, ctx, len) == 0;
}

static void run_one(unsigned seed)
{
    store *st = store_create(NULL);
    assert_non_null(st);
    memset(mlen, 0, sizeof mlen);
    nml = 0;
    srand(seed);
    int64_t next_ms = HOUR;          /* lease lengths: one hour apart, all distinct */
    int64_t expired_below = 0;       /* leases up to this length have expired */
    int64_t t0 = clock_wall_ms();
    for (int step = 0; step < 150; step++) {
        int op = rand() % 12, k = rand() % 2;
        char v[8];
        snprintf(v, sizeof v, "v%d", rand() % 5);
        if (op < 4) {                                    /* ADD */
            if (mlen[k] >= MAX_L - 4)
                continue;
            int tail = rand() % 2;
            assert_int_equal(store_add(st, names[k], v, strlen(v), tail, 0, NULL), STORE_OK);
            if (tail)
                strcpy(mlist[k][mlen[k]++], v);
            else
                m_push_front(k, v);
        } else if (op < 6 && nml < MAX_LEASES - 3) {      /* READ or FIND with a lease */
            buf out = BUF_INIT, ids = BUF_INIT;
            size_t count = 0;
            int find = op == 5, n = 1;  /* one line: equal deadlines have no order */
            store_rc rc;
            int pos = 0;
            if (find) {
                store_matcher m = {equal_v, v, NULL, 0, NULL, 0};
                rc = store_find_leased(st, names[k], &m, next_ms, &out, &ids, NULL);
                for (pos = 0; pos < mlen[k] && strcmp(mlist[k][pos], v) != 0; pos++)
                    ;
                if (mlen[k] == 0)
                    assert_true(rc == STORE_EMPTY || rc == STORE_NOT_LOADED);
                else if (pos == mlen[k])
                    assert_int_equal(rc, STORE_NO_MATCH);
                else
                    assert_int_equal(rc, STORE_OK);
            } else {
                rc = store_read_leased(st, names[k], STORE_FIRST, (size_t)n, next_ms, &out,
                                       &count, &ids, NULL);
                if (mlen[k] >= n)
                    assert_int_equal(rc, STORE_OK);
                else
                    assert_true(rc != STORE_OK);
            }
            if (rc == STORE_OK) {
                assert_int_equal(ids.len, (size_t)n * sizeof(uint64_t));
                for (int i = 0; i < n; i++) {
                    mlease *l = &ml[nml++];
                    memcpy(&l->id, ids.data + i * sizeof(uint64_t), sizeof l->id);
                    assert_true(l->id != 0);
                    for (int o = 0; o < nml - 1; o++)
                        assert_true(ml[o].id != l->id);
                    l->list = k;
                    strcpy(l->line, mlist[k][pos]);
                    l->ms = next_ms;
                    l->open = 1;
                    memmove(&mlist[k][pos], &mlist[k][pos + 1],
                            (size_t)(mlen[k] - pos - 1) * sizeof mlist[k][0]);
                    mlen[k]--;
                }
                next_ms += HOUR;
            }
            buf_free(&out);
            buf_free(&ids);
        } else if (op < 9 && nml) {                        /* ACK or RELEASE by id */
            mlease *l = &ml[rand() % nml];
            int release = op == 8, other = rand() % 4 == 0;
            int in = other ? 1 - l->list : l->list;
            store_rc rc = store_settle(st, names[in], release, l->id, NULL, 0, NULL);
            if (l->open && !other) {
                assert_int_equal(rc, STORE_OK);
                l->open = 0;
                if (release)
                    m_push_front(l->list, l->line);
            } else {
                assert_true(rc == STORE_NO_LEASE || rc == STORE_NOT_LOADED);
            }
        } else if (op == 9) {                              /* ACK or RELEASE by line */
            int release = rand() % 2;
            store_rc rc = store_settle(st, names[k], release, 0, v, strlen(v), NULL);
            mlease *oldest = NULL;
            for (int i = 0; i < nml && !oldest; i++)
                if (ml[i].open && ml[i].list == k && strcmp(ml[i].line, v) == 0)
                    oldest = &ml[i];
            if (oldest) {
                assert_int_equal(rc, STORE_OK);
                oldest->open = 0;
                if (release)
                    m_push_front(k, v);
            } else {
                assert_true(rc == STORE_NO_LEASE || rc == STORE_NOT_LOADED);
            }
        } else if (op == 10) {                             /* time passes */
            expired_below += (1 + rand() % 3) * HOUR;
            int64_t next;
            size_t n = store_lease_expire(st, t0 + expired_below + HOUR / 2, &next);
            size_t want = 0;
            /* Back at the head in deadline order: the latest deadline ends up first. */
            for (int64_t ms = HOUR; ms <= expired_below; ms += HOUR)
                for (int i = 0; i < nml; i++)
                    if (ml[i].open && ml[i].ms == ms) {
                        ml[i].open = 0;
                        m_push_front(ml[i].list, ml[i].line);
                        want++;
                    }
            assert_int_equal(n, want);
        } else if (rand() % 4 == 0) {                      /* RESET drops the leases */
            assert_int_equal(store_reset(st, names[k], NULL), STORE_OK);
            mlen[k] = 0;
            for (int i = 0; i < nml; i++)
                if (ml[i].list == k)
                    ml[i].open = 0;
        }
        check(st);
    }
    store_free(st);
}

static void test_against_model(void **state)
{
    for (unsigned seed = 1; seed <= 200; seed++)
        run_one(seed);
}

/* A lease taken by a waiter, then released: the line goes to the next waiter. */
static int arm_ok(store_waiter *w) { return 0; }
static int claim_ok(store_waiter *w) { return 1; }
static int served_n;
static void served(store_waiter *w, store_rc rc) { served_n += rc == STORE_OK; }

static void test_release_feeds_waiter(void **state)
{
    store *st = store_create(NULL);
    store_waiter w;
    memset(&w, 0, sizeof w);
    w.name = "q";
    w.n = 1;
    w.arm = arm_ok;
    w.claim = claim_ok;
    w.served = served;
    buf out = BUF_INIT, ids = BUF_INIT;
    size_t count;
    assert_int_equal(store_add(st, "q", "x", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(store_read_leased(st, "q", STORE_FIRST, 1, HOUR, &out, &count, &ids, NULL),
                     STORE_OK);
    uint64_t id;
    memcpy(&id, ids.data, sizeof id);
    assert_int_equal(store_read_wait(st, &w, &out, &count), STORE_WAITING);
    assert_int_equal(store_settle(st, "q", 1, id, NULL, 0, NULL), STORE_OK);
    assert_int_equal(served_n, 1);
    assert_int_equal(store_settle(st, "q", 1, id, NULL, 0, NULL), STORE_NO_LEASE);
    size_t len;
    assert_int_equal(store_length(st, "q", &len), STORE_OK);
    assert_int_equal(len, 0);
    buf_free(&w.out);
    buf_free(&w.ids);
    buf_free(&out);
    buf_free(&ids);
    store_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_release_feeds_waiter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
