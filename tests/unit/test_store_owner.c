/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_owner.c - lines that stick to their owner: the owner table itself (add,
 * find, remove, growth, names with any bytes) and READ OWNER= through the store: the same
 * line for the same owner, distinct lines for distinct owners, renewal and expiry back to
 * the head, settling by owner, RESET dropping the owners, LENGTH and LEASES counts. */
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
#include "store/store_owner.h"

enum { N_OWNERS = 1000 };

/* ---- the table ---------------------------------------------------------------------- */

static void test_table(void **s)
{
    (void)s;
    owner_table t = {0};
    static lease ls[N_OWNERS];
    char name[32];
    assert_null(store_owner_find(&t, "x", 1));
    for (int i = 0; i < N_OWNERS; i++) {
        snprintf(name, sizeof name, "vu-%d", i);
        memset(&ls[i], 0, sizeof ls[i]);
        owner *o = store_owner_add(&t, name, strlen(name), &ls[i]);
        assert_non_null(o);
        assert_ptr_equal(ls[i].own, o);
    }
    assert_int_equal(t.n, N_OWNERS);
    assert_true(t.mask + 1 >= N_OWNERS);
    for (int i = 0; i < N_OWNERS; i++) {
        snprintf(name, sizeof name, "vu-%d", i);
        owner *o = store_owner_find(&t, name, strlen(name));
        assert_non_null(o);
        assert_ptr_equal(o->l, &ls[i]);
    }
    /* A prefix, a longer name, the same bytes with a NUL inside: none of them. */
    assert_null(store_owner_find(&t, "vu-1", 3));
    assert_null(store_owner_find(&t, "vu-10000", 8));
    assert_null(store_owner_find(&t, "vu-1\0", 5));
    /* Removing every other one leaves the rest findable. */
    for (int i = 0; i < N_OWNERS; i += 2) {
        snprintf(name, sizeof name, "vu-%d", i);
        store_owner_remove(&t, store_owner_find(&t, name, strlen(name)));
        assert_null(ls[i].own);
    }
    assert_int_equal(t.n, N_OWNERS / 2);
    for (int i = 0; i < N_OWNERS; i++) {
        snprintf(name, sizeof name, "vu-%d", i);
        owner *o = store_owner_find(&t, name, strlen(name));
        if (i % 2)
            assert_ptr_equal(o, ls[i].own);
        else
            assert_null(o);
    }
    /* Any bytes but NUL, the longest allowed. */
    char big[STORE_OWNER_MAX];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(1 + i % 255);
    lease bl = {0};
    assert_non_null(store_owner_add(&t, big, sizeof big, &bl));
    assert_ptr_equal(store_owner_find(&t, big, sizeof big), bl.own);
    store_owner_table_free(&t);
    assert_null(t.b);
    assert_int_equal(t.n, 0);
}

/* ---- through the store --------------------------------------------------------------- */

static store *fill(int n)
{
    store *st = store_create(NULL);
    assert_non_null(st);
    char v[16];
    for (int i = 0; i < n; i++) {
        snprintf(v, sizeof v, "l%d", i);
        assert_int_equal(store_add(st, "q", v, strlen(v), 1, 0, NULL), STORE_OK);
    }
    return st;
}

/* READ OWNER=who: its line into out (a C string), its lease id, whether it took one. */
static store_rc owned(store *st, const char *who, int64_t lease_ms, char *out, uint64_t *id,
                      int *taken)
{
    buf b = BUF_INIT;
    store_rc rc = store_read_owned(st, "q", STORE_FIRST, who, strlen(who), lease_ms, &b, id,
                                   taken, NULL);
    out[0] = 0;
    if (rc == STORE_OK) {
        size_t off = 0, len;
        const char *s = store_next_line(&b, &off, &len);
        assert_non_null(s);
        memcpy(out, s, len);
        out[len] = 0;
    }
    buf_free(&b);
    return rc;
}

static size_t length(store *st)
{
    size_t n;
    assert_int_equal(store_length(st, "q", &n), STORE_OK);
    return n;
}

static size_t leases(store *st)
{
    size_t n;
    assert_int_equal(store_leases(st, "q", &n), STORE_OK);
    return n;
}

static char *head(store *st, char *out)
{
    buf b = BUF_INIT;
    size_t count, off = 0, len;
    assert_int_equal(store_read(st, "q", STORE_FIRST, 1, 1, &b, &count, NULL), STORE_OK);
    const char *s = store_next_line(&b, &off, &len);
    memcpy(out, s, len);
    out[len] = 0;
    buf_free(&b);
    return out;
}

static void test_same_line(void **s)
{
    (void)s;
    store *st = fill(10);
    char a[32], b[32], who[16];
    uint64_t id1, id2;
    int taken;
    assert_int_equal(owned(st, "alice", 0, a, &id1, &taken), STORE_OK);
    assert_string_equal(a, "l0");
    assert_true(taken);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(owned(st, "alice", 0, b, &id2, &taken), STORE_OK);
        assert_string_equal(b, "l0");
        assert_false(taken);
        assert_true(id1 == id2);
    }
    assert_int_equal(owned(st, "bob", 0, b, &id2, &taken), STORE_OK);
    assert_string_equal(b, "l1");
    assert_int_equal(length(st), 8);
    assert_int_equal(leases(st), 2);
    /* Every line owned: an owner holding none meets an empty list. */
    for (int i = 0; i < 8; i++) {
        snprintf(who, sizeof who, "u%d", i);
        assert_int_equal(owned(st, who, 0, b, &id2, &taken), STORE_OK);
    }
    assert_int_equal(owned(st, "late", 0, b, &id2, &taken), STORE_EMPTY);
    assert_int_equal(owned(st, "alice", 0, b, &id2, &taken), STORE_OK);
    assert_string_equal(b, "l0");
    assert_int_equal(store_read_owned(st, "nope", STORE_FIRST, "a", 1, 0, NULL, &id2, &taken,
                                      NULL), STORE_NOT_LOADED);
    store_free(st);
}

