/* SPDX-License-Identifier: Apache-2.0 */
/* test_startup.c - a start a new user cannot trip (issue 32): the default bind answers on
 * IPv4 and IPv6 (127.0.0.1 and ::1) through one dual-stack socket, stsd.allow and
 * stsd.maxConnectionsPerIp still see an IPv4 client as IPv4 there, and a misspelt key
 * (-D or in a file) is named in a warning, or with --strict-keys stops the start before
 * the port is bound. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

/* A connected socket to addr text (IPv4 or IPv6) and port, or -1. */
static int connect_to(const char *addr, int port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        len = sizeof *a4;
    } else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        len = sizeof *a6;
    } else {
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* GET target from addr:port on a fresh connection; the whole answer (headers and body)
 * into out. Returns the bytes read: 0 when the server closed without a word, -1 when it
 * could not be reached. */
static int get_from(const char *addr, int port, const char *target, char *out, size_t cap)
{
    int fd = connect_to(addr, port);
    if (fd < 0)
        return -1;
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                     target);
    size_t have = 0;
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) == n)
        for (ssize_t r; have + 1 < cap && (r = recv(fd, out + have, cap - 1 - have, 0)) > 0;)
            have += (size_t)r;
    out[have] = '\0';
    close(fd);
    return (int)have;
}

/* ::1 must work here: without IPv6 the dual-stack cases cannot run (a skip, loud; under
 * CI=true tests/tally.sh fails it). */
