/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_cluster.c - the replicas' keys (stsd.cluster.*): their values, the form of a
 * node, the checks between them, -D and files, CONFIG's listing, the documentation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"

#define N1 "stsd.cluster.node.1"
#define N2 "stsd.cluster.node.2"
#define N3 "stsd.cluster.node.3"
#define NODE_FORM "is not \"RAFT_HOST:PORT http(s)://HOST:PORT\" (the raft address, a blank, " \
                  "the HTTP URL)"

/* ---- helpers (static: the test binary links every module) ---- */

static char tmp_dir[1024];

static int make_tmp(void **state)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/test_config_cluster.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int remove_tmp(void **state)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes text to <tmp_dir>/name; returns the path in a static buffer. */
static const char *write_file(const char *name, const char *text)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
    return path;
}

static void set_ok(config *c, const char *key, const char *value)
{
    buf err = BUF_INIT;
    if (config_set(c, key, value, &err) != 0)
        fail_msg("%s=%s: %s", key, value, err.data);
    buf_free(&err);
}

/* Sets key=value and expects an error with exactly this message; c must not change. */
static void set_fails(config *c, const char *key, const char *value, const char *msg)
{
    buf err = BUF_INIT;
    config before;
    memcpy(&before, c, sizeof before);
    if (config_set(c, key, value, &err) != -1)
        fail_msg("%s=\"%s\" was taken", key, value);
    assert_non_null(err.data);
    if (strcmp(err.data, msg) != 0)
        fail_msg("%s=\"%s\":\n  got  %s\n  want %s", key, value, err.data, msg);
    assert_memory_equal(&before, c, sizeof before);
    buf_free(&err);
}

/* Each of the n values in bad refused as set_fails says, with the message "KEY: "VALUE"
 * " followed by want. */
static void set_fails_each(config *c, const char *key, const char *const *bad, size_t n,
                           const char *want)
{
    for (size_t i = 0; i < n; i++) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: \"%s\" %s", key, bad[i], want);
        set_fails(c, key, bad[i], msg);
    }
}

/* A config with every default and a dataset directory that exists, for config_validate. */
static void fresh(config *c)
{
    assert_int_equal(config_defaults(c), 0);
    set_ok(c, "jmeterPlugin.sts.datasetDirectory", tmp_dir);
}

static void validate_ok(const config *c)
{
    buf err = BUF_INIT;
    if (config_validate(c, &err) != 0)
        fail_msg("refused: %s", err.data);
    buf_free(&err);
}

/* config_validate must fail with exactly msg. */
static void validate_fails(const config *c, const char *msg)
{
    buf err = BUF_INIT;
    assert_int_equal(config_validate(c, &err), -1);
    assert_non_null(err.data);
    if (strcmp(err.data, msg) != 0)
        fail_msg("\n  got  %s\n  want %s", err.data, msg);
    buf_free(&err);
}

/* Runs config_from_args over a NULL-terminated list (argv[0] added); returns its rc. */
static int run_args(config *c, config_cli *cli, buf *err, ...)
{
    char *argv[32] = {"stsd"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *a; (a = va_arg(ap, char *)) != NULL;)
        argv[argc++] = a;
    va_end(ap);
    buf_clear(err);
    return config_from_args(c, argc, argv, cli, err);
}

/* ---- the keys' values ---- */

static void test_defaults(void **state)
{
    config c;
    char raft[64], url[128];
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(c.cluster_self, 0);
    for (int id = 0; id <= CONF_CLUSTER_MAX; id++)
        assert_null(c.cluster_node[id]);
    assert_string_equal(c.cluster_dir, "");
    assert_int_equal(c.cluster_election_ms, 1000);
    assert_int_equal(c.cluster_redirect, 0);
    assert_int_equal(config_cluster_count(&c), 0);
    for (int id = -1; id <= CONF_CLUSTER_MAX + 1; id++)
        assert_int_equal(config_cluster_node(&c, id, raft, sizeof raft, url, sizeof url), -1);
    /* config_free frees the nodes' and the directory's strings (ASan and valgrind see it). */
    set_ok(&c, N1, "127.0.0.1:9201 http://127.0.0.1:9191");
    set_ok(&c, "stsd.cluster.node.9", "127.0.0.1:9209 http://127.0.0.1:9199");
    set_ok(&c, "stsd.cluster.dir", "/var/lib/stsd/raft");
    config_free(&c);
    assert_null(c.cluster_node[1]);
    assert_null(c.cluster_node[9]);
    assert_null(c.cluster_dir);
    config_free(&c);
}

