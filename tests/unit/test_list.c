/* SPDX-License-Identifier: Apache-2.0 */
/* test_list.c - the list engine against a plain array model, over seeded random runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "list/list.h"
#include "list/list_int.h"
#include "list/leaf.h"
#include "list/leafpool.h"

/* ---- the model: an array of owned strings, O(n) everything, obviously right ------------ */

typedef struct mline {
    char *s;
    size_t len;
} mline;

typedef struct model {
    mline *v;
    size_t n, cap;
} model;

static void m_insert(model *m, size_t pos, const char *s, size_t len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
        assert_non_null(m->v);
    }
    memmove(m->v + pos + 1, m->v + pos, (m->n - pos) * sizeof *m->v);
    m->v[pos].s = malloc(len + 1);
    assert_non_null(m->v[pos].s);
    if (len)
        memcpy(m->v[pos].s, s, len);
    m->v[pos].len = len;
    m->n++;
}

static mline m_take(model *m, size_t pos)
{
    mline x = m->v[pos];
    memmove(m->v + pos, m->v + pos + 1, (m->n - pos - 1) * sizeof *m->v);
    m->n--;
    return x;
}

static void m_remove(model *m, size_t pos)
{
    free(m_take(m, pos).s);
}

static void m_move_to_back(model *m, size_t pos)
{
    mline x = m_take(m, pos);
    m->v[m->n++] = x;
}

static ssize_t m_find(const model *m, const char *s, size_t len)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].len == len && memcmp(m->v[i].s, s, len) == 0)
            return (ssize_t)i;
    return -1;
}

static model m_copy(const model *m)
{
    model c = {0};
    for (size_t i = 0; i < m->n; i++)
        m_insert(&c, i, m->v[i].s, m->v[i].len);
    return c;
}

static void m_free(model *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].s);
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* ---- helpers --------------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t rnd_below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* A line from a small pool (so duplicates are common) with empty lines, NUL bytes, long
 * lines and now and then one bigger than a leaf. Returns its length; buf holds it. */
static size_t gen_line(char *buf, size_t bufsize, unsigned pool)
{
    unsigned r = (unsigned)rnd_below(1000);
    size_t id = rnd_below(pool);
    if (r < 20)
        return 0;
    if (r < 40) {
        size_t len = 3 + id % 7;
        memset(buf, 0, len);
        buf[1] = (char)('a' + id % 26);
        buf[len - 1] = (char)id;
        return len;
    }
    if (r < 43 && bufsize > 20000) {
        size_t len = 4100 + rnd_below(15000);
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)('A' + (id + i) % 23);
        return len;
    }
    if (r < 100) {
        size_t len = 100 + id % 900;
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)('a' + (id * 7 + i) % 26);
        return len;
    }
    return (size_t)snprintf(buf, bufsize, "login%07zu;password%07zu", id, id);
}

struct walk {
    const model *m;
    size_t i;
};

static int walk_cmp(const char *s, size_t len, void *ctx)
{
    struct walk *w = ctx;
    assert_true(w->i < w->m->n);
    assert_int_equal(len, w->m->v[w->i].len);
    assert_memory_equal(s, w->m->v[w->i].s, len);
    w->i++;
    return 0;
}

/* Full comparison: length, bytes, foreach order, and get at a sample of positions. */
static void check(const list *l, const model *m)
{
    size_t bytes = 0;
    for (size_t i = 0; i < m->n; i++)
        bytes += m->v[i].len;
    assert_int_equal(list_length(l), m->n);
    assert_int_equal(list_bytes(l), bytes);
    struct walk w = {m, 0};
    assert_int_equal(list_foreach(l, walk_cmp, &w), 0);
    assert_int_equal(w.i, m->n);
    size_t step = m->n > 5000 ? m->n / 2000 : 1;
    for (size_t i = 0; i < m->n; i += step) {
        size_t len;
        const char *p = list_get(l, i, &len);
        assert_non_null(p);
        assert_int_equal(len, m->v[i].len);
        assert_memory_equal(p, m->v[i].s, len);
    }
    size_t len;
    assert_null(list_get(l, m->n, &len));
}

