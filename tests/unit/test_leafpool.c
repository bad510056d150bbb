/* SPDX-License-Identifier: Apache-2.0 */
/* test_leafpool.c - the leaf pool: reuse of freed slots, release beyond the reserve, the
 * grace period and prefaulting, many threads at once, and mmap failures. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cmocka.h>

#include "list/leafpool.h"

#define PER_CHUNK (LEAFPOOL_CHUNK / LEAFPOOL_SLOT - 1)

static struct leafpool_stats pool_stats(leafpool *p)
{
    struct leafpool_stats st;
    leafpool_stats(p, &st);
    return st;
}

static leafpool *pool_new(size_t reserve_chunks, unsigned grace_ms, int prefault)
{
    struct leafpool_opts o = {reserve_chunks * LEAFPOOL_CHUNK, grace_ms, prefault};
    leafpool *p = leafpool_create(&o);
    assert_non_null(p);
    return p;
}

/* Takes exactly n slots, each checked to be a whole, aligned, writable slot of its own. */
static void **take_n(leafpool *p, size_t n)
{
    void **v = malloc(n * sizeof *v);
    assert_non_null(v);
    assert_int_equal(leafpool_take(p, v, n), n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal((uintptr_t)v[i] % 16, 0);
        memset(v[i], (int)(i & 0xff), LEAFPOOL_SLOT);
    }
    return v;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static void test_pool_reuse(void **state)
{
    leafpool *p = pool_new(1, 0, 0);
    void **a = take_n(p, 100), **b;
    assert_int_equal(pool_stats(p).chunks, 1);
    assert_int_equal(pool_stats(p).slots_used, 100);
    /* Given back, the same slots come out again, from the same resident chunk. */
    leafpool_give(p, a + 50, 50);
    b = take_n(p, 50);
    qsort(a + 50, 50, sizeof *a, cmp_ptr);
    qsort(b, 50, sizeof *b, cmp_ptr);
    assert_memory_equal(a + 50, b, 50 * sizeof *a);
    for (size_t i = 1; i < 50; i++)
        assert_true(b[i] != b[i - 1]);
    assert_int_equal(pool_stats(p).chunks, 1);
    leafpool_give(p, a, 50);
    leafpool_give(p, b, 50);
    assert_int_equal(pool_stats(p).slots_used, 0);
    assert_int_equal(pool_stats(p).empty_chunks, 1);
    /* A whole chunk's worth plus one needs a second chunk. */
    void **c = take_n(p, PER_CHUNK + 1);
    assert_int_equal(pool_stats(p).chunks, 2);
    leafpool_give(p, c, PER_CHUNK + 1);
    free(a);
    free(b);
    free(c);
    leafpool_destroy(p);
}

static void test_pool_release_beyond_reserve(void **state)
{
    leafpool *p = pool_new(2, 0, 0);
    size_t n = 12 * PER_CHUNK;
    void **v = take_n(p, n);
    assert_int_equal(pool_stats(p).chunks, 12);
    /* Free 4 whole chunks: in use 8, so the reserve is max(2, 8/4) = 2 empty chunks. */
    leafpool_give(p, v + 8 * PER_CHUNK, 4 * PER_CHUNK);
    struct leafpool_stats st = pool_stats(p);
    assert_int_equal(st.empty_chunks, 2);
    assert_int_equal(st.chunks, 10);
    assert_int_equal(st.peak_chunks, 12);
    /* Half of each remaining chunk: no chunk gets empty, nothing goes. */
    for (size_t c = 0; c < 8; c++)
        leafpool_give(p, v + c * PER_CHUNK, PER_CHUNK / 2);
    assert_int_equal(pool_stats(p).chunks, 10);
    /* The rest: only the floor of 2 empty chunks stays mapped. */
    for (size_t c = 0; c < 8; c++)
        leafpool_give(p, v + c * PER_CHUNK + PER_CHUNK / 2, PER_CHUNK - PER_CHUNK / 2);
    st = pool_stats(p);
    assert_int_equal(st.slots_used, 0);
    assert_int_equal(st.chunks, 2);
    assert_int_equal(st.empty_chunks, 2);
    free(v);
    leafpool_destroy(p);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits up to 5 s for p to hold want chunks. */
static int wait_chunks(leafpool *p, size_t want)
{
    for (double t0 = now_s(); now_s() - t0 < 5;) {
        if (pool_stats(p).chunks == want)
            return 1;
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void test_pool_grace_and_prefault(void **state)
{
    /* Beyond the reserve, freed chunks stay for the grace period, then go. */
    leafpool *p = pool_new(0, 300, 0);
    void **v = take_n(p, 5 * PER_CHUNK);
    double t0 = now_s();
    leafpool_give(p, v, 5 * PER_CHUNK);
    if (now_s() - t0 < 0.2)
        assert_int_equal(pool_stats(p).chunks, 5);
    /* Taken again meanwhile, they fault nothing in: still the same 5 chunks. */
    free(v);
    v = take_n(p, 5 * PER_CHUNK);
    assert_int_equal(pool_stats(p).peak_chunks, 5);
    leafpool_give(p, v, 5 * PER_CHUNK);
    assert_true(wait_chunks(p, 0));
    free(v);
    leafpool_destroy(p);

    /* A pool grown to 16 MiB gets chunks faulted in ahead of its takers, then stops. */
    p = pool_new(64, 0, 1);
    v = take_n(p, 16 * PER_CHUNK);
    for (t0 = now_s(); pool_stats(p).empty_chunks == 0 && now_s() - t0 < 5;)
        sched_yield();
    struct leafpool_stats st = pool_stats(p);
    assert_true(st.empty_chunks >= 1);
    assert_true(st.empty_chunks <= 8);
    leafpool_give(p, v, 16 * PER_CHUNK);
    free(v);
    leafpool_destroy(p); /* joins the pool's thread */
}

struct churn {
    leafpool *p;
    unsigned id;
};

/* Takes and gives random batches, each slot stamped with its owner: a slot handed to two
 * threads at once would show up as a stamp overwritten. */
static void *churn_main(void *arg)
{
    struct churn *c = arg;
    enum { HELD = 3000 };
    static __thread void *held[HELD];
    size_t n = 0;
    uint64_t r = 0x9e3779b97f4a7c15ull * (c->id + 1);
    for (int round = 0; round < 400; round++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        size_t k = 1 + r % 64;
        if ((r >> 20) % 3 && n + k <= HELD) {
            size_t got = leafpool_take(c->p, held + n, k);
            if (got != k)
                return (void *)1;
            for (size_t i = n; i < n + k; i++) {
                memset(held[i], (int)c->id, LEAFPOOL_SLOT);
                memcpy(held[i], &held[i], sizeof held[i]);
            }
            n += k;
        } else {
            k = k < n ? k : n;
            for (size_t i = n - k; i < n; i++) {
                unsigned char *s = held[i];
                if (memcmp(s, &held[i], sizeof held[i]) != 0 ||
                    s[LEAFPOOL_SLOT - 1] != (unsigned char)c->id)
                    return (void *)2;
            }
            leafpool_give(c->p, held + n - k, k);
            n -= k;
        }
    }
    leafpool_give(c->p, held, n);
    return NULL;
}

static void test_pool_threads(void **state)
{
    enum { THREADS = 8 };
    for (int prefault = 0; prefault < 2; prefault++) {
        leafpool *p = pool_new(1, prefault ? 50 : 0, prefault);
        pthread_t t[THREADS];
        struct churn c[THREADS];
        for (unsigned i = 0; i < THREADS; i++) {
            c[i] = (struct churn){p, i + 1};
            assert_int_equal(pthread_create(&t[i], NULL, churn_main, &c[i]), 0);
        }
        for (unsigned i = 0; i < THREADS; i++) {
            void *rc;
            assert_int_equal(pthread_join(t[i], &rc), 0);
            assert_null(rc);
        }
        struct leafpool_stats st = pool_stats(p);
        assert_int_equal(st.slots_used, 0);
        assert_int_equal(st.chunks, st.empty_chunks);
        leafpool_destroy(p);
    }
}

static long mmap_countdown = -1;

static void *failing_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
    if (mmap_countdown == 0)
        return MAP_FAILED;
    if (mmap_countdown > 0)
        mmap_countdown--;
    return mmap(a, len, prot, flags, fd, off);
}

static void test_pool_enomem(void **state)
{
    leafpool *p = pool_new(0, 0, 0);
    void *v[PER_CHUNK + 8];
    leafpool_mmap_fn = failing_mmap;
    mmap_countdown = 0;
    assert_int_equal(leafpool_take(p, v, 4), 0);
    /* One chunk mapped, the second refused: a partial batch, then nothing. */
    mmap_countdown = 1;
    assert_int_equal(leafpool_take(p, v, PER_CHUNK + 8), PER_CHUNK);
    assert_int_equal(leafpool_take(p, v + PER_CHUNK, 8), 0);
    assert_int_equal(pool_stats(p).slots_used, PER_CHUNK);
    /* Given back slots come out again without the kernel's help. */
    leafpool_give(p, v + 10, 8);
    assert_int_equal(leafpool_take(p, v + 10, 8), 8);
    mmap_countdown = -1;
    leafpool_mmap_fn = mmap;
    assert_int_equal(leafpool_take(p, v + PER_CHUNK, 8), 8);
    leafpool_give(p, v, PER_CHUNK + 8);
    assert_int_equal(pool_stats(p).chunks, 0);
    leafpool_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_reuse),
        cmocka_unit_test(test_pool_release_beyond_reserve),
        cmocka_unit_test(test_pool_grace_and_prefault),
        cmocka_unit_test(test_pool_threads),
        cmocka_unit_test(test_pool_enomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
