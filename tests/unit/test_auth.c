/* SPDX-License-Identifier: Apache-2.0 */
/* test_auth.c - unit tests of the access rules: constant-time compare, token sources,
 * roles, disabled commands, the 429 penalty, CIDR allowlists and CONFIG's masking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "guard/allow.h"
#include "guard/auth.h"
#include "cmd/command.h"
#include "testlib.h"

/* Rules from key=value pairs (NULL-terminated), with the environment cleared first. */
static auth *rules(const char *const *kv, buf *err)
{
    config c;
    unsetenv("STSD_TOKEN");
    unsetenv("STSD_ADMIN_TOKEN");
    assert_int_equal(config_defaults(&c), 0);
    for (int i = 0; kv && kv[i]; i += 2)
        assert_int_equal(config_set(&c, kv[i], kv[i + 1], err), 0);
    auth *a = auth_create(&c, command_exists, err);
    config_free(&c);
    return a;
}

/* As the dispatcher asks: the command path names, and whether its row says admin. */
static auth_verdict check(auth *a, const char *addr, const char *path, const char *header,
                          const char *token)
{
    struct sockaddr_in s = td_sockaddr4(addr);
    const cmd_def *c = command_of_path(path, strlen(path));
    return auth_check(a, (struct sockaddr *)&s, sizeof s, c ? c->name : NULL,
                      c && (c->flags & CMD_ADMIN), header, token, token ? strlen(token) : 0);
}

static void test_equal(void **state)
{
    assert_true(auth_equal("secret-token", 12, "secret-token", 12));
    assert_false(auth_equal("secret-token", 12, "secret-tokeN", 12));   /* last byte */
    assert_false(auth_equal("secret-token", 12, "Secret-token", 12));   /* first byte */
    assert_false(auth_equal("secret-token", 12, "secret-toke", 11));    /* a prefix */
    assert_false(auth_equal("secret-token", 12, "secret-token!", 13));  /* longer */
    assert_false(auth_equal("secret-token", 12, "", 0));
    /* The length alone must not decide: a given text padded with NULs past its length. */
    assert_false(auth_equal("ab\0", 3, "ab", 2));
    /* Bytes past n are never read: the given text may end right at a page's edge. */
    long pg = sysconf(_SC_PAGESIZE);
    char *two = aligned_alloc((size_t)pg, (size_t)pg * 2);
    assert_non_null(two);
    memcpy(two + pg - 3, "abc", 3);
    assert_true(auth_equal("abc", 3, two + pg - 3, 3));
    assert_false(auth_equal("abcdef", 6, two + pg - 3, 3));
    free(two);
}

static void test_no_rules(void **state)
{
    buf err = BUF_INIT;
    auth *a = rules(NULL, &err);
    assert_non_null(a);
    assert_false(auth_active(a));
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", NULL, NULL), AUTH_OK);
    auth_free(a);
    buf_free(&err);
}

static void test_data_token(void **state)
{
    buf err = BUF_INIT;
    const char *kv[] = {"stsd.token", " old-one , new-one ", NULL};
    auth *a = rules(kv, &err);
    assert_non_null(a);
    assert_true(auth_active(a));
    assert_true(auth_has_data_token(a));
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", NULL, NULL), AUTH_MISSING);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", "Bearer new-one", NULL), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", "bearer   old-one ", NULL), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", NULL, "old-one"), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", "Bearer nope", NULL), AUTH_WRONG);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", NULL, "old-on"), AUTH_WRONG);
    /* A header of another scheme is no Bearer token: the parameter counts then. */
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", "Basic b2xkLW9uZQ==", "new-one"),
                     AUTH_OK);
    /* Without an admin token the data token runs everything. */
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", "Bearer old-one", NULL), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/metrics", NULL, NULL), AUTH_MISSING);
    auth_free(a);
    buf_free(&err);
}

