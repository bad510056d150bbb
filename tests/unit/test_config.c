/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c - unit tests of the key table, properties syntax, command line and CONFIG listing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"

/* ---- helpers (static: the test binary links every module) ---- */

#define MAX_PAIRS 64

typedef struct pairs {
    int n;
    char *key[MAX_PAIRS];
    char *val[MAX_PAIRS];
    int stop_at;   /* return 7 from the callback at this pair (1-based); 0 = never */
} pairs;

static int collect(const char *key, const char *value, void *ctx)
{
    pairs *p = ctx;
    assert_true(p->n < MAX_PAIRS);
    p->key[p->n] = strdup(key);
    p->val[p->n] = strdup(value);
    p->n++;
    return p->stop_at && p->n == p->stop_at ? 7 : 0;
}

static void pairs_free(pairs *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->key[i]);
        free(p->val[i]);
    }
    p->n = 0;
}

/* Parses text (NUL-terminated, or len bytes when len != 0) into p; returns the parser's rc. */
static int parse(const char *text, size_t len, pairs *p, buf *err)
{
    memset(p, 0, sizeof *p);
    buf_clear(err);
    return config_parse_properties(text, len ? len : strlen(text), collect, p, err);
}

static void assert_pair(const pairs *p, int i, const char *key, const char *val)
{
    assert_true(i < p->n);
    assert_string_equal(p->key[i], key);
    assert_string_equal(p->val[i], val);
}

/* Parses text that must hold exactly one pair, and checks it. */
static void one_pair(const char *text, const char *key, const char *val)
{
    pairs p;
    buf err = BUF_INIT;
    assert_int_equal(parse(text, 0, &p, &err), 0);
    assert_int_equal(p.n, 1);
    assert_pair(&p, 0, key, val);
    pairs_free(&p);
    buf_free(&err);
}

/* Parses text that must fail with exactly this message. */
static void parse_fails(const char *text, size_t len, const char *msg)
{
    pairs p;
    buf err = BUF_INIT;
    assert_int_equal(parse(text, len, &p, &err), -1);
    assert_non_null(err.data);
    assert_string_equal(err.data, msg);
    pairs_free(&p);
    buf_free(&err);
}

static char tmp_dir[1024];   /* short, so that paths built on it fit PATH_MAX */

static int make_tmp(void **state)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/test_config.XXXXXX", t && *t ? t : "/tmp");
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

/* Sets key=value and expects an error with exactly this message; c must not change. */
static void set_fails(config *c, const char *key, const char *value, const char *msg)
{
    buf err = BUF_INIT;
    config before;
    memcpy(&before, c, sizeof before);
    assert_int_equal(config_set(c, key, value, &err), -1);
    assert_non_null(err.data);
    assert_string_equal(err.data, msg);
    assert_memory_equal(&before, c, sizeof before);
    buf_free(&err);
}