static void test_self_timeout_forward_dir(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    for (int id = 0; id <= CONF_CLUSTER_MAX; id++) {
        char v[16];
        snprintf(v, sizeof v, "%d", id);
        set_ok(&c, "stsd.cluster.self", v);
        assert_int_equal(c.cluster_self, id);
    }
    set_ok(&c, "stsd.cluster.self", " 3 ");
    assert_int_equal(c.cluster_self, 3);
    const char *bad_self[] = {"10", "-1", "+1", "x", "", "1.0", "0x1"};
    set_fails_each(&c, "stsd.cluster.self", bad_self, sizeof bad_self / sizeof bad_self[0],
                   "is not an integer in 0..9");

    set_ok(&c, "stsd.cluster.electionTimeout", "100");
    assert_int_equal(c.cluster_election_ms, 100);
    set_ok(&c, "stsd.cluster.electionTimeout", "60000");
    assert_int_equal(c.cluster_election_ms, 60000);
    set_ok(&c, "stsd.cluster.electionTimeout", "250");
    assert_int_equal(c.cluster_election_ms, 250);
    /* Milliseconds as plain digits, as every number of ours: no unit, no fraction. */
    const char *bad_ms[] = {"99", "0", "60001", "1s", "1000ms", "1.5", "", "-100"};
    set_fails_each(&c, "stsd.cluster.electionTimeout", bad_ms,
                   sizeof bad_ms / sizeof bad_ms[0], "is not an integer in 100..60000");

    set_ok(&c, "stsd.cluster.forward", "redirect");
    assert_int_equal(c.cluster_redirect, 1);
    set_ok(&c, "stsd.cluster.forward", "PROXY");
    assert_int_equal(c.cluster_redirect, 0);
    set_ok(&c, "stsd.cluster.forward", " Redirect ");
    assert_int_equal(c.cluster_redirect, 1);
    set_fails(&c, "stsd.cluster.forward", "bounce",
              "stsd.cluster.forward: \"bounce\" is not proxy or redirect");
    set_fails(&c, "stsd.cluster.forward", "",
              "stsd.cluster.forward: \"\" is not proxy or redirect");
    set_fails(&c, "stsd.cluster.forward", "1",
              "stsd.cluster.forward: \"1\" is not proxy or redirect");

    set_ok(&c, "stsd.cluster.pipeline", "1");
    assert_int_equal(c.cluster_pipeline, 1);
    set_ok(&c, "stsd.cluster.pipeline", "64");
    assert_int_equal(c.cluster_pipeline, 64);
    const char *bad_pipe[] = {"0", "65", "-1", "4.5", "", "four"};
    set_fails_each(&c, "stsd.cluster.pipeline", bad_pipe,
                   sizeof bad_pipe / sizeof bad_pipe[0], "is not an integer in 1..64");
    set_ok(&c, "stsd.cluster.compactBytes", "64K");
    assert_int_equal(c.cluster_compact_bytes, 65536);
    set_ok(&c, "stsd.cluster.compactBytes", "2G");
    assert_int_equal(c.cluster_compact_bytes, 2ull << 30);
    const char *bad_compact[] = {"65535", "1K", "0", "12x", "", "-64M", "1025G"};
    set_fails_each(&c, "stsd.cluster.compactBytes", bad_compact,
                   sizeof bad_compact / sizeof bad_compact[0],
                   "is not a size in 64K..1024G bytes (digits with an optional K, M or G "
                   "suffix)");

    set_ok(&c, "stsd.cluster.dir", " /srv/stsd/raft ");
    assert_string_equal(c.cluster_dir, "/srv/stsd/raft");
    set_ok(&c, "stsd.cluster.dir", "");
    assert_string_equal(c.cluster_dir, "");
    config_free(&c);
}

/* ---- node keys: which exist ---- */