static void test_admin_roles(void **state)
{
    buf err = BUF_INIT;
    const char *kv[] = {"stsd.token", "data1", "stsd.adminToken", "boss", NULL};
    auth *a = rules(kv, &err);
    assert_non_null(a);
    const char *admin[] = {"INITFILE", "LOAD", "SAVE", "RESET", "STOP", "CONFIG", "OPEN",
                           "DROP", "EXPIRE", "CLUSTERADD", "CLUSTERREMOVE"};
    for (size_t i = 0; i < 11; i++) {
        char path[64];
        snprintf(path, sizeof path, "/sts/%s", admin[i]);
        assert_int_equal(check(a, "10.0.0.1", path, "Bearer data1", NULL), AUTH_NEED_ADMIN);
        assert_int_equal(check(a, "10.0.0.1", path, "Bearer boss", NULL), AUTH_OK);
        assert_int_equal(check(a, "10.0.0.1", path, NULL, NULL), AUTH_MISSING);
    }
    /* Those eleven, and no other: the table's rows say it (DEL with PREFIX= is checked by
     * dispatch, test_cleanup). */
    int admins = 0;
    for (int i = 0; i < command_count(); i++)
        admins += (command_at(i)->flags & CMD_ADMIN) != 0;
    assert_int_equal(admins, 11);
    /* Names match exactly everywhere: "reset" runs nothing, so it needs no admin. */
    assert_null(command_of_path("/sts/reset", 10));
    assert_int_equal(check(a, "10.0.0.1", "/sts/reset", "Bearer data1", NULL), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", "Bearer boss", NULL), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", "Bearer data1", NULL), AUTH_OK);
    auth_free(a);

    /* Only an admin token: data commands stay open, admin ones do not. */
    const char *kv2[] = {"stsd.adminToken", "boss", NULL};
    a = rules(kv2, &err);
    assert_non_null(a);
    assert_false(auth_has_data_token(a));
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", NULL, NULL), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", NULL, NULL), AUTH_MISSING);
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", NULL, "boss"), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", "Bearer guess", NULL), AUTH_WRONG);
    auth_free(a);
    buf_free(&err);
}

static void test_disabled(void **state)
{
    buf err = BUF_INIT;
    const char *kv[] = {"stsd.disabledCommands", "STOP, reset", NULL};
    auth *a = rules(kv, &err);
    assert_non_null(a);
    assert_true(auth_active(a));
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", NULL, NULL), AUTH_DISABLED);
    assert_int_equal(check(a, "10.0.0.1", "/sts/RESET", NULL, NULL), AUTH_DISABLED);
    assert_int_equal(check(a, "10.0.0.1", "/sts/READ", NULL, NULL), AUTH_OK);
    auth_free(a);
    /* The admin token does not lift it; no token at all gets 401 first. */
    const char *kv2[] = {"stsd.disabledCommands", "STOP", "stsd.adminToken", "boss", NULL};
    a = rules(kv2, &err);
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", "Bearer boss", NULL), AUTH_DISABLED);
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", NULL, NULL), AUTH_MISSING);
    auth_free(a);
    const char *bad[] = {"stsd.disabledCommands", "STOP,STPO", NULL};
    assert_null(rules(bad, &err));
    assert_string_equal(err.data, "stsd.disabledCommands: \"STPO\" is not a command");
    buf_free(&err);
}

