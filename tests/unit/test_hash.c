/* SPDX-License-Identifier: Apache-2.0 */
/* test_hash.c - FNV-1a against the published vectors, whole and in pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/hash.h"

static void test_vectors(void **state)
{
    (void)state;
    assert_true(hash_fnv1a("", 0) == 0xcbf29ce484222325ULL);
    assert_true(hash_fnv1a(NULL, 0) == HASH_FNV1A_INIT);
    assert_true(hash_fnv1a("a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(hash_fnv1a("foobar", 6) == 0x85944171f73967e8ULL);
    assert_true(hash_fnv1a_str("foobar") == 0x85944171f73967e8ULL);
}

static void test_pieces(void **state)
{
    (void)state;
    uint64_t h = hash_fnv1a_more(HASH_FNV1A_INIT, "foo", 3);
    assert_true(hash_fnv1a_more(h, "bar", 3) == hash_fnv1a("foobar", 6));
    /* Bytes past 0x7f and NULs count as they are. */
    assert_true(hash_fnv1a("a\0b", 3) != hash_fnv1a("a", 1));
    assert_true(hash_fnv1a("\xff", 1) != hash_fnv1a("\x7f", 1));
    /* A seed mixed into the state gives another hash of the same bytes. */
    assert_true(hash_fnv1a_more(HASH_FNV1A_INIT ^ 1, "x", 1) != hash_fnv1a("x", 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