static void set_ok(config *c, const char *key, const char *value)
{
    buf err = BUF_INIT;
    if (config_set(c, key, value, &err) != 0)
        fail_msg("%s=%s: %s", key, value, err.data);
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

/* ---- defaults and the key table ---- */

static void test_defaults(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(c.port, 9191);
    assert_string_equal(c.dataset_dir, ".");
    assert_int_equal(c.add_timestamp, 1);
    assert_int_equal(c.daemon, 0);
    assert_string_equal(c.init_file_at_startup, "");
    assert_int_equal(c.init_file_at_startup_regex, 0);
    assert_string_equal(c.charset_response, "UTF-8");
    assert_string_equal(c.charset_read, "UTF-8");
    assert_string_equal(c.charset_write, "UTF-8");
    assert_string_equal(c.bind, "::");
    assert_string_equal(c.port_file, "");
    assert_int_equal(c.threads, 0);
    assert_int_equal(c.max_connections, 4096);
    assert_int_equal(c.max_connections_per_ip, 0);
    assert_int_equal(c.connection_timeout, 60);
    assert_int_equal(c.max_body, 16 * 1024 * 1024);
    assert_int_equal(c.max_line, 1024 * 1024);
    assert_int_equal(c.max_lists, 100000);
    assert_int_equal(c.max_bytes, 0);
    assert_int_equal(c.journal, 0);
    assert_int_equal(c.journal_fsync, CONF_FSYNC_EVERYSEC);
    assert_string_equal(c.state_dir, "");
    config_free(&c);
    assert_null(c.dataset_dir);
    config_free(&c); /* twice is harmless */
}

static void test_unknown_key(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    set_fails(&c, "stsd.nope", "1", "unknown key \"stsd.nope\"");
    set_fails(&c, "jmeterplugin.sts.PORT", "1",
              "unknown key \"jmeterplugin.sts.PORT\" (did you mean jmeterPlugin.sts.port?)");
    set_fails(&c, "", "1", "unknown key \"\"");
    /* The reference's JMeter-only switch is accepted and has no effect. */
    set_ok(&c, "jmeterPlugin.sts.loadAndRunOnStartup", "true");
    config_free(&c);
}

static void test_strict_integers(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    const char *bad[] = {"91x1", "9191abc", "9191 x", "", "   ", "-1", "+80", "65536",
                         "99999999999999999999999999", "0x10", "1e3", "9 191", "12.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[128];
        snprintf(msg, sizeof msg, "jmeterPlugin.sts.port: \"%s\" is not an integer in 0..65535",
                 bad[i]);
        set_fails(&c, "jmeterPlugin.sts.port", bad[i], msg);
    }
    set_ok(&c, "jmeterPlugin.sts.port", "0");
    assert_int_equal(c.port, 0);
    set_ok(&c, "jmeterPlugin.sts.port", "65535");
    assert_int_equal(c.port, 65535);
    set_ok(&c, "jmeterPlugin.sts.port", "007");          /* decimal, not octal */
    assert_int_equal(c.port, 7);
    set_ok(&c, "jmeterPlugin.sts.port", " 9191\t");      /* JMeter trims values */
    assert_int_equal(c.port, 9191);

    set_fails(&c, "stsd.threads", "1025", "stsd.threads: \"1025\" is not an integer in 0..1024");
    set_ok(&c, "stsd.threads", "1024");
    assert_int_equal(c.threads, 1024);
    set_fails(&c, "stsd.maxConnections", "0",
              "stsd.maxConnections: \"0\" is not an integer in 1..1000000");
    set_ok(&c, "stsd.maxConnectionsPerIp", "16");
    assert_int_equal(c.max_connections_per_ip, 16);
    set_ok(&c, "stsd.connectionTimeout", "0");
    assert_int_equal(c.connection_timeout, 0);
    set_fails(&c, "stsd.connectionTimeout", "86401",
              "stsd.connectionTimeout: \"86401\" is not an integer in 0..86400");
    set_ok(&c, "stsd.maxLists", "5");
    set_ok(&c, "stsd.maxWait", "0");
    set_fails(&c, "stsd.maxWait", "1.5", "stsd.maxWait: \"1.5\" is not an integer in 0..86400");
    set_ok(&c, "stsd.maxLease", "7200");
    set_fails(&c, "stsd.maxLease", "0", "stsd.maxLease: \"0\" is not an integer in 1..2678400");
    assert_int_equal(c.max_lists, 5);
    set_fails(&c, "stsd.maxLists", "5K", "stsd.maxLists: \"5K\" is not an integer in 1..100000000");
    config_free(&c);
}

static void test_sizes(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    set_ok(&c, "stsd.maxBodySize", "1024");
    assert_int_equal(c.max_body, 1024);
    set_ok(&c, "stsd.maxBodySize", "2k");
    assert_int_equal(c.max_body, 2048);
    set_ok(&c, "stsd.maxBodySize", "3M");
    assert_int_equal(c.max_body, 3 * 1024 * 1024);
    set_ok(&c, "stsd.maxBodySize", "1G");
    assert_int_equal(c.max_body, 1024 * 1024 * 1024);
    const char *bad[] = {"16MB", "M", "", "-1", "1.5M", "1023", "2G", "99999999999999999999G",
                         "18446744073709551615", "1 M"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[200];
        snprintf(msg, sizeof msg, "stsd.maxBodySize: \"%s\" is not a size in 1K..1G bytes "
                 "(digits with an optional K, M or G suffix)", bad[i]);
        set_fails(&c, "stsd.maxBodySize", bad[i], msg);
    }
    set_ok(&c, "stsd.maxLineSize", "1");
    assert_int_equal(c.max_line, 1);
    set_ok(&c, "stsd.maxBytes", "0");
    assert_int_equal(c.max_bytes, 0);
    set_ok(&c, "stsd.maxBytes", "64G");
    assert_true(c.max_bytes == 64ULL * 1024 * 1024 * 1024);
    config_free(&c);
}

static void test_booleans_and_enums(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    set_ok(&c, "jmeterPlugin.sts.daemon", "TRUE");
    assert_int_equal(c.daemon, 1);
    set_ok(&c, "jmeterPlugin.sts.daemon", "False");
    assert_int_equal(c.daemon, 0);
    set_ok(&c, "jmeterPlugin.sts.addTimestamp", " false ");
    assert_int_equal(c.add_timestamp, 0);
    set_ok(&c, "jmeterPlugin.sts.initFileAtStartupRegex", "true");
    assert_int_equal(c.init_file_at_startup_regex, 1);
    const char *bad[] = {"yes", "1", "0", "", "truee", "t", "on"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[128];
        snprintf(msg, sizeof msg, "jmeterPlugin.sts.daemon: \"%s\" is not true or false", bad[i]);
        set_fails(&c, "jmeterPlugin.sts.daemon", bad[i], msg);
    }
    set_ok(&c, "stsd.journal", "ON");
    assert_int_equal(c.journal, 1);
    set_ok(&c, "stsd.journal", "off");
    assert_int_equal(c.journal, 0);
    set_fails(&c, "stsd.journal", "true", "stsd.journal: \"true\" is not on or off");
    set_ok(&c, "stsd.journal.fsync", "always");
    assert_int_equal(c.journal_fsync, CONF_FSYNC_ALWAYS);
    set_ok(&c, "stsd.journal.fsync", "no");
    assert_int_equal(c.journal_fsync, CONF_FSYNC_NO);
    set_ok(&c, "stsd.journal.fsync", "EverySec");
    assert_int_equal(c.journal_fsync, CONF_FSYNC_EVERYSEC);
    set_fails(&c, "stsd.journal.fsync", "sometimes",
              "stsd.journal.fsync: \"sometimes\" is not always, everysec or no");
    set_ok(&c, "stsd.auditLog.lines", "Hash");
    assert_int_equal(c.audit_hash, 1);
    set_fails(&c, "stsd.log.format", "xml", "stsd.log.format: \"xml\" is not text or json");
    set_fails(&c, "stsd.auditLog.lines", "md5",
              "stsd.auditLog.lines: \"md5\" is not plain or hash");
    config_free(&c);
}

static void test_strings(void **state)
{
    config c;
    assert_int_equal(config_defaults(&c), 0);
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", "/data/sets");
    assert_string_equal(c.dataset_dir, "/data/sets");
    set_ok(&c, "jmeterPlugin.sts.initFileAtStartup", ".+?\\.csv");
    assert_string_equal(c.init_file_at_startup, ".+?\\.csv");
    set_ok(&c, "stsd.bind", "::1");
    assert_string_equal(c.bind, "::1");
    set_ok(&c, "stsd.bind", "127.0.0.1");
    set_fails(&c, "stsd.bind", "localhost", "stsd.bind: \"localhost\" is not an IPv4 or IPv6 address");
    set_fails(&c, "stsd.bind", "1.2.3.256", "stsd.bind: \"1.2.3.256\" is not an IPv4 or IPv6 address");
    set_ok(&c, "jmeterPlugin.sts.charsetEncodingReadFile", "ISO-8859-15");
    assert_string_equal(c.charset_read, "ISO-8859-15");
    set_fails(&c, "jmeterPlugin.sts.charsetEncodingHttpResponse", "UTF-8//TRANSLIT",
              "jmeterPlugin.sts.charsetEncodingHttpResponse: \"UTF-8//TRANSLIT\" is not a charset name");
    set_fails(&c, "jmeterPlugin.sts.charsetEncodingHttpResponse", "",
              "jmeterPlugin.sts.charsetEncodingHttpResponse: \"\" is not a charset name");
    set_ok(&c, "stsd.stateDirectory", "/var/lib/stsd");
    assert_string_equal(c.state_dir, "/var/lib/stsd");
    set_ok(&c, "stsd.portFile", "run/port");
    assert_string_equal(c.port_file, "run/port");
    config_free(&c);
}

/* ---- properties syntax ---- */

static void test_props_separators(void **state)
{
    one_pair("a=b", "a", "b");
    one_pair("a:b", "a", "b");
    one_pair("a b", "a", "b");
    one_pair("a\tb", "a", "b");
    one_pair("a = b", "a", "b");
    one_pair("a  :  b", "a", "b");
    one_pair("a\f=\fb", "a", "b");
    one_pair("a = = b", "a", "= b");        /* one separator only */
    one_pair("a b=c", "a", "b=c");
    one_pair("a==b", "a", "=b");
    one_pair("a=b:c d", "a", "b:c d");
    one_pair("a=b  ", "a", "b  ");          /* trailing blanks belong to the value */
    one_pair("   indented=yes", "indented", "yes");
    one_pair("=v", "", "v");
}

static void test_props_empty_values(void **state)
{
    pairs p;
    buf err = BUF_INIT;
    assert_int_equal(parse("a=\nb\nc   \nd :\ne=\\\n", 0, &p, &err), 0);
    assert_int_equal(p.n, 5);
    assert_pair(&p, 0, "a", "");
    assert_pair(&p, 1, "b", "");
    assert_pair(&p, 2, "c", "");
    assert_pair(&p, 3, "d", "");
    assert_pair(&p, 4, "e", "");
    pairs_free(&p);
    buf_free(&err);
}

static void test_props_comments(void **state)
{
    pairs p;
    buf err = BUF_INIT;
    const char *t = "# comment\n"
                    "! also a comment\n"
                    "   # indented comment\n"
                    "\t! indented too\n"
                    "\n"
                    "   \n"
                    "a=b#not a comment\n"
                    "# a comment ending in a backslash does not continue \\\n"
                    "c=d\n"
                    "e=f!g\n";
    assert_int_equal(parse(t, 0, &p, &err), 0);
    assert_int_equal(p.n, 3);
    assert_pair(&p, 0, "a", "b#not a comment");
    assert_pair(&p, 1, "c", "d");
    assert_pair(&p, 2, "e", "f!g");
    pairs_free(&p);
    buf_free(&err);
}

static void test_props_continuation(void **state)
{
    one_pair("a=one \\\n     two", "a", "one two");
    one_pair("a=one\\\n\\\n  two", "a", "onetwo");
    one_pair("a=x\\\\\n", "a", "x\\");                     /* even run: escaped backslash */
    one_pair("a=x\\\\\\\n  y", "a", "x\\y");               /* odd run: continues */
    one_pair("long\\\n  key=v", "longkey", "v");
    one_pair("a=1\\\n# not a comment here", "a", "1# not a comment here");
    one_pair("a=tail\\", "a", "tail");                     /* backslash at the very end */
    one_pair("a=x\\\r\n  y", "a", "xy");
    one_pair("a=x\\\r  y", "a", "xy");

    pairs p;
    buf err = BUF_INIT;
    /* An empty continuation line ends the logical line. */
    assert_int_equal(parse("a=1\\\n\nb=2\n", 0, &p, &err), 0);
    assert_int_equal(p.n, 2);
    assert_pair(&p, 0, "a", "1");
    assert_pair(&p, 1, "b", "2");
    pairs_free(&p);
    buf_free(&err);
}

static void test_props_escapes(void **state)
{
    one_pair("a=\\t\\n\\r\\f\\\\", "a", "\t\n\r\f\\");
    one_pair("a=\\q\\z\\\"\\'\\#\\!", "a", "qz\"'#!");
    one_pair("a\\=b=c", "a=b", "c");
    one_pair("a\\:b:c", "a:b", "c");
    one_pair("a\\ b c", "a b", "c");
    one_pair("\\#notcomment=1", "#notcomment", "1");
    one_pair("\\ lead=1", " lead", "1");
    one_pair("path=C:\\\\data\\\\sets", "path", "C:\\data\\sets");
    one_pair("a=\\ \\ two leading spaces", "a", "  two leading spaces");
    one_pair("a=caf\xc3\xa9", "a", "caf\xc3\xa9");   /* UTF-8 passes through */
}

static void test_props_unicode(void **state)
{
    one_pair("a=caf\\u00e9", "a", "caf\xc3\xa9");
    one_pair("a=\\u0041\\u20AC", "a", "A\xe2\x82\xac");
    one_pair("a=\\u007f\\u0080\\u07ff\\u0800\\uffff", "a", "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf");
    one_pair("a=\\uD83D\\uDE00", "a", "\xf0\x9f\x98\x80");
    one_pair("k\\u00e9y=1", "k\xc3\xa9y", "1");
    one_pair("\\u003d=eq", "=", "eq");                 /* an escaped separator is data */
    parse_fails("a=1\nb=\\u12\n", 0, "line 2: malformed \\uXXXX escape");
    parse_fails("a=\\u12g4", 0, "line 1: malformed \\uXXXX escape");
    parse_fails("a=\\u0000", 0, "line 1: \\u0000 is not allowed");
    parse_fails("\n\na=\\uD83D", 0, "line 3: \\u escape: high surrogate without its low half");
    parse_fails("a=\\uD83Dx", 0, "line 1: \\u escape: high surrogate without its low half");
    parse_fails("a=\\uDE00", 0, "line 1: \\u escape: low surrogate without its high half");
}

static void test_props_line_ends(void **state)
{
    pairs p;
    buf err = BUF_INIT;
    assert_int_equal(parse("a=1\r\nb=2\rc=3\nd=4\r\n\r\ne=5", 0, &p, &err), 0);
    assert_int_equal(p.n, 5);
    assert_pair(&p, 0, "a", "1");
    assert_pair(&p, 1, "b", "2");
    assert_pair(&p, 2, "c", "3");
    assert_pair(&p, 3, "d", "4");
    assert_pair(&p, 4, "e", "5");
    pairs_free(&p);
    /* Line numbers count CRLF as one end, CR and LF as one each. */
    parse_fails("a=1\r\nb=2\rc=3\n\r\nd=\\u", 0, "line 5: malformed \\uXXXX escape");
    /* A continued line is reported at its first line. */
    parse_fails("a=1\nb=x\\\n  \\u00zz\n", 0, "line 2: malformed \\uXXXX escape");
    buf_free(&err);
}

static void test_props_bom_nul_empty(void **state)
{
    pairs p;
    buf err = BUF_INIT;
    one_pair("\xef\xbb\xbfkey=v", "key", "v");
    one_pair("\xef\xbb\xbf# c\nkey=v", "key", "v");
    assert_int_equal(parse("", 0, &p, &err), 0);
    assert_int_equal(p.n, 0);
    assert_int_equal(parse("\xef\xbb\xbf", 0, &p, &err), 0);
    assert_int_equal(p.n, 0);
    assert_int_equal(parse("\n\n  \n# only comments\n", 0, &p, &err), 0);
    assert_int_equal(p.n, 0);
    /* The BOM is skipped only at the very start. */
    assert_int_equal(parse("a=1\n\xef\xbb\xbf" "b=2", 0, &p, &err), 0);
    assert_pair(&p, 1, "\xef\xbb\xbf" "b", "2");
    pairs_free(&p);
    parse_fails("a=1\nb=x\0y\n", 10, "line 2: NUL byte in the text");
    /* Length, not NUL, bounds the text. */
    assert_int_equal(config_parse_properties("a=1\nb=2", 3, collect, &p, &err), 0);
    assert_int_equal(p.n, 1);
    assert_pair(&p, 0, "a", "1");
    pairs_free(&p);
    buf_free(&err);
}

static void test_props_callback_stops(void **state)
{
    pairs p;
    buf err = BUF_INIT;
    memset(&p, 0, sizeof p);
    p.stop_at = 2;
    assert_int_equal(config_parse_properties("a=1\nb=2\nc=3\n", 12, collect, &p, &err), 7);
    assert_int_equal(p.n, 2);
    assert_null(err.data);
    pairs_free(&p);
    buf_free(&err);
}

/* ---- files ---- */

static void test_load_file(void **state)
{
    config c;
    buf err = BUF_INIT;
    assert_int_equal(config_defaults(&c), 0);
    const char *path = write_file("sts.properties",
        "\xef\xbb\xbf# a JMeter user.properties with other keys\r\n"
        "jmeter.save.saveservice.output_format=csv\r\n"
        "server.rmi.ssl.disable=true\r\n"
        "jmeterPlugin.sts.loadAndRunOnStartup=true\r\n"
        "jmeterPlugin.sts.port : 9292\r\n"
        "jmeterPlugin.sts.datasetDirectory=/srv/data\\\r\n"
        "    sets\r\n"
        "jmeterPlugin.sts.initFileAtStartup=a.csv,b.csv\r\n"
        "jmeterPlugin.sts.daemon true\r\n"
        "stsd.threads=8\r\n"
        "stsd.maxBodySize=32M\r\n"
        "stsd.journal=on\r\n"
        "stsd.journal.fsync=always\r\n"
        "stsd.threads=9\r\n");
    assert_int_equal(config_load_file(&c, path, &err), 0);
    assert_int_equal(c.port, 9292);
    assert_string_equal(c.dataset_dir, "/srv/datasets");
    assert_string_equal(c.init_file_at_startup, "a.csv,b.csv");
    assert_int_equal(c.daemon, 1);
    assert_int_equal(c.threads, 9);              /* the later line wins */
    assert_int_equal(c.max_body, 32 * 1024 * 1024);
    assert_int_equal(c.journal, 1);
    assert_int_equal(c.journal_fsync, CONF_FSYNC_ALWAYS);
    assert_int_equal(c.max_connections, 4096);   /* untouched keys keep their defaults */
    assert_null(err.data);
    config_free(&c);
    buf_free(&err);
}

static void load_fails(const char *text, const char *msg_after_path)
{
    config c;
    buf err = BUF_INIT;
    char want[PATH_MAX + 200];
    assert_int_equal(config_defaults(&c), 0);
    const char *path = write_file("bad.properties", text);
    snprintf(want, sizeof want, "%s%s", path, msg_after_path);
    assert_int_equal(config_load_file(&c, path, &err), -1);
    assert_non_null(err.data);
    assert_string_equal(err.data, want);
    config_free(&c);
    buf_free(&err);
}

static void test_load_file_errors(void **state)
{
    load_fails("# x\n\njmeterPlugin.sts.port=91x1\n",
               ":3: jmeterPlugin.sts.port: \"91x1\" is not an integer in 0..65535");
    load_fails("a=1\nstsd.threads=2\nstsd.thread=4\n",
               ":3: unknown key \"stsd.thread\" (did you mean stsd.threads?)");
    load_fails("JMETERPLUGIN.STS.port=1\n",
               ":1: unknown key \"JMETERPLUGIN.STS.port\" (did you mean jmeterPlugin.sts.port?)");
    load_fails("a=1\r\nb=2\r\nfoo.bar=\\uZZZZ\r\n", ":3: malformed \\uXXXX escape");
    load_fails("x=1\njmeterPlugin.sts.daemon=yes\n",
               ":2: jmeterPlugin.sts.daemon: \"yes\" is not true or false");

    config c;
    buf err = BUF_INIT;
    char want[PATH_MAX + 64];
    assert_int_equal(config_defaults(&c), 0);
    snprintf(want, sizeof want, "%s/missing.properties", tmp_dir);
    assert_int_equal(config_load_file(&c, want, &err), -1);
    assert_non_null(strstr(err.data, want));
    assert_non_null(strstr(err.data, "No such file or directory"));
    buf_clear(&err);
    assert_int_equal(config_load_file(&c, tmp_dir, &err), -1);   /* a directory */
    assert_non_null(strstr(err.data, tmp_dir));
    config_free(&c);
    buf_free(&err);
}

/* ---- command line ---- */

static void test_args_reference_style(void **state)
{
    config c;
    config_cli cli;
    buf err = BUF_INIT;
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "-DjmeterPlugin.sts.port=9192",
                              "-DjmeterPlugin.sts.datasetDirectory=/test",
                              "-DjmeterPlugin.sts.addTimestamp=false",
                              "-DjmeterPlugin.sts.loadAndRunOnStartup=true",
                              "-Dserver.rmi.ssl.disable=true", "-Dfoo", "-Dbar=a=b",
                              "-DjmeterPlugin.sts.initFileAtStartup=x=y.csv",
                              "-DjmeterPlugin.sts.charsetEncodingWriteFile=windows-1252",
                              "-DjmeterPlugin.sts.daemon=true", (char *)NULL), 0);
    assert_int_equal(cli.action, CONFIG_RUN);
    assert_int_equal(cli.fresh, 0);
    assert_null(cli.check_dir);
    assert_int_equal(c.port, 9192);
    assert_string_equal(c.dataset_dir, "/test");
    assert_int_equal(c.add_timestamp, 0);
    assert_string_equal(c.init_file_at_startup, "x=y.csv");   /* split at the first '=' */
    assert_string_equal(c.charset_write, "windows-1252");
    assert_int_equal(c.daemon, 1);
    /* -Dkey with no '=' is an empty value, as in Java. */
    assert_int_equal(run_args(&c, &cli, &err, "-DjmeterPlugin.sts.initFileAtStartup",
                              (char *)NULL), 0);
    assert_string_equal(c.init_file_at_startup, "");

    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.nope=1", (char *)NULL), -1);
    assert_string_equal(err.data, "unknown key \"stsd.nope\"");
    assert_int_equal(run_args(&c, &cli, &err, "-DjmeterPlugin.sts.port=91x1", (char *)NULL), -1);
    assert_string_equal(err.data, "jmeterPlugin.sts.port: \"91x1\" is not an integer in 0..65535");
    assert_int_equal(run_args(&c, &cli, &err, "-D", (char *)NULL), -1);
    assert_string_equal(err.data, "-D: -D needs key=value (with no space after -D)");
    assert_int_equal(run_args(&c, &cli, &err, "-D=1", (char *)NULL), -1);
    assert_string_equal(err.data, "-D=1: -D needs key=value (with no space after -D)");
    config_free(&c);
    buf_free(&err);
}