static void test_settle_by_owner(void **s)
{
    (void)s;
    store *st = fill(3);
    char a[32];
    uint64_t id;
    int taken;
    assert_int_equal(owned(st, "alice", 0, a, &id, &taken), STORE_OK);
    assert_int_equal(owned(st, "bob", 0, a, &id, &taken), STORE_OK);
    assert_string_equal(a, "l1");
    /* RELEASE: back at the head now, and bob's next READ takes a line afresh. */
    assert_int_equal(store_settle_owner(st, "q", 1, "bob", 3, NULL), STORE_OK);
    assert_int_equal(store_settle_owner(st, "q", 1, "bob", 3, NULL), STORE_NO_LEASE);
    assert_int_equal(length(st), 2);
    assert_int_equal(leases(st), 1);
    assert_int_equal(owned(st, "carol", 0, a, &id, &taken), STORE_OK);
    assert_string_equal(a, "l1");
    /* ACK: consumed. */
    assert_int_equal(store_settle_owner(st, "q", 0, "alice", 5, NULL), STORE_OK);
    assert_int_equal(length(st), 1);
    assert_int_equal(leases(st), 1);
    assert_int_equal(owned(st, "alice", 0, a, &id, &taken), STORE_OK);
    assert_string_equal(a, "l2");
    assert_true(taken);
    /* Settled by its lease id, the ownership ends too. */
    assert_int_equal(store_settle(st, "q", 1, id, NULL, 0, NULL), STORE_OK);
    assert_int_equal(store_settle_owner(st, "q", 1, "alice", 5, NULL), STORE_NO_LEASE);
    assert_int_equal(store_settle_owner(st, "none", 1, "alice", 5, NULL), STORE_NOT_LOADED);
    store_free(st);
}

static void test_renew_and_expire(void **s)
{
    (void)s;
    store *st = fill(3);
    char a[32];
    uint64_t id;
    int taken;
    int64_t next, t0 = clock_wall_ms();
    assert_int_equal(owned(st, "alice", 1000, a, &id, &taken), STORE_OK);
    assert_int_equal(owned(st, "bob", 0, a, &id, &taken), STORE_OK);   /* no deadline */
    /* Renewed to an hour: not due at the first deadline. */
    assert_int_equal(owned(st, "alice", 3600 * 1000, a, &id, &taken), STORE_OK);
    assert_string_equal(a, "l0");
    assert_int_equal(store_lease_expire(st, t0 + 60 * 1000, &next), 0);
    assert_true(next >= t0 + 3600 * 1000);
    /* Past it: back at the head; bob's loan has no deadline. */
    assert_int_equal(store_lease_expire(st, t0 + 2 * 3600 * 1000, &next), 1);
    assert_int_equal(leases(st), 1);
    assert_string_equal(head(st, a), "l0");
    assert_int_equal(store_lease_expire(st, INT64_MAX - 1, &next), 0);
    /* Alice's next READ takes a line afresh. */
    assert_int_equal(owned(st, "alice", 0, a, &id, &taken), STORE_OK);
    assert_true(taken);
    store_free(st);
}

static void test_reset_drops(void **s)
{
    (void)s;
    store *st = fill(3);
    char a[32];
    uint64_t id;
    int taken;
    assert_int_equal(owned(st, "alice", 0, a, &id, &taken), STORE_OK);
    assert_int_equal(store_reset(st, "q", NULL), STORE_OK);
    assert_int_equal(leases(st), 0);
    assert_int_equal(owned(st, "alice", 0, a, &id, &taken), STORE_EMPTY);
    assert_int_equal(store_add(st, "q", "n", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(owned(st, "alice", 0, a, &id, &taken), STORE_OK);
    assert_string_equal(a, "n");
    assert_true(taken);
    store_free(st);
}

/* Recovery's adoption: the owner's line comes back as its own. */
static void test_adopt(void **s)
{
    (void)s;
    store *st = fill(1);
    char a[32];
    uint64_t id;
    int taken;
    assert_int_equal(store_lease_adopt(st, "q", 77, STORE_LOAN_FOREVER, "alice", 5, "old", 3),
                     STORE_OK);
    /* A second loan to the same owner stays a plain lease. */
    assert_int_equal(store_lease_adopt(st, "q", 78, STORE_LOAN_FOREVER, "alice", 5, "dup", 3),
                     STORE_OK);
    assert_int_equal(leases(st), 2);
    assert_int_equal(owned(st, "alice", 0, a, &id, &taken), STORE_OK);
    assert_string_equal(a, "old");
    assert_true(id == 77);
    assert_false(taken);
    store_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_same_line),
        cmocka_unit_test(test_settle_by_owner),
        cmocka_unit_test(test_renew_and_expire),
        cmocka_unit_test(test_reset_drops),
        cmocka_unit_test(test_adopt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
