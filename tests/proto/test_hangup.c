/* SPDX-License-Identifier: Apache-2.0 */
/* test_hangup.c - issue 35: parked requests whose deadline fires while their client hangs
 * up. Every resume is held open 40 ms after libmicrohttpd's (tests/proto/slowresume.c),
 * so the connection is answered, closed and its request freed while the deadline thread
 * is still inside the resume: each round of clients hits that window every time. A stsd
 * that touches the freed request dies under ASan (or reports under TSan); a sound one
 * answers every client that stays exactly once, and exits 0. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#define HANGUP_PAD 70000       /* a body over 64 KiB: its request is freed, not pooled */
#define HANGUP_TIMEOUT_MS 150
#define HANGUP_ROUNDS 6

/* What a client does around its deadline. */
typedef enum hangup_kind {
    STAY,                      /* reads its answer */
    LEAVE_BEFORE,              /* closes 60 ms before the deadline */
    LEAVE_AT,                  /* closes at the deadline */
    LEAVE_AFTER,               /* closes 20 ms after it, reading nothing */
} hangup_kind;

typedef struct hangup_client {
    int port;
    const char *cmd;           /* command and its parameters, urlencoded */
    hangup_kind kind;
    int answers;               /* STAY: status lines read until the close */
    int status;                /* STAY: the first answer's status */
    char body[256];
} hangup_client;

/* POSTs c's command with the padding, Connection: close. Returns the socket or -1. */
static int send_parked(const hangup_client *c)
{
    const char *q = strchr(c->cmd, '?');
    size_t blen = strlen(q + 1) + 5 + HANGUP_PAD;
    char *req = malloc(blen + 512);
    if (!req)
        return -1;
    int h = snprintf(req, 512, "POST /sts/%.*s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n"
                     "Content-Length: %zu\r\n\r\n%s&PAD=", (int)(q - c->cmd), c->cmd, blen,
                     q + 1);
    memset(req + h, 'p', HANGUP_PAD);
    int fd = td_connect(c->port);
    if (fd >= 0 && td_send_all(fd, req, (size_t)h + HANGUP_PAD) != 0) {
        close(fd);
        fd = -1;
    }
    free(req);
    return fd;
}

/* Reads until the server closes (up to 5 s): counts the answers, keeps the first. */
static void read_answers(int fd, hangup_client *c)
{
    char buf[8192];
    size_t have = 0;
    for (int waited = 0; waited < 5000 && have < sizeof buf - 1;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) == 0) {
            waited += 100;
            continue;
        }
        ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, 0);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    buf[have] = '\0';
    for (const char *p = buf; (p = strstr(p, "HTTP/1.1 ")); p++)
        c->answers++;
    if (c->answers > 0)
        c->status = atoi(buf + 9);
    const char *b = strstr(buf, "\r\n\r\n");
    snprintf(c->body, sizeof c->body, "%s", b ? b + 4 : "");
}

static void *client_main(void *arg)
{
    hangup_client *c = arg;
    int fd = send_parked(c);
    if (fd < 0) {
        c->answers = -1;
        return NULL;
    }
    switch (c->kind) {
    case STAY:
        read_answers(fd, c);
        break;
    case LEAVE_BEFORE:
        td_sleep_ms(HANGUP_TIMEOUT_MS - 60);
        break;
    case LEAVE_AT:
        td_sleep_ms(HANGUP_TIMEOUT_MS);
        break;
    case LEAVE_AFTER:
        td_sleep_ms(HANGUP_TIMEOUT_MS + 20);
        break;
    }
    close(fd);
    return NULL;
}

/* Where a sanitizer's report begins in d's log, or the log's end. */
static const char *sanitizer_report(const daemon_proc *d)
{
    const char *log = td_log(d);
    const char *e = strstr(log, "ERROR: ");
    if (!e)
        e = strstr(log, "WARNING: ThreadSanitizer");
    return e ? e : log + (strlen(log) > 600 ? strlen(log) - 600 : 0);
}

