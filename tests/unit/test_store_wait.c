/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_wait.c - the store's wait queues against a model: random waiters (READ,
 * READMULTI, FIND; KEEP or not), lines added at either end, waiters ended elsewhere or
 * whose client left; every waiter must get what the model says, in the same order. And
 * owners' waiters (READ OWNER=): one line per owner, shared by its waiters, journaled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/store.h"

enum { MAX_W = 64, MAX_L = 256 };

typedef struct twaiter {
    store_waiter sw;          /* first */
    store_matcher m;
    char want[8];             /* FIND EQUALS value */
    int ended;                /* ended elsewhere: claim fails */
    int gone;
    int armed, served, order;
    store_rc rc;
    char got[256];            /* lines served, '|' separated */
} twaiter;

static int served_seq;

static int t_arm(store_waiter *w) { ((twaiter *)w)->armed = 1; return 0; }
static int t_claim(store_waiter *w) { return !((twaiter *)w)->ended; }
static int t_gone(store_waiter *w) { return ((twaiter *)w)->gone; }

static void join_lines(const buf *out, char *dst, size_t n)
{
    size_t off = 0, len;
    const char *s;
    dst[0] = '\0';
    while ((s = store_next_line(out, &off, &len))) {
        if (dst[0])
            strncat(dst, "|", n - strlen(dst) - 1);
        strncat(dst, s, len);
    }
}

static void t_served(store_waiter *w, store_rc rc)
{
    twaiter *t = (twaiter *)w;
    t->served = 1;
    t->order = ++served_seq;
    t->rc = rc;
    join_lines(&w->out, t->got, sizeof t->got);
}

/* ---- the model ---- */

typedef struct mwaiter {
    int find, n, keep;
    char want[8];
    int queued, served, order, ended, gone;
    store_rc rc;
    char got[256];
} mwaiter;

static char mlist[MAX_L][8];
static int mlen;
static mwaiter mw[MAX_W];
static int mseq;

static void m_take(int pos, int keep, char *got)
{
    if (got[0])
        strcat(got, "|");
    strcat(got, mlist[pos]);
    char line[8];
    strcpy(line, mlist[pos]);
    memmove(&mlist[pos], &mlist[pos + 1], (size_t)(mlen - pos - 1) * sizeof mlist[0]);
    mlen--;
    if (keep)
        strcpy(mlist[mlen++], line);
}

static int m_find(const char *want)
{
    for (int i = 0; i < mlen; i++)
        if (strcmp(mlist[i], want) == 0)
            return i;
    return -1;
}

/* Serves w now if it can be: 1 if served. */
static int m_try(mwaiter *w)
{
    if (w->find) {
        int pos = m_find(w->want);
        if (pos < 0)
            return 0;
        m_take(pos, w->keep, w->got);
    } else {
        if (w->n > mlen || mlen == 0)
            return 0;
        for (int i = 0; i < w->n; i++)
            m_take(0, w->keep, w->got);
    }
    return 1;
}

static void m_serve(int nw)
{
    int held = 0;
    for (int i = 0; i < nw && mlen > 0; i++) {
        mwaiter *w = &mw[i];
        if (!w->queued)
            continue;
        if (!w->find && (held || w->n > mlen)) {
            held = 1;
            continue;
        }
        if (w->find && m_find(w->want) < 0)
            continue;
        w->queued = 0;
        if (w->ended)
            continue;
        w->served = 1;
        w->order = ++mseq;
        if (w->gone) {
            w->rc = STORE_EMPTY;
            continue;
        }
        m_try(w);
        w->rc = STORE_OK;
    }
}

/* ---- the run ---- */

static void check_list(store *st)
{
    size_t len, count;
    buf out = BUF_INIT;
    char got[4096] = "", want[4096] = "";
    if (store_length(st, "q", &len) == STORE_NOT_LOADED)
        len = 0;                               /* no line added yet */
    assert_int_equal(len, (size_t)mlen);
    if (len)
        assert_int_equal(store_read(st, "q", STORE_FIRST, 1, len, &out, &count, NULL), STORE_OK);
    join_lines(&out, got, sizeof got);
    for (int i = 0; i < mlen; i++) {
        if (i)
            strcat(want, "|");
        strcat(want, mlist[i]);
    }
    assert_string_equal(got, want);
    buf_free(&out);
}

