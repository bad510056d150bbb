/* SPDX-License-Identifier: Apache-2.0 */
/* test_audit_log.c - the audit log's parts: a record's JSON line (escapes, base64, hashes,
 * nulls), time and address text, and the writer's rotation, drops and reopen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/audit_record.h"
#include "base/digest.h"

static void test_time(void **state)
{
    (void)state;
    char t[AUDIT_TIME_SIZE];
    audit_time_text(0, t);
    assert_string_equal(t, "1970-01-01T00:00:00.000Z");
    audit_time_text(1796000000123LL, t);
    assert_string_equal(t, "2026-11-30T00:53:20.123Z");
    /* The same second again (the per-thread cache) with other milliseconds. */
    audit_time_text(1796000000999LL, t);
    assert_string_equal(t, "2026-11-30T00:53:20.999Z");
    audit_time_text(1796000001007LL, t);
    assert_string_equal(t, "2026-11-30T00:53:21.007Z");
    /* Leap day. */
    audit_time_text(951782400000LL, t);
    assert_string_equal(t, "2000-02-29T00:00:00.000Z");
}

static void test_addr(void **state)
{
    (void)state;
    char out[AUDIT_ADDR_SIZE];
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    inet_pton(AF_INET, "10.1.2.3", &a4.sin_addr);
    assert_int_equal(audit_addr_text((struct sockaddr *)&a4, sizeof a4, out), 0);
    assert_string_equal(out, "10.1.2.3");
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:192.168.0.9", &a6.sin6_addr);
    assert_int_equal(audit_addr_text((struct sockaddr *)&a6, sizeof a6, out), 0);
    assert_string_equal(out, "192.168.0.9");
    inet_pton(AF_INET6, "2001:db8::1", &a6.sin6_addr);
    assert_int_equal(audit_addr_text((struct sockaddr *)&a6, sizeof a6, out), 0);
    assert_string_equal(out, "2001:db8::1");
    assert_int_equal(audit_addr_text(NULL, 0, out), -1);
    assert_string_equal(out, "");
}

static void test_format(void **state)
{
    (void)state;
    buf b = BUF_INIT;
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a4.sin_addr);
    audit_record r = {
        .wall_ms = 1796000000123LL, .addr = (struct sockaddr *)&a4, .addr_len = sizeof a4,
        .token = "data:1a2b3c4d", .cmd = "READ", .list = "logins.csv", .list_len = 10,
        .line = "u42;\"p\"\n\x01", .line_len = 9, .keep = 0,
        .lease = "00000000000000ab", .lease_len = 16, .owner = "vu-7", .owner_len = 4,
    };
    assert_int_equal(audit_format(&b, &r, 0), 0);
    assert_string_equal(b.data,
        "{\"time\":\"2026-11-30T00:53:20.123Z\",\"addr\":\"127.0.0.1\","
        "\"token\":\"data:1a2b3c4d\",\"cmd\":\"READ\",\"list\":\"logins.csv\","
        "\"line\":\"u42;\\\"p\\\"\\n\\u0001\",\"keep\":false,"
        "\"lease\":\"00000000000000ab\",\"owner\":\"vu-7\"}\n");
    /* No address, no token: nulls; a key instead of a list; bytes that are not UTF-8 go
     * as base64 and come back exactly. */
    buf_clear(&b);
    audit_record k = {.wall_ms = 0, .cmd = "SET", .key = "k", .key_len = 1,
                      .value = "\xff\xfe", .value_len = 2, .keep = -1};
    assert_int_equal(audit_format(&b, &k, 0), 0);
    assert_string_equal(b.data,
        "{\"time\":\"1970-01-01T00:00:00.000Z\",\"addr\":null,\"token\":null,\"cmd\":\"SET\","
        "\"key\":\"k\",\"value_base64\":\"//4=\"}\n");
    /* Hashed: the line's SHA-256 and never the line. */
    buf_clear(&b);
    char hex[DIGEST_SHA256_HEX];
    assert_int_equal(digest_sha256_hex(r.line, r.line_len, hex), 0);
    assert_int_equal(audit_format(&b, &r, 1), 0);
    char want[128];
    snprintf(want, sizeof want, "\"line_sha256\":\"%s\"", hex);
    assert_non_null(strstr(b.data, want));
    assert_null(strstr(b.data, "u42"));
    assert_null(strstr(b.data, "\"line\""));
    /* One line: the only '\n' is the last byte. */
    assert_ptr_equal(strchr(b.data, '\n'), b.data + b.len - 1);
    buf_free(&b);
}

/* A temp directory for the writer's files. */
static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/stsd-audit-unit.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = calloc(1, 1 << 20);
    size_t n = b ? fread(b, 1, (1 << 20) - 1, f) : 0;
    (void)n;
    fclose(f);
    return b;
}