static void check_get(const list *l, const model *m, size_t pos)
{
    size_t len;
    const char *p = list_get(l, pos, &len);
    assert_non_null(p);
    assert_int_equal(len, m->v[pos].len);
    assert_memory_equal(p, m->v[pos].s, len);
}

static void check_find(list *l, const model *m, const char *s, size_t len)
{
    ssize_t want = m_find(m, s, len);
    assert_int_equal(list_find_equal(l, s, len), want);
    assert_int_equal(list_contains(l, s, len), want >= 0);
}

/* One random operation applied to both; the mix leans to what the daemon does. */
static void random_op(list *l, model *m, char *buf, size_t bufsize, unsigned pool, int finds)
{
    size_t len, pos;
    unsigned r = (unsigned)rnd_below(100);
    if (m->n == 0 || r < 22) {
        len = gen_line(buf, bufsize, pool);
        assert_int_equal(list_push_back(l, buf, len), 0);
        m_insert(m, m->n, buf, len);
    } else if (r < 40) {
        len = gen_line(buf, bufsize, pool);
        assert_int_equal(list_push_front(l, buf, len), 0);
        m_insert(m, 0, buf, len);
    } else if (r < 55) {
        pos = rnd_below(m->n);
        check_get(l, m, pos);
        assert_int_equal(list_remove(l, pos), 0);
        m_remove(m, pos);
    } else if (r < 62) {
        pos = r & 1 ? 0 : m->n - 1;
        check_get(l, m, pos);
        assert_int_equal(list_remove(l, pos), 0);
        m_remove(m, pos);
    } else if (r < 75) {
        pos = r & 1 ? 0 : rnd_below(m->n);
        assert_int_equal(list_move_to_back(l, pos), 0);
        m_move_to_back(m, pos);
        check_get(l, m, m->n - 1);
    } else if (r < 85) {
        check_get(l, m, rnd_below(m->n));
    } else if (finds) {
        /* Half the time a line that is there (maybe duplicated), else a fresh one. */
        if (r & 1) {
            pos = rnd_below(m->n);
            memcpy(buf, m->v[pos].s, m->v[pos].len);
            len = m->v[pos].len;
        } else {
            len = gen_line(buf, bufsize, pool);
        }
        check_find(l, m, buf, len);
    }
}

static void random_run(unsigned seed, size_t ops, unsigned pool, int index_from)
{
    size_t bufsize = 32768;
    char *buf = malloc(bufsize);
    assert_non_null(buf);
    list *l = list_create();
    assert_non_null(l);
    model m = {0};
    rng_state = 0x9e3779b97f4a7c15ull * (seed + 1);
    for (size_t i = 0; i < ops; i++) {
        random_op(l, &m, buf, bufsize, pool, index_from >= 0 && i >= (size_t)index_from);
        if (i % 97 == 0)
            check(l, &m);
        if (i % 1000 == 0) {
            /* A clone is a list of its own: it must take any mix of changes, too. */
            list *c = list_clone(l);
            assert_non_null(c);
            check(c, &m);
            model cm = m_copy(&m);
            uint64_t saved = rng_state;
            for (size_t j = 0; j < 400; j++)
                random_op(c, &cm, buf, bufsize, pool, (int)(i / 1000) % 2);
            check(c, &cm);
            check(l, &m);
            rng_state = saved;
            list_free(c);
            m_free(&cm);
        }
    }
    check(l, &m);
    /* Every distinct line once more, so any index drift would show. */
    if (index_from >= 0)
        for (size_t i = 0; i < m.n; i++)
            check_find(l, &m, m.v[i].s, m.v[i].len);
    /* Drain from random positions down to empty. */
    while (m.n) {
        size_t pos = rnd_below(m.n);
        assert_int_equal(list_remove(l, pos), 0);
        m_remove(&m, pos);
        if (m.n % 211 == 0)
            check(l, &m);
    }
    check(l, &m);
    assert_int_equal(list_find_equal(l, "x", 1), -1);
    list_free(l);
    m_free(&m);
    free(buf);
}

