/* SPDX-License-Identifier: Apache-2.0 */
/* test_audit.c - stsd.auditLog on a real stsd: each JSON line parsed and checked (who,
 * what, which line, lease and owner), hashed lines, rotation at maxBytes, SIGHUP. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/digest.h"
#include "testlib.h"

/* ---- a strict reader of one flat JSON object (the audit log's lines are flat) ---- */

#define MAX_FIELDS 16

typedef struct field {
    char key[32];
    char type;          /* 's' string, 'b' true/false, 'n' null */
    char str[512];      /* the string (UTF-8 of \u escapes below U+0800 only: enough here) */
    int b;
} field;

typedef struct record {
    int n;
    field f[MAX_FIELDS];
} record;

/* Reads a JSON string at *p (at its opening quote) into out; -1 if malformed. */
static int read_string(const char **p, char *out, size_t outlen)
{
    const char *s = *p;
    size_t n = 0;
    if (*s++ != '"')
        return -1;
    while (*s != '"') {
        unsigned c = (unsigned char)*s++;
        if (c < 0x20)
            return -1;                      /* control bytes must be escaped */
        if (c == '\\') {
            char e = *s++;
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                c = (unsigned char)"\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            } else if (e == 'u') {
                unsigned v;
                if (sscanf(s, "%4x", &v) != 1)
                    return -1;
                s += 4;
                if (v >= 0x80) {            /* two bytes: all this test sends */
                    if (n + 2 >= outlen || v >= 0x800)
                        return -1;
                    out[n++] = (char)(0xc0 | (v >> 6));
                    c = 0x80 | (v & 0x3f);
                } else {
                    c = v;
                }
            } else {
                return -1;
            }
        }
        if (n + 1 >= outlen)
            return -1;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    *p = s + 1;
    return 0;
}

/* Parses text (one line, no newline) as an object of strings, booleans and nulls. */
static int parse_record(const char *text, record *r)
{
    const char *p = text;
    memset(r, 0, sizeof *r);
    if (*p++ != '{')
        return -1;
    while (*p != '}') {
        if (r->n && *p++ != ',')
            return -1;
        if (r->n == MAX_FIELDS)
            return -1;
        field *f = &r->f[r->n++];
        if (read_string(&p, f->key, sizeof f->key) != 0 || *p++ != ':')
            return -1;
        if (*p == '"') {
            f->type = 's';
            if (read_string(&p, f->str, sizeof f->str) != 0)
                return -1;
        } else if (strncmp(p, "true", 4) == 0 || strncmp(p, "false", 5) == 0) {
            f->type = 'b';
            f->b = *p == 't';
            p += f->b ? 4 : 5;
        } else if (strncmp(p, "null", 4) == 0) {
            f->type = 'n';
            p += 4;
        } else {
            return -1;
        }
    }
    return p[1] == '\0' ? 0 : -1;
}

static const field *get(const record *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->f[i].key, key) == 0)
            return &r->f[i];
    return NULL;
}

/* The string member key, or fails the test. */
static const char *str(const record *r, const char *key)
{
    const field *f = get(r, key);
    if (!f || f->type != 's')
        fail_msg("member \"%s\" is not a string", key);
    return f->str;
}

/* ---- the audit file ---- */

/* Reads path whole (NULL if absent). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap && !(b = realloc(b, cap = (n + 4096) * 2)))
            abort();
        size_t got = fread(b + n, 1, cap - n - 1, f);
        if (!got)
            break;
        n += got;
    }
    fclose(f);
    if (!b && !(b = malloc(1)))
        abort();
    b[n] = '\0';
    if (len)
        *len = n;
    return b;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; p && (p = strchr(p, '\n')); p++)
        n++;
    return n;
}

/* Waits (up to 3 s: the writer gathers for 10 ms) until path holds at least want lines,
 * then parses each into recs (at most max). Returns the number of lines. */
static int read_records(const char *path, record *recs, int max, int want)
{
    char *text = NULL;
    for (int i = 0; i < 300; i++) {
        free(text);
        text = slurp(path, NULL);
        if (text && count_lines(text) >= want)
            break;
        td_sleep_ms(10);
    }
    if (!text)
        fail_msg("%s: %s", path, strerror(errno));
    int n = 0;
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        if (n < max && parse_record(line, &recs[n]) != 0)
            fail_msg("line %d of %s is not a flat JSON object: %s", n + 1, path, line);
        n++;
    }
    free(text);
    return n;
}