static void test_node_keys(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    for (int id = 1; id <= CONF_CLUSTER_MAX; id++) {
        char key[64], val[128];
        snprintf(key, sizeof key, "stsd.cluster.node.%d", id);
        snprintf(val, sizeof val, "127.0.0.1:%d http://127.0.0.1:%d", 9200 + id, 9190 + id);
        set_ok(&c, key, val);
        assert_string_equal(c.cluster_node[id], val);
        assert_int_equal(config_cluster_count(&c), (size_t)id);
        /* Known keys: no misspelling of anything. */
        assert_null(config_key_lookalike(key));
    }
    assert_null(c.cluster_node[0]);
    const char *unknown[] = {"stsd.cluster.node.0", "stsd.cluster.node.10", "stsd.cluster.node.x",
                             "stsd.cluster.node.01", "stsd.cluster.node.", "stsd.cluster.node.-1",
                             "stsd.cluster.node.1.raft", "stsd.cluster.node.N"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        char msg[160];
        snprintf(msg, sizeof msg, "unknown key \"%s\" (the nodes are stsd.cluster.node.1 to "
                 "stsd.cluster.node.9)", unknown[i]);
        set_fails(&c, unknown[i], "127.0.0.1:9201 http://127.0.0.1:9191", msg);
    }
    /* Misspelt, they are named as other keys are. */
    set_fails(&c, "stsd.cluster.Node.1", "x",
              "unknown key \"stsd.cluster.Node.1\" (did you mean stsd.cluster.node.1?)");
    set_fails(&c, "stsd.clustr.self", "1",
              "unknown key \"stsd.clustr.self\" (did you mean stsd.cluster.self?)");
    set_fails(&c, "stsd.cluster.electiontimeout", "1",
              "unknown key \"stsd.cluster.electiontimeout\" (did you mean "
              "stsd.cluster.electionTimeout?)");
    const char *known[] = {"stsd.cluster.self", "stsd.cluster.dir",
                           "stsd.cluster.electionTimeout", "stsd.cluster.forward"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        assert_null(config_key_lookalike(known[i]));
    assert_string_equal(config_key_lookalike("sts.cluster.node.4"), "stsd.cluster.node.4");
    assert_string_equal(config_key_lookalike("stsd.cluster.nodes.2"), "stsd.cluster.node.2");
    /* JMeter's own keys stay quiet. */
    assert_null(config_key_lookalike("jmeterengine.nongui.port"));
    assert_null(config_key_lookalike("server.rmi.port"));
    assert_null(config_key_lookalike("cluster.node.1"));
    /* Empty: no such node. */
    set_ok(&c, N2, "");
    assert_null(c.cluster_node[2]);
    set_ok(&c, N3, "  \t ");
    assert_null(c.cluster_node[3]);
    assert_int_equal(config_cluster_count(&c), CONF_CLUSTER_MAX - 2);
    config_free(&c);
}

/* ---- node values: their form ---- */

static void test_node_good_forms(void **state)
{
    static const char *const good[][3] = {
        /* value, raft address, URL as config_cluster_node gives them */
        {"127.0.0.1:9201 http://127.0.0.1:9191", "127.0.0.1:9201", "http://127.0.0.1:9191"},
        {"127.0.0.1:9201 http://127.0.0.1:9191/", "127.0.0.1:9201", "http://127.0.0.1:9191"},
        {"  node1.example.com:1 \t https://node1.example.com:65535/  ", "node1.example.com:1",
         "https://node1.example.com:65535"},
        {"localhost:9201\thttp://localhost:9191", "localhost:9201", "http://localhost:9191"},
        {"10.0.0.1:9201 http://[::1]:9191", "10.0.0.1:9201", "http://[::1]:9191"},
        {"10.0.0.1:9201 https://[fe80::1:2]:443/", "10.0.0.1:9201", "https://[fe80::1:2]:443"},
        {"A-b.C9:65535 HTTPS://A-B.C9:443", "A-b.C9:65535", "HTTPS://A-B.C9:443"},
        {"x1.example:9201 Http://1.2.3.4:80", "x1.example:9201", "Http://1.2.3.4:80"},
        {"db:9201 http://db:9191", "db:9201", "http://db:9191"},
        {"1a.example:007 http://h:08", "1a.example:007", "http://h:08"},
        {"255.255.255.255:9 http://0.0.0.0:1", "255.255.255.255:9", "http://0.0.0.0:1"},
        {"a.b-c.d:9 http://xn--nxasmq6b.example:9191", "a.b-c.d:9",
         "http://xn--nxasmq6b.example:9191"},
        /* The longest label, and the longest name. */
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1 http://h:2",
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1", "http://h:2"},
    };
    config c;
    char raft[300], url[300];
    assert_int_equal(config_defaults(&c), 0);
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        set_ok(&c, N2, good[i][0]);
        assert_int_equal(config_cluster_node(&c, 2, raft, sizeof raft, url, sizeof url), 0);
        assert_string_equal(raft, good[i][1]);
        assert_string_equal(url, good[i][2]);
        assert_int_equal(config_cluster_count(&c), 1);
    }
    /* The longest host name, 253 bytes (labels of 63, 63, 63 and 61); one more is refused. */
    char host[300], val[700], msg[900];
    memset(host, 'a', 254);
    for (int i = 63; i < 253; i += 64)
        host[i] = '.';
    host[253] = '\0';
    snprintf(val, sizeof val, "%s:1 http://%s:2/", host, host);
    set_ok(&c, N1, val);
    assert_int_equal(config_cluster_node(&c, 1, raft, sizeof raft, url, sizeof url), 0);
    assert_int_equal(strlen(raft), 255);
    host[253] = 'a';
    host[254] = '\0';
    snprintf(val, sizeof val, "%s:1 http://h:2/", host);
    snprintf(msg, sizeof msg, N1 ": raft address \"%s:1\": \"%s\" is not an IPv4 address or "
             "a host name (no brackets, no IPv6)", host, host);
    set_fails(&c, N1, val, msg);
    config_free(&c);
}

