/* SPDX-License-Identifier: Apache-2.0 */
/* test_park.c - parked requests: completion from any thread, deadlines, shutdown, and
 * exactly one ending whatever the race. A fake "connection" counts its resumes. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "hold/park.h"

typedef struct fake_conn {
    atomic_int resumed;
} fake_conn;

static void fake_resume(void *conn, void *arg)
{
    (void)arg;
    atomic_fetch_add(&((fake_conn *)conn)->resumed, 1);
}

/* What an expire callback saw. */
typedef struct expiry {
    atomic_int calls;
    park_why why;
    int64_t at;
} expiry;

static void expire_answer(park_slot *s, park_why why, cmd_result *r, void *ctx)
{
    expiry *e = ctx;
    e->why = why;
    e->at = clock_now_ms();
    atomic_fetch_add(&e->calls, 1);
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    buf_puts(&r->text, why == PARK_TIMEOUT ? "timeout" : "shutdown");
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* Waits up to 2 s for conn to be resumed n times. */
static int wait_resumed(fake_conn *c, int n)
{
    for (int i = 0; i < 2000 && atomic_load(&c->resumed) < n; i++)
        sleep_ms(1);
    return atomic_load(&c->resumed);
}

/* The edge's last step: takes the answer and drops its reference. */
static void take_answer(park_slot *s, cmd_result *out)
{
    cmd_result *r = park_take(s);
    buf_clear(&out->text);
    out->kind = r->kind;
    buf_append(&out->text, r->text.data ? r->text.data : "", r->text.len);
    park_unref(s);
}

static void test_complete_from_other_thread_after_arm(void **state)
{
    buf err = BUF_INIT;
    park_lot *lot = park_lot_create(&err);
    assert_non_null(lot);
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT}, answer = {.kind = REPLY_OK, .text = BUF_INIT};
    buf_puts(&r.text, "built by the handler");
    park_slot *s = park_new(lot, &r, 0, NULL, NULL);
    assert_non_null(s);
    assert_int_equal(r.text.len, 0);              /* the slot took the handler's result */
    assert_int_equal(park_lot_count(lot), 1);
    fake_conn c = {0};
    park_arm(s, -1, fake_resume, &c, NULL);
    assert_int_equal(atomic_load(&c.resumed), 0);

    cmd_result mine = {.kind = REPLY_LINES, .text = BUF_INIT};
    buf_puts(&mine.text, "the real answer");
    assert_int_equal(park_complete(s, &mine), 1);
    assert_string_equal(mine.text.data, "built by the handler");   /* swapped back */
    assert_int_equal(wait_resumed(&c, 1), 1);
    assert_int_equal(park_complete(s, NULL), 0);  /* a second ending loses */
    assert_int_equal(park_claim(s), 0);
    assert_int_equal(park_lot_count(lot), 0);
    take_answer(s, &answer);
    assert_int_equal(answer.kind, REPLY_LINES);
    assert_string_equal(answer.text.data, "the real answer");
    park_unref(s);                                 /* the handler's reference */
    park_lot_free(lot);
    buf_free(&r.text);
    buf_free(&mine.text);
    buf_free(&answer.text);
    buf_free(&err);
}

static void test_completed_before_arm_resumes_at_arm(void **state)
{
    buf err = BUF_INIT;
    park_lot *lot = park_lot_create(&err);
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT}, answer = {.kind = REPLY_OK, .text = BUF_INIT};
    buf_puts(&r.text, "kept");
    park_slot *s = park_new(lot, &r, 0, NULL, NULL);
    assert_int_equal(park_complete(s, NULL), 1);   /* NULL: the handler's result stands */
    fake_conn c = {0};
    park_arm(s, -1, fake_resume, &c, NULL);
    assert_int_equal(atomic_load(&c.resumed), 1);
    take_answer(s, &answer);
    assert_string_equal(answer.text.data, "kept");
    park_unref(s);
    park_lot_free(lot);
    buf_free(&r.text);
    buf_free(&answer.text);
    buf_free(&err);
}

