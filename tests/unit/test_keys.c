/* SPDX-License-Identifier: Apache-2.0 */
/* test_keys.c - the keys' table (meet/keys.h) without HTTP: INCR's arithmetic (absent,
 * not an integer, overflow both ways, bounds), SET/GET/DEL with versions and IF_VERSION,
 * maxKeys and maxBytes, KEYS sorted with a prefix, counter leases (settle, expiry),
 * waiters (watchers woken by a change, INCRs served in order while they fit), the
 * compaction walk, and RUNS (runs in progress sorted, their ONCE waiters counted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "keys_fixture.h"
#include "meet/keys.h"

static void test_arithmetic(void **s)
{
    int64_t v;
    assert_int_equal(keys_add("", 0, 0, 5, INT64_MIN, INT64_MAX, &v), STORE_OK);
    assert_int_equal(v, 5);
    assert_int_equal(keys_add("-7", 2, 1, 3, INT64_MIN, INT64_MAX, &v), STORE_OK);
    assert_int_equal(v, -4);
    assert_int_equal(keys_add("", 0, 1, 1, INT64_MIN, INT64_MAX, &v), STORE_NOT_INT);
    assert_int_equal(keys_add("1x", 2, 1, 1, INT64_MIN, INT64_MAX, &v), STORE_NOT_INT);
    assert_int_equal(keys_add(" 1", 2, 1, 1, INT64_MIN, INT64_MAX, &v), STORE_NOT_INT);
    assert_int_equal(keys_add("9223372036854775808", 19, 1, 0, INT64_MIN, INT64_MAX, &v),
                     STORE_NOT_INT);
    assert_int_equal(keys_add("9223372036854775807", 19, 1, 1, INT64_MIN, INT64_MAX, &v),
                     STORE_OVERFLOW);
    assert_int_equal(keys_add("-9223372036854775808", 20, 1, -1, INT64_MIN, INT64_MAX, &v),
                     STORE_OVERFLOW);
    assert_int_equal(keys_add("-9223372036854775808", 20, 1, 0, INT64_MIN, INT64_MAX, &v),
                     STORE_OK);
    assert_true(v == INT64_MIN);
    assert_int_equal(keys_add("5", 1, 1, 1, 0, 5, &v), STORE_BOUND);
    assert_int_equal(keys_add("0", 1, 1, -1, 0, 5, &v), STORE_BOUND);
    assert_int_equal(keys_add("4", 1, 1, 1, 0, 5, &v), STORE_OK);
    assert_int_equal(v, 5);
    char out[24];
    assert_int_equal(keys_format(INT64_MIN, out), 20);
    assert_string_equal(out, "-9223372036854775808");
    keys_format(0, out);
    assert_string_equal(out, "0");
    keys_format(INT64_MAX, out);
    assert_string_equal(out, "9223372036854775807");
}

static void test_set_get_del(void **s)
{
    store_limits lim = {10, 40, 2};
    store *st = keyed_store(&lim);
    uint64_t v, lsn;
    buf b = BUF_INIT;
    assert_int_equal(keys_set(st, "a", "xy", 2, -1, &v, &lsn), STORE_OK);
    assert_int_equal(v, 1);
    assert_int_equal(keys_set(st, "a", "xyz", 3, 1, &v, &lsn), STORE_OK);
    assert_int_equal(v, 2);
    assert_int_equal(keys_set(st, "a", "q", 1, 1, &v, &lsn), STORE_VERSION);
    assert_int_equal(v, 2);
    assert_int_equal(keys_set(st, "a", "q", 1, 0, &v, &lsn), STORE_VERSION);
    assert_int_equal(keys_get(st, "a", &b, &v), STORE_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "xyz", 3);
    assert_int_equal(v, 2);
    /* maxKeys 2 */
    assert_int_equal(keys_set(st, "b", "1", 1, 0, &v, &lsn), STORE_OK);
    assert_int_equal(keys_set(st, "c", "1", 1, -1, &v, &lsn), STORE_FULL);
    key_incr q = {1, INT64_MIN, INT64_MAX, 0, 0};
    key_out o;
    assert_int_equal(keys_incr(st, "c", &q, &o), STORE_FULL);
    assert_int_equal(keys_count(st), 2);
    /* maxBytes 40: a (1+3) and b (1+1) hold 6; 35 more bytes do not fit */
    char big[40];
    memset(big, 'x', sizeof big);
    assert_int_equal(keys_set(st, "b", big, 35, -1, &v, &lsn), STORE_FULL);
    assert_int_equal(keys_set(st, "b", big, 34, -1, &v, &lsn), STORE_OK);
    assert_int_equal(keys_del(st, "b", 1, &v, &lsn), STORE_VERSION);
    assert_int_equal(keys_del(st, "b", -1, &v, &lsn), STORE_OK);
    assert_int_equal(keys_del(st, "b", -1, &v, &lsn), STORE_NO_KEY);
    buf_clear(&b);
    assert_int_equal(keys_get(st, "b", &b, &v), STORE_NO_KEY);
    assert_int_equal(v, 0);
    assert_int_equal(keys_set(st, "b", big, 34, 0, &v, &lsn), STORE_OK);
    assert_int_equal(v, 1);
    assert_int_equal(keys_count(st), 2);
    buf_free(&b);
    store_free(st);
}