/* Lines of 100 bytes into files of 1,000: 10 lines each, 3 files kept, none past it. */
static void test_rotation(void **state)
{
    (void)state;
    char path[128], p1[140], p2[140], p3[140];
    snprintf(path, sizeof path, "%s/rot.log", dir);
    snprintf(p1, sizeof p1, "%s.1", path);
    snprintf(p2, sizeof p2, "%s.2", path);
    snprintf(p3, sizeof p3, "%s.3", path);
    buf err = BUF_INIT;
    audit_settings s = {path, 1000, 0, 0};
    audit *a = audit_open(&s, &err);
    assert_non_null(a);
    for (int i = 0; i < 45; i++) {
        char line[101];
        memset(line, 'x', sizeof line);
        snprintf(line, sizeof line, "%03d", i);
        line[3] = 'x';
        line[99] = '\n';
        assert_int_equal(audit_append(a, line, 100), 0);
    }
    audit_close(a);     /* flushes */
    assert_int_equal(file_size(path), 500);
    assert_int_equal(file_size(p1), 1000);
    assert_int_equal(file_size(p2), 1000);
    assert_int_equal(file_size(p3), -1);
    char *t = slurp(path);
    assert_non_null(t);
    assert_memory_equal(t, "040x", 4);
    assert_memory_equal(t + 400, "044x", 4);
    free(t);
    t = slurp(p2);
    assert_memory_equal(t, "020x", 4);
    free(t);
    /* A line longer than maxBytes gets a file of its own; the file is reopened, appended. */
    a = audit_open(&s, &err);
    assert_non_null(a);
    char big[1500];
    memset(big, 'y', sizeof big);
    big[sizeof big - 1] = '\n';
    assert_int_equal(audit_append(a, big, sizeof big), 0);
    assert_int_equal(audit_append(a, "z\n", 2), 0);
    audit_close(a);
    assert_int_equal(file_size(p1), 1500);
    assert_int_equal(file_size(path), 2);
    assert_int_equal(file_size(p2), 500);
    buf_free(&err);
}

/* A rotation that cannot happen (PATH.1 and PATH.2 are directories with files in them,
 * so no rename succeeds) must not keep the writer rotating: the lines go to PATH past
 * maxBytes, and audit_close returns. The alarm turns a hang into a failure. */
static void test_rotation_refused(void **state)
{
    (void)state;
    char path[128], sub[160];
    snprintf(path, sizeof path, "%s/stuck.log", dir);
    for (int i = 1; i <= 2; i++) {
        snprintf(sub, sizeof sub, "%s.%d", path, i);
        assert_int_equal(mkdir(sub, 0700), 0);
        snprintf(sub, sizeof sub, "%s.%d/keep", path, i);
        FILE *f = fopen(sub, "w");
        assert_non_null(f);
        fclose(f);
    }
    buf err = BUF_INIT;
    audit_settings s = {path, 150, 0, 0};
    audit *a = audit_open(&s, &err);
    assert_non_null(a);
    char line[100];
    memset(line, 'r', sizeof line);
    line[99] = '\n';
    alarm(20);
    assert_int_equal(audit_append(a, line, 100), 0);
    assert_int_equal(audit_append(a, line, 100), 0);
    assert_int_equal(audit_append(a, line, 100), 0);
    for (int i = 0; i < 500 && audit_lines_total(a) < 3; i++)
        usleep(10000);
    assert_int_equal(audit_lines_total(a), 3);
    audit_close(a);
    alarm(0);
    assert_int_equal(file_size(path), 300);
    buf_free(&err);
}

/* A full buffer drops lines and counts them, and never blocks. */
static void test_drops(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/drop.log", dir);
    buf err = BUF_INIT;
    audit_settings s = {path, 1 << 20, 0, 64};
    audit *a = audit_open(&s, &err);
    assert_non_null(a);
    char line[40];
    memset(line, 'd', sizeof line);
    line[39] = '\n';
    assert_int_equal(audit_append(a, line, 40), 0);
    /* Longer than the whole buffer: no room whenever the writer comes. */
    char longer[80];
    memset(longer, 'e', sizeof longer);
    longer[79] = '\n';
    assert_int_equal(audit_append(a, longer, 80), -1);
    audit_drop(a);
    assert_int_equal(audit_dropped_total(a), 2);
    audit_close(a);
    assert_int_equal(file_size(path), 40);
    buf_free(&err);
}

/* Reopen: the file moved away, the next lines go to a new one at the path. */
static void test_reopen(void **state)
{
    (void)state;
    char path[128], moved[140];
    snprintf(path, sizeof path, "%s/hup.log", dir);
    snprintf(moved, sizeof moved, "%s.old", path);
    buf err = BUF_INIT;
    audit_settings s = {path, 1 << 20, 0, 0};
    audit *a = audit_open(&s, &err);
    assert_non_null(a);
    assert_int_equal(audit_append(a, "one\n", 4), 0);
    for (int i = 0; i < 200 && audit_lines_total(a) < 1; i++)
        usleep(10000);
    assert_int_equal(audit_lines_total(a), 1);
    assert_int_equal(rename(path, moved), 0);
    audit_reopen(a);
    for (int i = 0; i < 200 && access(path, F_OK) != 0; i++)
        usleep(10000);
    assert_int_equal(audit_append(a, "two\n", 4), 0);
    audit_close(a);
    assert_int_equal(file_size(moved), 4);
    assert_int_equal(file_size(path), 4);
    /* A path that cannot be opened: the message names the key. */
    snprintf(path, sizeof path, "%s/no/such.log", dir);
    assert_null(audit_open(&s, &err));
    assert_non_null(strstr(err.data, "stsd.auditLog: cannot open"));
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_addr),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_rotation_refused),
        cmocka_unit_test(test_drops),
        cmocka_unit_test(test_reopen),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
