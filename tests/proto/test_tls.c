/* SPDX-License-Identifier: Apache-2.0 */
/* test_tls.c - HTTPS on a real stsd, with certificates made by openssl at test time:
 * curl --cacert through a chain, TLS 1.2/1.3 only, plain HTTP and garbage on the TLS port,
 * SIGHUP swapping the pair under an open connection, bad pairs refused. */
#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
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

static int have_tool(const char *name)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* A CA (dir/ca.crt) once per run, then leaf NAME (dir/NAME.crt holding leaf + CA, and
 * dir/NAME.key, mode 600) for localhost with common name cn. */
static void make_pair(const char *dir, const char *name, const char *cn)
{
    char ca[600];
    snprintf(ca, sizeof ca, "%s/ca.crt", dir);
    if (access(ca, R_OK) != 0)
        assert_int_equal(run("cd '%s' && openssl req -x509 -newkey ec -pkeyopt "
                             "ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.crt "
                             "-days 2 -subj /CN=stsd-test-ca 2>/dev/null", dir), 0);
    assert_int_equal(run("cd '%s' && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > "
                         "san.ext && openssl req -newkey ec -pkeyopt "
                         "ec_paramgen_curve:prime256v1 -nodes -keyout %s.key -out %s.csr "
                         "-subj /CN=%s 2>/dev/null && openssl x509 -req -in %s.csr -CA ca.crt "
                         "-CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out leaf.pem "
                         "2>/dev/null && cat leaf.pem ca.crt > %s.crt && chmod 600 %s.key",
                         dir, name, name, cn, name, name, name), 0);
}

static int tls_skip(void)
{
    if (!have_tool("openssl")) {
        print_message("skipped: openssl is not installed (scripts/deps.sh test installs it)\n");
        return 1;
    }
    return 0;
}

/* Starts stsd on the pair NAME of d->dir with more arguments. */
static int start_tls(daemon_proc *d, const char *name, const char *more)
{
    char cert[600], key[600];
    snprintf(cert, sizeof cert, "-Dstsd.tls.cert=%s/%s.crt", d->dir, name);
    snprintf(key, sizeof key, "-Dstsd.tls.key=%s/%s.key", d->dir, name);
    const char *extra[] = {cert, key, more, NULL};
    return td_start(d, extra);
}

/* Waits up to 5 s for the log to hold text. */
static int log_waits_for(const daemon_proc *d, const char *text)
{
    for (int i = 0; i < 500; i++) {
        if (strstr(td_log(d), text))
            return 0;
        td_sleep_ms(10);
    }
    return -1;
}

/* ---- a small GnuTLS client ---- */

typedef struct tls_client {
    int fd;
    gnutls_session_t s;
    gnutls_certificate_credentials_t cred;
} tls_client;

/* Connects and handshakes with priority prio. Returns 0, or the GnuTLS error (< 0). */
static int tls_open(tls_client *c, int port, const char *prio)
{
    memset(c, 0, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(c->fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(gnutls_certificate_allocate_credentials(&c->cred), 0);
    assert_int_equal(gnutls_init(&c->s, GNUTLS_CLIENT), 0);
    assert_int_equal(gnutls_priority_set_direct(c->s, prio, NULL), 0);
    assert_int_equal(gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, c->cred), 0);
    gnutls_transport_set_int(c->s, c->fd);
    int rc;
    do
        rc = gnutls_handshake(c->s);
    while (rc < 0 && !gnutls_error_is_fatal(rc));
    return rc < 0 ? rc : 0;
}

static void tls_close(tls_client *c)
{
    gnutls_bye(c->s, GNUTLS_SHUT_WR);
    gnutls_deinit(c->s);
    gnutls_certificate_free_credentials(c->cred);
    close(c->fd);
}

/* GET target on the open session (keep-alive); the body into out. Returns the status. */
static int tls_get(tls_client *c, const char *target, char *out, size_t cap)
{
    char req[1024], buf[16384];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", target);
    if (gnutls_record_send(c->s, req, (size_t)n) != n)
        return -1;
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        ssize_t r = gnutls_record_recv(c->s, buf + have, sizeof buf - 1 - have);
        if (r <= 0)
            return -1;
        have += (size_t)r;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    int status = 0;
    const char *cl = strcasestr(buf, "Content-Length:");
    if (sscanf(buf, "HTTP/1.1 %d", &status) != 1 || !cl)
        return -1;
    size_t len = (size_t)atol(cl + 15), hlen = (size_t)(end - buf) + 4;
    while (have < hlen + len) {
        ssize_t r = gnutls_record_recv(c->s, buf + have, sizeof buf - 1 - have);
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
    snprintf(out, cap, "%.*s", (int)len, buf + hlen);
    return status;
}

/* The common name of the certificate the server showed. */
static void tls_peer_cn(tls_client *c, char *cn, size_t cap)
{
    unsigned n = 0;
    const gnutls_datum_t *certs = gnutls_certificate_get_peers(c->s, &n);
    assert_true(certs && n >= 1);
    gnutls_x509_crt_t crt;
    assert_int_equal(gnutls_x509_crt_init(&crt), 0);
    assert_int_equal(gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER), 0);
    size_t size = cap;
    assert_int_equal(gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn,
                                                   &size), 0);
    gnutls_x509_crt_deinit(crt);
}

