/* SPDX-License-Identifier: Apache-2.0 */
/* test_forward_clock.c - a follower's deadlines on the leader's clock, and the leader's
 * check of them (forward_clock.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "http/forward_clock.h"

static void test_deadlines(void **state)
{
    forward_clock fc = {0};
    int64_t dl = -1;
    (void)state;
    /* Nothing known of any node yet: nothing may go, no deadline to give. */
    assert_false(forward_clock_ready(&fc, 3));
    assert_int_equal(forward_clock_deadline(&fc, 3, 1000, 3000, &dl), 0);
    /* Node 3's clock read 50,000 when this node's read 1,000 (its answer came then). A
     * request that came here at 1,200 must start there by 50,000 + 200 + 3,000. */
    forward_clock_note(&fc, 3, 50000, 1000);
    assert_true(forward_clock_ready(&fc, 3));
    assert_int_equal(forward_clock_deadline(&fc, 3, 1200, 3000, &dl), 1);
    assert_int_equal(dl, 53200);
    /* A request older than the sample: earlier, not later. */
    assert_int_equal(forward_clock_deadline(&fc, 3, 400, 3000, &dl), 1);
    assert_int_equal(dl, 52400);
    /* Another node: its own sample first. */
    assert_false(forward_clock_ready(&fc, 2));
    assert_int_equal(forward_clock_deadline(&fc, 2, 1200, 3000, &dl), 0);
    /* A node answering with no clock (an older version) takes requests, without one. */
    forward_clock_absent(&fc, 2);
    assert_true(forward_clock_ready(&fc, 2));
    assert_int_equal(forward_clock_deadline(&fc, 2, 1200, 3000, &dl), 0);
    /* A node whose clock is far behind this one's: never a negative deadline. */
    forward_clock_note(&fc, 1, 10, 90000);
    assert_int_equal(forward_clock_deadline(&fc, 1, 1000, 100, &dl), 1);
    assert_int_equal(dl, 0);
}

static void test_in_time(void **state)
{
    (void)state;
    assert_int_equal(forward_clock_in_time(NULL, 5), 1);         /* none: a client's own */
    assert_int_equal(forward_clock_in_time("53200", 53200), 1);
    assert_int_equal(forward_clock_in_time("53200", 53201), 0);
    /* Malformed: refused as such, never taken for a deadline. */
    static const char *const bad[] = {"", "-1", "12a", " 5", "5 ", "0x10", "+5",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(forward_clock_in_time(bad[i], 5), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadlines),
        cmocka_unit_test(test_in_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
