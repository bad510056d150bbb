/* SPDX-License-Identifier: Apache-2.0 */
/* test_access.c - the access rules on a real stsd: 401 with its challenge, rotation, the
 * admin role, disabled commands, the 429 penalty per address, the allowlist at accept
 * time (from a second loopback address), token sources, warnings, and no token in logs. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

/* One request with Connection: close from source address src to 127.0.0.1:port.
 * Returns 0 with r filled, or -1 if the connection gave no answer. */
static int http_from(const char *src, int port, const char *req, http_reply *r)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, src, &a.sin_addr), 1);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -2;
    }
    a.sin_port = htons((uint16_t)port);
    assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &a.sin_addr), 1);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    size_t len = strlen(req);
    if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    static char raw[65536];
    size_t have = 0;
    ssize_t n;
    while (have < sizeof raw - 1 && (n = recv(fd, raw + have, sizeof raw - 1 - have, 0)) > 0)
        have += (size_t)n;
    close(fd);
    raw[have] = '\0';
    memset(r, 0, sizeof *r);
    char *end = strstr(raw, "\r\n\r\n");
    if (!end || sscanf(raw, "HTTP/1.%*d %d", &r->status) != 1)
        return -1;
    size_t hlen = (size_t)(end - raw) + 4;
    snprintf(r->headers, sizeof r->headers, "%.*s", (int)hlen, raw);
    r->body = strdup(raw + hlen);
    r->body_len = strlen(r->body);
    return 0;
}

/* GET target with an optional Authorization header from src. */
static int get_as(const char *src, int port, const char *target, const char *authz,
                  http_reply *r)
{
    char req[2048];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
             "%s%s%s\r\n", target, authz ? "Authorization: " : "", authz ? authz : "",
             authz ? "\r\n" : "");
    return http_from(src, port, req, r);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* Checks status and the KO page of message m (NULL: any body). */
static void expect(int port, const char *target, const char *authz, int status, const char *m)
{
    http_reply r;
    assert_int_equal(get_as("127.0.0.1", port, target, authz, &r), 0);
    if (r.status != status)
        fail_msg("GET %s (%s): status %d, want %d\n%s", target, authz ? authz : "-", r.status,
                 status, r.body);
    if (m) {
        char want[1024];
        page_ko(want, sizeof want, m);
        assert_string_equal(r.body, want);
    }
    http_reply_free(&r);
}

#define MSG_MISSING "Token required: send the header Authorization: Bearer <token>, or a TOKEN parameter !"
#define MSG_WRONG "Token not accepted !"
#define MSG_ADMIN "This command needs the admin token !"
#define MSG_DISABLED "This command is disabled on this server !"