/* ---- tests ----------------------------------------------------------------------------- */

static int stop_at(const char *s, size_t len, void *ctx)
{
    return len == strlen(ctx) && memcmp(s, ctx, len) == 0;
}

static int fail_scan(const char *s, size_t len, void *ctx)
{
    return -7;
}

static int count_lines(const char *s, size_t len, void *ctx)
{
    ++*(size_t *)ctx;
    return 0;
}

static void test_empty(void **state)
{
    list *l = list_create();
    assert_non_null(l);
    size_t len, n = 0;
    assert_int_equal(list_length(l), 0);
    assert_int_equal(list_bytes(l), 0);
    assert_null(list_get(l, 0, &len));
    assert_int_equal(list_remove(l, 0), -1);
    assert_int_equal(list_move_to_back(l, 0), -1);
    assert_int_equal(list_scan(l, stop_at, "a"), -1);
    assert_int_equal(list_foreach(l, count_lines, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(list_find_equal(l, "a", 1), -1);
    assert_int_equal(list_contains(l, "", 0), 0);
    list *c = list_clone(l);
    assert_non_null(c);
    assert_int_equal(list_length(c), 0);
    assert_int_equal(list_push_back(c, "z", 1), 0);
    assert_int_equal(list_length(l), 0);
    list_free(c);
    list_free(l);
    list_free(NULL);
}

static void test_single(void **state)
{
    list *l = list_create();
    size_t len;
    assert_int_equal(list_push_back(l, "only", 4), 0);
    assert_int_equal(list_length(l), 1);
    assert_int_equal(list_bytes(l), 4);
    assert_memory_equal(list_get(l, 0, &len), "only", 4);
    assert_int_equal(len, 4);
    assert_int_equal(list_move_to_back(l, 0), 0);
    assert_int_equal(list_move_to_back(l, 1), -1);
    assert_int_equal(list_scan(l, stop_at, "only"), 0);
    assert_int_equal(list_scan(l, fail_scan, NULL), -7);
    assert_int_equal(list_find_equal(l, "only", 4), 0);
    assert_int_equal(list_contains(l, "onl", 3), 0);
    assert_int_equal(list_remove(l, 1), -1);
    assert_int_equal(list_remove(l, 0), 0);
    assert_int_equal(list_length(l), 0);
    assert_int_equal(list_find_equal(l, "only", 4), -1);
    assert_int_equal(list_push_front(l, "", 0), 0);
    assert_non_null(list_get(l, 0, &len));
    assert_int_equal(len, 0);
    assert_int_equal(list_find_equal(l, "", 0), 0);
    /* A small first leaf meeting lines bigger than its doubling. */
    char big[1000];
    memset(big, 'q', sizeof big);
    assert_int_equal(list_push_back(l, big, 300), 0);
    assert_int_equal(list_push_front(l, big, 999), 0);
    assert_int_equal(list_find_equal(l, big, 300), 2);
    assert_int_equal(list_find_equal(l, big, 999), 0);
    assert_int_equal(list_length(l), 3);
    list_free(l);
}

static void test_random_small_no_index(void **state)
{
    random_run(1, 20000, 300, -1);
}

static void test_random_small_index_first(void **state)
{
    random_run(2, 20000, 300, 0);
}

static void test_random_index_midway(void **state)
{
    random_run(3, 30000, 2000, 12000);
}

static void test_random_tiny(void **state)
{
    /* Lists hovering around 0..3 lines exercise the lone-leaf and empty transitions. */
    for (unsigned seed = 0; seed < 50; seed++)
        random_run(100 + seed, 200, 5, seed % 2 ? 0 : 50);
}

/* Builds n lines "login%07zu..." by pushes at random ends; returns the model too. */
static list *build(model *m, size_t n, int mixed)
{
    list *l = list_create();
    assert_non_null(l);
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof buf, "login%07zu;password%07zu", i, i);
        if (mixed && rnd() % 3 == 0) {
            assert_int_equal(list_push_front(l, buf, (size_t)len), 0);
            m_insert(m, 0, buf, (size_t)len);
        } else {
            assert_int_equal(list_push_back(l, buf, (size_t)len), 0);
            m_insert(m, m->n, buf, (size_t)len);
        }
    }
    return l;
}