static void run_one(unsigned seed)
{
    static twaiter tw[MAX_W];
    store *st = store_create(NULL);
    assert_non_null(st);
    memset(tw, 0, sizeof tw);
    memset(mw, 0, sizeof mw);
    mlen = 0;
    mseq = served_seq = 0;
    srand(seed);
    int nw = 0, nl = 0;
    for (int step = 0; step < 200; step++) {
        int op = rand() % 10;
        if (op < 4 && nw < MAX_W) {
            /* A new waiter. */
            twaiter *t = &tw[nw];
            mwaiter *m = &mw[nw];
            m->find = rand() % 3 == 0;
            m->keep = rand() % 4 == 0;
            m->n = m->find ? 1 : 1 + (rand() % 4 == 0 ? rand() % 3 : 0);
            snprintf(m->want, sizeof m->want, "v%d", rand() % 4);
            t->sw.name = "q";
            t->sw.end = STORE_FIRST;
            t->sw.n = (size_t)m->n;
            t->sw.keep = m->keep;
            t->sw.arm = t_arm;
            t->sw.claim = t_claim;
            t->sw.gone = t_gone;
            t->sw.served = t_served;
            strcpy(t->want, m->want);
            t->m.equal = t->want;
            t->m.equal_len = strlen(t->want);
            t->sw.m = m->find ? &t->m : NULL;
            buf out = BUF_INIT;
            size_t count;
            store_rc rc = m->find ? store_find_wait(st, &t->sw, &out)
                                  : store_read_wait(st, &t->sw, &out, &count);
            int now = m_try(m);
            if (now) {
                assert_int_equal(rc, STORE_OK);
                join_lines(&out, t->got, sizeof t->got);
                assert_string_equal(t->got, m->got);
                t->served = m->served = 1;
                t->order = ++served_seq;
                m->order = ++mseq;
            } else {
                assert_int_equal(rc, STORE_WAITING);
                assert_true(t->armed);
                m->queued = 1;
            }
            buf_free(&out);
            nw++;
        } else if (op < 8) {
            /* A line: one of four values, at either end. */
            char line[8];
            snprintf(line, sizeof line, "v%d", rand() % 4);
            int tail = rand() % 3 != 0;
            if (mlen >= MAX_L - 8)
                continue;
            assert_int_equal(store_add(st, "q", line, strlen(line), tail, 0, NULL), STORE_OK);
            if (tail) {
                strcpy(mlist[mlen++], line);
            } else {
                memmove(&mlist[1], &mlist[0], (size_t)mlen * sizeof mlist[0]);
                strcpy(mlist[0], line);
                mlen++;
            }
            m_serve(nw);
            nl++;
        } else if (nw > 0) {
            /* A queued waiter ends elsewhere (deadline) or its client leaves. */
            int i = rand() % nw;
            if (!mw[i].queued)
                continue;
            if (op == 8) {
                tw[i].ended = mw[i].ended = 1;
                if (rand() % 2) {
                    store_unwait(st, &tw[i].sw);
                    mw[i].queued = 0;
                }
            } else {
                tw[i].gone = mw[i].gone = 1;
            }
        }
        for (int i = 0; i < nw; i++) {
            if (tw[i].served != mw[i].served || tw[i].order != mw[i].order)
                fail_msg("seed %u step %d waiter %d: served %d/%d order %d/%d", seed, step,
                         i, tw[i].served, mw[i].served, tw[i].order, mw[i].order);
            if (tw[i].served && !mw[i].gone)
                assert_string_equal(tw[i].got, mw[i].got);
        }
        check_list(st);
    }
    for (int i = 0; i < nw; i++) {
        if (mw[i].queued)
            store_unwait(st, &tw[i].sw);
        buf_free(&tw[i].sw.out);
    }
    (void)nl;
    store_free(st);
}