/* The time member: ISO 8601, UTC, milliseconds, and within the last minute. */
static void check_time(const record *r)
{
    const char *t = str(r, "time");
    int y, mo, d, h, mi, s, ms;
    char z;
    assert_int_equal(strlen(t), 24);
    assert_int_equal(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &s, &ms,
                            &z), 8);
    assert_int_equal(z, 'Z');
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                    .tm_min = mi, .tm_sec = s};
    time_t when = timegm(&tm), now = time(NULL);
    assert_true(when <= now && now - when < 60);
}

/* The members every line has, and what it says. */
static void check_common(const record *r, const char *token, const char *cmd)
{
    check_time(r);
    assert_string_equal(str(r, "addr"), "127.0.0.1");
    if (token)
        assert_string_equal(str(r, "token"), token);
    else
        assert_int_equal(get(r, "token")->type, 'n');
    assert_string_equal(str(r, "cmd"), cmd);
}

static void get_ok(int port, const char *target, const char *authz, http_reply *r)
{
    assert_int_equal(http_get_as(port, target, authz, NULL, r), 0);
    if (r->status != 200 || strstr(r->body, "<title>KO"))
        fail_msg("GET %s: %d %s", target, r->status, r->body);
}

static void get_discard(int port, const char *target, const char *authz)
{
    http_reply r;
    assert_int_equal(http_get_as(port, target, authz, NULL, &r), 0);
    http_reply_free(&r);
}

static void audit_path(const daemon_proc *d, char *out, size_t len)
{
    snprintf(out, len, "%s/audit.log", d->dir);
}

static void start_with(daemon_proc *d, const char *const *more)
{
    static const char lines[] = "u1;p1\nu42;p42\nu3;p3\nu4;p4\nu5;p5\nu6;p6\n";
    char opt[600];
    const char *extra[16] = {"-Dstsd.token=inj-one-secret,inj-two-secret",
                             "-DjmeterPlugin.sts.initFileAtStartup=logins.csv", opt};
    int n = 3;
    assert_int_equal(td_mkdirs(d), 0);
    assert_int_equal(td_write_file(d, "logins.csv", lines, sizeof lines - 1), 0);
    snprintf(opt, sizeof opt, "-Dstsd.auditLog=%s/audit.log", d->dir);
    for (int i = 0; more && more[i]; i++)
        extra[n++] = more[i];
    extra[n] = NULL;
    assert_int_equal(td_start(d, extra), 0);
}

#define TOKEN "inj-two-secret"

/* READ, ADD, FIND KEEP=FALSE, a lease and its ACK, an owner and its RELEASE, a waiting
 * READ served by an ADD, SET: one line each, with who and what; KOs and looks: none. */
