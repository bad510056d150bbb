/* SPDX-License-Identifier: Apache-2.0 */
/* test_barrier.c - the table of barriers without HTTP: opening at PARTIES in arrival
 * order, generations, a mismatch, TIMEOUT=0, leaving, a RELEASE timeout, opening by hand,
 * gone arrivals dropped, the listing sorted by name, the limit on barriers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "meet/barrier.h"

typedef struct arrival {
    barrier_arrival ba;        /* first */
    int armed, gone, refuse;
} arrival;

static int arm(barrier_arrival *a)
{
    arrival *x = (arrival *)a;
    if (x->refuse)
        return -1;
    x->armed = 1;
    return 0;
}

static int gone(barrier_arrival *a)
{
    return ((arrival *)a)->gone;
}

static void init(arrival *x, int release)
{
    memset(x, 0, sizeof *x);
    x->ba.arm = arm;
    x->ba.gone = gone;
    x->ba.release_on_timeout = release;
}

static barrier_rc arrive(barrier_table *t, const char *name, uint32_t parties, arrival *x,
                         int wait, barrier_arrival **batch)
{
    uint32_t arrived = 0, gp = 0;
    return barrier_arrive(t, name, strlen(name), parties, &x->ba, wait, &arrived, &gp, batch);
}

static size_t batch_len(barrier_arrival *b)
{
    size_t n = 0;
    for (; b; b = b->next)
        n++;
    return n;
}

static void test_opens_at_parties_in_order(void **state)
{
    barrier_table *t = barrier_table_create(0);
    arrival x[4];
    barrier_arrival *batch;
    for (int g = 0; g < 3; g++) {
        for (int i = 0; i < 3; i++) {
            init(&x[i], 0);
            assert_int_equal(arrive(t, "b", 4, &x[i], 1, &batch), BARRIER_WAITING);
            assert_null(batch);
            assert_true(x[i].armed);
        }
        init(&x[3], 0);
        assert_int_equal(arrive(t, "b", 4, &x[3], 1, &batch), BARRIER_OK);
        assert_false(x[3].armed);              /* never queued */
        assert_int_equal(x[3].ba.arrival, 4);
        assert_int_equal(x[3].ba.generation, (uint64_t)g);
        assert_int_equal(x[3].ba.outcome, BARRIER_RELEASED_FULL);
        assert_int_equal(batch_len(batch), 3);
        int i = 0;
        for (barrier_arrival *a = batch; a; a = a->next, i++) {
            assert_ptr_equal(a, &x[i].ba);
            assert_int_equal(a->arrival, (uint32_t)i + 1);
            assert_int_equal(a->parties, 4);
            assert_int_equal(a->generation, (uint64_t)g);
            assert_null(a->where);
        }
    }
    barrier_table_free(t);
}

static uint32_t last_parties;

static void count(const barrier_info *b, void *ctx)
{
    last_parties = b->parties;
}

static void test_mismatch_and_no_wait(void **state)
{
    barrier_table *t = barrier_table_create(0);
    arrival a, b, c;
    barrier_arrival *batch;
    uint32_t arrived = 0, gp = 0;
    init(&a, 0);
    assert_int_equal(arrive(t, "m", 3, &a, 1, &batch), BARRIER_WAITING);
    init(&b, 0);
    assert_int_equal(barrier_arrive(t, "m", 1, 5, &b.ba, 1, &arrived, &gp, &batch),
                     BARRIER_MISMATCH);
    assert_int_equal(gp, 3);
    assert_false(b.armed);
    /* TIMEOUT=0: KO with the count, or RELEASE opening for everyone. */
    assert_int_equal(barrier_arrive(t, "m", 1, 3, &b.ba, 0, &arrived, &gp, &batch),
                     BARRIER_TIMED_OUT);
    assert_int_equal(arrived, 2);
    init(&c, 1);
    assert_int_equal(arrive(t, "m", 3, &c, 0, &batch), BARRIER_OK);
    assert_int_equal(c.ba.outcome, BARRIER_RELEASED_TIMEOUT);
    assert_int_equal(c.ba.arrival, 2);
    assert_int_equal(batch_len(batch), 1);
    assert_int_equal(a.ba.outcome, BARRIER_RELEASED_TIMEOUT);
    /* An arm that refuses changes nothing, nor does a KO on a new name: no barrier. */
    init(&a, 0);
    a.refuse = 1;
    assert_int_equal(arrive(t, "m", 3, &a, 1, &batch), BARRIER_NOMEM);
    assert_int_equal(arrive(t, "new", 3, &a, 1, &batch), BARRIER_NOMEM);
    init(&a, 0);
    assert_int_equal(arrive(t, "new2", 3, &a, 0, &batch), BARRIER_TIMED_OUT);
    assert_int_equal(arrive(t, "m", 7, &a, 0, &batch), BARRIER_TIMED_OUT);
    assert_int_equal(barrier_each(t, count, NULL), 1);
    assert_int_equal(last_parties, 3);                  /* m's, not the KO's 7 */
    barrier_table_free(t);
}