static void test_1k(void **state)
{
    model m = {0};
    rng_state = 11;
    list *l = build(&m, 1000, 1);
    check(l, &m);
    for (size_t i = 0; i < 5000; i++) {
        char buf[32768];
        random_op(l, &m, buf, sizeof buf, 1500, i > 2000);
    }
    check(l, &m);
    list_free(l);
    m_free(&m);
}

static void test_100k(void **state)
{
    model m = {0};
    rng_state = 12;
    list *l = build(&m, 100000, 1);
    check(l, &m);
    char buf[32768];
    for (size_t i = 0; i < 6000; i++) {
        random_op(l, &m, buf, sizeof buf, 150000, i > 3000);
        if (i % 2000 == 0)
            check(l, &m);
    }
    check(l, &m);
    list *c = list_clone(l);
    check(c, &m);
    list_free(l);
    check(c, &m);
    list_free(c);
    m_free(&m);
}

static void test_1m(void **state)
{
    model m = {0};
    rng_state = 13;
    list *l = build(&m, 1000000, 0);
    check(l, &m);
    char buf[64];
    /* Rotation (READ FIRST KEEP=TRUE) and random removal paired with an add. */
    for (size_t i = 0; i < 300; i++) {
        assert_int_equal(list_move_to_back(l, 0), 0);
        m_move_to_back(&m, 0);
        size_t pos = rnd_below(m.n);
        check_get(l, &m, pos);
        assert_int_equal(list_remove(l, pos), 0);
        m_remove(&m, pos);
        int len = snprintf(buf, sizeof buf, "added%zu", i);
        assert_int_equal(list_push_back(l, buf, (size_t)len), 0);
        m_insert(&m, m.n, buf, (size_t)len);
    }
    check(l, &m);
    assert_int_equal(list_find_equal(l, "login0999999;password0999999", 28),
                     m_find(&m, "login0999999;password0999999", 28));
    for (size_t i = 0; i < 100; i++) {
        size_t pos = rnd_below(m.n);
        check_find(l, &m, m.v[pos].s, m.v[pos].len);
        assert_int_equal(list_move_to_back(l, pos), 0);
        m_move_to_back(&m, pos);
    }
    check(l, &m);
    list *c = list_clone(l);
    assert_non_null(c);
    check(c, &m);
    list_free(c);
    list_free(l);
    m_free(&m);
}

static void test_duplicates_first_occurrence(void **state)
{
    list *l = list_create();
    model m = {0};
    char buf[64];
    /* Copies of "dup" spread over many leaves, pushed at both ends. */
    for (size_t i = 0; i < 5000; i++) {
        int len = snprintf(buf, sizeof buf, "line%zu", i);
        const char *s = i % 37 == 5 ? "dup" : buf;
        size_t n = i % 37 == 5 ? 3 : (size_t)len;
        if (i % 3 == 0) {
            assert_int_equal(list_push_front(l, s, n), 0);
            m_insert(&m, 0, s, n);
        } else {
            assert_int_equal(list_push_back(l, s, n), 0);
            m_insert(&m, m.n, s, n);
        }
    }
    /* Take the first copy away again and again: each time the next one must be found. */
    while (m_find(&m, "dup", 3) >= 0) {
        ssize_t p = list_find_equal(l, "dup", 3);
        assert_int_equal(p, m_find(&m, "dup", 3));
        if (p % 2) {
            assert_int_equal(list_move_to_back(l, (size_t)p), 0);
            m_move_to_back(&m, (size_t)p);
            assert_int_equal(list_remove(l, m.n - 1), 0);
            m_remove(&m, m.n - 1);
        } else {
            assert_int_equal(list_remove(l, (size_t)p), 0);
            m_remove(&m, (size_t)p);
        }
    }
    assert_int_equal(list_find_equal(l, "dup", 3), -1);
    assert_int_equal(list_contains(l, "dup", 3), 0);
    check(l, &m);
    list_free(l);
    m_free(&m);
}

