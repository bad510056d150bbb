/* SPDX-License-Identifier: Apache-2.0 */
/* test_digest.c - SHA-256 in hex against the FIPS 180-4 examples (NIST's CSRC vectors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/digest.h"

static void check(const char *msg, size_t len, const char *want)
{
    char hex[DIGEST_SHA256_HEX];
    assert_int_equal(digest_sha256_hex(msg, len, hex), 0);
    assert_string_equal(hex, want);
}

static void test_vectors(void **state)
{
    (void)state;
    /* One block, the empty message, and two blocks (448 bits). */
    check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check(NULL, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check(m448, strlen(m448),
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* 896 bits, and a million 'a's. */
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                       "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check(m896, strlen(m896),
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    char *million = malloc(1000000);
    assert_non_null(million);
    memset(million, 'a', 1000000);
    check(million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
}

static void test_bytes(void **state)
{
    (void)state;
    /* NUL and bytes past 0x7f are hashed as they are, not as a C string. */
    char a[DIGEST_SHA256_HEX], b[DIGEST_SHA256_HEX];
    assert_int_equal(digest_sha256_hex("a\0b", 3, a), 0);
    assert_int_equal(digest_sha256_hex("a", 1, b), 0);
    assert_string_not_equal(a, b);
    assert_int_equal(strlen(a), 64);
    assert_int_equal(strspn(a, "0123456789abcdef"), 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