static void test_leave_expire_open(void **state)
{
    barrier_table *t = barrier_table_create(0);
    arrival a, b, c;
    barrier_arrival *batch;
    uint32_t arrived = 0, released = 0;
    uint64_t gen = 9;
    init(&a, 0);
    init(&b, 1);
    init(&c, 0);
    assert_int_equal(arrive(t, "x", 5, &a, 1, &batch), BARRIER_WAITING);
    assert_int_equal(arrive(t, "x", 5, &b, 1, &batch), BARRIER_WAITING);
    assert_int_equal(arrive(t, "x", 5, &c, 1, &batch), BARRIER_WAITING);
    /* a's deadline with KO: it leaves, counting 3. */
    assert_int_equal(barrier_leave(t, &a.ba, &arrived), 1);
    assert_int_equal(arrived, 3);
    assert_int_equal(barrier_leave(t, &a.ba, &arrived), 0);
    /* b's deadline with RELEASE opens for b and c. */
    assert_int_equal(barrier_expire(t, &b.ba, &batch), 1);
    assert_int_equal(batch_len(batch), 2);
    assert_int_equal(b.ba.arrival, 1);
    assert_int_equal(c.ba.arrival, 2);
    assert_int_equal(c.ba.outcome, BARRIER_RELEASED_TIMEOUT);
    /* c's own deadline afterwards: handed back already. */
    assert_int_equal(barrier_leave(t, &c.ba, &arrived), 0);
    assert_int_equal(barrier_expire(t, &c.ba, &batch), 0);
    assert_null(batch);
    /* By hand. */
    assert_int_equal(barrier_open(t, "nope", 4, &batch, &released, &gen), BARRIER_NOT_FOUND);
    init(&a, 0);
    assert_int_equal(arrive(t, "x", 5, &a, 1, &batch), BARRIER_WAITING);
    assert_int_equal(barrier_open(t, "x", 1, &batch, &released, &gen), BARRIER_OK);
    assert_int_equal(released, 1);
    assert_int_equal(gen, 1);
    assert_int_equal(a.ba.outcome, BARRIER_RELEASED_HAND);
    assert_int_equal(barrier_open(t, "x", 1, &batch, &released, &gen), BARRIER_OK);
    assert_int_equal(released, 0);
    assert_int_equal(gen, 2);
    assert_null(batch);
    barrier_table_free(t);
}

static void test_gone_dropped(void **state)
{
    barrier_table *t = barrier_table_create(0);
    arrival x[4];
    barrier_arrival *batch;
    for (int i = 0; i < 2; i++) {
        init(&x[i], 0);
        assert_int_equal(arrive(t, "g", 3, &x[i], 1, &batch), BARRIER_WAITING);
    }
    x[0].gone = 1;
    init(&x[2], 0);
    assert_int_equal(arrive(t, "g", 3, &x[2], 1, &batch), BARRIER_WAITING);
    assert_int_equal(batch_len(batch), 1);                 /* x[0], dropped */
    assert_ptr_equal(batch, &x[0].ba);
    assert_int_equal(x[0].ba.outcome, BARRIER_DROPPED);
    init(&x[3], 0);
    assert_int_equal(arrive(t, "g", 3, &x[3], 1, &batch), BARRIER_OK);
    assert_int_equal(batch_len(batch), 2);
    assert_int_equal(x[1].ba.arrival, 1);
    assert_int_equal(x[2].ba.arrival, 2);
    assert_int_equal(x[3].ba.arrival, 3);
    barrier_table_free(t);
}

static void collect(const barrier_info *b, void *ctx)
{
    char *out = ctx;
    char one[64];
    snprintf(one, sizeof one, "%.*s:%u/%u@%llu ", (int)b->name_len, b->name, b->arrived,
             b->parties, (unsigned long long)b->generation);
    strcat(out, one);
}

static void test_listing_and_limit(void **state)
{
    barrier_table *t = barrier_table_create(3);
    arrival x[4];
    barrier_arrival *batch;
    const char *names[] = {"zeta", "alpha", "mid"};
    for (int i = 0; i < 3; i++) {
        init(&x[i], 0);
        assert_int_equal(arrive(t, names[i], 2 + (uint32_t)i, &x[i], 1, &batch), BARRIER_WAITING);
    }
    init(&x[3], 0);
    assert_int_equal(arrive(t, "four", 2, &x[3], 1, &batch), BARRIER_FULL);
    char out[256] = "";
    assert_int_equal(barrier_each(t, collect, out), 3);
    assert_string_equal(out, "alpha:1/3@0 mid:1/4@0 zeta:1/2@0 ");
    uint32_t arrived;
    for (int i = 0; i < 3; i++)
        assert_int_equal(barrier_leave(t, &x[i].ba, &arrived), 1);
    barrier_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opens_at_parties_in_order),
        cmocka_unit_test(test_mismatch_and_no_wait),
        cmocka_unit_test(test_leave_expire_open),
        cmocka_unit_test(test_gone_dropped),
        cmocka_unit_test(test_listing_and_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
