/* SPDX-License-Identifier: Apache-2.0 */
/* test_notify.c - systemd readiness (Type=notify): READY=1 once the port answers and the
 * journal is recovered, STOPPING=1 on SIGTERM, over a path or an abstract socket. */
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

/* Binds a datagram socket at name ('@' = abstract namespace) and points $NOTIFY_SOCKET
 * at it, as systemd does for a Type=notify service. */
static int notify_listen(const char *name)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t n = strlen(name);
    memcpy(sa.sun_path, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    else
        len++;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
    assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
    return fd;
}

/* The next datagram on fd, within 10 s, into out; the test fails without one. */
static void notify_recv(int fd, char *out, size_t outlen)
{
    struct pollfd p = {fd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 10000), 1);
    ssize_t n = recv(fd, out, outlen - 1, 0);
    assert_true(n > 0);
    out[n] = '\0';
}

static void expect_body(int port, const char *target, const char *payload)
{
    http_reply r;
    char want[1024];
    page_ok(want, sizeof want, payload);
    assert_int_equal(http_get(port, target, &r), 0);
    assert_string_equal(r.body, want);
    http_reply_free(&r);
}

static void test_ready_then_stopping(void **state)
{
    daemon_proc d;
    char msg[256], sock[400];
    assert_int_equal(td_mkdirs(&d), 0);
    const char *const journal[] = {"--journal=on", NULL};
    /* A first run leaves a journal to recover. */
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(td_start(&d, journal), 0);
    expect_body(d.port, "/sts/ADD?FILENAME=kept.csv&LINE=x1", "");
    assert_int_equal(td_stop(&d, 0), 0);

    snprintf(sock, sizeof sock, "%s/notify", d.dir);
    int fd = notify_listen(sock);
    assert_int_equal(td_start(&d, journal), 0);
    notify_recv(fd, msg, sizeof msg);
    assert_string_equal(msg, "READY=1");
    /* Ready means serving, with the recovered lists. */
    expect_body(d.port, "/sts/LENGTH?FILENAME=kept.csv", "1");
    assert_int_equal(kill(d.pid, SIGTERM), 0);
    notify_recv(fd, msg, sizeof msg);
    assert_string_equal(msg, "STOPPING=1");
    assert_int_equal(td_wait(&d, 10000), 0);
    close(fd);
    unsetenv("NOTIFY_SOCKET");
    td_cleanup(&d);
}

static void test_abstract_socket(void **state)
{
    daemon_proc d;
    char msg[256], sock[64];
    assert_int_equal(td_mkdirs(&d), 0);
    snprintf(sock, sizeof sock, "@stsd-test-notify-%d", (int)getpid());
    int fd = notify_listen(sock);
    assert_int_equal(td_start(&d, NULL), 0);
    notify_recv(fd, msg, sizeof msg);
    assert_string_equal(msg, "READY=1");
    assert_int_equal(td_stop(&d, 0), 0);
    notify_recv(fd, msg, sizeof msg);
    assert_string_equal(msg, "STOPPING=1");
    close(fd);
    unsetenv("NOTIFY_SOCKET");
    td_cleanup(&d);
}

/* A socket that cannot be reached is said in the log; the server runs all the same. */
static void test_unreachable_socket(void **state)
{
    daemon_proc d;
    char path[400];
    assert_int_equal(td_mkdirs(&d), 0);
    snprintf(path, sizeof path, "%s/nobody-listens", d.dir);
    assert_int_equal(setenv("NOTIFY_SOCKET", path, 1), 0);
    assert_int_equal(td_start(&d, NULL), 0);
    expect_body(d.port, "/sts/ADD?FILENAME=a.csv&LINE=x", "");
    assert_int_equal(td_stop(&d, 0), 0);
    unsetenv("NOTIFY_SOCKET");
    snprintf(path, sizeof path, "%s/stsd.log", d.dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char log[8192];
    size_t n = fread(log, 1, sizeof log - 1, f);
    fclose(f);
    log[n] = '\0';
    assert_non_null(strstr(log, "cannot tell systemd that stsd is ready"));
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_then_stopping),
        cmocka_unit_test(test_abstract_socket),
        cmocka_unit_test(test_unreachable_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