static void test_sources(void **state)
{
    buf err = BUF_INIT;
    char dir[] = "/tmp/test_auth.XXXXXX", path[64], cmd[96];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/cred", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("from-file\nsecond-from-file\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0600), 0);
    config c;
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(config_set(&c, "stsd.tokenFile", path, &err), 0);
    assert_int_equal(config_set(&c, "stsd.token", "from-key", &err), 0);
    setenv("STSD_TOKEN", "from-env", 1);
    setenv("STSD_ADMIN_TOKEN", "admin-env", 1);
    auth *a = auth_create(&c, command_exists, &err);
    assert_non_null(a);
    size_t nd, na;
    auth_counts(a, &nd, &na);
    assert_int_equal(nd, 4);
    assert_int_equal(na, 1);
    const char *ok[] = {"from-file", "second-from-file", "from-key", "from-env"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(check(a, "10.0.0.1", "/sts/READ", NULL, ok[i]), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", NULL, "admin-env"), AUTH_OK);
    assert_int_equal(check(a, "10.0.0.1", "/sts/STOP", NULL, "from-env"), AUTH_NEED_ADMIN);
    auth_free(a);
    unsetenv("STSD_TOKEN");
    unsetenv("STSD_ADMIN_TOKEN");

    /* An empty file, a missing one, and a token with a blank inside are refused. */
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
    buf_clear(&err);
    assert_null(auth_create(&c, command_exists, &err));
    assert_non_null(strstr(err.data, "holds no token"));
    assert_int_equal(config_set(&c, "stsd.tokenFile", "/no/such/file", &err), 0);
    buf_clear(&err);
    assert_null(auth_create(&c, command_exists, &err));
    assert_non_null(strstr(err.data, "stsd.tokenFile: /no/such/file"));
    assert_int_equal(config_set(&c, "stsd.tokenFile", "", &err), 0);
    assert_int_equal(config_set(&c, "stsd.token", "caf\xc3\xa9", &err), 0);
    buf_clear(&err);
    assert_null(auth_create(&c, command_exists, &err));
    assert_null(strstr(err.data, "caf"));      /* never echoes a token */
    config_free(&c);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    buf_free(&err);
}

static void test_penalty(void **state)
{
    buf err = BUF_INIT;
    const char *kv[] = {"stsd.token", "good", NULL};
    auth *a = rules(kv, &err);
    assert_non_null(a);
    unsigned long long before = auth_failures_total();
    for (int i = 0; i < AUTH_MAX_FAILURES; i++)
        assert_int_equal(check(a, "10.1.1.1", "/sts/READ", "Bearer bad", NULL), AUTH_WRONG);
    /* Exactly 20 failures: not yet. */
    assert_int_equal(check(a, "10.1.1.1", "/sts/READ", "Bearer good", NULL), AUTH_OK);
    assert_int_equal(check(a, "10.1.1.1", "/sts/READ", NULL, NULL), AUTH_MISSING);
    assert_int_equal(auth_failures_total() - before, AUTH_MAX_FAILURES + 1);
    /* The 21st put it in the box: even the right token gets 429 there, not elsewhere. */
    assert_int_equal(check(a, "10.1.1.1", "/sts/READ", "Bearer good", NULL), AUTH_TOO_MANY);
    assert_int_equal(check(a, "10.1.1.2", "/sts/READ", "Bearer good", NULL), AUTH_OK);
    struct sockaddr_in6 s6 = td_sockaddr6("fd00::1");
    assert_int_equal(auth_check(a, (struct sockaddr *)&s6, sizeof s6, "READ", 0, "Bearer good",
                                NULL, 0), AUTH_OK);
    /* 429s are not failures. */
    assert_int_equal(auth_failures_total() - before, AUTH_MAX_FAILURES + 1);
    assert_int_equal(auth_status(AUTH_TOO_MANY), 429);
    assert_int_equal(auth_status(AUTH_WRONG), 401);
    assert_int_equal(auth_status(AUTH_MISSING), 401);
    assert_int_equal(auth_status(AUTH_NEED_ADMIN), 403);
    assert_int_equal(auth_status(AUTH_DISABLED), 403);
    auth_free(a);
    buf_free(&err);
}

/* A client on a dual-stack socket shows its IPv4 address as ::ffff:a.b.c.d: the same
 * client as on an IPv4 socket, with one failure count and one penalty. */
static void test_penalty_v4mapped(void **state)
{
    buf err = BUF_INIT;
    const char *kv[] = {"stsd.token", "good", NULL};
    auth *a = rules(kv, &err);
    assert_non_null(a);
    struct sockaddr_in6 m = td_sockaddr6("::ffff:10.9.9.9");
    for (int i = 0; i < AUTH_MAX_FAILURES; i++) {
        if (i % 2)
            assert_int_equal(check(a, "10.9.9.9", "/sts/READ", "Bearer bad", NULL), AUTH_WRONG);
        else
            assert_int_equal(auth_check(a, (struct sockaddr *)&m, sizeof m, "READ", 0,
                                        "Bearer bad", NULL, 0), AUTH_WRONG);
    }
    /* Twenty, half in each form: not yet in the box. The 21st, in either, puts it in. */
    assert_int_equal(check(a, "10.9.9.9", "/sts/READ", "Bearer good", NULL), AUTH_OK);
    assert_int_equal(auth_check(a, (struct sockaddr *)&m, sizeof m, "READ", 0,
                                "Bearer bad", NULL, 0), AUTH_WRONG);
    assert_int_equal(check(a, "10.9.9.9", "/sts/READ", "Bearer good", NULL), AUTH_TOO_MANY);
    assert_int_equal(auth_check(a, (struct sockaddr *)&m, sizeof m, "READ", 0,
                                "Bearer good", NULL, 0), AUTH_TOO_MANY);
    /* Another IPv4 address, in either form, is not in the box. */
    struct sockaddr_in6 other = td_sockaddr6("::ffff:10.9.9.8");
    assert_int_equal(auth_check(a, (struct sockaddr *)&other, sizeof other, "READ", 0,
                                "Bearer good", NULL, 0), AUTH_OK);
    assert_int_equal(check(a, "10.9.9.8", "/sts/READ", "Bearer good", NULL), AUTH_OK);
    auth_free(a);
    buf_free(&err);
}

static void test_allow(void **state)
{
    buf err = BUF_INIT;
    allow_list *l = allow_parse("127.0.0.1, 10.0.0.0/8,192.168.1.128/25, fd00::/8, ::1", &err);
    assert_non_null(l);
    struct { const char *a; int in; } v4s[] = {
        {"127.0.0.1", 1}, {"127.0.0.2", 0}, {"10.255.1.2", 1}, {"11.0.0.1", 0},
        {"192.168.1.128", 1}, {"192.168.1.255", 1}, {"192.168.1.127", 0},
    };
    for (size_t i = 0; i < sizeof v4s / sizeof v4s[0]; i++) {
        struct sockaddr_in s = td_sockaddr4(v4s[i].a);
        if (allow_match(l, (struct sockaddr *)&s, sizeof s) != v4s[i].in)
            fail_msg("%s", v4s[i].a);
    }
    struct { const char *a; int in; } v6s[] = {
        {"fd12::5", 1}, {"fe80::1", 0}, {"::1", 1}, {"::2", 0},
        {"::ffff:10.1.2.3", 1}, {"::ffff:11.1.2.3", 0},     /* IPv4 on a dual-stack socket */
    };
    for (size_t i = 0; i < sizeof v6s / sizeof v6s[0]; i++) {
        struct sockaddr_in6 s = td_sockaddr6(v6s[i].a);
        if (allow_match(l, (struct sockaddr *)&s, sizeof s) != v6s[i].in)
            fail_msg("%s", v6s[i].a);
    }
    allow_free(l);
    l = allow_parse("0.0.0.0/0", &err);
    struct sockaddr_in s = td_sockaddr4("203.0.113.9");
    assert_true(allow_match(l, (struct sockaddr *)&s, sizeof s));
    allow_free(l);
    l = allow_parse("10.0.0.0/008, fd00::/128", &err);   /* three digits at most, zeros or not */
    assert_non_null(l);
    allow_free(l);
    const char *bad[] = {"10.0.0.0/33", "fd00::/129", "10.0.0.0/", "example.com", "10.0.0.1,,",
                         "10.0.0.0/8x", "", "10.0.0.0/+8", "10.0.0.0/-0", "10.0.0.0/0008",
                         "10.0.0.0/ 8", "fd00::/1280"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_clear(&err);
        assert_null(allow_parse(bad[i], &err));
        assert_non_null(strstr(err.data, "stsd.allow: "));
    }
    assert_true(allow_is_loopback_text("127.0.0.1"));
    assert_true(allow_is_loopback_text("127.3.0.1"));
    assert_true(allow_is_loopback_text("::1"));
    assert_false(allow_is_loopback_text("0.0.0.0"));
    assert_false(allow_is_loopback_text("::"));
    buf_free(&err);
}

static void each_find(const char *key, const char *value, void *ctx)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 4096 - n, "%s=%s\n", key, value);
}

