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

static void fake_resume(void *conn)
{
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
    cmd_result *r = park_result(s);
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
    park_arm(s, -1, fake_resume, &c);
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
    park_arm(s, -1, fake_resume, &c);
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
    park_arm(s, -1, fake_resume, &c);
    park_arm(late, -1, fake_resume, &cl);
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
        park_arm(slots[i], -1, fake_resume, &conns[i]);
    }
    /* One without a callback is left to its owner. */
    fake_conn owned = {0};
    park_slot *o = park_new(lot, &r, 0, NULL, NULL);
    park_arm(o, -1, fake_resume, &owned);
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
            park_arm(slots[i], -1, fake_resume, &conns[i]);
    }
    pthread_t th[T];
    racer rc = {slots, N, &wins};
    for (int i = 0; i < T; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race, &rc), 0);
    for (int i = 0; i < N; i += 2)
        park_arm(slots[i], -1, fake_resume, &conns[i]);
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
    park_arm(s, sv[0], fake_resume, &c);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_complete_from_other_thread_after_arm),
        cmocka_unit_test(test_completed_before_arm_resumes_at_arm),
        cmocka_unit_test(test_deadline_expires_not_early),
        cmocka_unit_test(test_shutdown_answers_all_at_once),
        cmocka_unit_test(test_races_end_each_slot_once),
        cmocka_unit_test(test_client_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