static void test_deadline_expires_not_early(void **state)
{
    buf err = BUF_INIT;
    park_lot *lot = park_lot_create(&err);
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT}, answer = {.kind = REPLY_OK, .text = BUF_INIT};
    expiry e = {0};
    int64_t t0 = clock_now_ms();
    /* Deadlines out of order: the heap must serve the earliest first. */
    park_slot *late = park_new(lot, &r, t0 + 400, expire_answer, &e);
    park_slot *s = park_new(lot, &r, t0 + 150, expire_answer, &e);
    fake_conn c = {0}, cl = {0};
    park_arm(s, -1, fake_resume, &c, NULL);
    park_arm(late, -1, fake_resume, &cl, NULL);
    assert_int_equal(wait_resumed(&c, 1), 1);
    assert_int_equal(atomic_load(&cl.resumed), 0);
    assert_int_equal(e.why, PARK_TIMEOUT);
    assert_true(e.at >= t0 + 150);
    assert_true(e.at < t0 + 150 + 1000);    /* late only by scheduling */
    take_answer(s, &answer);
    assert_int_equal(answer.kind, REPLY_KO);
    assert_string_equal(answer.text.data, "timeout");
    assert_int_equal(park_complete(s, NULL), 0);
    /* The later one is still parked; completing it wins over its deadline. */
    assert_int_equal(park_complete(late, NULL), 1);
    assert_int_equal(wait_resumed(&cl, 1), 1);
    sleep_ms(300);
    assert_int_equal(atomic_load(&e.calls), 1);
    assert_int_equal(atomic_load(&cl.resumed), 1);
    park_unref(late);
    park_unref(late);
    park_unref(s);
    park_lot_free(lot);
    buf_free(&r.text);
    buf_free(&answer.text);
    buf_free(&err);
}

static void test_shutdown_answers_all_at_once(void **state)
{
    enum { N = 2000 };
    buf err = BUF_INIT;
    park_lot *lot = park_lot_create(&err);
    static park_slot *slots[N];
    static fake_conn conns[N];
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT};
    expiry e = {0};
    int64_t t0 = clock_now_ms();
    for (int i = 0; i < N; i++) {
        slots[i] = park_new(lot, &r, i % 2 ? t0 + 60000 : 0, expire_answer, &e);
        assert_non_null(slots[i]);
        park_arm(slots[i], -1, fake_resume, &conns[i], NULL);
    }
    /* One without a callback is left to its owner. */
    fake_conn owned = {0};
    park_slot *o = park_new(lot, &r, 0, NULL, NULL);
    park_arm(o, -1, fake_resume, &owned, NULL);
    park_lot_shutdown(lot);
    assert_true(clock_now_ms() - t0 < 1000);
    assert_int_equal(atomic_load(&e.calls), N);
    assert_int_equal(e.why, PARK_SHUTDOWN);
    for (int i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&conns[i].resumed), 1);
        park_unref(slots[i]);
        park_unref(slots[i]);
    }
    assert_int_equal(atomic_load(&owned.resumed), 0);
    assert_null(park_new(lot, &r, 0, expire_answer, &e));     /* refused once shut */
    assert_int_equal(park_complete(o, NULL), 1);
    assert_int_equal(atomic_load(&owned.resumed), 1);
    park_unref(o);
    park_unref(o);
    park_lot_free(lot);
    buf_free(&r.text);
    buf_free(&err);
}

/* Many threads race to end the same slots while their deadlines pass: each slot must be
 * ended (and resumed) exactly once. */
typedef struct racer {
    park_slot **slots;
    int n;
    atomic_int *wins;
} racer;

static void *race(void *arg)
{
    racer *rc = arg;
    for (int i = 0; i < rc->n; i++)
        if (park_complete(rc->slots[i], NULL))
            atomic_fetch_add(rc->wins, 1);
    return NULL;
}

static void test_races_end_each_slot_once(void **state)
{
    enum { N = 3000, T = 4 };
    buf err = BUF_INIT;
    park_lot *lot = park_lot_create(&err);
    static park_slot *slots[N];
    static fake_conn conns[N];
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT};
    expiry e = {0};
    atomic_int wins = 0;
    int64_t now = clock_now_ms();
    for (int i = 0; i < N; i++) {
        slots[i] = park_new(lot, &r, now + (i % 7), expire_answer, &e);
        assert_non_null(slots[i]);
        if (i % 2)
            park_arm(slots[i], -1, fake_resume, &conns[i], NULL);
    }
    pthread_t th[T];
    racer rc = {slots, N, &wins};
    for (int i = 0; i < T; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race, &rc), 0);
    for (int i = 0; i < N; i += 2)
        park_arm(slots[i], -1, fake_resume, &conns[i], NULL);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    park_lot_shutdown(lot);
    assert_int_equal(atomic_load(&wins) + atomic_load(&e.calls), N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(wait_resumed(&conns[i], 1), 1);
        park_unref(slots[i]);
        park_unref(slots[i]);
    }
    assert_int_equal(park_lot_count(lot), 0);
    park_lot_free(lot);
    buf_free(&r.text);
    buf_free(&err);
}