static void test_args_long_options(void **state)
{
    config c;
    config_cli cli;
    buf err = BUF_INIT;
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "--port", "0", "--dataset-dir", "/d1",
                              "--bind", "::", "--threads", "4", "--state-dir", "/s1",
                              "--journal", "on", "--port-file", "/p1", "--fresh", (char *)NULL), 0);
    assert_int_equal(c.port, 0);
    assert_string_equal(c.dataset_dir, "/d1");
    assert_string_equal(c.bind, "::");
    assert_int_equal(c.threads, 4);
    assert_string_equal(c.state_dir, "/s1");
    assert_int_equal(c.journal, 1);
    assert_string_equal(c.port_file, "/p1");
    assert_int_equal(cli.fresh, 1);
    assert_int_equal(cli.action, CONFIG_RUN);

    assert_int_equal(run_args(&c, &cli, &err, "--port=81", "--dataset-dir=/d2", "--bind=127.0.0.1",
                              "--threads=2", "--state-dir=/s2", "--journal=off",
                              "--port-file=", (char *)NULL), 0);
    assert_int_equal(c.port, 81);
    assert_string_equal(c.dataset_dir, "/d2");
    assert_string_equal(c.bind, "127.0.0.1");
    assert_int_equal(c.threads, 2);
    assert_string_equal(c.state_dir, "/s2");
    assert_int_equal(c.journal, 0);
    assert_string_equal(c.port_file, "");
    assert_int_equal(cli.fresh, 0);              /* reset on each call */

    assert_int_equal(run_args(&c, &cli, &err, "--check-journal", "/j", (char *)NULL), 0);
    assert_int_equal(cli.action, CONFIG_CHECK_JOURNAL);
    assert_string_equal(cli.check_dir, "/j");
    assert_int_equal(run_args(&c, &cli, &err, "--check-journal=/k", (char *)NULL), 0);
    assert_string_equal(cli.check_dir, "/k");

    const char *help[] = {"--help", "-h"};
    const char *version[] = {"--version", "-v"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run_args(&c, &cli, &err, help[i], (char *)NULL), 0);
        assert_int_equal(cli.action, CONFIG_HELP);
        assert_int_equal(run_args(&c, &cli, &err, version[i], (char *)NULL), 0);
        assert_int_equal(cli.action, CONFIG_VERSION);
    }
    /* Help wins over errors elsewhere on the line, even a missing config file. */
    assert_int_equal(run_args(&c, &cli, &err, "--port", "x", "--config", "/nonexistent",
                              "--bogus", "-h", (char *)NULL), 0);
    assert_int_equal(cli.action, CONFIG_HELP);
    /* ... but not when it is another option's value. */
    assert_int_equal(run_args(&c, &cli, &err, "--state-dir", "--help", (char *)NULL), 0);
    assert_int_equal(cli.action, CONFIG_RUN);
    assert_string_equal(c.state_dir, "--help");
    config_free(&c);
    buf_free(&err);
}