static void test_config_masks(void **state)
{
    config c;
    buf err = BUF_INIT;
    char text[4096] = "";
    assert_int_equal(config_defaults(&c), 0);
    config_each(&c, each_find, text);
    assert_null(strstr(text, "stsd.token"));
    assert_null(strstr(text, "stsd.tls"));
    assert_null(strstr(text, "stsd.allow"));
    assert_int_equal(config_set(&c, "stsd.token", "s3cret-data", &err), 0);
    assert_int_equal(config_set(&c, "stsd.adminToken", "s3cret-admin", &err), 0);
    assert_int_equal(config_set(&c, "stsd.allow", "10.0.0.0/8", &err), 0);
    text[0] = '\0';
    config_each(&c, each_find, text);
    assert_null(strstr(text, "s3cret"));
    assert_non_null(strstr(text, "stsd.token=********\n"));
    assert_non_null(strstr(text, "stsd.adminToken=********\n"));
    assert_non_null(strstr(text, "stsd.allow=10.0.0.0/8\n"));
    config_free(&c);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal),         cmocka_unit_test(test_no_rules),
        cmocka_unit_test(test_data_token),    cmocka_unit_test(test_admin_roles),
        cmocka_unit_test(test_disabled),      cmocka_unit_test(test_sources),
        cmocka_unit_test(test_penalty),       cmocka_unit_test(test_penalty_v4mapped),
        cmocka_unit_test(test_allow),
        cmocka_unit_test(test_config_masks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