static void test_nul_and_big_lines(void **state)
{
    list *l = list_create();
    model m = {0};
    const char nul[] = "a\0b\0\0c";
    size_t big = 20u << 20;
    char *b = malloc(big);
    assert_non_null(b);
    for (size_t i = 0; i < big; i++)
        b[i] = (char)(i * 31 + 7);
    assert_int_equal(list_push_back(l, nul, 6), 0);
    m_insert(&m, 0, nul, 6);
    assert_int_equal(list_push_back(l, b, big), 0);
    m_insert(&m, 1, b, big);
    assert_int_equal(list_push_front(l, b, 5000), 0);
    m_insert(&m, 0, b, 5000);
    assert_int_equal(list_push_back(l, "", 0), 0);
    m_insert(&m, 3, "", 0);
    assert_int_equal(list_push_back(l, nul, 2), 0); /* "a\0": a prefix of the other */
    m_insert(&m, 4, nul, 2);
    check(l, &m);
    check_find(l, &m, nul, 6);
    check_find(l, &m, nul, 2);
    check_find(l, &m, nul, 1);
    check_find(l, &m, b, big);
    check_find(l, &m, b, big - 1);
    check_find(l, &m, "", 0);
    assert_int_equal(list_move_to_back(l, 2), 0); /* the 20 MB line */
    m_move_to_back(&m, 2);
    assert_int_equal(list_move_to_back(l, 0), 0);
    m_move_to_back(&m, 0);
    check(l, &m);
    list *c = list_clone(l);
    check(c, &m);
    list_free(c);
    check_find(l, &m, b, big);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(list_remove(l, 1), 0);
        m_remove(&m, 1);
        check(l, &m);
    }
    check_find(l, &m, b, big);
    list_free(l);
    m_free(&m);
    free(b);
}

static void test_scan(void **state)
{
    model m = {0};
    rng_state = 14;
    list *l = build(&m, 3000, 0);
    assert_int_equal(list_scan(l, stop_at, "login0002500;password0002500"), 2500);
    assert_int_equal(list_scan(l, stop_at, "login0000000;password0000000"), 0);
    assert_int_equal(list_scan(l, stop_at, "nope"), -1);
    assert_int_equal(list_scan(l, fail_scan, NULL), -7);
    for (int i = 0; i < 100; i++)
        assert_int_equal(list_move_to_back(l, 0), 0);
    assert_int_equal(list_scan(l, stop_at, "login0002500;password0002500"), 2400);
    assert_int_equal(list_scan(l, stop_at, "login0000000;password0000000"), 2900);
    size_t n = 0;
    assert_int_equal(list_foreach(l, count_lines, &n), 0);
    assert_int_equal(n, 3000);
    assert_int_equal(list_foreach(l, fail_scan, NULL), -7);
    list_free(l);
    m_free(&m);
}

static void test_rotation_order(void **state)
{
    model m = {0};
    rng_state = 15;
    list *l = build(&m, 1000, 1);
    for (size_t i = 0; i < 2500; i++) {
        assert_int_equal(list_move_to_back(l, 0), 0);
        m_move_to_back(&m, 0);
        if (i % 250 == 0)
            check(l, &m);
    }
    check(l, &m);
    list_free(l);
    m_free(&m);
}