static void args_fail(const char *msg, ...)
{
    config c;
    config_cli cli;
    buf err = BUF_INIT;
    char *argv[16] = {"stsd"};
    int argc = 1;
    va_list ap;
    va_start(ap, msg);
    for (char *a; (a = va_arg(ap, char *)) != NULL;)
        argv[argc++] = a;
    va_end(ap);
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(config_from_args(&c, argc, argv, &cli, &err), -1);
    assert_non_null(err.data);
    assert_string_equal(err.data, msg);
    config_free(&c);
    buf_free(&err);
}

static void test_args_errors(void **state)
{
    args_fail("unknown option \"--bogus\" (see --help)", "--bogus", (char *)NULL);
    args_fail("unknown option \"--portx=1\" (see --help)", "--portx=1", (char *)NULL);
    args_fail("unknown option \"-x\" (see --help)", "-x", (char *)NULL);
    args_fail("unexpected argument \"datasets\" (see --help)", "datasets", (char *)NULL);
    args_fail("--port needs a value: --port N", "--port", (char *)NULL);
    args_fail("--config needs a value: --config FILE", "--config", (char *)NULL);
    args_fail("--check-journal needs a value: --check-journal DIR", "--check-journal", (char *)NULL);
    args_fail("--fresh takes no value", "--fresh=1", (char *)NULL);
    args_fail("--port: \"91x1\" is not an integer in 0..65535", "--port", "91x1", (char *)NULL);
    args_fail("--port: \"\" is not an integer in 0..65535", "--port=", (char *)NULL);
    args_fail("--threads: \"-1\" is not an integer in 0..1024", "--threads", "-1", (char *)NULL);
    args_fail("--journal: \"yes\" is not on or off", "--journal=yes", (char *)NULL);
    args_fail("--bind: \"example.com\" is not an IPv4 or IPv6 address", "--bind", "example.com",
              (char *)NULL);
}

