/* test_rate.c - the per-list rate window: buckets, sliding, young windows, time to
 * empty. Times are given, never read from the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "store/rate.h"

static void test_steady(void **state)
{
    rate_window w;
    int64_t t0 = 1000000;                 /* a whole second */
    rate_init(&w, t0);
    /* 100 removed and 20 added per second for 30 s, spread over each second. */
    for (int64_t ms = 0; ms < 30000; ms += 10)
        rate_count(&w, t0 + ms, ms % 50 == 0 ? 1 : 0, 1);
    double a, r;
    rate_get(&w, t0 + 30000, &a, &r);
    assert_true(a > 19.0 && a < 21.0);
    assert_true(r > 99.0 && r < 101.0);
    /* Half-way through a second the window still reads the same rate. */
    for (int64_t ms = 30000; ms < 30500; ms += 10)
        rate_count(&w, t0 + ms, ms % 50 == 0 ? 1 : 0, 1);
    rate_get(&w, t0 + 30500, &a, &r);
    assert_true(r > 99.0 && r < 101.0);
    double e = rate_empty_in(8000, a, r);
    assert_true(e > 99.0 && e < 101.0);   /* 8000 lines / 80 per second */
}

static void test_young_and_idle(void **state)
{
    rate_window w;
    double a, r;
    rate_init(&w, 5500);
    rate_get(&w, 5500, &a, &r);
    assert_true(a == 0 && r == 0);
    /* 300 lines in the first 3 s: 100/s, not 30/s over a 10 s window. */
    for (int i = 0; i < 300; i++)
        rate_count(&w, 5500 + i * 10, 1, 0);
    rate_get(&w, 8500, &a, &r);
    assert_true(a > 99.0 && a < 101.0);
    assert_true(r == 0);
    /* A burst in the first milliseconds counts over at least one second. */
    rate_init(&w, 0);
    rate_count(&w, 5, 50, 0);
    rate_get(&w, 10, &a, &r);
    assert_true(a == 50.0);
    /* Old buckets leave the window: 20 s later nothing is counted. */
    rate_get(&w, 20000, &a, &r);
    assert_true(a == 0 && r == 0);
    /* A reused bucket forgets its old second. */
    rate_count(&w, 10005, 0, 7);
    rate_get(&w, 10900, &a, &r);
    assert_true(a == 0);
    assert_true(r > 0.69 && r < 0.71);    /* 7 over the 10 s window */
}

static void test_empty_in(void **state)
{
    assert_true(rate_empty_in(100, 10.0, 10.0) < 0);   /* balanced: not draining */
    assert_true(rate_empty_in(100, 20.0, 10.0) < 0);   /* growing */
    assert_true(rate_empty_in(0, 0.0, 10.0) < 0);      /* already empty */
    double e = rate_empty_in(100, 5.0, 25.0);
    assert_true(e > 4.99 && e < 5.01);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady),
        cmocka_unit_test(test_young_and_idle),
        cmocka_unit_test(test_empty_in),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