static void test_clone_independent(void **state)
{
    model m = {0};
    rng_state = 16;
    list *l = build(&m, 10000, 1);
    assert_int_equal(list_contains(l, "login0000001;password0000001", 28), 1);
    list *c = list_clone(l);
    assert_non_null(c);
    for (int i = 0; i < 5000; i++)
        assert_int_equal(list_remove(l, rnd_below(list_length(l))), 0);
    assert_int_equal(list_push_back(l, "new", 3), 0);
    check(c, &m);
    assert_int_equal(list_find_equal(c, "new", 3), -1);
    assert_int_equal(list_find_equal(c, m.v[9999].s, m.v[9999].len), 9999);
    list_free(l);
    list_free(c);
    m_free(&m);
}

struct ascend {
    list *l;
    size_t pos;
    long prev;
};

static int ascending(const char *s, size_t len, void *ctx)
{
    struct ascend *a = ctx;
    assert_int_equal(len, 28);
    long id = strtol(s + 5, NULL, 10);
    assert_true(id > a->prev);
    a->prev = id;
    assert_int_equal(list_find_equal(a->l, s, len), a->pos);
    a->pos++;
    return 0;
}

static void test_memory_packing(void **state)
{
    model m = {0};
    rng_state = 17;
    list *l = build(&m, 100000, 0);
    size_t plain = list_memory(l);
    assert_true(plain / 100000 <= 34);
    assert_int_equal(list_contains(l, "absent", 6), 0);
    size_t indexed = list_memory(l);
    assert_true(indexed > plain);
    assert_true(indexed / 100000 <= 50);
    /* Random removals of 90%: merging must keep leaves reasonably full. The lines are
     * unique and ascending, so what is left must still ascend. */
    for (size_t n = 100000; n > 10000; n--)
        assert_int_equal(list_remove(l, rnd_below(n)), 0);
    assert_true(list_memory(l) / 10000 <= 120);
    struct ascend a = {l, 0, -1};
    assert_int_equal(list_foreach(l, ascending, &a), 0);
    assert_int_equal(a.pos, 10000);
    /* A clone keeps the dead slots of freed leaves; its index is built across them. */
    list *c = list_clone(l);
    assert_non_null(c);
    a.l = c;
    a.pos = 0;
    a.prev = -1;
    assert_int_equal(list_foreach(c, ascending, &a), 0);
    assert_int_equal(list_scan(c, stop_at, "nope"), -1);
    list_free(c);
    list_free(l);
    m_free(&m);
}

/* Short lines seal leaves by line count and size their successors small; a band of
 * longer lines after them makes merges that must grow a small leaf. */
static void test_short_lines(void **state)
{
    list *l = list_create();
    model m = {0};
    char buf[64];
    rng_state = 19;
    for (size_t i = 0; i < 60000; i++) {
        size_t len = i < 20000 || i >= 40000 ? 2 : 30 + i % 11;
        memset(buf, 'a' + (int)(i % 26), len);
        buf[0] = (char)(i >> 8);
        buf[1] = (char)i;
        assert_int_equal(list_push_back(l, buf, len), 0);
        m_insert(&m, m.n, buf, len);
    }
    assert_true(list_memory(l) / 20000 <= 8 + 41);
    /* Short, long, short: remove around both band edges, which move as lines go. */
    size_t edge1 = 20000, edge2 = 40000;
    for (size_t i = 0; i < 1400; i++) {
        size_t pos = (i % 2 ? edge2 : edge1) - 400 + rnd_below(800);
        edge1 -= pos < edge1;
        edge2 -= pos < edge2;
        assert_int_equal(list_remove(l, pos), 0);
        m_remove(&m, pos);
        if (i == 300)
            check_find(l, &m, m.v[7].s, m.v[7].len);
    }
    check(l, &m);
    for (size_t i = 0; i < m.n; i += 101)
        check_find(l, &m, m.v[i].s, m.v[i].len);
    list_free(l);
    m_free(&m);

    /* The first leaf stays small; long lines pushed before it merge into it. */
    l = list_create();
    for (size_t i = 0; i < 3300; i++) {
        size_t len = i < 300 ? 2 : 30 + i % 11;
        memset(buf, 'a' + (int)(i % 26), len);
        buf[0] = (char)(i >> 8);
        buf[1] = (char)i;
        assert_int_equal(i < 300 ? list_push_back(l, buf, len) : list_push_front(l, buf, len),
                         0);
        m_insert(&m, i < 300 ? m.n : 0, buf, len);
    }
    assert_int_equal(list_contains(l, buf, 2), 0);
    for (size_t i = 0; i < 400; i++) {
        size_t pos = m.n - 300 - 100 + rnd_below(100 + 300 - i / 2);
        assert_int_equal(list_remove(l, pos), 0);
        m_remove(&m, pos);
    }
    check(l, &m);
    for (size_t i = 0; i < m.n; i += 11)
        check_find(l, &m, m.v[i].s, m.v[i].len);
    list_free(l);
    m_free(&m);
}