/* getopt_long's own habits that the command line does not take on, and the spellings it
 * keeps: --opt=value and --opt value alike, -Dkey=value only attached. */
static void test_args_getopt_edges(void **state)
{
    config c;
    config_cli cli;
    buf err = BUF_INIT;
    assert_int_equal(config_defaults(&c), 0);
    /* --opt value and --opt=value; a value may start with '-' or hold '='. */
    assert_int_equal(run_args(&c, &cli, &err, "--threads", "3", "--state-dir", "-x",
                              "--port-file=/a=b", (char *)NULL), 0);
    assert_int_equal(c.threads, 3);
    assert_string_equal(c.state_dir, "-x");
    assert_string_equal(c.port_file, "/a=b");
    assert_int_equal(run_args(&c, &cli, &err, "--threads=6", "--state-dir=", (char *)NULL), 0);
    assert_int_equal(c.threads, 6);
    assert_string_equal(c.state_dir, "");
    /* -Dkey=value, in order with the long options; the last one wins. */
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.threads=9", "--threads", "8",
                              "-Dstsd.threads=7", (char *)NULL), 0);
    assert_int_equal(c.threads, 7);
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.threads", (char *)NULL), -1);
    assert_string_equal(err.data, "stsd.threads: \"\" is not an integer in 0..1024");
    /* The same argv twice: each call starts getopt afresh. */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run_args(&c, &cli, &err, "--fresh", "--port=17", (char *)NULL), 0);
        assert_int_equal(c.port, 17);
        assert_int_equal(cli.fresh, 1);
    }
    /* A refused -D does not swallow the next word: -h still wins. */
    assert_int_equal(run_args(&c, &cli, &err, "-D", "-h", (char *)NULL), 0);
    assert_int_equal(cli.action, CONFIG_HELP);
    /* "--" ends nothing: the words after it are still read. */
    assert_int_equal(run_args(&c, &cli, &err, "--", "--version", (char *)NULL), 0);
    assert_int_equal(cli.action, CONFIG_VERSION);
    config_free(&c);
    buf_free(&err);

    /* Unknown: prefixes getopt_long would take, grouped short options, "--" and "-". */
    args_fail("unknown option \"--dataset=/x\" (see --help)", "--dataset=/x", (char *)NULL);
    args_fail("unknown option \"--thread\" (see --help)", "--thread", "2", (char *)NULL);
    args_fail("unknown option \"--por=1\" (see --help)", "--por=1", (char *)NULL);
    args_fail("unknown option \"--fre\" (see --help)", "--fre", (char *)NULL);
    args_fail("unknown option \"--check\" (see --help)", "--check", (char *)NULL);
    args_fail("unknown option \"-hv\" (see --help)", "-hv", (char *)NULL);
    args_fail("unknown option \"-h=1\" (see --help)", "-h=1", (char *)NULL);
    args_fail("unknown option \"-port\" (see --help)", "-port", (char *)NULL);
    args_fail("unknown option \"--\" (see --help)", "--", (char *)NULL);
    args_fail("unknown option \"-\" (see --help)", "-", (char *)NULL);
    args_fail("unexpected argument \"\" (see --help)", "", (char *)NULL);
    args_fail("unexpected argument \"x\" (see --help)", "--fresh", "x", (char *)NULL);
    /* Missing values, and values given to flags. */
    args_fail("--state-dir needs a value: --state-dir DIR", "--fresh", "--state-dir", (char *)NULL);
    args_fail("--port needs a value: --port N", "--port=1", "--port", (char *)NULL);
    args_fail("-D: -D needs key=value (with no space after -D)", "-D", "stsd.threads=2",
              (char *)NULL);
    args_fail("--help takes no value", "--help=1", (char *)NULL);
    args_fail("--repair takes no value", "--repair=yes", (char *)NULL);
}