static void test_client_gone(void **state)
{
    buf err = BUF_INIT;
    park_lot *lot = park_lot_create(&err);
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT};
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    park_slot *s = park_new(lot, &r, 0, NULL, NULL);
    fake_conn c = {0};
    assert_int_equal(park_client_gone(s), 0);       /* not armed yet: assumed there */
    park_arm(s, sv[0], fake_resume, &c, NULL);
    assert_int_equal(park_client_gone(s), 0);
    assert_int_equal(write(sv[1], "x", 1), 1);       /* data pending: still there */
    assert_int_equal(park_client_gone(s), 0);
    close(sv[1]);
    assert_int_equal(park_client_gone(s), 0);        /* unread data comes first */
    char x;
    assert_int_equal(read(sv[0], &x, 1), 1);
    assert_int_equal(park_client_gone(s), 1);
    park_abandon(s);                                 /* the edge closes it */
    assert_int_equal(park_complete(s, NULL), 0);
    assert_int_equal(atomic_load(&c.resumed), 0);
    assert_int_equal(park_lot_count(lot), 0);
    park_unref(s);
    close(sv[0]);
    park_lot_free(lot);
    buf_free(&r.text);
    buf_free(&err);
}

/* A resume as libmicrohttpd's is: the connection may run (and its thread free the
 * request) as soon as it has started; the ender's thread only returns later. */
typedef struct slow_conn {
    atomic_int woken;          /* the resume has begun: the edge's thread may go on */
    atomic_int edge_done;      /* the edge took the answer, or gave the slot up */
    atomic_int done_during;    /* edge_done was seen set before the resume returned */
    atomic_int returned;       /* the resume has returned */
} slow_conn;

static void slow_resume(void *conn, void *arg)
{
    slow_conn *c = conn;
    (void)arg;
    atomic_store(&c->woken, 1);
    sleep_ms(60);
    if (atomic_load(&c->edge_done))
        atomic_store(&c->done_during, 1);
    atomic_store(&c->returned, 1);
}

typedef struct edge_job {
    park_slot *s;
    slow_conn *c;
    int abandon;               /* give the slot up (the server stops) instead of taking */
} edge_job;

static void *edge_main(void *arg)
{
    edge_job *j = arg;
    while (!atomic_load(&j->c->woken))
        sleep_ms(1);
    if (j->abandon) {
        park_abandon(j->s);
    } else {
        (void)park_take(j->s);
        park_unref(j->s);
    }
    atomic_store(&j->c->edge_done, 1);
    return NULL;
}

/* Issue 35: the deadline's resume and the edge's take (or abandon) of the same slot. The
 * edge must not go on, and free its request, while the resume is still running. */
static void deadline_resume_vs_edge(int abandon)
{
    buf err = BUF_INIT;
    park_lot *lot = park_lot_create(&err);
    assert_non_null(lot);
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT};
    expiry e = {0};
    park_slot *s = park_new(lot, &r, clock_now_ms() + 20, expire_answer, &e);
    assert_non_null(s);
    slow_conn c = {0};
    park_arm(s, -1, slow_resume, &c, NULL);
    edge_job j = {s, &c, abandon};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, edge_main, &j), 0);
    pthread_join(t, NULL);
    for (int i = 0; i < 2000 && !atomic_load(&c.returned); i++)
        sleep_ms(1);
    assert_int_equal(atomic_load(&c.returned), 1);
    assert_int_equal(atomic_load(&e.calls), 1);
    assert_int_equal(atomic_load(&c.done_during), 0);
    park_unref(s);                                   /* the handler's reference */
    park_lot_free(lot);
    buf_free(&r.text);
    buf_free(&err);
}

static void test_take_waits_for_the_resume(void **state)
{
    (void)state;
    deadline_resume_vs_edge(0);
}

static void test_abandon_waits_for_the_resume(void **state)
{
    (void)state;
    deadline_resume_vs_edge(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_complete_from_other_thread_after_arm),
        cmocka_unit_test(test_completed_before_arm_resumes_at_arm),
        cmocka_unit_test(test_deadline_expires_not_early),
        cmocka_unit_test(test_shutdown_answers_all_at_once),
        cmocka_unit_test(test_races_end_each_slot_once),
        cmocka_unit_test(test_client_gone),
        cmocka_unit_test(test_take_waits_for_the_resume),
        cmocka_unit_test(test_abandon_waits_for_the_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
