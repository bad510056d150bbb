/* SPDX-License-Identifier: Apache-2.0 */
/* test_heap.c - the deadline heap against a model: pushes, removals anywhere, the top. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/heap.h"

typedef struct item {
    char pad[3];              /* key and place at offsets other than 0 */
    int64_t when;
    uint32_t at;
    int in;                   /* the model: is it in the heap? */
} item;

#define N 2000

/* The least key among the items the model says are in, or NULL. */
static item *model_min(item *v, size_t n)
{
    item *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (v[i].in && (!best || v[i].when < best->when))
            best = &v[i];
    return best;
}

static void test_random_against_model(void **state)
{
    (void)state;
    static item v[N];
    heap h;
    heap_init(&h, offsetof(item, when), offsetof(item, at));
    assert_null(heap_top(&h));
    srand(7);
    size_t in = 0;
    for (int step = 0; step < 20000; step++) {
        item *it = &v[(size_t)rand() % N];
        if (!it->in) {
            it->when = rand() % 500;          /* many equal keys */
            assert_int_equal(heap_push(&h, it), 0);
            it->in = 1;
            in++;
        } else if (rand() % 3 == 0) {
            it->when = rand() % 500;          /* a deadline moved, either way */
            heap_moved(&h, it);
            assert_int_not_equal(it->at, HEAP_NONE);
        } else {
            heap_remove(&h, it);
            assert_int_equal(it->at, HEAP_NONE);
            it->in = 0;
            in--;
        }
        assert_int_equal(h.n, in);
        item *top = heap_top(&h), *want = model_min(v, N);
        if (!want)
            assert_null(top);
        else
            assert_true(top && top->when == want->when && top->in);
    }
    /* Removing or moving what is not in changes nothing. */
    for (size_t i = 0; i < N; i++)
        if (!v[i].in) {
            heap_remove(&h, &v[i]);
            heap_moved(&h, &v[i]);
            assert_int_equal(h.n, in);
            assert_int_equal(v[i].at, HEAP_NONE);
            break;
        }
    /* Draining by the top, or by popping, yields keys in order. */
    int64_t last = INT64_MIN;
    for (item *top; h.n > in / 2 && (top = heap_top(&h));) {
        assert_true(top->when >= last);
        last = top->when;
        heap_remove(&h, top);
        top->in = 0;
    }
    for (item *top; (top = heap_pop(&h));) {
        assert_true(top->when >= last);
        assert_int_equal(top->at, HEAP_NONE);
        last = top->when;
        top->in = 0;
    }
    assert_int_equal(h.n, 0);
    assert_null(heap_pop(&h));
    assert_null(model_min(v, N));
    heap_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