/* ---- allocation failures --------------------------------------------------------------- */

static long fail_countdown = -1;

static void *failing_malloc(size_t n)
{
    if (fail_countdown == 0)
        return NULL;
    if (fail_countdown > 0)
        fail_countdown--;
    return malloc(n);
}

static void *failing_realloc(void *p, size_t n)
{
    if (fail_countdown == 0)
        return NULL;
    if (fail_countdown > 0)
        fail_countdown--;
    return realloc(p, n);
}

static size_t (*real_take)(void **, size_t);

static size_t failing_take(void **out, size_t n)
{
    if (fail_countdown == 0)
        return 0;
    if (fail_countdown > 0)
        fail_countdown--;
    return real_take(out, n);
}

/* Every allocation seam of the engine fails on the countdown, or none does. */
static void fail_on(void)
{
    if (!real_take)
        real_take = leaf_take_fn;
    alloc_malloc_fn = failing_malloc;
    alloc_realloc_fn = failing_realloc;
    leaf_take_fn = failing_take;
}

static void fail_off(void)
{
    alloc_malloc_fn = malloc;
    alloc_realloc_fn = realloc;
    if (real_take)
        leaf_take_fn = real_take;
}

/* Runs op with the k-th allocation failing, for k = 0, 1, ... until it succeeds: each
 * failure must report -1 and leave the list as it was. */
static void enomem_op(list *l, model *m, int (*op)(list *, model *, int))
{
    fail_on();
    for (long k = 0;; k++) {
        fail_countdown = k;
        int r = op(l, m, 0);
        fail_countdown = -1;
        if (r == 0)
            break;
        assert_int_equal(r, -1);
        assert_int_equal(list_length(l), m->n);
        if (m->n) {
            check_get(l, m, 0);
            check_get(l, m, m->n / 3);
            check_get(l, m, m->n - 1);
        }
    }
    fail_off();
    op(l, m, 1);
}

/* Lines long enough to need many leaves, so every table grows during the test. */
static const char fresh[] = "fresh-line-0123456789012345678901234567890123456789"
                            "012345678901234567890123456789012345678901234567";

static int op_push_back(list *l, model *m, int commit)
{
    if (commit) {
        m_insert(m, m->n, fresh, sizeof fresh - 1);
        return 0;
    }
    return list_push_back(l, fresh, sizeof fresh - 1);
}

static int op_push_front(list *l, model *m, int commit)
{
    if (commit) {
        m_insert(m, 0, fresh + 1, sizeof fresh - 2);
        return 0;
    }
    return list_push_front(l, fresh + 1, sizeof fresh - 2);
}

static int op_move(list *l, model *m, int commit)
{
    if (commit) {
        m_move_to_back(m, m->n / 3);
        return 0;
    }
    return list_move_to_back(l, m->n / 3);
}

static int op_find(list *l, model *m, int commit)
{
    if (commit)
        return 0;
    ssize_t r = list_find_equal(l, m->v[m->n / 2].s, m->v[m->n / 2].len);
    if (r == -2)
        return -1;
    assert_int_equal(r, m_find(m, m->v[m->n / 2].s, m->v[m->n / 2].len));
    return 0;
}

