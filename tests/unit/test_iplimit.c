/* SPDX-License-Identifier: Apache-2.0 */
/* test_iplimit.c - per-address connection counts: the limit, IPv4 and IPv6 kept apart,
 * IPv4-mapped IPv6 counted as its IPv4 address, entries gone at zero, many addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "guard/iplimit.h"
#include "testlib.h"

#define SA(a) ((const struct sockaddr *)&(a)), (socklen_t)sizeof(a)

static void test_limit_per_address(void **state)
{
    (void)state;
    iplimit *l = iplimit_new(2);
    assert_non_null(l);
    struct sockaddr_in a = td_sockaddr4("10.0.0.1"), b = td_sockaddr4("10.0.0.2");
    assert_true(iplimit_admits(l, SA(a)));
    assert_int_equal(iplimit_open(l, SA(a)), 0);
    assert_true(iplimit_admits(l, SA(a)));
    assert_int_equal(iplimit_open(l, SA(a)), 0);
    assert_false(iplimit_admits(l, SA(a)));           /* two open: a third is refused */
    assert_true(iplimit_admits(l, SA(b)));            /* another address is not */
    assert_int_equal(iplimit_count(l, SA(a)), 2);
    iplimit_close(l, SA(a));
    assert_true(iplimit_admits(l, SA(a)));
    iplimit_close(l, SA(a));
    assert_int_equal(iplimit_count(l, SA(a)), 0);
    iplimit_close(l, SA(a));                          /* not open: no underflow */
    assert_int_equal(iplimit_count(l, SA(a)), 0);
    iplimit_free(l);
}

static void test_families(void **state)
{
    (void)state;
    iplimit *l = iplimit_new(1);
    struct sockaddr_in a = td_sockaddr4("192.0.2.7");
    struct sockaddr_in6 mapped = td_sockaddr6("::ffff:192.0.2.7");
    struct sockaddr_in6 other = td_sockaddr6("2001:db8::7");
    assert_int_equal(iplimit_open(l, SA(a)), 0);
    assert_false(iplimit_admits(l, SA(mapped)));      /* the same client either way */
    assert_true(iplimit_admits(l, SA(other)));
    assert_int_equal(iplimit_open(l, SA(other)), 0);
    assert_false(iplimit_admits(l, SA(other)));
    struct sockaddr un = {.sa_family = AF_UNIX};
    assert_int_equal(iplimit_open(l, &un, sizeof un), -1);   /* nothing to count */
    assert_true(iplimit_admits(l, &un, sizeof un));
    iplimit_close(l, SA(mapped));
    assert_true(iplimit_admits(l, SA(a)));
    iplimit_free(l);
}

static void test_many_addresses(void **state)
{
    (void)state;
    iplimit *l = iplimit_new(3);
    char text[32];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 5000; i++) {
            snprintf(text, sizeof text, "10.%d.%d.1", i / 256, i % 256);
            struct sockaddr_in a = td_sockaddr4(text);
            assert_int_equal(iplimit_open(l, SA(a)), 0);
        }
    for (int i = 0; i < 5000; i++) {
        snprintf(text, sizeof text, "10.%d.%d.1", i / 256, i % 256);
        struct sockaddr_in a = td_sockaddr4(text);
        assert_int_equal(iplimit_count(l, SA(a)), 3);
        assert_false(iplimit_admits(l, SA(a)));
        iplimit_close(l, SA(a));
        assert_int_equal(iplimit_count(l, SA(a)), 2);
    }
    iplimit_free(l);          /* frees the entries still open (ASan sees a leak if not) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_per_address),
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_many_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