static void test_changes(void **state)
{
    (void)state;
    daemon_proc d;
    start_with(&d, NULL);
    char lease[64], lease2[64], path[512];
    /* The names as `printf %s inj-two-secret | sha256sum | cut -c1-8` gives them. */
    const char *name = "data:d22bb86e", *one = "data:86f7987c";
    http_reply r;

    get_ok(d.port, "/sts/READ?FILENAME=logins.csv", TOKEN, &r);          /* u1, kept */
    http_reply_free(&r);
    get_ok(d.port, "/sts/READ?FILENAME=logins.csv&KEEP=FALSE", TOKEN, &r);  /* u42 */
    http_reply_free(&r);
    get_ok(d.port, "/sts/ADD?FILENAME=logins.csv&ADD_MODE=LAST&LINE=u7%3Bp%C3%A9", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/FIND?FILENAME=logins.csv&LINE=u4&KEEP=FALSE", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/READ?FILENAME=logins.csv&KEEP=FALSE&LEASE=60", TOKEN, &r);  /* u3 */
    assert_int_equal(http_header(&r, "X-STS-Lease", lease, sizeof lease), 0);
    http_reply_free(&r);
    char target[256];
    snprintf(target, sizeof target, "/sts/ACK?FILENAME=logins.csv&LEASE=%s", lease);
    get_ok(d.port, target, TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/READ?FILENAME=logins.csv&KEEP=FALSE&OWNER=vu-7", TOKEN, &r);  /* u5 */
    assert_int_equal(http_header(&r, "X-STS-Lease", lease2, sizeof lease2), 0);
    http_reply_free(&r);
    get_ok(d.port, "/sts/RELEASE?FILENAME=logins.csv&OWNER=vu-7", TOKEN, &r);
    http_reply_free(&r);
    /* Nothing changed: no line. */
    get_discard(d.port, "/sts/READ?FILENAME=absent.csv", TOKEN);
    get_discard(d.port, "/sts/LENGTH?FILENAME=logins.csv", TOKEN);
    get_discard(d.port, "/sts/READ?FILENAME=logins.csv", "wrong");
    /* A READ that waits, served by an ADD from the other token: logged when answered. */
    http_conn c;
    assert_int_equal(http_conn_open(&c, d.port), 0);
    char req[512];
    snprintf(req, sizeof req, "/sts/READ?FILENAME=wait.csv&KEEP=FALSE&TIMEOUT=5&TOKEN=%s",
             "inj-two-secret");
    assert_int_equal(http_conn_send(&c, req), 0);
    td_sleep_ms(100);
    get_ok(d.port, "/sts/ADD?FILENAME=wait.csv&LINE=w1", "inj-one-secret", &r);
    http_reply_free(&r);
    assert_int_equal(http_conn_recv(&c, &r), 0);
    assert_non_null(strstr(r.body, "w1"));
    http_reply_free(&r);
    http_conn_close(&c);
    get_ok(d.port, "/sts/SET?NAME=run&VALUE=42", TOKEN, &r);
    http_reply_free(&r);

    record recs[16];
    audit_path(&d, path, sizeof path);
    int n = read_records(path, recs, 16, 11);
    assert_int_equal(n, 11);
    check_common(&recs[0], name, "READ");
    assert_string_equal(str(&recs[0], "list"), "logins.csv");
    assert_string_equal(str(&recs[0], "line"), "u1;p1");
    assert_true(get(&recs[0], "keep")->b);
    assert_null(get(&recs[0], "lease"));
    check_common(&recs[1], name, "READ");
    assert_string_equal(str(&recs[1], "line"), "u42;p42");
    assert_false(get(&recs[1], "keep")->b);
    check_common(&recs[2], name, "ADD");
    assert_string_equal(str(&recs[2], "line"), "u7;p\xc3\xa9");
    assert_null(get(&recs[2], "keep"));
    check_common(&recs[3], name, "FIND");
    assert_string_equal(str(&recs[3], "line"), "u4;p4");
    assert_false(get(&recs[3], "keep")->b);
    check_common(&recs[4], name, "READ");
    assert_string_equal(str(&recs[4], "line"), "u3;p3");
    assert_string_equal(str(&recs[4], "lease"), lease);
    check_common(&recs[5], name, "ACK");
    assert_string_equal(str(&recs[5], "list"), "logins.csv");
    assert_string_equal(str(&recs[5], "lease"), lease);
    check_common(&recs[6], name, "READ");
    assert_string_equal(str(&recs[6], "line"), "u5;p5");
    assert_string_equal(str(&recs[6], "owner"), "vu-7");
    assert_string_equal(str(&recs[6], "lease"), lease2);
    check_common(&recs[7], name, "RELEASE");
    assert_string_equal(str(&recs[7], "owner"), "vu-7");
    /* Lines come in the order answers go out: the waiting READ, answered on its own
     * thread, may come before the ADD that served it. */
    int add = strcmp(str(&recs[8], "cmd"), "ADD") == 0 ? 8 : 9, read = 17 - add;
    check_common(&recs[add], one, "ADD");
    assert_string_equal(str(&recs[add], "list"), "wait.csv");
    check_common(&recs[read], name, "READ");
    assert_string_equal(str(&recs[read], "list"), "wait.csv");
    assert_string_equal(str(&recs[read], "line"), "w1");
    check_common(&recs[10], name, "SET");
    assert_string_equal(str(&recs[10], "key"), "run");
    assert_string_equal(str(&recs[10], "value"), "42");
    assert_null(get(&recs[10], "list"));

    /* CONFIG shows the keys once the log is on (and none of them while it is off:
     * test_config's test_each). */
    get_ok(d.port, "/sts/CONFIG", TOKEN, &r);
    assert_non_null(strstr(r.body, "stsd.auditLog.lines"));
    assert_non_null(strstr(r.body, "stsd.auditLog.maxBytes"));
    http_reply_free(&r);
    /* The counters say the same. */
    get_ok(d.port, "/metrics", TOKEN, &r);
    assert_non_null(strstr(r.body, "\nstsd_audit_lines_total 11\n"));
    assert_non_null(strstr(r.body, "\nstsd_audit_dropped_total 0\n"));
    http_reply_free(&r);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* Without tokens the token is null; READMULTI gives one line per line with its lease;
 * lines=hash gives each line's SHA-256 and never the line. */
static void test_hash_and_multi(void **state)
{
    (void)state;
    daemon_proc d;
    char path[512], hex[DIGEST_SHA256_HEX], ids[128];
    const char *more[] = {"-Dstsd.auditLog.lines=hash", NULL};
    start_with(&d, more);
    http_reply r;
    get_ok(d.port, "/sts/READ?FILENAME=logins.csv&KEEP=FALSE", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/READMULTI?FILENAME=logins.csv&NB_LINES=2&KEEP=FALSE&LEASE=30", TOKEN,
           &r);
    assert_int_equal(http_header(&r, "X-STS-Lease", ids, sizeof ids), 0);
    http_reply_free(&r);
    record recs[4];
    audit_path(&d, path, sizeof path);
    assert_int_equal(read_records(path, recs, 4, 3), 3);
    assert_int_equal(digest_sha256_hex("u1;p1", 5, hex), 0);
    assert_string_equal(str(&recs[0], "line_sha256"), hex);
    assert_null(get(&recs[0], "line"));
    assert_int_equal(digest_sha256_hex("u42;p42", 7, hex), 0);
    assert_string_equal(str(&recs[1], "line_sha256"), hex);
    assert_string_equal(str(&recs[1], "cmd"), "READMULTI");
    assert_int_equal(digest_sha256_hex("u3;p3", 5, hex), 0);
    assert_string_equal(str(&recs[2], "line_sha256"), hex);
    char want[128];
    snprintf(want, sizeof want, "%s,%s", str(&recs[1], "lease"), str(&recs[2], "lease"));
    assert_string_equal(want, ids);
    /* The known answer FIPS 180-4 gives for "abc": the hash is SHA-256 itself. */
    assert_int_equal(digest_sha256_hex("abc", 3, hex), 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char *text = slurp(path, NULL);
    assert_null(strstr(text, "u42"));
    free(text);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* A lease that ends at its deadline puts its line back: the lease timer's LEASE_EXPIRED
 * line says which line, which lease and which owner, with no client and no token. */
static void test_lease_expiry(void **state)
{
    (void)state;
    daemon_proc d;
    char path[512], id1[64], id2[64];
    start_with(&d, NULL);
    http_reply r;
    get_ok(d.port, "/sts/READ?FILENAME=logins.csv&KEEP=FALSE&LEASE=0.2", TOKEN, &r);
    assert_int_equal(http_header(&r, "X-STS-Lease", id1, sizeof id1), 0);
    http_reply_free(&r);
    get_ok(d.port, "/sts/READ?FILENAME=logins.csv&KEEP=FALSE&OWNER=vu-7&LEASE=0.2", TOKEN, &r);
    assert_int_equal(http_header(&r, "X-STS-Lease", id2, sizeof id2), 0);
    http_reply_free(&r);
    record recs[4];
    audit_path(&d, path, sizeof path);
    assert_int_equal(read_records(path, recs, 4, 4), 4);
    const record *e1 = NULL, *e2 = NULL;
    for (int i = 2; i < 4; i++) {
        assert_string_equal(str(&recs[i], "cmd"), "LEASE_EXPIRED");
        check_time(&recs[i]);
        assert_int_equal(get(&recs[i], "addr")->type, 'n');
        assert_int_equal(get(&recs[i], "token")->type, 'n');
        assert_string_equal(str(&recs[i], "list"), "logins.csv");
        if (strcmp(str(&recs[i], "lease"), id1) == 0)
            e1 = &recs[i];
        else if (strcmp(str(&recs[i], "lease"), id2) == 0)
            e2 = &recs[i];
    }
    assert_non_null(e1);
    assert_non_null(e2);
    assert_string_equal(str(e1, "line"), "u1;p1");
    assert_null(get(e1, "owner"));
    assert_string_equal(str(e2, "line"), "u42;p42");
    assert_string_equal(str(e2, "owner"), "vu-7");
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* The commands that came after the audit log change lists and keys too: ADDMULTI (one
 * line per line, from LINES or repeated LINE=), DROP (a list, a prefix), EXPIRE, and DEL
 * PREFIX (the prefix named, since no key is). */
static void test_bulk_and_cleanup(void **state)
{
    (void)state;
    daemon_proc d;
    char path[512];
    start_with(&d, NULL);
    http_reply r;
    get_ok(d.port, "/sts/ADDMULTI?FILENAME=bulk.csv&LINES=b1%0D%0Ab2%0A%0Ab4", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/ADDMULTI?FILENAME=run-7.csv&LINE=c1&LINE=c2", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/DROP?FILENAME=bulk.csv", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/DROP?PREFIX=run-", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/SET?NAME=k1&VALUE=v", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/EXPIRE?NAME=k1&TTL=60", TOKEN, &r);
    http_reply_free(&r);
    get_ok(d.port, "/sts/DEL?PREFIX=k", TOKEN, &r);
    http_reply_free(&r);
    record recs[16];
    audit_path(&d, path, sizeof path);
    assert_int_equal(read_records(path, recs, 16, 11), 11);
    const char *lines[] = {"b1", "b2", "", "b4"};
    for (int i = 0; i < 4; i++) {
        check_common(&recs[i], "data:d22bb86e", "ADDMULTI");
        assert_string_equal(str(&recs[i], "list"), "bulk.csv");
        assert_string_equal(str(&recs[i], "line"), lines[i]);
    }
    assert_string_equal(str(&recs[4], "line"), "c1");
    assert_string_equal(str(&recs[5], "line"), "c2");
    assert_string_equal(str(&recs[5], "list"), "run-7.csv");
    check_common(&recs[6], "data:d22bb86e", "DROP");
    assert_string_equal(str(&recs[6], "list"), "bulk.csv");
    check_common(&recs[7], "data:d22bb86e", "DROP");
    assert_string_equal(str(&recs[7], "prefix"), "run-");
    assert_null(get(&recs[7], "list"));
    assert_string_equal(str(&recs[8], "cmd"), "SET");
    check_common(&recs[9], "data:d22bb86e", "EXPIRE");
    assert_string_equal(str(&recs[9], "key"), "k1");
    check_common(&recs[10], "data:d22bb86e", "DEL");
    assert_string_equal(str(&recs[10], "prefix"), "k");
    assert_null(get(&recs[10], "key"));
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* maxBytes=1K: files never pass it, three are kept, the newest lines are in PATH. */
static void test_rotation(void **state)
{
    (void)state;
    daemon_proc d;
    char path[512], p1[520], p2[520], p3[520];
    const char *more[] = {"-Dstsd.auditLog.maxBytes=1K", NULL};
    start_with(&d, more);
    http_reply r;
    for (int i = 0; i < 60; i++) {
        char target[128];
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=rot.csv&LINE=line-%03d", i);
        get_ok(d.port, target, TOKEN, &r);
        http_reply_free(&r);
    }
    audit_path(&d, path, sizeof path);
    snprintf(p1, sizeof p1, "%s.1", path);
    snprintf(p2, sizeof p2, "%s.2", path);
    snprintf(p3, sizeof p3, "%s.3", path);
    get_ok(d.port, "/metrics", TOKEN, &r);
    http_reply_free(&r);
    /* Wait until the last line is written. */
    char *cur = NULL;
    for (int i = 0; i < 300; i++) {
        free(cur);
        cur = slurp(path, NULL);
        if (cur && strstr(cur, "line-059"))
            break;
        td_sleep_ms(10);
    }
    assert_non_null(cur);
    assert_non_null(strstr(cur, "line-059"));
    free(cur);
    const char *files[] = {p2, p1, path};
    int last = -1;
    for (int f = 0; f < 3; f++) {
        size_t len;
        char *text = slurp(files[f], &len);
        assert_non_null(text);
        assert_true(len > 0 && len <= 1024);
        assert_int_equal(text[len - 1], '\n');
        record recs[16];
        int n = read_records(files[f], recs, 16, 1);
        assert_true(n > 0 && n <= 16);
        /* Each file continues the one before it. */
        for (int i = 0; i < n; i++) {
            int k;
            assert_int_equal(sscanf(str(&recs[i], "line"), "line-%d", &k), 1);
            if (last >= 0)
                assert_int_equal(k, last + 1);
            last = k;
        }
        free(text);
    }
    assert_int_equal(last, 59);
    assert_int_equal(access(p3, F_OK), -1);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* logrotate's way: move the file, SIGHUP; the lines before go to the moved file, the
 * lines after to a new file at the path. */
static void test_sighup_reopens(void **state)
{
    (void)state;
    daemon_proc d;
    char path[512], moved[600];
    start_with(&d, NULL);
    http_reply r;
    audit_path(&d, path, sizeof path);
    snprintf(moved, sizeof moved, "%s.moved", path);
    get_ok(d.port, "/sts/ADD?FILENAME=h.csv&LINE=before", TOKEN, &r);
    http_reply_free(&r);
    record recs[4];
    assert_int_equal(read_records(path, recs, 4, 1), 1);
    assert_int_equal(rename(path, moved), 0);
    get_ok(d.port, "/sts/ADD?FILENAME=h.csv&LINE=still-old", TOKEN, &r);
    http_reply_free(&r);
    assert_int_equal(read_records(moved, recs, 4, 2), 2);
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    /* The reopen happens on the writer's next turn; wait for the new file. */
    for (int i = 0; i < 300 && access(path, F_OK) != 0; i++)
        td_sleep_ms(10);
    get_ok(d.port, "/sts/ADD?FILENAME=h.csv&LINE=after", TOKEN, &r);
    http_reply_free(&r);
    assert_int_equal(read_records(path, recs, 4, 1), 1);
    assert_string_equal(str(&recs[0], "line"), "after");
    assert_int_equal(read_records(moved, recs, 4, 2), 2);
    assert_string_equal(str(&recs[1], "line"), "still-old");
    /* The server is alive and says why it got the signal. */
    get_ok(d.port, "/sts/LENGTH?FILENAME=h.csv", TOKEN, &r);
    http_reply_free(&r);
    assert_non_null(strstr(td_log(&d), "audit log is reopened"));
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

/* Bad values stop the start with a message naming the key. */
static void test_bad_values(void **state)
{
    (void)state;
    static const struct {
        const char *opt;
        const char *where;      /* appended to opt after the temp directory, or NULL */
        const char *says;
    } cases[] = {
        {"-Dstsd.auditLog.maxBytes=0", NULL, "stsd.auditLog.maxBytes"},
        {"-Dstsd.auditLog.maxBytes=2000G", NULL, "stsd.auditLog.maxBytes"},
        {"-Dstsd.auditLog.lines=sha1", NULL,
         "stsd.auditLog.lines: \"sha1\" is not plain or hash"},
        {"-Dstsd.auditLog=", "/no/such/dir/audit.log", "stsd.auditLog: cannot open"},
        {"-Dstsd.auditLog=", "", "stsd.auditLog: cannot open"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        daemon_proc d;
        char opt[600];
        assert_int_equal(td_mkdirs(&d), 0);
        if (cases[i].where)
            snprintf(opt, sizeof opt, "%s%s%s", cases[i].opt, d.dir, cases[i].where);
        else
            snprintf(opt, sizeof opt, "%s", cases[i].opt);
        const char *extra[] = {opt, NULL};
        if (td_start(&d, extra) == 0)
            fail_msg("%s: stsd started", opt);
        if (!strstr(td_log(&d), cases[i].says))
            fail_msg("%s: the log does not say \"%s\":\n%s", opt, cases[i].says, td_log(&d));
        td_cleanup(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changes),
        cmocka_unit_test(test_hash_and_multi),
        cmocka_unit_test(test_bulk_and_cleanup),
        cmocka_unit_test(test_lease_expiry),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_sighup_reopens),
        cmocka_unit_test(test_bad_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