static void test_node_bad_forms(void **state)
{
    static const char *const bad[][2] = {
        /* Words. */
        {"127.0.0.1:9201", "\"127.0.0.1:9201\" " NODE_FORM},
        {"http://127.0.0.1:9191", "\"http://127.0.0.1:9191\" " NODE_FORM},
        {"127.0.0.1:9201 http://127.0.0.1:9191 extra",
         "\"127.0.0.1:9201 http://127.0.0.1:9191 extra\" " NODE_FORM},
        {"127.0.0.1:9201,http://127.0.0.1:9191",
         "\"127.0.0.1:9201,http://127.0.0.1:9191\" " NODE_FORM},
        /* The raft address. */
        {"127.0.0.1 http://127.0.0.1:9191", "raft address \"127.0.0.1\" is not HOST:PORT"},
        {"127.0.0.1:0 http://127.0.0.1:9191",
         "raft address \"127.0.0.1:0\": port \"0\" is not in 1..65535"},
        {"127.0.0.1:65536 http://127.0.0.1:9191",
         "raft address \"127.0.0.1:65536\": port \"65536\" is not in 1..65535"},
        {"127.0.0.1: http://127.0.0.1:9191",
         "raft address \"127.0.0.1:\": port \"\" is not in 1..65535"},
        {"127.0.0.1:92x http://127.0.0.1:9191",
         "raft address \"127.0.0.1:92x\": port \"92x\" is not in 1..65535"},
        {"127.0.0.1:-1 http://127.0.0.1:9191",
         "raft address \"127.0.0.1:-1\": port \"-1\" is not in 1..65535"},
        {"[::1]:9201 http://127.0.0.1:9191", "raft address \"[::1]:9201\": \"[::1]\" is not an "
         "IPv4 address or a host name (no brackets, no IPv6)"},
        {"::1:9201 http://127.0.0.1:9191", "raft address \"::1:9201\": \"::1\" is not an IPv4 "
         "address or a host name (no brackets, no IPv6)"},
        {":9201 http://127.0.0.1:9191", "raft address \":9201\": \"\" is not an IPv4 address or "
         "a host name (no brackets, no IPv6)"},
        {"-a.example:1 http://h:2", "raft address \"-a.example:1\": \"-a.example\" is not an "
         "IPv4 address or a host name (no brackets, no IPv6)"},
        {"a-.example:1 http://h:2", "raft address \"a-.example:1\": \"a-.example\" is not an "
         "IPv4 address or a host name (no brackets, no IPv6)"},
        {"a..example:1 http://h:2", "raft address \"a..example:1\": \"a..example\" is not an "
         "IPv4 address or a host name (no brackets, no IPv6)"},
        {"a.example.:1 http://h:2", "raft address \"a.example.:1\": \"a.example.\" is not an "
         "IPv4 address or a host name (no brackets, no IPv6)"},
        {"under_score:1 http://h:2", "raft address \"under_score:1\": \"under_score\" is not an "
         "IPv4 address or a host name (no brackets, no IPv6)"},
        {"256.1.1.1:1 http://h:2", "raft address \"256.1.1.1:1\": \"256.1.1.1\" is not an IPv4 "
         "address or a host name (no brackets, no IPv6)"},
        {"10.1:1 http://h:2", "raft address \"10.1:1\": \"10.1\" is not an IPv4 address or a "
         "host name (no brackets, no IPv6)"},
        {"a.1:1 http://h:2", "raft address \"a.1:1\": \"a.1\" is not an IPv4 address or a host "
         "name (no brackets, no IPv6)"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1 http://h:2",
         "raft address \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1\": "
         "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" is not an IPv4 "
         "address or a host name (no brackets, no IPv6)"},
        {"h\xc3\xa9:1 http://h:2", "raft address \"h\xc3\xa9:1\": \"h\xc3\xa9\" is not an IPv4 "
         "address or a host name (no brackets, no IPv6)"},
        /* The URL. */
        {"h:1 ftp://h:2", "URL \"ftp://h:2\" does not start with http:// or https://"},
        {"h:1 h:2", "URL \"h:2\" does not start with http:// or https://"},
        {"h:1 http:/h:2", "URL \"http:/h:2\" does not start with http:// or https://"},
        {"h:1 http://h", "URL \"http://h\" has no :PORT after its host"},
        {"h:1 http://h/", "URL \"http://h/\" has no :PORT after its host"},
        {"h:1 http://", "URL \"http://\" has no :PORT after its host"},
        {"h:1 http://[::1]", "URL \"http://[::1]\" has no :PORT after its host"},
        {"h:1 http://h:0", "URL \"http://h:0\": port \"0\" is not in 1..65535"},
        {"h:1 http://h:99999/", "URL \"http://h:99999/\": port \"99999\" is not in 1..65535"},
        {"h:1 http://h:", "URL \"http://h:\": port \"\" is not in 1..65535"},
        {"h:1 http://h:1/sts", "URL \"http://h:1/sts\" is not http(s)://HOST:PORT (only a / may "
         "follow the port)"},
        {"h:1 http://h:1//", "URL \"http://h:1//\" is not http(s)://HOST:PORT (only a / may "
         "follow the port)"},
        {"h:1 http://h:1?x=1", "URL \"http://h:1?x=1\" is not http(s)://HOST:PORT (only a / may "
         "follow the port)"},
        {"h:1 http://h:1#top", "URL \"http://h:1#top\" is not http(s)://HOST:PORT (only a / may "
         "follow the port)"},
        {"h:1 http://user@h:1", "URL \"http://user@h:1\" is not http(s)://HOST:PORT (only a / "
         "may follow the port)"},
        {"h:1 http://:9191", "URL \"http://:9191\": \"\" is not an IPv4 address, an [IPv6 "
         "address] or a host name"},
        {"h:1 http://[zz]:1", "URL \"http://[zz]:1\": \"[zz]\" is not an IPv4 address, an [IPv6 "
         "address] or a host name"},
        {"h:1 http://::1:1", "URL \"http://::1:1\": \"::1\" is not an IPv4 address, an [IPv6 "
         "address] or a host name"},
        {"h:1 http://h_1:1", "URL \"http://h_1:1\": \"h_1\" is not an IPv4 address, an [IPv6 "
         "address] or a host name"},
        {"h:1 http://1.2.3:1", "URL \"http://1.2.3:1\": \"1.2.3\" is not an IPv4 address, an "
         "[IPv6 address] or a host name"},
        /* Raft and HTTP on one HOST:PORT. */
        {"127.0.0.1:9191 http://127.0.0.1:9191/",
         "raft address 127.0.0.1:9191 is also the HOST:PORT of its URL"},
        {"LocalHost:9191 http://localhost:9191",
         "raft address LocalHost:9191 is also the HOST:PORT of its URL"},
    };
    config c;
    assert_int_equal(config_defaults(&c), 0);
    set_ok(&c, N3, "127.0.0.1:9203 http://127.0.0.1:9193");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[1024];
        snprintf(msg, sizeof msg, N3 ": %s", bad[i][1]);
        set_fails(&c, N3, bad[i][0], msg);   /* the node set before stays as it was */
    }
    /* Set by code, bypassing config_set: config_validate refuses it, config_cluster_node
     * does not hand it out. */
    char raft[64], url[128];
    char *saved = c.cluster_node[3];
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", tmp_dir);
    set_ok(&c, "stsd.cluster.self", "3");
    validate_ok(&c);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[1024];
        c.cluster_node[3] = (char *)bad[i][0];
        snprintf(msg, sizeof msg, N3 ": %s", bad[i][1]);
        validate_fails(&c, msg);
        assert_int_equal(config_cluster_node(&c, 3, raft, sizeof raft, url, sizeof url), -1);
    }
    c.cluster_node[3] = saved;
    config_free(&c);
}