static void test_against_model(void **state)
{
    for (unsigned seed = 1; seed <= 300; seed++)
        run_one(seed);
}

/* A waiter on a name nobody created yet is served once the list appears. */
static void test_orphan_waiter(void **state)
{
    store *st = store_create(NULL);
    twaiter t;
    memset(&t, 0, sizeof t);
    t.sw.name = "later";
    t.sw.n = 1;
    t.sw.arm = t_arm;
    t.sw.claim = t_claim;
    t.sw.gone = t_gone;
    t.sw.served = t_served;
    buf out = BUF_INIT;
    size_t count;
    assert_int_equal(store_read_wait(st, &t.sw, &out, &count), STORE_WAITING);
    size_t len;
    assert_int_equal(store_length(st, "later", &len), STORE_NOT_LOADED);  /* not created */
    assert_int_equal(store_add(st, "later", "x", 1, 1, 0, NULL), STORE_OK);
    assert_true(t.served);
    assert_int_equal(t.rc, STORE_OK);
    assert_string_equal(t.got, "x");
    assert_int_equal(store_length(st, "later", &len), STORE_OK);
    assert_int_equal(len, 0);
    /* Unwaited before anything came: never served. */
    twaiter u = t;
    memset(&u.sw.out, 0, sizeof u.sw.out);
    u.served = 0;
    u.sw.name = "never";
    assert_int_equal(store_read_wait(st, &u.sw, &out, &count), STORE_WAITING);
    store_unwait(st, &u.sw);
    assert_int_equal(store_add(st, "never", "y", 1, 1, 0, NULL), STORE_OK);
    assert_false(u.served);
    assert_int_equal(store_length(st, "never", &len), STORE_OK);
    assert_int_equal(len, 1);
    buf_free(&t.sw.out);
    buf_free(&u.sw.out);
    buf_free(&out);
    store_free(st);
}

/* ---- owners that wait ---- */

/* A recorder that numbers the records, and remembers the last loan's owner. */
static uint64_t rec_seq, rec_lease_lsn;
static char rec_owner[32];

static int r_push(void *c, const char *n, int t, const char *l, size_t len, uint64_t *lsn)
{
    (void)c, (void)n, (void)t, (void)l, (void)len;
    *lsn = ++rec_seq;
    return 0;
}

static int r_take(void *c, const char *n, int k, const size_t *pos, size_t cnt, uint64_t *lsn)
{
    (void)c, (void)n, (void)k, (void)pos, (void)cnt;
    *lsn = ++rec_seq;
    return 0;
}

static int r_lease(void *c, const char *n, uint64_t id, int64_t until, const char *owner,
                   size_t olen, const char *line, size_t len, uint64_t *lsn)
{
    (void)c, (void)n, (void)id, (void)until, (void)line, (void)len;
    snprintf(rec_owner, sizeof rec_owner, "%.*s", owner ? (int)olen : 4,
             owner ? owner : "none");
    *lsn = rec_lease_lsn = ++rec_seq;
    return 0;
}

static int r_settle(void *c, const char *n, uint64_t id, int rel, const char *line, size_t len,
                    uint64_t *lsn)
{
    (void)c, (void)n, (void)id, (void)rel, (void)line, (void)len;
    *lsn = ++rec_seq;
    return 0;
}

static void r_broken(void *c)
{
    (void)c;
    fail_msg("the store marked the journal broken");
}

static const store_recorder counting = {
    .push = r_push, .take = r_take, .lease = r_lease, .settle = r_settle,
    .mark_broken = r_broken,
};

/* An owner's READ waiter on list name. */
static void owner_waiter(twaiter *t, const char *name, const char *who)
{
    memset(t, 0, sizeof *t);
    t->sw.name = name;
    t->sw.n = 1;
    t->sw.owner = who;
    t->sw.owner_len = strlen(who);
    t->sw.arm = t_arm;
    t->sw.claim = t_claim;
    t->sw.gone = t_gone;
    t->sw.served = t_served;
}