#define TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.2"
#define TLS13 "NORMAL:-VERS-ALL:+VERS-TLS1.3"
#define TLS11 "NORMAL:-VERS-ALL:+VERS-TLS1.1"

static void test_curl_chain_and_garbage(void **state)
{
    if (tls_skip())
        skip();
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    make_pair(d.dir, "a", "stsd-a");
    assert_int_equal(start_tls(&d, "a", "-Dstsd.token=t-123"), 0);
    assert_non_null(strstr(td_log(&d), "(https)"));
    char ok[256];
    page_ok(ok, sizeof ok, "");
    if (have_tool("curl")) {
        char out[600];
        snprintf(out, sizeof out, "%s/out", d.dir);
        assert_int_equal(run("curl -sS --cacert '%s/ca.crt' -H 'Authorization: Bearer t-123' "
                             "-o '%s' 'https://localhost:%d/sts/ADD?FILENAME=q&LINE=x'",
                             d.dir, out, d.port), 0);
        FILE *f = fopen(out, "rb");
        char body[512] = "";
        assert_non_null(f);
        size_t n = fread(body, 1, sizeof body - 1, f);
        fclose(f);
        body[n] = '\0';
        assert_string_equal(body, ok);
        /* Without the CA, curl refuses the certificate; plain http gets nothing. */
        assert_int_not_equal(run("curl -s -o /dev/null 'https://localhost:%d/sts/'", d.port), 0);
        assert_int_not_equal(run("curl -s -o /dev/null 'http://localhost:%d/sts/'", d.port), 0);
    }
    /* Plain HTTP and garbage to the TLS port: no answer, no harm. */
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/STATUS", &r), -1);
    char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 131 + 7);
    junk[0] = 0x16;                           /* looks like a handshake record, is not */
    assert_int_equal(http_raw(d.port, junk, sizeof junk, &r), -1);
    tls_client c;
    int rc = tls_open(&c, d.port, TLS12);
    assert_int_equal(rc, 0);
    assert_int_equal(gnutls_record_send(c.s, "GET /sts/ HT", 12), 12);
    tls_close(&c);                            /* a request cut short */
    assert_int_equal(tls_open(&c, d.port, "NORMAL"), 0);
    char body[4096];
    assert_int_equal(tls_get(&c, "/sts/LENGTH?FILENAME=q&TOKEN=t-123", body, sizeof body), 200);
    page_ok(ok, sizeof ok, have_tool("curl") ? "1" : "");
    if (have_tool("curl"))
        assert_string_equal(body, ok);
    assert_int_equal(tls_get(&c, "/sts/LENGTH?FILENAME=q", body, sizeof body), 401);
    tls_close(&c);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
    if (!have_tool("curl")) {      /* the rest passed; the curl part did not run */
        print_message("skipped: the curl part: curl is not installed (scripts/deps.sh test)\n");
        skip();
    }
}

static void test_versions(void **state)
{
    if (tls_skip())
        skip();
    daemon_proc d;
    tls_client c;
    assert_int_equal(td_mkdirs(&d), 0);
    make_pair(d.dir, "a", "stsd-a");
    assert_int_equal(start_tls(&d, "a", NULL), 0);
    assert_int_equal(tls_open(&c, d.port, TLS12), 0);
    assert_int_equal(gnutls_protocol_get_version(c.s), GNUTLS_TLS1_2);
    tls_close(&c);
    assert_int_equal(tls_open(&c, d.port, TLS13), 0);
    assert_int_equal(gnutls_protocol_get_version(c.s), GNUTLS_TLS1_3);
    tls_close(&c);
    assert_true(tls_open(&c, d.port, TLS11) < 0);           /* refused by default */
    tls_close(&c);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);

    /* The same client gets in when stsd.tls.priorities allows 1.1: the refusal above was
     * the server's. */
    assert_int_equal(td_mkdirs(&d), 0);
    make_pair(d.dir, "a", "stsd-a");
    assert_int_equal(start_tls(&d, "a", "-Dstsd.tls.priorities=NORMAL:-VERS-ALL:"
                                        "+VERS-TLS1.2:+VERS-TLS1.1"), 0);
    assert_int_equal(tls_open(&c, d.port, TLS11), 0);
    assert_int_equal(gnutls_protocol_get_version(c.s), GNUTLS_TLS1_1);
    tls_close(&c);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