static int op_contains(list *l, model *m, int commit)
{
    if (commit)
        return 0;
    int r = list_contains(l, m->v[0].s, m->v[0].len);
    if (r < 0)
        return -1;
    assert_int_equal(r, 1);
    return 0;
}

static void test_enomem(void **state)
{
    fail_countdown = 0;
    alloc_malloc_fn = failing_malloc;
    assert_null(list_create());
    alloc_malloc_fn = malloc;
    fail_countdown = -1;

    for (int round = 0; round < 2; round++) {
        model m = {0};
        rng_state = 18;
        list *l = list_create();
        /* Grow through every size class so leaf, slot, table and index growth all fail. */
        for (size_t i = 0; i < 3000; i++) {
            enomem_op(l, &m, i % 4 ? op_push_back : op_push_front);
            if (i % 5 == 0)
                enomem_op(l, &m, op_move);
            if (round == 1 && i == 100)
                enomem_op(l, &m, op_find);
            if (i % 50 == 0)
                check(l, &m);
        }
        fail_on();
        for (long k = 0; k < 200; k++) {
            fail_countdown = k;
            list *c = list_clone(l);
            fail_countdown = -1;
            if (c) {
                /* The clone's first pushes move its end leaves out of the shared slab. */
                model cm = m_copy(&m);
                fail_off();
                check(c, &cm);
                for (int i = 0; i < 4; i++)
                    enomem_op(c, &cm, i % 2 ? op_push_back : op_push_front);
                enomem_op(c, &cm, round ? op_find : op_contains);
                check(c, &cm);
                list_free(c);
                m_free(&cm);
                break;
            }
        }
        fail_off();
        list_free(l);
        m_free(&m);
    }
}

/* ---- lists and the shared leaf pool ---- */

static struct leafpool_stats pool_stats(leafpool *p)
{
    struct leafpool_stats st;
    leafpool_stats(p, &st);
    return st;
}

/* The engine's standard leaves come from the shared pool, and all go back with the list. */
static void test_pool_lists(void **state)
{
    leafpool *sp = leafpool_shared();
    size_t before = pool_stats(sp).slots_used;
    model m = {0};
    if (LEAFPOOL_ASAN) {
        /* Under ASan leaves come from malloc, for its redzones: the pool stays unused. */
        list *l = build(&m, 20000, 1);
        assert_int_equal(pool_stats(sp).slots_used, before);
        check(l, &m);
        list_free(l);
        m_free(&m);
        return;
    }
    list *l = build(&m, 200000, 1);
    size_t during = pool_stats(sp).slots_used - before;
    /* ~140 lines per leaf, and a list's stash of at most LEAF_STASH free slots. */
    assert_true(during >= 200000 / 150 && during <= 200000 / 120 + LEAF_STASH);
    list *c = list_clone(l);
    for (size_t i = 0; i < 150000; i++) {
        size_t pos = rnd_below(m.n);
        assert_int_equal(list_remove(l, pos), 0);
        m_remove(&m, pos);
    }
    assert_true(pool_stats(sp).slots_used - before < during / 2);
    check(l, &m);
    list_free(l);
    list_free(c);
    assert_int_equal(pool_stats(sp).slots_used, before);
    m_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_single),
        cmocka_unit_test(test_random_small_no_index),
        cmocka_unit_test(test_random_small_index_first),
        cmocka_unit_test(test_random_index_midway),
        cmocka_unit_test(test_random_tiny),
        cmocka_unit_test(test_1k),
        cmocka_unit_test(test_100k),
        cmocka_unit_test(test_1m),
        cmocka_unit_test(test_duplicates_first_occurrence),
        cmocka_unit_test(test_nul_and_big_lines),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_rotation_order),
        cmocka_unit_test(test_clone_independent),
        cmocka_unit_test(test_memory_packing),
        cmocka_unit_test(test_short_lines),
        cmocka_unit_test(test_enomem),
        cmocka_unit_test(test_pool_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