/* ---- checks between the keys ---- */

static void test_validate(void **state)
{
    config c;
    /* Alone: nothing to check; the other cluster keys mean nothing then, and pass. */
    fresh(&c);
    validate_ok(&c);
    set_ok(&c, "stsd.cluster.forward", "redirect");
    set_ok(&c, "stsd.cluster.dir", "/nowhere/at/all");
    validate_ok(&c);
    /* A cluster of one. */
    set_ok(&c, "stsd.cluster.self", "1");
    validate_fails(&c, "stsd.cluster.self is 1, but stsd.cluster.node.1 is not set");
    set_ok(&c, N1, "127.0.0.1:9201 http://127.0.0.1:9191");
    validate_ok(&c);
    assert_int_equal(config_cluster_count(&c), 1);
    /* Three. */
    set_ok(&c, N2, "127.0.0.1:9202 http://127.0.0.1:9192/");
    set_ok(&c, N3, "127.0.0.1:9203 http://127.0.0.1:9193");
    set_ok(&c, "stsd.cluster.self", "2");
    validate_ok(&c);
    assert_int_equal(config_cluster_count(&c), 3);
    /* Nodes without self. */
    set_ok(&c, "stsd.cluster.self", "0");
    validate_fails(&c, "stsd.cluster.self is not set: stsd.cluster.node.1 is, so say which "
                       "node this one is (1..9)");
    set_ok(&c, N1, "");
    validate_fails(&c, "stsd.cluster.self is not set: stsd.cluster.node.2 is, so say which "
                       "node this one is (1..9)");
    /* Self naming a node not set. */
    set_ok(&c, "stsd.cluster.self", "1");
    validate_fails(&c, "stsd.cluster.self is 1, but stsd.cluster.node.1 is not set");
    set_ok(&c, "stsd.cluster.self", "9");
    validate_fails(&c, "stsd.cluster.self is 9, but stsd.cluster.node.9 is not set");
    /* Ids need not follow each other. */
    set_ok(&c, "stsd.cluster.node.9", "10.0.0.9:9201 http://10.0.0.9:9191");
    validate_ok(&c);
    config_free(&c);

    /* Two nodes on one address: the later node is named, with the earlier. */
    static const char *const clash[][3] = {
        {"127.0.0.1:9201 http://127.0.0.1:9192",
         "stsd.cluster.node.3: raft address 127.0.0.1:9201 is already stsd.cluster.node.1's"},
        {"LOCALHOST:9201 http://127.0.0.1:9192",   /* host names are not case-sensitive */
         "stsd.cluster.node.3: raft address LOCALHOST:9201 is already stsd.cluster.node.2's"},
        {"127.0.0.1:9203 http://127.0.0.1:9191/",
         "stsd.cluster.node.3: URL http://127.0.0.1:9191 is already stsd.cluster.node.1's"},
        {"127.0.0.1:9203 HTTP://LOCALHOST:9202",
         "stsd.cluster.node.3: URL HTTP://LOCALHOST:9202 is already stsd.cluster.node.2's"},
        {"127.0.0.1:9203 https://127.0.0.1:9191",
         "stsd.cluster.node.3: URL https://127.0.0.1:9191 has the HOST:PORT of "
         "stsd.cluster.node.1's URL, http://127.0.0.1:9191"},
        {"127.0.0.1:9191 http://127.0.0.1:9193",
         "stsd.cluster.node.3: raft address 127.0.0.1:9191 is the HOST:PORT of "
         "stsd.cluster.node.1's URL"},
        {"127.0.0.1:9203 http://127.0.0.1:9201",
         "stsd.cluster.node.3: URL http://127.0.0.1:9201 has the HOST:PORT of "
         "stsd.cluster.node.1's raft address"},
    };
    for (size_t i = 0; i < sizeof clash / sizeof clash[0]; i++) {
        fresh(&c);
        set_ok(&c, "stsd.cluster.self", "1");
        set_ok(&c, N1, "127.0.0.1:9201 http://127.0.0.1:9191");
        set_ok(&c, N2, "localhost:9201 http://localhost:9202/");
        set_ok(&c, N3, clash[i][0]);
        validate_fails(&c, clash[i][1]);
        /* Set apart, each is a good node. */
        set_ok(&c, N1, "");
        set_ok(&c, N2, "");
        set_ok(&c, "stsd.cluster.self", "3");
        validate_ok(&c);
        config_free(&c);
    }

    /* Fields set by code are checked again. */
    fresh(&c);
    c.cluster_self = 12;
    validate_fails(&c, "stsd.cluster.self: 12 is not in 0..9");
    c.cluster_self = -1;
    validate_fails(&c, "stsd.cluster.self: -1 is not in 0..9");
    c.cluster_self = 0;
    c.cluster_election_ms = 99;
    validate_fails(&c, "stsd.cluster.electionTimeout: 99 is not in 100..60000");
    c.cluster_election_ms = 1000;
    c.cluster_redirect = 2;
    validate_fails(&c, "stsd.cluster.forward: 2 is not in 0..1");
    c.cluster_redirect = 1;
    validate_ok(&c);
    config_free(&c);
}