static void collect(const key_info *k, void *ctx)
{
    buf *b = ctx;
    buf_printf(b, "%s=%.*s/%llu;", k->name, (int)k->len, k->value,
               (unsigned long long)k->version);
    if (k->watchers || k->waiters)
        buf_printf(b, "w%zu/%zu;", k->watchers, k->waiters);
}

static void test_list_sorted(void **s)
{
    store *st = keyed_store(NULL);
    uint64_t v;
    const char *names[] = {"b.2", "a", "b.1", "b", "c"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(keys_set(st, names[i], names[i], strlen(names[i]), -1, &v,
                                       NULL), STORE_OK);
    buf b = BUF_INIT;
    assert_int_equal(keys_list(st, NULL, collect, &b), 5);
    assert_string_equal(b.data, "a=a/1;b=b/1;b.1=b.1/1;b.2=b.2/1;c=c/1;");
    buf_clear(&b);
    assert_int_equal(keys_list(st, "b.", collect, &b), 2);
    assert_string_equal(b.data, "b.1=b.1/1;b.2=b.2/1;");
    buf_free(&b);
    store_free(st);
}

static void test_counter_leases(void **s)
{
    store *st = keyed_store(NULL);
    key_incr q = {3, INT64_MIN, 5, 60000, 0};
    key_out o, o2;
    assert_int_equal(keys_incr(st, "n", &q, &o), STORE_OK);
    assert_int_equal(o.value, 3);
    assert_true(o.lease != 0);
    assert_int_equal(keys_incr(st, "n", &q, &o2), STORE_BOUND);
    assert_int_equal(keys_settle(st, "m", 1, o.lease, &o2), STORE_NO_LEASE);
    assert_int_equal(keys_settle(st, "n", 1, o.lease, &o2), STORE_OK);
    assert_int_equal(o2.value, 0);
    assert_int_equal(o2.version, 2);
    assert_int_equal(keys_settle(st, "n", 1, o.lease, &o2), STORE_NO_LEASE);
    /* ACK keeps it; the version does not move. */
    assert_int_equal(keys_incr(st, "n", &q, &o), STORE_OK);
    assert_int_equal(keys_settle(st, "n", 0, o.lease, &o2), STORE_OK);
    assert_int_equal(o2.value, 0);       /* ACK reports no value */
    assert_int_equal(o2.version, 3);
    /* Expiry undoes. */
    q.by = -1;
    q.lease_ms = 1;
    q.min = INT64_MIN;
    assert_int_equal(keys_incr(st, "n", &q, &o), STORE_OK);
    assert_int_equal(o.value, 2);
    int64_t next;
    assert_int_equal(keys_lease_expire(st, clock_wall_ms() + 10, &next), 1);
    assert_int_equal(next, 0);
    buf b = BUF_INIT;
    uint64_t v;
    assert_int_equal(keys_get(st, "n", &b, &v), STORE_OK);
    assert_memory_equal(b.data, "3", 1);
    assert_int_equal(v, 5);
    /* SET and DEL drop leases. */
    q.lease_ms = 60000;
    assert_int_equal(keys_incr(st, "n", &q, &o), STORE_OK);
    assert_int_equal(keys_set(st, "n", "7", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_settle(st, "n", 1, o.lease, &o2), STORE_NO_LEASE);
    assert_int_equal(keys_lease_expire(st, clock_wall_ms() + 120000, &next), 0);
    buf_free(&b);
    store_free(st);
}

/* A waiter whose callbacks note what happened. */
typedef struct tw {
    key_waiter w;
    int armed, served;
    store_rc rc;
} tw;

static int t_arm(key_waiter *w) { ((tw *)w)->armed = 1; return 0; }
static int t_claim(key_waiter *w) { (void)w; return 1; }
static int t_gone(key_waiter *w) { (void)w; return 0; }
static void t_served(key_waiter *w, store_rc rc)
{
    ((tw *)w)->served++;
    ((tw *)w)->rc = rc;
}

static void tw_init(tw *t, const char *name, int incr, uint64_t version)
{
    memset(t, 0, sizeof *t);
    t->w.name = name;
    t->w.incr = incr;
    t->w.version = version;
    t->w.arm = t_arm;
    t->w.claim = t_claim;
    t->w.gone = t_gone;
    t->w.served = t_served;
}

static void test_waiters(void **s)
{
    store *st = keyed_store(NULL);
    tw a, b, i1, i2;
    uint64_t v;
    tw_init(&a, "k", 0, 0);
    tw_init(&b, "k", 0, 0);
    assert_int_equal(keys_wait(st, &a.w), STORE_WAITING);
    assert_int_equal(keys_wait(st, &b.w), STORE_WAITING);
    assert_int_equal(keys_waiters(st), 2);
    assert_int_equal(keys_count(st), 0);
    keys_unwait(st, &b.w);                  /* b's deadline */
    assert_int_equal(keys_set(st, "k", "go", 2, -1, &v, NULL), STORE_OK);
    assert_int_equal(a.served, 1);
    assert_int_equal(a.rc, STORE_OK);
    assert_int_equal(a.w.o.version, 1);
    assert_memory_equal(a.w.value.data, "go", 2);
    assert_int_equal(b.served, 0);
    /* A version already past: answered at once. */
    buf_free(&b.w.value);
    tw_init(&b, "k", 0, 0);
    assert_int_equal(keys_wait(st, &b.w), STORE_OK);
    assert_int_equal(b.armed, 0);
    /* DEL wakes with "no key". */
    buf_free(&b.w.value);
    tw_init(&b, "k", 0, 1);
    assert_int_equal(keys_wait(st, &b.w), STORE_WAITING);
    assert_int_equal(keys_del(st, "k", -1, &v, NULL), STORE_OK);
    assert_int_equal(b.rc, STORE_NO_KEY);
    /* INCRs in order while they fit. */
    key_incr up = {2, INT64_MIN, INT64_MAX, 0, 0};
    key_out o;
    assert_int_equal(keys_incr(st, "c", &up, &o), STORE_OK);     /* c = 2 */
    tw_init(&i1, "c", 1, 0);
    i1.w.q = (key_incr){2, INT64_MIN, 2, 0, 0};
    tw_init(&i2, "c", 1, 0);
    i2.w.q = (key_incr){1, INT64_MIN, 3, 0, 0};
    assert_int_equal(keys_wait(st, &i1.w), STORE_WAITING);
    assert_int_equal(keys_wait(st, &i2.w), STORE_WAITING);    /* behind i1: FIFO */
    key_incr down = {-1, INT64_MIN, INT64_MAX, 0, 0};
    assert_int_equal(keys_incr(st, "c", &down, &o), STORE_OK); /* 1: i1 still waits */
    assert_int_equal(i1.served + i2.served, 0);
    assert_int_equal(keys_incr(st, "c", &down, &o), STORE_OK); /* 0: i1 -> 2, i2 -> 3 */
    assert_int_equal(i1.served, 1);
    assert_int_equal(i1.w.o.value, 2);
    assert_int_equal(i2.served, 1);
    assert_int_equal(i2.w.o.value, 3);
    assert_int_equal(keys_waiters(st), 0);
    buf_free(&a.w.value);
    buf_free(&b.w.value);
    store_free(st);
}

static int walk_key(const char *name, const char *value, size_t len, uint64_t version,
                    int64_t expires, void *ctx)
{
    (void)expires;
    buf_printf(ctx, "%s=%.*s/%llu;", name, (int)len, value, (unsigned long long)version);
    return 0;
}

static int walk_lease(const char *name, uint64_t id, int64_t until, int64_t by,
                      uint64_t version, const char *value, size_t len, void *ctx)
{
    buf_printf(ctx, "lease %s by %lld;", name, (long long)by);
    return 0;
}

static void test_compaction_walk_and_adopt(void **s)
{
    store *st = keyed_store(NULL);
    key_incr q = {4, INT64_MIN, INT64_MAX, 60000, 0};
    key_out o;
    assert_int_equal(keys_incr(st, "x", &q, &o), STORE_OK);
    buf b = BUF_INIT;
    assert_int_equal(keys_each_locked(st, walk_key, walk_lease, &b), 0);
    assert_string_equal(b.data, "x=4/1;lease x by 4;");
    buf_free(&b);
    store_free(st);
    st = keyed_store(NULL);
    assert_int_equal(keys_adopt(st, "x", "4", 1, 7), STORE_OK);
    assert_int_equal(keys_lease_adopt(st, "x", 42, clock_wall_ms() - 1, 4), STORE_OK);
    assert_int_equal(keys_lease_adopt(st, "y", 43, 0, 1), STORE_NO_KEY);
    int64_t next;
    assert_int_equal(keys_lease_expire(st, clock_wall_ms(), &next), 1);
    uint64_t v;
    b = (buf)BUF_INIT;
    assert_int_equal(keys_get(st, "x", &b, &v), STORE_OK);
    assert_memory_equal(b.data, "0", 1);
    assert_int_equal(v, 8);
    buf_free(&b);
    store_free(st);
}

typedef struct runs_seen {
    store *st;
    buf b;
} runs_seen;

/* Notes each run; calls the store, which RUNS allows (its lock is not held). */
static void collect_run(const key_run_info *r, void *ctx)
{
    runs_seen *rs = ctx;
    int64_t left = r->until - clock_wall_ms();
    buf_printf(&rs->b, "%s:%s:%zu:%zu;", r->name, left > 50000 ? "60s" : left > 0 ? "soon" : "past",
               r->waiters, keys_waiters(rs->st));
}

static void test_runs_listed(void **s)
{
    runs_seen rs = {keyed_store(NULL), BUF_INIT};
    store *st = rs.st;
    assert_int_equal(keys_runs(st, NULL, collect_run, &rs), 0);
    assert_null(rs.b.data);
    /* setup: a run of 60 s, two ONCE waiters and a GET watcher, who is not one of them. */
    tw run, o1, o2, g;
    tw_init(&run, "setup", 0, 0);
    run.w.once = 1;
    run.w.q.lease_ms = 60000;
    assert_int_equal(keys_wait(st, &run.w), STORE_OK);
    assert_true(run.w.o.lease != 0);
    tw_init(&o1, "setup", 0, 0);
    o1.w.once = 1;
    o1.w.q.lease_ms = 60000;
    tw_init(&o2, "setup", 0, 0);
    o2.w.once = 1;
    o2.w.q.lease_ms = 60000;
    tw_init(&g, "setup", 0, 0);
    assert_int_equal(keys_wait(st, &o1.w), STORE_WAITING);
    assert_int_equal(keys_wait(st, &g.w), STORE_WAITING);
    assert_int_equal(keys_wait(st, &o2.w), STORE_WAITING);
    /* Two more, made in the wrong order; one past its deadline (no lease timer here). */
    assert_int_equal(keys_run_adopt(st, "zz", 77, clock_wall_ms() + 3000), STORE_OK);
    assert_int_equal(keys_run_adopt(st, "a", 78, clock_wall_ms() - 1000), STORE_OK);
    /* A key that exists is done, not a run. */
    uint64_t v;
    assert_int_equal(keys_set(st, "b", "x", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_runs(st, NULL, collect_run, &rs), 3);
    assert_string_equal(rs.b.data, "a:past:0:3;setup:60s:2:3;zz:soon:0:3;");
    buf_clear(&rs.b);
    assert_int_equal(keys_runs(st, "se", collect_run, &rs), 1);
    assert_string_equal(rs.b.data, "setup:60s:2:3;");
    /* A waiter gone (its deadline) no longer counts. */
    keys_unwait(st, &o2.w);
    buf_clear(&rs.b);
    assert_int_equal(keys_runs(st, "setup", collect_run, &rs), 1);
    assert_string_equal(rs.b.data, "setup:60s:1:2;");
    /* DONE: the run is gone, its waiters served. */
    uint64_t lsn;
    assert_int_equal(keys_done(st, "setup", run.w.o.lease, "ok", 2, &v, &lsn), STORE_OK);
    assert_int_equal(o1.served + g.served, 2);
    buf_clear(&rs.b);
    assert_int_equal(keys_runs(st, NULL, collect_run, &rs), 2);
    assert_string_equal(rs.b.data, "a:past:0:0;zz:soon:0:0;");
    buf_free(&rs.b);
    buf_free(&run.w.value);
    buf_free(&o1.w.value);
    buf_free(&o2.w.value);
    buf_free(&g.w.value);
    store_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_set_get_del),
        cmocka_unit_test(test_list_sorted),
        cmocka_unit_test(test_counter_leases),
        cmocka_unit_test(test_waiters),
        cmocka_unit_test(test_compaction_walk_and_adopt),
        cmocka_unit_test(test_runs_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