static uint64_t first_id(const buf *ids)
{
    uint64_t id;
    assert_int_equal(ids->len, sizeof id);
    memcpy(&id, ids->data, sizeof id);
    return id;
}

static size_t leases_of(store *st, const char *name)
{
    size_t n;
    assert_int_equal(store_leases(st, name, &n), STORE_OK);
    return n;
}

/* Two waiters of owner c with one of x between them, and a plain READ behind: one line
 * serves both of c's (same line, same lease, one take), x and the READ wait on. */
static void test_owner_waiters(void **state)
{
    (void)state;
    store *st = store_create(NULL);
    store_set_recorder(st, &counting, NULL);
    twaiter c1, x, c2, p;
    buf out = BUF_INIT;
    size_t count;
    owner_waiter(&c1, "o", "c");
    owner_waiter(&x, "o", "x");
    owner_waiter(&c2, "o", "c");
    owner_waiter(&p, "o", "c");
    p.sw.owner = NULL;                                /* a plain READ */
    /* No list yet: every one waits, and takes nothing. */
    assert_int_equal(store_read_wait(st, &c1.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_read_wait(st, &x.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_read_wait(st, &c2.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_read_wait(st, &p.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_add(st, "o", "l1", 2, 1, 0, NULL), STORE_OK);
    assert_true(c1.served && c2.served);
    assert_false(x.served || p.served);
    assert_int_equal(c1.rc, STORE_OK);
    assert_int_equal(c2.rc, STORE_OK);
    assert_string_equal(c1.got, "l1");
    assert_string_equal(c2.got, "l1");
    assert_int_equal(c1.sw.count, 1);
    assert_true(first_id(&c1.sw.ids) == first_id(&c2.sw.ids));
    assert_string_equal(rec_owner, "c");
    /* Answered once the loan's record is durable. */
    assert_true(c1.sw.lsn >= rec_lease_lsn && c2.sw.lsn >= rec_lease_lsn);
    size_t len;
    assert_int_equal(store_length(st, "o", &len), STORE_OK);
    assert_int_equal(len, 0);
    assert_int_equal(leases_of(st, "o"), 1);
    /* c holds it: its READ answers it at once, taking nothing. */
    uint64_t id;
    int taken;
    assert_int_equal(store_read_owned(st, "o", STORE_FIRST, "c", 1, 0, &out, &id, &taken,
                                      NULL), STORE_OK);
    assert_false(taken);
    assert_true(id == first_id(&c1.sw.ids));
    buf_clear(&out);
    twaiter c3;
    owner_waiter(&c3, "o", "c");
    assert_int_equal(store_read_wait(st, &c3.sw, &out, &count), STORE_OK);
    assert_false(c3.armed);
    assert_int_equal(count, 1);
    assert_true(first_id(&c3.sw.ids) == id);
    buf_clear(&out);
    /* c's RELEASE feeds x, in arrival order before the plain READ. */
    assert_int_equal(store_settle_owner(st, "o", 1, "c", 1, NULL), STORE_OK);
    assert_true(x.served);
    assert_false(p.served);
    assert_string_equal(x.got, "l1");
    assert_string_equal(rec_owner, "x");
    assert_true(first_id(&x.sw.ids) != id);
    assert_int_equal(store_add(st, "o", "l2", 2, 1, 0, NULL), STORE_OK);
    assert_true(p.served);
    assert_string_equal(p.got, "l2");
    assert_int_equal(leases_of(st, "o"), 1);
    twaiter *all[] = {&c1, &x, &c2, &p, &c3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        buf_free(&all[i]->sw.out);
        buf_free(&all[i]->sw.ids);
    }
    buf_free(&out);
    store_free(st);
}

/* A waiter ended elsewhere or whose client left takes no line; a LEASE is the loan's. */
static void test_owner_waiter_gone_and_leased(void **state)
{
    (void)state;
    store *st = store_create(NULL);
    twaiter g, e, l;
    buf out = BUF_INIT;
    size_t count, len;
    assert_int_equal(store_add(st, "o", "x", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(store_read(st, "o", STORE_FIRST, 0, 1, &out, &count, NULL), STORE_OK);
    owner_waiter(&g, "o", "g");
    owner_waiter(&e, "o", "e");
    owner_waiter(&l, "o", "l");
    l.sw.lease_ms = 60000;
    assert_int_equal(store_read_wait(st, &g.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_read_wait(st, &e.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_read_wait(st, &l.sw, &out, &count), STORE_WAITING);
    g.gone = 1;
    e.ended = 1;
    assert_int_equal(store_add(st, "o", "y", 1, 1, 0, NULL), STORE_OK);
    assert_true(g.served);
    assert_int_equal(g.rc, STORE_EMPTY);
    assert_false(e.served);
    assert_true(l.served);
    assert_string_equal(l.got, "y");
    assert_int_equal(store_length(st, "o", &len), STORE_OK);
    assert_int_equal(len, 0);
    assert_int_equal(leases_of(st, "o"), 1);
    assert_int_equal(store_settle_owner(st, "o", 1, "g", 1, NULL), STORE_NO_LEASE);
    /* The loan has LEASE's deadline: it expires and the line is back. */
    int64_t next;
    assert_int_equal(store_lease_expire(st, INT64_MAX - 1, &next), 1);
    assert_int_equal(store_length(st, "o", &len), STORE_OK);
    assert_int_equal(len, 1);
    assert_int_equal(store_settle_owner(st, "o", 1, "l", 1, NULL), STORE_NO_LEASE);
    buf_free(&g.sw.out);
    buf_free(&l.sw.out);
    buf_free(&l.sw.ids);
    buf_free(&out);
    store_free(st);
}

/* An owner's waiter that would take a line waits behind a READMULTI that needs more; one
 * whose owner holds a line already (taken since it queued) is answered that line. */
static void test_owner_waiter_behind_readmulti(void **state)
{
    (void)state;
    store *st = store_create(NULL);
    twaiter m, a, b;
    buf out = BUF_INIT;
    size_t count, len;
    owner_waiter(&m, "o", "-");
    m.sw.owner = NULL;
    m.sw.n = 2;
    owner_waiter(&a, "o", "a");
    owner_waiter(&b, "o", "b");
    assert_int_equal(store_read_wait(st, &m.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_read_wait(st, &a.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_read_wait(st, &b.sw, &out, &count), STORE_WAITING);
    assert_int_equal(store_add(st, "o", "l1", 2, 1, 0, NULL), STORE_OK);
    assert_false(m.served || a.served || b.served);
    /* b takes l1 now (no TIMEOUT); its waiter gets l1 at the next line, still held. */
    uint64_t id;
    int taken;
    assert_int_equal(store_read_owned(st, "o", STORE_FIRST, "b", 1, 0, &out, &id, &taken,
                                      NULL), STORE_OK);
    assert_true(taken);
    assert_int_equal(store_add(st, "o", "l2", 2, 1, 0, NULL), STORE_OK);
    assert_false(m.served || a.served);
    assert_true(b.served);
    assert_string_equal(b.got, "l1");
    assert_true(first_id(&b.sw.ids) == id);
    assert_int_equal(store_add(st, "o", "l3", 2, 1, 0, NULL), STORE_OK);
    assert_true(m.served);
    assert_string_equal(m.got, "l2|l3");
    assert_false(a.served);
    assert_int_equal(store_add(st, "o", "l4", 2, 1, 0, NULL), STORE_OK);
    assert_true(a.served);
    assert_string_equal(a.got, "l4");
    assert_int_equal(store_length(st, "o", &len), STORE_OK);
    assert_int_equal(len, 0);
    assert_int_equal(leases_of(st, "o"), 2);
    twaiter *all[] = {&m, &a, &b};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        buf_free(&all[i]->sw.out);
        buf_free(&all[i]->sw.ids);
    }
    buf_free(&out);
    store_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_orphan_waiter),
        cmocka_unit_test(test_owner_waiters),
        cmocka_unit_test(test_owner_waiter_gone_and_leased),
        cmocka_unit_test(test_owner_waiter_behind_readmulti),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