/* ---- keys that look like ours (issue 32) ---- */

static void test_key_lookalike(void **state)
{
    static const char *const near[][2] = {
        {"jmeterPlugins.sts.port", "jmeterPlugin.sts.port"},     /* one insert */
        {"jmeterPlugin.sts.prot", "jmeterPlugin.sts.port"},      /* one swap */
        {"jmeterPlugin.sts.pot", "jmeterPlugin.sts.port"},       /* one delete */
        {"jmetrePlugin.sts.demon", "jmeterPlugin.sts.daemon"},   /* swap and delete */
        {"JMETERPLUGINS.STS.PORT", "jmeterPlugin.sts.port"},     /* letter case aside */
        {"stds.threads", "stsd.threads"},
        {"stsdthreads", "stsd.threads"},
        {"jmeter.sts.daemon", "jmeterPlugin.sts.daemon"},        /* last part, jmeter + sts */
        {"jmeter.sts.port", "jmeterPlugin.sts.port"},
        {"jmeterPlugins.datasetDirectory", "jmeterPlugin.sts.datasetDirectory"},
        {"jmeter-plugins.sts.initFileAtStartup", "jmeterPlugin.sts.initFileAtStartup"},
        {"JMeter.STS.PORT", "jmeterPlugin.sts.port"},
        {"sts.port", "jmeterPlugin.sts.port"},
        {"stsd-journal.fsync", "stsd.journal.fsync"},
        {"stsdaemon.bind", "stsd.bind"},
        {"jmeterPlugin.daemon", "jmeterPlugin.sts.daemon"},      /* ".sts" left out */
    };
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        const char *got = config_key_lookalike(near[i][0]);
        if (!got || strcmp(got, near[i][1]) != 0)
            fail_msg("%s: looks like %s, not %s", near[i][0], got ? got : "nothing",
                     near[i][1]);
    }
    /* Known keys, and keys of JMeter's own (jmeter.properties, user.properties), or too far. */
    static const char *const quiet[] = {
        "jmeterPlugin.sts.port", "stsd.threads", "jmeterengine.nongui.port",
        "jmeterengine.nongui.maxport", "jmeter.save.saveresults.timestamp_format",
        "jmeter.reportgenerator.overall_granularity", "server.rmi.port", "server_port",
        "mirror.server.port", "jmeter.exit.check.pause", "httpclient.timeout", "log_level.jmeter",
        "jmeter.laf", "jmeterPlugin.foo.daemon", "jmeterPlugin.other.port", "jmeter.sts.", "jmeter.sts.nothing",
        "", ".port", "port", "sts", "jmeterPlugin.sts.portFileName", "foo.stsd.bind",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.port",
    };
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++) {
        const char *got = config_key_lookalike(quiet[i]);
        if (got)
            fail_msg("%s should be left alone, not taken for %s", quiet[i], got);
    }
}

static void test_strict_keys(void **state)
{
    config c, before;
    config_cli cli;
    buf err = BUF_INIT;
    char opt[PATH_MAX + 16];
    /* Without --strict-keys: warned (on stderr), ignored, the start goes on. */
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "-DjmeterPlugins.sts.port=9394",
                              "-Djmeter.sts.daemon=true", "-Djmeterengine.nongui.port=4445",
                              (char *)NULL), 0);
    assert_int_equal(c.port, 9191);
    assert_int_equal(c.daemon, 0);
    assert_int_equal(cli.strict_keys, 0);
    config_free(&c);
    /* With it, wherever it stands: an error naming the key we know, nothing set. */
    assert_int_equal(config_defaults(&c), 0);
    memcpy(&before, &c, sizeof before);
    assert_int_equal(run_args(&c, &cli, &err, "-DjmeterPlugins.sts.port=9394", "--strict-keys",
                              (char *)NULL), -1);
    assert_string_equal(err.data, "unknown key jmeterPlugins.sts.port: did you mean "
                                  "jmeterPlugin.sts.port? (--strict-keys refuses it)");
    assert_int_equal(cli.strict_keys, 1);
    assert_int_equal(c.port, 9191);
    /* Foreign keys that look like nothing of ours still pass. */
    assert_int_equal(run_args(&c, &cli, &err, "--strict-keys", "-Djmeterengine.nongui.port=4445",
                              "-Dsummariser.interval=30", "--port=5", (char *)NULL), 0);
    assert_int_equal(c.port, 5);
    config_free(&c);
    /* In a file: its name and line in the message, before any option is applied. */
    const char *path = write_file("shared.properties",
                                  "# JMeter's and ours in one file\n"
                                  "jmeterengine.nongui.port=4445\n"
                                  "jmeterPlugin.sts.port=7000\n"
                                  "jmeter.sts.daemon=true\n");
    char *file = strdup(path);
    assert_non_null(file);
    snprintf(opt, sizeof opt, "--config=%s", file);
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, opt, (char *)NULL), 0);
    assert_int_equal(c.port, 7000);
    assert_int_equal(c.daemon, 0);
    config_free(&c);
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, opt, "--strict-keys", "--port=1", (char *)NULL), -1);
    char want[PATH_MAX + 200];
    snprintf(want, sizeof want, "%s:4: unknown key jmeter.sts.daemon: did you mean "
             "jmeterPlugin.sts.daemon? (--strict-keys refuses it)", file);
    assert_string_equal(err.data, want);
    config_free(&c);
    /* config_load_file alone (no --strict-keys) warns and goes on. */
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(config_load_file(&c, file, &err), 0);
    assert_int_equal(c.port, 7000);
    config_free(&c);
    /* --strict-keys is a flag. */
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "--strict-keys=yes", (char *)NULL), -1);
    assert_string_equal(err.data, "--strict-keys takes no value");
    config_free(&c);
    /* Our own namespace was strict already; now it names the key it looks like. */
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "-Dstsd.bnd=::1", (char *)NULL), -1);
    assert_string_equal(err.data, "unknown key \"stsd.bnd\" (did you mean stsd.bind?)");
    config_free(&c);
    free(file);
    buf_free(&err);
}

