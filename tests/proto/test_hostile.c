/* SPDX-License-Identifier: Apache-2.0 */
/* test_hostile.c - a battery of hostile requests (garbage, huge, slow, malformed,
 * pipelined, floods, path tricks) against a real stsd: afterwards it still answers and
 * every list is exactly as before. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
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

static daemon_proc d;

static int connect_raw(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)d.port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Sends bytes, then reads whatever comes back until the server closes or 2 s pass.
 * Returns the bytes read (the caller only checks the server survives and, where the
 * protocol says so, the status line). */
static size_t send_and_drain(const void *req, size_t len, char *out, size_t outlen)
{
    int fd = connect_raw();
    assert_true(fd >= 0);
    size_t sent = 0;
    while (sent < len) {
        ssize_t w = send(fd, (const char *)req + sent, len - sent, MSG_NOSIGNAL);
        if (w <= 0)
            break;               /* the server may refuse and close early: fine */
        sent += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (got + 1 < outlen && poll(&p, 1, 2000) > 0) {
        ssize_t r = recv(fd, out + got, outlen - got - 1, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    out[got] = '\0';
    close(fd);
    return got;
}

/* All lines of every list, non-destructively: READMULTI of the whole length with
 * KEEP=TRUE rotates a list by its own length, leaving it as it was. */
static char *dump_lists(void)
{
    static const char *names[] = {"logins.csv", "queue.csv", "bin.csv"};
    size_t cap = 1 << 16, n = 0;
    char *all = malloc(cap);
    all[0] = '\0';
    for (size_t i = 0; i < 3; i++) {
        char target[256], len[32] = "";
        http_reply r;
        snprintf(target, sizeof target, "/sts/LENGTH?FILENAME=%s", names[i]);
        assert_int_equal(http_get(d.port, target, &r), 0);
        assert_int_equal(sscanf(r.body, "<html><title>OK</title>\n<body>%31[0-9]", len), 1);
        http_reply_free(&r);
        snprintf(target, sizeof target, "/sts/READMULTI?FILENAME=%s&NB_LINES=%s", names[i], len);
        assert_int_equal(http_get(d.port, target, &r), 0);
        assert_true(n + r.body_len + 1 < cap);
        memcpy(all + n, r.body, r.body_len);
        n += r.body_len;
        all[n] = '\0';
        http_reply_free(&r);
    }
    return all;
}

static int setup(void **state)
{
    if (td_mkdirs(&d) != 0)
        return -1;
    td_write_file(&d, "logins.csv", "u1;p1\nu2;p2\nu3;p3\n", 18);
    const char *extra[] = {"-Dstsd.maxBodySize=64K", "-Dstsd.connectionTimeout=3",
                           "-Dstsd.maxLineSize=4K", NULL};
    if (td_start(&d, extra) != 0)
        return -1;
    http_reply r;
    const char *init[] = {"/sts/INITFILE?FILENAME=logins.csv", "/sts/ADD?FILENAME=queue.csv&LINE=q1",
                          "/sts/ADD?FILENAME=queue.csv&LINE=q2&ADD_MODE=LAST",
                          "/sts/ADD?FILENAME=bin.csv&LINE=%00%01%FF%09"};
    for (size_t i = 0; i < 4; i++) {
        if (http_get(d.port, init[i], &r) != 0)
            return -1;
        http_reply_free(&r);
    }
    return 0;
}

static int teardown(void **state)
{
    td_cleanup(&d);
    return 0;
}

static void test_battery(void **state)
{
    char *before = dump_lists();
    static char out[1 << 16];

    /* Garbage bytes, with and without a line end. */
    unsigned char junk[4096];
    srand(7);
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (unsigned char)rand();
        send_and_drain(junk, (size_t)(round * 200 + 1), out, sizeof out);
    }
    /* HTTP/0.9, unknown versions, absurd request lines. */
    const char *lines[] = {
        "GET /sts/READ?FILENAME=logins.csv&KEEP=FALSE\r\n\r\n",
        "GET /sts/READ?FILENAME=logins.csv&KEEP=FALSE HTTP/0.9\r\n\r\n",
        "GET /sts/READ?FILENAME=logins.csv&KEEP=FALSE HTTP/9.9\r\nHost: x\r\n\r\n",
        "\r\n\r\n\r\n",
        "GET\r\n\r\n",
        " / HTTP/1.1\r\n\r\n",
        "GET /sts/READ?FILENAME=logins.csv&KEEP=FALSE&LINE=%zz HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /sts/ADD?FILENAME=queue.csv&LINE=%E HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /sts/ADD?FILENAME=queue.csv&LINE=x%",
        "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\nFILENAME=queue.csv&LINE=neg",
        "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nabcdefg",
        "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n",
        "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc",
        "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data\r\n"
        "Content-Length: 20\r\n\r\n--x\r\n\r\n--x--\r\n\r\n",
        "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        "Content-Length: 60\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"LINE\"\r\n\r\nx",
        "GET /sts/INITFILE?FILENAME=..%2F..%2Fetc%2Fpasswd HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /sts/INITFILE?FILENAME=%2Fetc%2Fpasswd HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /sts/SAVE?FILENAME=%2E%2E HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /sts/SAVE?FILENAME=logins.csv%00.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /sts/READ?FILENAME=logins.csv%00 HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /sts/../sts/READ?FILENAME=logins.csv&KEEP=FALSE HTTP/1.1\r\nHost: x\r\n\r\n",
        /* Malformed absolute forms: 400 (a well-formed one is served: test_answers). */
        "GET http:/evil/sts/READ?FILENAME=logins.csv&KEEP=FALSE HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET ftp://evil/sts/READ?FILENAME=logins.csv&KEEP=FALSE HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET http://u@evil/sts/READ?FILENAME=logins.csv&KEEP=FALSE HTTP/1.1\r\nHost: x\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        send_and_drain(lines[i], strlen(lines[i]), out, sizeof out);

    /* A header of 200 KB and a URL of 1 MB: refused with an HTTP error, not a crash. */
    size_t big = 1 << 20;
    char *huge = malloc(big + 256);
    int n = snprintf(huge, 256, "GET /sts/LENGTH?FILENAME=logins.csv HTTP/1.1\r\nX-Big: ");
    memset(huge + n, 'a', 200 * 1024);
    memcpy(huge + n + 200 * 1024, "\r\n\r\n", 4);
    send_and_drain(huge, (size_t)n + 200 * 1024 + 4, out, sizeof out);
    assert_memory_equal(out, "HTTP/1.1 4", 10);
    n = snprintf(huge, 256, "GET /sts/ADD?FILENAME=queue.csv&LINE=");
    memset(huge + n, 'b', big);
    memcpy(huge + n + big, " HTTP/1.1\r\n\r\n", 13);
    send_and_drain(huge, (size_t)n + big + 13, out, sizeof out);
    assert_memory_equal(out, "HTTP/1.1 4", 10);
    /* A body past maxBodySize: 413, the line is not added. */
    n = snprintf(huge, 256, "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nContent-Type: "
                            "application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n"
                            "FILENAME=queue.csv&LINE=");
    memset(huge + n, 'c', 100000);
    send_and_drain(huge, (size_t)n + 100000 - 24, out, sizeof out);
    assert_memory_equal(out, "HTTP/1.1 413", 12);
    /* A LINE past maxLineSize: KO, nothing added. */
    n = snprintf(huge, 256, "POST /sts/ADD HTTP/1.1\r\nHost: x\r\nContent-Type: "
                            "application/x-www-form-urlencoded\r\nContent-Length: 5024\r\n\r\n"
                            "FILENAME=queue.csv&LINE=");
    memset(huge + n, 'd', 5000);
    send_and_drain(huge, (size_t)n + 5000, out, sizeof out);
    assert_non_null(strstr(out, "Error : LINE is too long !"));
    free(huge);

    /* Pipelining: 50 requests in one write get 50 answers, in order. */
    char pipe_req[8192] = "";
    for (int i = 0; i < 50; i++)
        strcat(pipe_req, "GET /sts/LENGTH?FILENAME=logins.csv HTTP/1.1\r\nHost: x\r\n\r\n");
    send_and_drain(pipe_req, strlen(pipe_req), out, sizeof out);
    int answers = 0;
    for (char *p = out; (p = strstr(p, "<body>3</body>")); p++)
        answers++;
    assert_int_equal(answers, 50);

    /* A flood of connections that say nothing, and slow clients mid-request. */
    int fds[300];
    for (int i = 0; i < 300; i++)
        fds[i] = connect_raw();
    for (int i = 0; i < 300; i += 3)
        if (fds[i] >= 0)
            send(fds[i], "GET /sts/READ?FILE", 18, MSG_NOSIGNAL);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/LENGTH?FILENAME=logins.csv", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>3</body>\n</html>");
    http_reply_free(&r);
    for (int i = 0; i < 300; i++)
        if (fds[i] >= 0)
            close(fds[i]);

    char *after = dump_lists();
    assert_string_equal(before, after);
    free(before);
    free(after);
    assert_int_equal(http_get(d.port, "/sts/STATUS", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>\nbin.csv = 1<br />\n"
                                "logins.csv = 3<br />\nqueue.csv = 2<br />\n</body></html>");
    http_reply_free(&r);
}

static void test_idle_connection_closed(void **state)
{
    /* connectionTimeout=3: a client that goes quiet is let go. */
    int fd = connect_raw();
    assert_true(fd >= 0);
    send(fd, "GET /sts/RE", 11, MSG_NOSIGNAL);
    struct pollfd p = {fd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 10000), 1);
    char c;
    assert_true(recv(fd, &c, 1, 0) <= 0 || c == 'H');
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_battery),
        cmocka_unit_test(test_idle_connection_closed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