static void test_node_buffers(void **state)
{
    config c;
    char raft[16], url[24];
    assert_int_equal(config_defaults(&c), 0);
    set_ok(&c, "stsd.cluster.node.4", "127.0.0.1:9204 http://127.0.0.1:9194/");
    assert_int_equal(config_cluster_node(&c, 4, raft, sizeof raft, url, sizeof url), 0);
    assert_string_equal(raft, "127.0.0.1:9204");
    assert_string_equal(url, "http://127.0.0.1:9194");
    /* Exactly the room needed, then a byte short: refused, not cut. */
    assert_int_equal(config_cluster_node(&c, 4, raft, 15, url, 22), 0);
    assert_int_equal(config_cluster_node(&c, 4, raft, 14, url, 22), -1);
    assert_int_equal(config_cluster_node(&c, 4, raft, 15, url, 21), -1);
    /* Either part alone. */
    memset(url, 0, sizeof url);
    assert_int_equal(config_cluster_node(&c, 4, raft, sizeof raft, NULL, 0), 0);
    assert_string_equal(raft, "127.0.0.1:9204");
    assert_int_equal(config_cluster_node(&c, 4, NULL, 0, url, sizeof url), 0);
    assert_string_equal(url, "http://127.0.0.1:9194");
    assert_int_equal(config_cluster_node(&c, 4, NULL, 0, NULL, 0), 0);
    /* The others are not there. */
    assert_int_equal(config_cluster_node(&c, 3, raft, sizeof raft, url, sizeof url), -1);
    assert_int_equal(config_cluster_node(&c, 0, raft, sizeof raft, url, sizeof url), -1);
    assert_int_equal(config_cluster_node(&c, 10, raft, sizeof raft, url, sizeof url), -1);
    config_free(&c);
}

/* ---- the command line and files ---- */