static void test_args_precedence(void **state)
{
    config c;
    config_cli cli;
    buf err = BUF_INIT;
    char opt[PATH_MAX + 16];
    const char *path = write_file("prec.properties",
                                  "jmeterPlugin.sts.port=1111\n"
                                  "stsd.threads=3\n"
                                  "stsd.bind=127.0.0.1\n");
    char *file = strdup(path);
    assert_non_null(file);
    snprintf(opt, sizeof opt, "--config=%s", file);

    /* The file is applied first wherever it stands; then the command line, in order. */
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "-DjmeterPlugin.sts.port=2222", "--config", file,
                              "--port", "3333", (char *)NULL), 0);
    assert_int_equal(c.port, 3333);
    assert_int_equal(c.threads, 3);
    assert_string_equal(c.bind, "127.0.0.1");
    config_free(&c);

    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "--port", "3333", "-DjmeterPlugin.sts.port=2222",
                              "--threads=5", opt, (char *)NULL), 0);
    assert_int_equal(c.port, 2222);
    assert_int_equal(c.threads, 5);
    config_free(&c);

    /* Two files: the second overrides the first. */
    const char *path2 = write_file("second.properties", "stsd.threads=7\n");
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, opt, "--config", path2, (char *)NULL), 0);
    assert_int_equal(c.threads, 7);
    assert_int_equal(c.port, 1111);
    config_free(&c);

    /* A broken file stops everything, with its name and line. */
    const char *bad = write_file("broken.properties", "\nstsd.threads=lots\n");
    char want[PATH_MAX + 100];
    snprintf(want, sizeof want, "%s:2: stsd.threads: \"lots\" is not an integer in 0..1024", bad);
    assert_int_equal(config_defaults(&c), 0);
    assert_int_equal(run_args(&c, &cli, &err, "--port", "1", "--config", bad, (char *)NULL), -1);
    assert_string_equal(err.data, want);
    config_free(&c);

    free(file);
    buf_free(&err);
}

/* ---- validate ---- */

static void validate_fails(config *c, const char *msg)
{
    buf err = BUF_INIT;
    assert_int_equal(config_validate(c, &err), -1);
    assert_non_null(err.data);
    if (!strstr(err.data, msg))
        fail_msg("\"%s\" does not contain \"%s\"", err.data, msg);
    buf_free(&err);
}

static void test_validate(void **state)
{
    config c;
    buf err = BUF_INIT;
    assert_int_equal(config_defaults(&c), 0);
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", tmp_dir);
    assert_int_equal(config_validate(&c, &err), 0);

    const char *good[] = {"UTF-8", "ISO-8859-1", "ISO-8859-15", "windows-1252", "utf-8",
                          "US-ASCII"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        set_ok(&c, "jmeterPlugin.sts.charsetEncodingHttpResponse", good[i]);
        set_ok(&c, "jmeterPlugin.sts.charsetEncodingReadFile", good[i]);
        set_ok(&c, "jmeterPlugin.sts.charsetEncodingWriteFile", good[i]);
        if (config_validate(&c, &err) != 0)
            fail_msg("%s: %s", good[i], err.data);
        /* No normalizing: what was set is what is used. */
        assert_string_equal(c.charset_read, good[i]);
    }
    set_ok(&c, "jmeterPlugin.sts.charsetEncodingReadFile", "BOGUS-42");
    validate_fails(&c, "jmeterPlugin.sts.charsetEncodingReadFile: \"BOGUS-42\" is not a charset "
                       "iconv knows");
    set_ok(&c, "jmeterPlugin.sts.charsetEncodingReadFile", "UTF-8");
    set_ok(&c, "jmeterPlugin.sts.charsetEncodingWriteFile", "ISO8859_15");   /* a Java alias */
    validate_fails(&c, "jmeterPlugin.sts.charsetEncodingWriteFile: \"ISO8859_15\" is not a "
                       "charset iconv knows");
    set_ok(&c, "jmeterPlugin.sts.charsetEncodingWriteFile", "UTF-8");
    assert_int_equal(config_validate(&c, &err), 0);

    /* Fields set directly, bypassing config_set, are checked too. */
    char *saved = c.charset_response;
    c.charset_response = "";
    validate_fails(&c, "jmeterPlugin.sts.charsetEncodingHttpResponse: \"\" is not a charset name");
    c.charset_response = saved;
    saved = c.bind;
    c.bind = "not-an-address";
    validate_fails(&c, "stsd.bind: \"not-an-address\" is not an IPv4 or IPv6 address");
    c.bind = saved;
    c.port = 70000;
    validate_fails(&c, "jmeterPlugin.sts.port: 70000 is not in 0..65535");
    c.port = 9191;
    c.max_body = 10;
    validate_fails(&c, "stsd.maxBodySize: 10 is not in 1K..1G");
    c.max_body = 1024;
    assert_int_equal(config_validate(&c, &err), 0);

    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/nowhere", tmp_dir);
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", path);
    validate_fails(&c, "No such file or directory");
    validate_fails(&c, path);
    const char *file = write_file("plain.txt", "x\n");
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", file);
    validate_fails(&c, "is not a directory");
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", "");
    validate_fails(&c, "jmeterPlugin.sts.datasetDirectory: \"\"");
    config_free(&c);
    buf_free(&err);
}

/* ---- CONFIG listing and usage ---- */

static void each_collect(const char *key, const char *value, void *ctx)
{
    collect(key, value, ctx);
}