static void test_tokens_and_roles(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    assert_int_equal(td_write_file(&d, "a.csv", "l1\nl2\n", 6), 0);
    const char *extra[] = {"-Dstsd.token=tok-old-111,tok-new-222", "-Dstsd.adminToken=adm-333",
                           "-DjmeterPlugin.sts.initFileAtStartup=a.csv", NULL};
    assert_int_equal(td_start(&d, extra), 0);
    http_reply r;

    /* No token: 401, the challenge, a KO page; the help page and /metrics too. */
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/READ?FILENAME=a.csv", NULL, &r), 0);
    assert_int_equal(r.status, 401);
    char v[256];
    assert_int_equal(http_header(&r, "WWW-Authenticate", v, sizeof v), 0);
    assert_string_equal(v, "Bearer realm=\"stsd\"");
    http_reply_free(&r);
    expect(d.port, "/sts/READ?FILENAME=a.csv", NULL, 401, MSG_MISSING);
    expect(d.port, "/sts/", NULL, 401, MSG_MISSING);
    expect(d.port, "/metrics", NULL, 401, MSG_MISSING);
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=a.csv",
                            "Bearer tok-old-11", &r), 0);
    assert_int_equal(r.status, 401);
    assert_int_equal(http_header(&r, "WWW-Authenticate", v, sizeof v), 0);
    assert_string_equal(v, "Bearer realm=\"stsd\", error=\"invalid_token\"");
    http_reply_free(&r);
    expect(d.port, "/sts/LENGTH?FILENAME=a.csv&TOKEN=tok-new-2222", NULL, 401, MSG_WRONG);

    /* Both tokens of a rotation work, by header, by parameter, by POST body. */
    char ok[256];
    page_ok(ok, sizeof ok, "2");
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=a.csv",
                            "Bearer tok-old-111", &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, ok);
    http_reply_free(&r);
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=a.csv&TOKEN=tok-new-222",
                            NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, ok);
    http_reply_free(&r);
    assert_int_equal(http_post(d.port, "/sts/ADD", "FILENAME=a.csv&LINE=l3&TOKEN=tok-new-222",
                               &r), 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    assert_int_equal(http_post(d.port, "/sts/ADD", "FILENAME=a.csv&LINE=l4", &r), 0);
    assert_int_equal(r.status, 401);
    http_reply_free(&r);

    /* Admin commands: the data token gets 403, the admin token passes, and also runs
     * data commands. Nothing changed by the refused ones. */
    const char *admin[] = {"/sts/INITFILE?FILENAME=a.csv", "/sts/SAVE?FILENAME=a.csv",
                           "/sts/RESET?FILENAME=a.csv", "/sts/CONFIG", "/sts/STOP"};
    for (size_t i = 0; i < 5; i++) {
        expect(d.port, admin[i], "Bearer tok-old-111", 403, MSG_ADMIN);
        expect(d.port, admin[i], NULL, 401, MSG_MISSING);
    }
    page_ok(ok, sizeof ok, "3");
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=a.csv",
                            "Bearer adm-333", &r), 0);
    assert_string_equal(r.body, ok);
    http_reply_free(&r);
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/CONFIG", "Bearer adm-333", &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "<br />\nstsd.token=********<br />\n"));
    assert_non_null(strstr(r.body, "<br />\nstsd.adminToken=********<br />\n"));
    assert_null(strstr(r.body, "tok-"));
    assert_null(strstr(r.body, "adm-333"));
    http_reply_free(&r);

    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/STOP?TOKEN=adm-333", NULL, &r), 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    assert_int_equal(td_wait(&d, 5000), 0);
    const char *log = td_log(&d);
    assert_null(strstr(log, "tok-old"));
    assert_null(strstr(log, "tok-new"));
    assert_null(strstr(log, "adm-333"));
    assert_non_null(strstr(log, "access: 2 data tokens, 1 admin token"));
    assert_null(strstr(log, "with no stsd.token"));       /* loopback: no warning */
    td_cleanup(&d);
}