static void test_reload(void **state)
{
    if (tls_skip())
        skip();
    daemon_proc d;
    tls_client old, fresh;
    char cn[128], body[4096], ok[256];
    assert_int_equal(td_mkdirs(&d), 0);
    make_pair(d.dir, "live", "stsd-a");
    make_pair(d.dir, "b", "stsd-b");
    assert_int_equal(start_tls(&d, "live", NULL), 0);
    assert_int_equal(tls_open(&old, d.port, "NORMAL"), 0);
    tls_peer_cn(&old, cn, sizeof cn);
    assert_string_equal(cn, "stsd-a");
    assert_int_equal(tls_get(&old, "/sts/ADD?FILENAME=q&LINE=kept", body, sizeof body), 200);

    /* Renewal: new files, SIGHUP; new handshakes get them, the open connection lives on. */
    assert_int_equal(run("cd '%s' && cp b.crt live.crt && cp b.key live.key", d.dir), 0);
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    assert_int_equal(log_waits_for(&d, "SIGHUP: TLS certificate and key reloaded"), 0);
    assert_int_equal(tls_open(&fresh, d.port, "NORMAL"), 0);
    tls_peer_cn(&fresh, cn, sizeof cn);
    assert_string_equal(cn, "stsd-b");
    tls_close(&fresh);
    page_ok(ok, sizeof ok, "1");
    assert_int_equal(tls_get(&old, "/sts/LENGTH?FILENAME=q", body, sizeof body), 200);
    assert_string_equal(body, ok);

    /* A key that is not the certificate's, then a broken certificate: refused, logged,
     * and the pair in use stays. */
    assert_int_equal(run("cd '%s' && cp ca.key live.key", d.dir), 0);
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    assert_int_equal(log_waits_for(&d, "is not the key of the certificate"), 0);
    assert_int_equal(run("cd '%s' && cp b.key live.key && echo garbage > live.crt", d.dir), 0);
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    assert_int_equal(log_waits_for(&d, "not a PEM certificate chain"), 0);
    assert_non_null(strstr(td_log(&d), "the previous certificate and key stay in use"));
    assert_int_equal(tls_open(&fresh, d.port, "NORMAL"), 0);
    tls_peer_cn(&fresh, cn, sizeof cn);
    assert_string_equal(cn, "stsd-b");
    assert_int_equal(tls_get(&fresh, "/sts/LENGTH?FILENAME=q", body, sizeof body), 200);
    assert_string_equal(body, ok);
    tls_close(&fresh);
    assert_int_equal(tls_get(&old, "/sts/READ?FILENAME=q", body, sizeof body), 200);
    tls_close(&old);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

static void test_bad_start(void **state)
{
    if (tls_skip())
        skip();
    daemon_proc d;
    char cert[600], key[600];
    assert_int_equal(td_mkdirs(&d), 0);
    make_pair(d.dir, "a", "stsd-a");
    make_pair(d.dir, "b", "stsd-b");
    snprintf(cert, sizeof cert, "-Dstsd.tls.cert=%s/a.crt", d.dir);
    snprintf(key, sizeof key, "-Dstsd.tls.key=%s/b.key", d.dir);
    const char *mismatch[] = {cert, key, NULL};
    assert_int_equal(td_start(&d, mismatch), -1);
    assert_non_null(strstr(td_log(&d), "b.key is not the key of the certificate in"));
    const char *half[] = {cert, NULL};
    assert_int_equal(td_start(&d, half), -1);
    assert_non_null(strstr(td_log(&d), "stsd.tls.cert and stsd.tls.key go together"));
    assert_int_equal(start_tls(&d, "a", "-Dstsd.tls.priorities=NORMAL:+NO-SUCH-THING"), -1);
    assert_non_null(strstr(td_log(&d), "stsd.tls.priorities: \"NORMAL:+NO-SUCH-THING\" is "
                                         "not a GnuTLS priority string"));
    /* A key others may read: a warning, and it serves. */
    assert_int_equal(run("chmod 644 '%s/a.key'", d.dir), 0);
    assert_int_equal(start_tls(&d, "a", NULL), 0);
    assert_non_null(strstr(td_log(&d), "a.key is readable by group or others (mode 644)"));
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curl_chain_and_garbage),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_reload),
        cmocka_unit_test(test_bad_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