/* The waits of every kind stsd parks, each ending at its 0.15 s deadline. */
static const char *const parked_cmds[] = {
    "READ?FILENAME=empty.csv&TIMEOUT=0.15",
    "READMULTI?FILENAME=empty.csv&READ_MODE=FIRST&KEEP=FALSE&TIMEOUT=0.15",
    "FIND?FILENAME=empty.csv&LINE=x&TIMEOUT=0.15",
    "BARRIER?NAME=b&PARTIES=1000&TIMEOUT=0.15",
    "ONCE?NAME=o&TIMEOUT=0.15",
    "GET?NAME=absent&VERSION=0&TIMEOUT=0.15",
    "INCR?NAME=n&BY=1&MAX=0&TIMEOUT=0.15",
};
#define N_CMDS (sizeof parked_cmds / sizeof parked_cmds[0])

static void test_deadline_as_clients_hang_up(void **state)
{
    daemon_proc d;
    http_reply r;
    const char *args[] = {"-DjmeterPlugin.sts.initFileAtStartup=empty.csv", NULL};
    assert_int_equal(td_mkdirs(&d), 0);
    assert_int_equal(td_write_file(&d, "empty.csv", "", 0), 0);
    setenv("STSD_SLOW_RESUME_MS", "40", 1);
    int started = td_start_preload(&d, "libslowresume.so", args);
    unsetenv("STSD_SLOW_RESUME_MS");
    assert_int_equal(started, 0);
    /* ONCE o runs for the whole test: the others wait on it. */
    assert_int_equal(http_get(d.port, "/sts/ONCE?NAME=o&LEASE=600", &r), 0);
    assert_non_null(strstr(r.body, "RUN"));
    http_reply_free(&r);

    int stayed = 0;
    for (int round = 0; round < HANGUP_ROUNDS; round++) {
        hangup_client c[N_CMDS * 2];
        pthread_t t[N_CMDS * 2];
        size_t n = 0;
        for (size_t i = 0; i < N_CMDS; i++) {
            /* Every command once staying, once leaving in this round's way. */
            hangup_kind leave = (hangup_kind)(1 + (round + (int)i) % 3);
            c[n] = (hangup_client){.port = d.port, .cmd = parked_cmds[i], .kind = STAY};
            c[n + 1] = (hangup_client){.port = d.port, .cmd = parked_cmds[i], .kind = leave};
            n += 2;
        }
        for (size_t i = 0; i < n; i++)
            assert_int_equal(pthread_create(&t[i], NULL, client_main, &c[i]), 0);
        for (size_t i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        for (size_t i = 0; i < n; i++) {
            if (c[i].kind != STAY)
                continue;
            stayed++;
            if (c[i].answers != 1)
                fail_msg("round %d, %s: %d answers (want exactly 1); stsd's log: %.600s",
                         round, c[i].cmd, c[i].answers, sanitizer_report(&d));
            /* Each wait ended at its deadline: a KO (200 for the reference's READ and
             * READMULTI and FIND, 408 for the others), or GET's answer at its timeout. */
            assert_true(c[i].status == 200 || c[i].status == 408 || c[i].status == 404);
        }
    }
    assert_int_equal(stayed, HANGUP_ROUNDS * (int)N_CMDS);
    /* Nothing was taken by a client that left: the lists and the counter are as before. */
    assert_int_equal(http_get(d.port, "/sts/LENGTH?FILENAME=empty.csv", &r), 0);
    assert_non_null(strstr(r.body, "<body>0</body>"));
    http_reply_free(&r);
    assert_int_equal(http_get(d.port, "/sts/GET?NAME=n", &r), 0);
    assert_null(strstr(r.body, "<body>1"));
    http_reply_free(&r);
    /* A sanitizer's report ends stsd with a status of its own. */
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline_as_clients_hang_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