static void test_admin_only_and_disabled(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    const char *extra[] = {"-Dstsd.adminToken=boss-1", "-Dstsd.disabledCommands=RESET", NULL};
    assert_int_equal(td_start(&d, extra), 0);
    char ok[256];
    page_ok(ok, sizeof ok, "");
    http_reply r;
    /* Data commands stay open; admin ones do not; RESET is off even for the admin. */
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/ADD?FILENAME=q&LINE=x", NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, ok);
    http_reply_free(&r);
    expect(d.port, "/sts/STOP", NULL, 401, MSG_MISSING);
    expect(d.port, "/sts/STOP", "Bearer boss-2", 401, MSG_WRONG);
    expect(d.port, "/sts/RESET?FILENAME=q", "Bearer boss-1", 403, MSG_DISABLED);
    page_ok(ok, sizeof ok, "1");
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/LENGTH?FILENAME=q", NULL, &r), 0);
    assert_string_equal(r.body, ok);
    http_reply_free(&r);
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/STOP", "Bearer boss-1", &r), 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    assert_int_equal(td_wait(&d, 5000), 0);
    td_cleanup(&d);

    /* Disabled commands alone (no token): 403 for everyone, the rest as before. */
    assert_int_equal(td_mkdirs(&d), 0);
    const char *extra2[] = {"-Dstsd.disabledCommands=STOP, RESET", NULL};
    assert_int_equal(td_start(&d, extra2), 0);
    expect(d.port, "/sts/STOP", NULL, 403, MSG_DISABLED);
    expect(d.port, "/sts/RESET?FILENAME=q", NULL, 403, MSG_DISABLED);
    expect(d.port, "/sts/LENGTH?FILENAME=q", NULL, 200, "q not loaded yet !");
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

static void test_penalty(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    const char *extra[] = {"-Dstsd.token=right-token", NULL};
    assert_int_equal(td_start(&d, extra), 0);
    http_reply r;
    if (get_as("127.0.0.2", d.port, "/sts/STATUS", "Bearer right-token", &r) == -2) {
        td_stop(&d, 0);
        td_cleanup(&d);
        print_message("skipped: no 127.0.0.2 on this machine's loopback\n");
        skip();
    }
    http_reply_free(&r);
    for (int i = 0; i < 20; i++)
        expect(d.port, "/sts/STATUS", "Bearer wrong-token", 401, MSG_WRONG);
    expect(d.port, "/sts/STATUS", "Bearer right-token", 200, NULL);   /* 20: not yet */
    expect(d.port, "/sts/STATUS", NULL, 401, MSG_MISSING);           /* the 21st */
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/STATUS", "Bearer right-token", &r), 0);
    assert_int_equal(r.status, 429);
    char v[64];
    assert_int_equal(http_header(&r, "Retry-After", v, sizeof v), 0);
    assert_string_equal(v, "10");
    http_reply_free(&r);
    /* Another address is not affected; the scrape counts the 21 failures. */
    assert_int_equal(get_as("127.0.0.2", d.port, "/sts/STATUS", "Bearer right-token", &r), 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    assert_int_equal(get_as("127.0.0.2", d.port, "/metrics", "Bearer right-token", &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\nstsd_auth_failures_total 21\n"));
    http_reply_free(&r);
    /* The penalty ends after 10 s. */
    struct timespec t = {10, 300 * 1000000L};
    nanosleep(&t, NULL);
    expect(d.port, "/sts/STATUS", "Bearer right-token", 200, NULL);
    assert_non_null(strstr(td_log(&d), "more than 20 failed attempts"));
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

static void test_allowlist(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    const char *extra[] = {"-Dstsd.allow=127.0.0.2/32, fd00::/8", NULL};
    assert_int_equal(td_start(&d, extra), 0);
    http_reply r;
    int rc = get_as("127.0.0.2", d.port, "/sts/STATUS", NULL, &r);
    if (rc == -2) {
        td_stop(&d, 0);
        td_cleanup(&d);
        print_message("skipped: no 127.0.0.2 on this machine's loopback\n");
        skip();
    }
    assert_int_equal(rc, 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    /* From 127.0.0.1: closed at accept, no answer at all. */
    assert_int_equal(get_as("127.0.0.1", d.port, "/sts/STATUS", NULL, &r), -1);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);

    assert_int_equal(td_mkdirs(&d), 0);
    const char *bad[] = {"-Dstsd.allow=127.0.0.0/33", NULL};
    assert_int_equal(td_start(&d, bad), -1);
    assert_non_null(strstr(td_log(&d), "stsd.allow: \"127.0.0.0/33\" is not"));
    td_cleanup(&d);
}

static void test_per_ip_limit(void **state)
{
    /* stsd.maxConnectionsPerIp=3 holds for the whole server, not per HTTP thread: with 4
     * threads, a fourth connection from 127.0.0.1 is refused whichever thread takes it. */
    (void)state;
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    const char *extra[] = {"-Dstsd.maxConnectionsPerIp=3", "--threads=4", NULL};
    assert_int_equal(td_start(&d, extra), 0);
    http_conn held[3];
    http_reply r;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(http_conn_open(&held[i], d.port), 0);
        assert_int_equal(http_conn_get(&held[i], "/sts/STATUS", &r), 0);
        assert_int_equal(r.status, 200);
        http_reply_free(&r);
    }
    for (int i = 0; i < 8; i++)
        assert_int_equal(http_from("127.0.0.1", d.port, "GET /sts/STATUS HTTP/1.1\r\n"
                                   "Host: x\r\nConnection: close\r\n\r\n", &r), -1);
    int other = http_from("127.0.0.2", d.port, "GET /sts/STATUS HTTP/1.1\r\n"
                          "Host: x\r\nConnection: close\r\n\r\n", &r);
    if (other != -2) {                        /* -2: no 127.0.0.2 here */
        assert_int_equal(other, 0);
        assert_int_equal(r.status, 200);
        http_reply_free(&r);
    }
    /* One closed: its place is free again once the server has seen it go. */
    http_conn_close(&held[0]);
    int rc = -1;
    for (int tries = 0; rc != 0 && tries < 50; tries++) {
        td_sleep_ms(20);
        rc = http_from("127.0.0.1", d.port, "GET /sts/STATUS HTTP/1.1\r\n"
                       "Host: x\r\nConnection: close\r\n\r\n", &r);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    http_conn_close(&held[1]);
    http_conn_close(&held[2]);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

static void write_in(const daemon_proc *d, const char *name, const char *text, mode_t mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d->dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_sources_and_warnings(void **state)
{
    daemon_proc d;
    char conf[600], file[600];
    assert_int_equal(td_mkdirs(&d), 0);
    write_in(&d, "sts.properties", "stsd.token=from-props-1\n", 0644);
    write_in(&d, "admin.cred", "from-file-2\n", 0640);
    snprintf(conf, sizeof conf, "--config=%s/sts.properties", d.dir);
    snprintf(file, sizeof file, "-Dstsd.adminTokenFile=%s/admin.cred", d.dir);
    setenv("STSD_TOKEN", "from-env-3", 1);
    const char *extra[] = {conf, file, "--bind=0.0.0.0", NULL};
    int rc = td_start(&d, extra);
    unsetenv("STSD_TOKEN");
    assert_int_equal(rc, 0);
    expect(d.port, "/sts/STATUS", "Bearer from-props-1", 200, NULL);
    expect(d.port, "/sts/STATUS", "Bearer from-env-3", 200, NULL);
    expect(d.port, "/sts/CONFIG", "Bearer from-env-3", 403, MSG_ADMIN);
    expect(d.port, "/sts/CONFIG", "Bearer from-file-2", 200, NULL);
    assert_int_equal(td_stop(&d, 0), 0);
    const char *log = td_log(&d);
    assert_non_null(strstr(log, "sts.properties holds tokens but is readable by group or "
                                "others (mode 644)"));
    assert_non_null(strstr(log, "admin.cred is readable by group or others (mode 640)"));
    assert_null(strstr(log, "from-"));
    assert_null(strstr(log, "with no stsd.token"));    /* 0.0.0.0, but with a token */
    td_cleanup(&d);

    /* Beyond loopback with no token: one warning. Files kept private: no warning. */
    assert_int_equal(td_mkdirs(&d), 0);
    write_in(&d, "sts.properties", "stsd.adminToken=x-1\n", 0600);
    snprintf(conf, sizeof conf, "--config=%s/sts.properties", d.dir);
    const char *open_bind[] = {"--bind=0.0.0.0", NULL};
    assert_int_equal(td_start(&d, open_bind), 0);
    assert_int_equal(td_stop(&d, 0), 0);
    log = td_log(&d);
    assert_int_equal(count(log, "with no stsd.token: anyone who can reach port"), 1);
    assert_non_null(strstr(log, "can read, change and stop it"));
    td_cleanup(&d);
    assert_int_equal(td_mkdirs(&d), 0);
    write_in(&d, "sts.properties", "stsd.adminToken=x-1\n", 0600);
    const char *admin_only[] = {conf, "--bind=0.0.0.0", NULL};
    snprintf(conf, sizeof conf, "--config=%s/sts.properties", d.dir);
    assert_int_equal(td_start(&d, admin_only), 0);
    assert_int_equal(td_stop(&d, 0), 0);
    log = td_log(&d);
    assert_int_equal(count(log, "with no stsd.token"), 1);
    assert_non_null(strstr(log, "can read and change the lists"));
    assert_null(strstr(log, "readable by group"));
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_and_roles),
        cmocka_unit_test(test_admin_only_and_disabled),
        cmocka_unit_test(test_allowlist),
        cmocka_unit_test(test_per_ip_limit),
        cmocka_unit_test(test_sources_and_warnings),
        cmocka_unit_test(test_penalty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