static void test_each(void **state)
{
    config c;
    pairs p;
    char dir[PATH_MAX], real[PATH_MAX];
    assert_int_equal(config_defaults(&c), 0);
    /* A path with a detour shows the difference between the value and its canonical form. */
    snprintf(dir, sizeof dir, "%s/sub/..", tmp_dir);
    snprintf(real, sizeof real, "%s/sub", tmp_dir);
    assert_int_equal(mkdir(real, 0700), 0);
    assert_non_null(realpath(tmp_dir, real));
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", dir);
    set_ok(&c, "stsd.journal", "on");
    set_ok(&c, "stsd.maxBytes", "2G");
    set_ok(&c, "jmeterPlugin.sts.initFileAtStartup", "a.csv,b.csv");
    memset(&p, 0, sizeof p);
    config_each(&c, each_collect, &p);
    const char *want[][2] = {
        {"port", "9191"},
        {"datasetDirectory", dir},
        {"datasetDirectory (canonical)", real},
        {"addTimestamp", "true"},
        {"daemon", "false"},
        {"charsetEncodingHttpResponse", "UTF-8"},
        {"charsetEncodingReadFile", "UTF-8"},
        {"charsetEncodingWriteFile", "UTF-8"},
        {"initFileAtStartup", "a.csv,b.csv"},
        {"initFileAtStartupRegex", "false"},
        {"stopExit", "true"},
        {"stsd.initFileHeader", "false"},
        {"stsd.initFileSeparator", ","},
        {"stsd.bind", "::"},
        {"stsd.portFile", ""},
        {"stsd.threads", "0"},
        {"stsd.maxConnections", "4096"},
        {"stsd.maxConnectionsPerIp", "0"},
        {"stsd.connectionTimeout", "60"},
        {"stsd.maxBodySize", "16777216"},
        {"stsd.maxLineSize", "1048576"},
        {"stsd.maxLists", "100000"},
        {"stsd.maxKeys", "100000"},
        {"stsd.maxBytes", "2147483648"},
        {"stsd.journal", "on"},
        {"stsd.journal.fsync", "everysec"},
        {"stsd.stateDirectory", ""},
        {"stsd.maxWait", "600"},
        {"stsd.maxParties", "100000"},
        {"stsd.maxLease", "3600"},
        {"stsd.metrics.maxLists", "10000"},
        {"stsd.log.format", "text"},
        {"stsd.jsonByAccept", "false"},
        {"stsd.koStatus", "false"},
    };
    size_t n = sizeof want / sizeof want[0];
    assert_int_equal(p.n, n);
    for (size_t i = 0; i < n; i++)
        assert_pair(&p, (int)i, want[i][0], want[i][1]);
    pairs_free(&p);

    /* Without a real directory the canonical line repeats the value. */
    set_ok(&c, "jmeterPlugin.sts.datasetDirectory", "/no/such/dir");
    set_ok(&c, "jmeterPlugin.sts.daemon", "true");
    set_ok(&c, "stsd.journal.fsync", "no");
    memset(&p, 0, sizeof p);
    config_each(&c, each_collect, &p);
    assert_pair(&p, 2, "datasetDirectory (canonical)", "/no/such/dir");
    assert_pair(&p, 4, "daemon", "true");
    assert_pair(&p, 25, "stsd.journal.fsync", "no");
    pairs_free(&p);

    /* config_each_key: full names, no extra lines. */
    set_ok(&c, "stsd.log.format", "JSON");
    memset(&p, 0, sizeof p);
    config_each_key(&c, each_collect, &p);
    assert_pair(&p, 0, "jmeterPlugin.sts.port", "9191");
    assert_pair(&p, 1, "jmeterPlugin.sts.datasetDirectory", "/no/such/dir");
    assert_pair(&p, 11, "stsd.bind", "::");
    assert_pair(&p, (int)p.n - 3, "stsd.log.format", "json");
    assert_pair(&p, (int)p.n - 1, "stsd.koStatus", "false");
    assert_int_equal(p.n, n - 2);
    pairs_free(&p);
    buf err = BUF_INIT;
    assert_int_equal(config_set(&c, "stsd.log.format", "xml", &err), -1);
    assert_non_null(strstr(err.data, "is not text or json"));
    buf_clear(&err);
    assert_int_equal(config_set(&c, "stsd.metrics.maxLists", "-1", &err), -1);
    buf_free(&err);
    config_free(&c);
}

static void test_usage(void **state)
{
    const char *u = config_usage();
    assert_non_null(u);
    assert_ptr_equal(u, config_usage());
    assert_true(strncmp(u, "Usage: stsd", 11) == 0);
    const char *must[] = {"--config FILE", "--port N", "--dataset-dir DIR", "--bind ADDR",
                          "--threads N", "--state-dir DIR", "--journal on|off", "--port-file FILE",
                          "--fresh", "--check-journal DIR", "-h, --help", "-v, --version",
                          "-Dkey=value", "jmeterPlugin.sts.port=9191",
                          "jmeterPlugin.sts.datasetDirectory=.", "jmeterPlugin.sts.daemon=false",
                          "stsd.maxBodySize=16M", "stsd.journal=off",
                          "stsd.journal.fsync=everysec", "stsd.stateDirectory="};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        if (!strstr(u, must[i]))
            fail_msg("usage lacks \"%s\"", must[i]);
    assert_null(strstr(u, "(truncated)"));
    assert_true(u[strlen(u) - 1] == '\n');
}

static void doc_key_check(const config_key_doc *k, void *ctx)
{
    int *n = ctx;
    (*n)++;
    if (!*k->values || strstr(k->values, "(null)"))
        fail_msg("%s: what it accepts reads \"%s\"", k->name, k->values);
}

/* Every key in stsd(8) and docs/configuration.md says what it accepts. */
static void test_doc_keys(void **state)
{
    int n = 0;
    config_doc_keys(doc_key_check, &n);
    assert_true(n > 40);
}

/* The shipped sample: it loads, sets what `make run` relies on, and documents every key
 * with the table's default. Found from the source tree's root, where `make test` runs. */
static void test_sample_conf(void **state)
{
    const char *path = "conf/sts.properties";
    if (access(path, R_OK) != 0) {
        print_message("skipped: %s not found (run from the top of the tree)\n", path);
        skip();
    }
    config c;
    buf err = BUF_INIT;
    assert_int_equal(config_defaults(&c), 0);
    if (config_load_file(&c, path, &err) != 0)
        fail_msg("%s", err.data);
    assert_int_equal(c.port, 9191);
    assert_int_equal(c.daemon, 0);
    assert_int_equal(c.journal, 1);
    assert_int_equal(c.journal_fsync, CONF_FSYNC_EVERYSEC);
    assert_string_equal(c.dataset_dir, ".");
    assert_string_equal(c.state_dir, "");
    config_free(&c);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    assert_int_equal(fclose(f), 0);
    /* Each "  key=default" line of the usage must be "#key=default" or an active "key=". */
    const char *u = config_usage();
    for (const char *l = strstr(u, "\n  jmeterPlugin."); l; ) {
        const char *eol = strchr(l + 1, '\n');
        char line[256], commented[260], active[260];
        snprintf(line, sizeof line, "%.*s", (int)(eol - l - 3), l + 3);
        snprintf(commented, sizeof commented, "#%s\n", line);
        snprintf(active, sizeof active, "\n%.*s", (int)(strchr(line, '=') - line + 1), line);
        if (!strstr(text, commented) && !strstr(text, active))
            fail_msg("%s does not document %s", path, line);
        const char *next = strstr(eol, "\n  jmeterPlugin.");
        l = next ? next : strstr(eol, "\n  stsd.");
    }
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_strict_integers),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_booleans_and_enums),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_props_separators),
        cmocka_unit_test(test_props_empty_values),
        cmocka_unit_test(test_props_comments),
        cmocka_unit_test(test_props_continuation),
        cmocka_unit_test(test_props_escapes),
        cmocka_unit_test(test_props_unicode),
        cmocka_unit_test(test_props_line_ends),
        cmocka_unit_test(test_props_bom_nul_empty),
        cmocka_unit_test(test_props_callback_stops),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_load_file_errors),
        cmocka_unit_test(test_args_reference_style),
        cmocka_unit_test(test_args_long_options),
        cmocka_unit_test(test_args_errors),
        cmocka_unit_test(test_args_getopt_edges),
        cmocka_unit_test(test_args_precedence),
        cmocka_unit_test(test_key_lookalike),
        cmocka_unit_test(test_strict_keys),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_each),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_doc_keys),
        cmocka_unit_test(test_sample_conf),
    };
    return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}