static void test_args_and_file(void **state)
{
    config c;
    config_cli cli;
    buf err = BUF_INIT;
    char raft[64], url[128];
    fresh(&c);
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.cluster.self=2",
                              "-Dstsd.cluster.node.1=127.0.0.1:9201 http://127.0.0.1:9191",
                              "-Dstsd.cluster.node.2=127.0.0.1:9202 http://127.0.0.1:9192/",
                              "-Dstsd.cluster.node.3=127.0.0.1:9203 https://127.0.0.1:9193",
                              "-Dstsd.cluster.dir=/srv/raft", "-Dstsd.cluster.electionTimeout=250",
                              "-Dstsd.cluster.forward=redirect", "--strict-keys", (char *)NULL), 0);
    assert_int_equal(c.cluster_self, 2);
    assert_int_equal(config_cluster_count(&c), 3);
    assert_int_equal(config_cluster_node(&c, 2, raft, sizeof raft, url, sizeof url), 0);
    assert_string_equal(raft, "127.0.0.1:9202");
    assert_string_equal(url, "http://127.0.0.1:9192");
    assert_string_equal(c.cluster_dir, "/srv/raft");
    assert_int_equal(c.cluster_election_ms, 250);
    assert_int_equal(c.cluster_redirect, 1);
    validate_ok(&c);
    /* -Dkey= takes a node out. */
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.cluster.node.3=", (char *)NULL), 0);
    assert_null(c.cluster_node[3]);
    assert_int_equal(config_cluster_count(&c), 2);
    /* Refusals name the key. */
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.cluster.node.0=127.0.0.1:9200 "
                              "http://127.0.0.1:9190", (char *)NULL), -1);
    assert_string_equal(err.data, "unknown key \"stsd.cluster.node.0\" (the nodes are "
                                  "stsd.cluster.node.1 to stsd.cluster.node.9)");
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.cluster.node.10=x", (char *)NULL), -1);
    assert_string_equal(err.data, "unknown key \"stsd.cluster.node.10\" (the nodes are "
                                  "stsd.cluster.node.1 to stsd.cluster.node.9)");
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.cluster.node.4=127.0.0.1:9204",
                              (char *)NULL), -1);
    assert_string_equal(err.data, "stsd.cluster.node.4: \"127.0.0.1:9204\" " NODE_FORM);
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.cluster.self=x", (char *)NULL), -1);
    assert_string_equal(err.data, "stsd.cluster.self: \"x\" is not an integer in 0..9");
    /* A misspelling outside our namespace: warned, or refused with --strict-keys. */
    assert_int_equal(run_args(&c, &cli, &err, "--strict-keys", "-Dsts.cluster.self=1",
                              (char *)NULL), -1);
    assert_string_equal(err.data, "unknown key sts.cluster.self: did you mean stsd.cluster.self? "
                                  "(--strict-keys refuses it)");
    config_free(&c);

    /* A properties file: continuation lines and blanks as any value; file and line named. */
    const char *path = write_file("cluster.properties",
                                  "# three nodes\n"
                                  "stsd.cluster.self = 3\n"
                                  "stsd.cluster.node.1 = 127.0.0.1:9201 \\\n"
                                  "    http://127.0.0.1:9191/\n"
                                  "stsd.cluster.node.2: 127.0.0.1:9202 http://127.0.0.1:9192\n"
                                  "stsd.cluster.node.3   127.0.0.1:9203 http://127.0.0.1:9193\n"
                                  "stsd.cluster.forward=redirect\n");
    char *file = strdup(path);
    char opt[PATH_MAX + 16];
    assert_non_null(file);
    snprintf(opt, sizeof opt, "--config=%s", file);
    fresh(&c);
    assert_int_equal(run_args(&c, &cli, &err, opt, "--strict-keys", (char *)NULL), 0);
    assert_int_equal(c.cluster_self, 3);
    assert_string_equal(c.cluster_node[1], "127.0.0.1:9201 http://127.0.0.1:9191/");
    assert_int_equal(config_cluster_node(&c, 3, raft, sizeof raft, url, sizeof url), 0);
    assert_string_equal(raft, "127.0.0.1:9203");
    assert_string_equal(url, "http://127.0.0.1:9193");
    assert_int_equal(c.cluster_redirect, 1);
    validate_ok(&c);
    /* -D after the file wins, wherever it stands. */
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.cluster.self=1", opt, (char *)NULL), 0);
    assert_int_equal(c.cluster_self, 1);
    config_free(&c);

    const char *bad = write_file("bad.properties",
                                 "stsd.cluster.self=1\n"
                                 "stsd.cluster.node.1=127.0.0.1:9201 http://127.0.0.1:9191\n"
                                 "stsd.cluster.node.2=127.0.0.1:9202 ftp://127.0.0.1:9192\n");
    char want[PATH_MAX + 200];
    snprintf(want, sizeof want, "%s:3: stsd.cluster.node.2: URL \"ftp://127.0.0.1:9192\" does "
             "not start with http:// or https://", bad);
    fresh(&c);
    assert_int_equal(config_load_file(&c, bad, &err), -1);
    assert_string_equal(err.data, want);
    config_free(&c);
    const char *unknown = write_file("unknown.properties", "\n\nstsd.cluster.node.0=x\n");
    snprintf(want, sizeof want, "%s:3: unknown key \"stsd.cluster.node.0\" (the nodes are "
             "stsd.cluster.node.1 to stsd.cluster.node.9)", unknown);
    fresh(&c);
    buf_clear(&err);
    assert_int_equal(config_load_file(&c, unknown, &err), -1);
    assert_string_equal(err.data, want);
    config_free(&c);
    free(file);
    buf_free(&err);
}

/* ---- CONFIG's listing, --help, the documentation ---- */

#define MAX_PAIRS 80

typedef struct pairs {
    int n;
    char *key[MAX_PAIRS];
    char *val[MAX_PAIRS];
} pairs;

static void collect(const char *key, const char *value, void *ctx)
{
    pairs *p = ctx;
    assert_true(p->n < MAX_PAIRS);
    p->key[p->n] = strdup(key);
    p->val[p->n] = strdup(value);
    p->n++;
}

static void pairs_free(pairs *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->key[i]);
        free(p->val[i]);
    }
    p->n = 0;
}

/* The index of key in p, or -1. */
static int find(const pairs *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) == 0)
            return i;
    return -1;
}

