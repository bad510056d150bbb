/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_drop_race.c - DROP racing ADD, ADDMULTI, leased and owned READs with ACK and
 * RELEASE, waiting READs ended by their deadline, lease expiry and STATUS, for a bounded
 * time from several threads (meant for TSan); then the byte count must be back at zero. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "store/store.h"

#define RUN_MS   1200
#define MAX_BYTES 4096

static store *st;
static atomic_int stop;
/* What happened, so that the test knows the races ran: drops, leases, waiters served. */
static atomic_int drops, leases, served_dropped, served_line;

/* A waiter whose deadline its own thread plays: claim decides between it and a server. */
typedef struct rwaiter {
    store_waiter w;
    atomic_int state;          /* 0 waiting, 1 claimed by the store, 2 by the deadline */
    atomic_int served;
} rwaiter;

static int r_arm(store_waiter *w) { (void)w; return 0; }
static int r_claim(store_waiter *w)
{
    int want = 0;
    return atomic_compare_exchange_strong(&((rwaiter *)w)->state, &want, 1);
}
static void r_served(store_waiter *w, store_rc rc)
{
    atomic_fetch_add(rc == STORE_DROPPED ? &served_dropped : &served_line, 1);
    atomic_store(&((rwaiter *)w)->served, 1);
}

static void *adder(void *arg)
{
    (void)arg;
    store_span v[] = {{"m1", 2}, {"m2", 2}, {"m3", 2}};
    size_t bad;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        if (i % 4 == 0)
            store_add_many(st, i % 8 ? "x" : "xy", v, 3, 1, 0, &bad, NULL);
        else
            store_add(st, "x", "line", 4, i & 1, 0, NULL);
    }
    return NULL;
}

static void *dropper(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        size_t n;
        if (i & 1)
            n = store_drop(st, "x", NULL) == STORE_OK;
        else if (store_drop_prefix(st, "x", &n, NULL) != STORE_OK)
            n = 0;
        atomic_fetch_add(&drops, (int)n);
        usleep(200);
    }
    return NULL;
}

static void *leaser(void *arg)
{
    (void)arg;
    buf out = BUF_INIT, ids = BUF_INIT;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        size_t count;
        buf_clear(&out);
        buf_clear(&ids);
        if (store_read_leased(st, "x", STORE_FIRST, 1, 1 + i % 3, &out, &count, &ids,
                              NULL) == STORE_OK && ids.len >= sizeof(uint64_t)) {
            uint64_t id;
            memcpy(&id, ids.data, sizeof id);
            atomic_fetch_add(&leases, 1);
            if (i % 3)
                store_settle(st, "x", (int)(i & 1), id, NULL, 0, NULL);
        }
        uint64_t oid;
        int taken;
        buf_clear(&out);
        if (store_read_owned(st, "x", STORE_LAST, "own", 3, i % 2 ? 2 : 0, &out, &oid, &taken,
                             NULL) == STORE_OK && i % 5 == 0)
            store_settle_owner(st, "x", (int)(i & 2), "own", 3, NULL);
    }
    buf_free(&out);
    buf_free(&ids);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        rwaiter *r = calloc(1, sizeof *r);
        assert_non_null(r);
        r->w.name = "x";
        r->w.n = 2;
        r->w.arm = r_arm;
        r->w.claim = r_claim;
        r->w.served = r_served;
        buf out = BUF_INIT;
        size_t count;
        if (store_read_wait(st, &r->w, &out, &count) == STORE_WAITING) {
            usleep(300);
            int want = 0;
            if (atomic_compare_exchange_strong(&r->state, &want, 2))
                store_unwait(st, &r->w);        /* its deadline won */
            else
                while (!atomic_load(&r->served))
                    usleep(10);
        }
        buf_free(&out);
        buf_free(&r->w.out);
        buf_free(&r->w.ids);
        free(r);
    }
    return NULL;
}

static void status_one(const char *name, size_t len, void *ctx)
{
    (void)name;
    (void)len;
    (void)ctx;
}

static void *watcher(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        int64_t next;
        size_t n;
        store_lease_expire(st, clock_wall_ms(), &next);
        store_status(st, status_one, NULL);
        store_length(st, "x", &n);
        store_leases(st, "x", &n);
        store_reset(st, "xy", NULL);
        usleep(100);
    }
    return NULL;
}

static void test_drop_races(void **s)
{
    (void)s;
    store_limits lim = {0, MAX_BYTES, 0};
    st = store_create(&lim);
    assert_non_null(st);
    void *(*fns[])(void *) = {adder, dropper, leaser, waiter, waiter, watcher};
    enum { N = sizeof fns / sizeof fns[0] };
    pthread_t th[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fns[i], NULL), 0);
    usleep(RUN_MS * 1000);
    atomic_store(&stop, 1);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    assert_true(atomic_load(&drops) > 0 && atomic_load(&leases) > 0);
    assert_true(atomic_load(&served_dropped) > 0 && atomic_load(&served_line) > 0);
    size_t n;
    assert_int_equal(store_drop_prefix(st, "x", &n, NULL), STORE_OK);
    assert_int_equal(store_count(st), 0);
    /* Every line went with its list or its lease: the whole budget is free again. */
    char *big = malloc(MAX_BYTES);
    assert_non_null(big);
    memset(big, 'b', MAX_BYTES);
    assert_int_equal(store_add(st, "y", big, MAX_BYTES, 1, 0, NULL), STORE_OK);
    free(big);
    store_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drop_races),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