static int have_ipv6_loopback(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static void test_default_bind_dual_stack(void **state)
{
    if (!have_ipv6_loopback()) {
        printf("skipped: no IPv6 loopback (::1) in this kernel\n");
        skip();
    }
    daemon_proc d;
    int status;
    char page[8192];
    assert_int_equal(td_mkdirs(&d), 0);
    assert_int_equal(td_write_file(&d, "dual.csv", "a\nb\n", 4), 0);
    const char *extra[] = {"-DjmeterPlugin.sts.initFileAtStartup=dual.csv", NULL};
    assert_int_equal(td_start_as(&d, NULL, extra, &status), 0);
    assert_non_null(strstr(td_log(&d), "listening on :: port "));
    /* The same list over both families: one socket, one server. */
    assert_true(get_from("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=dual.csv", page,
                         sizeof page) > 0);
    assert_non_null(strstr(page, "HTTP/1.1 200"));
    assert_non_null(strstr(page, "<body>2</body>"));
    assert_true(get_from("::1", d.port, "/sts/ADD?FILENAME=dual.csv&LINE=c", page,
                         sizeof page) > 0);
    assert_non_null(strstr(page, "<title>OK</title>"));
    assert_true(get_from("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=dual.csv", page,
                         sizeof page) > 0);
    assert_non_null(strstr(page, "<body>3</body>"));
    assert_true(get_from("::1", d.port, "/sts/CONFIG", page, sizeof page) > 0);
    assert_non_null(strstr(page, "stsd.bind=::<br />"));
    assert_int_equal(td_stop(&d, 0), 0);

    /* --bind still narrows it: 127.0.0.1 is not reachable as ::1, nor ::1 as 127.0.0.1. */
    const char *v4only[] = {"--bind=127.0.0.1", NULL};
    assert_int_equal(td_start_as(&d, NULL, v4only, &status), 0);
    assert_true(get_from("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=dual.csv", page,
                         sizeof page) > 0);
    assert_int_equal(get_from("::1", d.port, "/sts/LENGTH?FILENAME=dual.csv", page,
                              sizeof page), -1);
    assert_int_equal(td_stop(&d, 0), 0);
    const char *v6only[] = {"--bind=::1", NULL};
    assert_int_equal(td_start_as(&d, NULL, v6only, &status), 0);
    assert_true(get_from("::1", d.port, "/sts/LENGTH?FILENAME=dual.csv", page, sizeof page) > 0);
    assert_int_equal(get_from("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=dual.csv", page,
                              sizeof page), -1);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* IPv4 clients reach a dual-stack socket as ::ffff:127.0.0.1: stsd.allow's IPv4 ranges and
 * the per-address count must still take them for 127.0.0.1. */
static void test_dual_stack_access_rules(void **state)
{
    if (!have_ipv6_loopback()) {
        printf("skipped: no IPv6 loopback (::1) in this kernel\n");
        skip();
    }
    daemon_proc d;
    int status;
    char page[8192];
    assert_int_equal(td_mkdirs(&d), 0);
    const char *allow[] = {"-Dstsd.allow=127.0.0.1/32", NULL};
    assert_int_equal(td_start_as(&d, NULL, allow, &status), 0);
    assert_true(get_from("127.0.0.1", d.port, "/sts/ADD?FILENAME=a.csv&LINE=x", page,
                         sizeof page) > 0);
    assert_non_null(strstr(page, "<title>OK</title>"));
    /* ::1 is outside 127.0.0.1/32: closed before a byte is read. */
    assert_int_equal(get_from("::1", d.port, "/sts/LENGTH?FILENAME=a.csv", page, sizeof page), 0);
    assert_int_equal(td_stop(&d, 0), 0);

    const char *per_ip[] = {"-Dstsd.maxConnectionsPerIp=1", NULL};
    assert_int_equal(td_start_as(&d, NULL, per_ip, &status), 0);
    int held = connect_to("127.0.0.1", d.port);
    assert_true(held >= 0);
    td_sleep_ms(200);                          /* accepted and counted */
    assert_int_equal(get_from("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=a.csv", page,
                              sizeof page), 0);
    /* Another address (::1) is another count. */
    assert_true(get_from("::1", d.port, "/sts/LENGTH?FILENAME=a.csv", page, sizeof page) > 0);
    assert_non_null(strstr(page, "HTTP/1.1 200"));
    close(held);
    td_sleep_ms(200);
    assert_true(get_from("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=a.csv", page,
                         sizeof page) > 0);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

static void test_misspelt_keys(void **state)
{
    daemon_proc d;
    int status;
    char page[8192];
    assert_int_equal(td_mkdirs(&d), 0);
    /* Warned, ignored, and the server comes up as configured otherwise. */
    const char *warned[] = {"--bind=127.0.0.1", "-DjmeterPlugins.sts.port=9394",
                            "-Djmeter.sts.daemon=false", "-Djmeterengine.nongui.port=4445", NULL};
    assert_int_equal(td_start_as(&d, NULL, warned, &status), 0);
    const char *log = td_log(&d);
    assert_non_null(strstr(log, "[warn] unknown key jmeterPlugins.sts.port ignored: did you mean "
                                "jmeterPlugin.sts.port?"));
    assert_non_null(strstr(log, "[warn] unknown key jmeter.sts.daemon ignored: did you mean "
                                "jmeterPlugin.sts.daemon?"));
    assert_null(strstr(log, "jmeterengine"));           /* JMeter's own: left alone */
    assert_true(get_from("127.0.0.1", d.port, "/sts/CONFIG", page, sizeof page) > 0);
    assert_non_null(strstr(page, "\ndaemon=true<br />"));
    assert_int_equal(td_stop(&d, 0), 0);

    /* --strict-keys: exit non-zero with the message, before the port is bound. */
    char path[600], conf[700];
    snprintf(path, sizeof path, "%s/shared.properties", d.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("jmeterengine.nongui.port=4445\njmeterPlugin.sts.addTimestamp=false\n"
          "jmeterPlugins.sts.port=9394\n", f);
    assert_int_equal(fclose(f), 0);
    snprintf(conf, sizeof conf, "--config=%s", path);
    const char *strict[] = {"--bind=127.0.0.1", conf, "--strict-keys", NULL};
    char logpath[600];
    snprintf(logpath, sizeof logpath, "%s/stsd.log", d.dir);
    assert_int_equal(unlink(logpath), 0);                /* this start's lines only */
    assert_int_equal(td_start_as(&d, NULL, strict, &status), -1);
    assert_int_equal(status, 1);
    char want[900];
    snprintf(want, sizeof want, "stsd: %s:3: unknown key jmeterPlugins.sts.port: did you mean "
             "jmeterPlugin.sts.port? (--strict-keys refuses it)", path);
    log = td_log(&d);
    if (!strstr(log, want))
        fail_msg("no \"%s\" in the log:\n%s", want, log);
    assert_null(strstr(log, "listening on"));
    /* The same file without --strict-keys: warned with its name and line, then served. */
    const char *lenient[] = {"--bind=127.0.0.1", conf, NULL};
    assert_int_equal(td_start_as(&d, NULL, lenient, &status), 0);
    snprintf(want, sizeof want, "[warn] %s:3: unknown key jmeterPlugins.sts.port ignored: "
             "did you mean jmeterPlugin.sts.port?", path);
    assert_non_null(strstr(td_log(&d), want));
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_bind_dual_stack),
        cmocka_unit_test(test_dual_stack_access_rules),
        cmocka_unit_test(test_misspelt_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
