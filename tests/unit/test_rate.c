/* SPDX-License-Identifier: Apache-2.0 */
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
    double e = rate_empty_in(8000, rate_drain(&w, t0 + 30500));
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
    assert_true(rate_empty_in(100, 0.0) < 0);    /* balanced: not draining */
    assert_true(rate_empty_in(100, -10.0) < 0);  /* growing */
    assert_true(rate_empty_in(0, 10.0) < 0);     /* already empty */
    double e = rate_empty_in(100, 20.0);
    assert_true(e > 4.99 && e < 5.01);
}

/* Lines left and time to empty at now, for a list of `lines` lines. */
static double empty_at(const rate_window *w, int64_t now, uint64_t lines)
{
    return rate_empty_in(lines, rate_drain(w, now));
}

/* Issue 23's case: 3,000 lines added at once, then drained at 100 lines/s. Within 3 s of
 * the drain starting the estimate is within 35% of the truth, wherever in a second the
 * fill and the drain fall; it keeps following while the drain goes on. */
static void test_fill_then_drain(void **state)
{
    for (int64_t phase = 0; phase < 1000; phase += 50) {
        rate_window w;
        int64_t t0 = 7000000 + phase;         /* the fill, somewhere in a second */
        rate_init(&w, t0 - 20000);            /* the list existed, idle, before */
        rate_count(&w, t0, 3000, 0);
        uint64_t lines = 3000;
        int64_t d0 = t0 + 20;                 /* the drain starts 20 ms later */
        for (int64_t ms = 0; ms <= 25000; ms += 10) {
            int64_t now = d0 + ms;
            if (ms % 10 == 0 && lines > 0) {   /* one line every 10 ms: 100/s */
                rate_count(&w, now, 0, 1);
                lines--;
            }
            double truth = (double)lines / 100.0, e = empty_at(&w, now, lines);
            if (ms >= 3000 && lines > 100) {
                if (!(e > truth * 0.65 && e < truth * 1.35))
                    fail_msg("phase %lld, %lld ms into the drain: %.1f s, truth %.1f s",
                             (long long)phase, (long long)ms, e, truth);
            }
        }
    }
}

/* An idle list that starts draining: the idle seconds before do not dilute the rate. */
static void test_idle_then_drain(void **state)
{
    rate_window w;
    rate_init(&w, 0);
    rate_count(&w, 100, 2000, 0);             /* filled long ago, idle since */
    uint64_t lines = 2000;
    assert_true(empty_at(&w, 30000, lines) < 0);
    for (int64_t ms = 30000; ms <= 33000; ms += 20) {   /* 50 lines/s */
        rate_count(&w, ms, 0, 1);
        lines--;
    }
    double e = empty_at(&w, 33000, lines), truth = (double)lines / 50.0;
    assert_true(e > truth * 0.9 && e < truth * 1.1);
}

/* Growing, idle and balanced lists say not draining (-1); a drain that stops is
 * forgotten within RATE_TREND_S seconds, and one that turns into growth at once. */
static void test_not_draining(void **state)
{
    rate_window w;
    rate_init(&w, 0);
    uint64_t lines = 0;
    for (int64_t ms = 0; ms < 5000; ms += 10) {   /* growing: +100/s, -50/s */
        rate_count(&w, ms, 1, ms % 20 == 0);
        lines += 1 - (ms % 20 == 0);
    }
    assert_true(empty_at(&w, 5000, lines) < 0);
    for (int64_t ms = 5000; ms < 10000; ms += 10)  /* balanced */
        rate_count(&w, ms, 1, 1);
    assert_true(empty_at(&w, 10000, lines) < 0);
    for (int64_t ms = 10000; ms < 15000; ms += 10) {   /* draining 100/s */
        rate_count(&w, ms, 0, 1);
        lines--;
    }
    assert_true(empty_at(&w, 15000, lines) > 0);
    /* Idle for RATE_TREND_S seconds after the drain: no estimate any more. */
    assert_true(empty_at(&w, 15000 + RATE_TREND_S * 1000, lines) < 0);
    /* Draining again, then growing: not draining as soon as the last seconds add more. */
    for (int64_t ms = 20000; ms < 25000; ms += 10)
        rate_count(&w, ms, 0, 1);
    for (int64_t ms = 25000; ms < 27000; ms += 10)
        rate_count(&w, ms, 3, 0);
    assert_true(empty_at(&w, 27000, 5000) < 0);
    /* A steady drain over the whole window averages all of it. */
    rate_init(&w, 0);
    for (int64_t ms = 0; ms < 20000; ms += 10)
        rate_count(&w, ms, 0, ms % 1000 < 500 ? 2 : 0);   /* 100/s, bursty inside a second */
    double e = empty_at(&w, 20000, 1000);
    assert_true(e > 9.9 && e < 10.1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady),
        cmocka_unit_test(test_young_and_idle),
        cmocka_unit_test(test_empty_in),
        cmocka_unit_test(test_fill_then_drain),
        cmocka_unit_test(test_idle_then_drain),
        cmocka_unit_test(test_not_draining),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