static void test_listing(void **state)
{
    config c;
    pairs p = {0};
    assert_int_equal(config_defaults(&c), 0);
    /* Alone, CONFIG answers as before the cluster existed: none of its keys. */
    config_each(&c, collect, &p);
    int alone = p.n;
    for (int i = 0; i < p.n; i++)
        if (strncmp(p.key[i], "stsd.cluster.", 13) == 0)
            fail_msg("%s listed on a node alone", p.key[i]);
    assert_string_equal(p.key[p.n - 1], "stsd.koStatus");
    pairs_free(&p);

    set_ok(&c, "stsd.cluster.self", "3");
    set_ok(&c, N1, " 127.0.0.1:9201  http://127.0.0.1:9191/ ");
    set_ok(&c, N3, "127.0.0.1:9203 http://127.0.0.1:9193");
    set_ok(&c, "stsd.cluster.forward", "redirect");
    set_ok(&c, "stsd.cluster.electionTimeout", "1500");
    static const char *const want[][2] = {
        {"stsd.cluster.self", "3"},
        {N1, "127.0.0.1:9201  http://127.0.0.1:9191/"},   /* as set, trimmed */
        {N3, "127.0.0.1:9203 http://127.0.0.1:9193"},
        {"stsd.cluster.dir", ""},
        {"stsd.cluster.electionTimeout", "1500"},
        {"stsd.cluster.forward", "redirect"},
        {"stsd.cluster.join", "false"},
        {"stsd.cluster.snapshotEntries", "8192"},
        {"stsd.cluster.pipeline", "1"},
        {"stsd.cluster.forwardBatches", "2"},
        {"stsd.cluster.forwardWithin", "3000"},
        {"stsd.cluster.followerReads", "true"},
        {"stsd.cluster.compactBytes", "67108864"},
    };
    size_t n = sizeof want / sizeof want[0];
    /* CONFIG's names and config_each_key's are the same for stsd.* keys: both end so. */
    for (int full = 0; full < 2; full++) {
        (full ? config_each_key : config_each)(&c, collect, &p);
        int at = find(&p, "stsd.cluster.self");
        assert_true(at > 0);
        assert_int_equal(p.n, at + (int)n);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(p.key[at + (int)i], want[i][0]);
            assert_string_equal(p.val[at + (int)i], want[i][1]);
        }
        if (!full)
            assert_int_equal(at, alone);
        assert_int_equal(find(&p, N2), -1);
        pairs_free(&p);
    }
    set_ok(&c, "stsd.cluster.forward", "proxy");
    config_each_key(&c, collect, &p);
    assert_string_equal(p.val[find(&p, "stsd.cluster.forward")], "proxy");
    pairs_free(&p);
    config_free(&c);
}

static void doc_collect(const config_key_doc *k, void *ctx)
{
    pairs *p = ctx;
    assert_true(p->n < MAX_PAIRS);
    p->key[p->n] = strdup(k->name);
    p->val[p->n] = strdup(k->values);
    p->n++;
}

static void test_docs(void **state)
{
    pairs p = {0};
    config_doc_keys(doc_collect, &p);
    static const char *const want[][2] = {
        {"stsd.cluster.self", "0..9"},
        {"stsd.cluster.node.N", "RAFT_HOST:PORT http(s)://HOST:PORT"},
        {"stsd.cluster.dir", "text"},
        {"stsd.cluster.electionTimeout", "100..60000"},
        {"stsd.cluster.forward", "proxy|redirect"},
    };
    int at = find(&p, "stsd.cluster.self");
    assert_true(at > 0);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_string_equal(p.key[at + (int)i], want[i][0]);
        assert_string_equal(p.val[at + (int)i], want[i][1]);
    }
    /* The nine node keys are one line. */
    for (int i = 0; i < p.n; i++)
        if (strncmp(p.key[i], "stsd.cluster.node.", 18) == 0 && strcmp(p.key[i], want[1][0]))
            fail_msg("%s documented alone", p.key[i]);
    pairs_free(&p);

    const char *u = config_usage();
    const char *must[] = {"\n  stsd.cluster.self=0\n", "\n  stsd.cluster.node.N=\n",
                          "\n  stsd.cluster.dir=\n", "\n  stsd.cluster.electionTimeout=1000\n",
                          "\n  stsd.cluster.forward=proxy\n"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        if (!strstr(u, must[i]))
            fail_msg("usage lacks \"%s\"", must[i] + 3);
    assert_null(strstr(u, "stsd.cluster.node.1="));
    assert_null(strstr(u, "(truncated)"));
}

/* The sample's example nodes, uncommented, make a good cluster for each of its nodes. */
static void test_sample_conf(void **state)
{
    const char *path = "conf/sts.properties";
    if (access(path, R_OK) != 0) {
        print_message("skipped: %s not found (run from the top of the tree)\n", path);
        skip();
    }
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    config c;
    char line[512];
    int nodes = 0;
    fresh(&c);
    while (fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '=');
        if (strncmp(line, "#stsd.cluster.node.", 19) != 0 || !eq || eq[1] == '\n')
            continue;
        *eq = '\0';
        eq[strcspn(eq + 1, "\n") + 1] = '\0';
        set_ok(&c, line + 1, eq + 1);
        nodes++;
    }
    assert_int_equal(fclose(f), 0);
    assert_int_equal(nodes, 3);
    assert_int_equal(config_cluster_count(&c), 3);
    for (int self = 1; self <= 3; self++) {
        c.cluster_self = self;
        validate_ok(&c);
    }
    config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_self_timeout_forward_dir),
        cmocka_unit_test(test_node_keys),
        cmocka_unit_test(test_node_good_forms),
        cmocka_unit_test(test_node_bad_forms),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_node_buffers),
        cmocka_unit_test(test_args_and_file),
        cmocka_unit_test(test_listing),
        cmocka_unit_test(test_docs),
        cmocka_unit_test(test_sample_conf),
    };
    return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}
