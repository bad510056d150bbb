/* SPDX-License-Identifier: Apache-2.0 */
/* test_metrics.c - GET /metrics on a real stsd: exact request and list counts, _other past
 * stsd.metrics.maxLists, label escaping, promtool's check (when installed), and the
 * shipped Grafana dashboard: valid JSON whose queries name metrics that exist. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

static daemon_proc d;

static int setup(void **state)
{
    if (td_mkdirs(&d) != 0)
        return -1;
    const char *extra[] = {"--journal", "on", "-Dstsd.journal.fsync=always",
                           "-Dstsd.metrics.maxLists=2", NULL};
    return td_start(&d, extra);
}

static int teardown(void **state)
{
    td_cleanup(&d);
    return 0;
}

static void get(const char *target)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
}

/* A scrape, malloc'd. */
static char *scrape(void)
{
    http_reply r;
    assert_int_equal(http_get(d.port, "/metrics", &r), 0);
    assert_int_equal(r.status, 200);
    char v[128];
    assert_int_equal(http_header(&r, "Content-Type", v, sizeof v), 0);
    assert_string_equal(v, "text/plain; version=0.0.4; charset=utf-8");
    return r.body;
}

/* The value of the sample line that starts with `series ` in text. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return atof(p + n + 1);
    fail_msg("no sample %s", series);
    return -1;
}

static void test_counts(void **state)
{
    /* Four lists; by name, the first two get series: a"b\c and b<0xff>. */
    get("/sts/ADD?FILENAME=a%22b%5Cc&LINE=1");
    get("/sts/ADD?FILENAME=b%FF&LINE=1");
    get("/sts/ADD?FILENAME=b%FF&LINE=2");
    for (int i = 0; i < 3; i++)
        get("/sts/ADD?FILENAME=c&LINE=x");
    get("/sts/ADD?FILENAME=d&LINE=y");
    get("/sts/READ?FILENAME=c&KEEP=FALSE");
    get("/sts/READ?FILENAME=c&KEEP=TRUE");              /* moved, not removed */
    get("/sts/READ?FILENAME=zz");                       /* a KO */
    get("/sts/READ?FILENAME=b%FF&KEEP=FALSE&FORMAT=JSON");
    get("/sts/NOPE");
    char *m = scrape();
    assert_int_equal(sample(m, "stsd_requests_total{command=\"ADD\",result=\"ok\"}"), 7);
    assert_int_equal(sample(m, "stsd_requests_total{command=\"ADD\",result=\"ko\"}"), 0);
    assert_int_equal(sample(m, "stsd_requests_total{command=\"READ\",result=\"ok\"}"), 3);
    assert_int_equal(sample(m, "stsd_requests_total{command=\"READ\",result=\"ko\"}"), 1);
    assert_int_equal(sample(m, "stsd_requests_total{command=\"other\",result=\"ko\"}"), 1);
    assert_int_equal(sample(m, "stsd_request_duration_seconds_count{command=\"READ\"}"), 4);
    assert_int_equal(
        sample(m, "stsd_request_duration_seconds_bucket{command=\"READ\",le=\"+Inf\"}"), 4);
    assert_int_equal(sample(m, "stsd_request_duration_seconds_bucket{command=\"ADD\",le=\"1\"}"),
                     7);
    assert_true(sample(m, "stsd_request_duration_seconds_sum{command=\"ADD\"}") > 0);
    assert_int_equal(sample(m, "stsd_lists"), 4);
    assert_int_equal(sample(m, "stsd_list_lines{list=\"a\\\"b\\\\c\"}"), 1);
    assert_int_equal(sample(m, "stsd_list_lines{list=\"b\\\\xff\"}"), 1);
    assert_int_equal(sample(m, "stsd_list_added_total{list=\"b\\\\xff\"}"), 2);
    assert_int_equal(sample(m, "stsd_list_removed_total{list=\"b\\\\xff\"}"), 1);
    /* c (2 lines, 3 added, 1 removed) and d (1, 1, 0) add up in _other. */
    assert_int_equal(sample(m, "stsd_list_lines{list=\"_other\"}"), 3);
    assert_int_equal(sample(m, "stsd_list_added_total{list=\"_other\"}"), 4);
    assert_int_equal(sample(m, "stsd_list_removed_total{list=\"_other\"}"), 1);
    assert_null(strstr(m, "list=\"c\""));
    /* The scrape's own connection; the server may not have seen the previous client's
     * close yet (a parked request resumes and answers a little later): ask again. */
    for (int i = 0; i < 50 && sample(m, "stsd_connections") != 1; i++) {
        free(m);
        usleep(20000);
        m = scrape();
    }
    assert_int_equal(sample(m, "stsd_connections"), 1);
    assert_int_equal(sample(m, "stsd_journal_enabled"), 1);
    assert_int_equal(sample(m, "stsd_journal_writable"), 1);
    assert_int_equal(sample(m, "stsd_journal_errors_total"), 0);
    assert_true(sample(m, "stsd_journal_bytes") > 0);
    /* fsync=always: at least one fsync per answered change. */
    assert_true(sample(m, "stsd_journal_fsync_seconds_count") >= 1);
    /* 7 ADDs and 3 READs that changed a list, one after the other: a record and a sync
     * each (a change is answered once synced, and the next one comes after). */
    assert_int_equal(sample(m, "stsd_journal_records_total"), 10);
    assert_true(sample(m, "stsd_journal_log_syncs_total") >= 10);
    assert_true(sample(m, "process_resident_memory_bytes") > 1e6);
    assert_true(sample(m, "process_virtual_memory_bytes") > 1e6);
    assert_true(sample(m, "process_open_fds") >= 3);
    assert_true(sample(m, "process_max_fds") >= 64);
    assert_true(sample(m, "process_start_time_seconds") > 1.6e9);
    assert_true(sample(m, "process_cpu_seconds_total") >= 0);
    assert_non_null(strstr(m, "\nstsd_build_info{version=\""));
    /* Every family has HELP and TYPE. */
    for (const char *p = strstr(m, "# TYPE "); p; p = strstr(p + 1, "# TYPE ")) {
        char name[128], help[160];
        assert_int_equal(sscanf(p, "# TYPE %127s", name), 1);
        snprintf(help, sizeof help, "# HELP %s ", name);
        assert_non_null(strstr(m, help));
    }
    free(m);
    /* A scrape is no request: the counters did not move. */
    m = scrape();
    assert_int_equal(sample(m, "stsd_requests_total{command=\"ADD\",result=\"ok\"}"), 7);
    assert_int_equal(sample(m, "stsd_requests_total{command=\"other\",result=\"ok\"}"), 0);
    free(m);
    /* Only GET /metrics: anything else under it is not found. */
    http_reply r;
    assert_int_equal(http_post(d.port, "/metrics", "a=b", &r), 0);
    assert_null(strstr(r.body, "stsd_build_info"));
    http_reply_free(&r);
}

static void *waiting_read(void *arg)
{
    http_reply *r = arg;
    if (http_get(d.port, "/sts/READ?FILENAME=d&KEEP=FALSE&TIMEOUT=20", r) != 0)
        r->status = -1;
    return NULL;
}

/* A request waiting for a line shows in stsd_list_waiters and in STATUS until served. */
static void test_waiters(void **state)
{
    get("/sts/READ?FILENAME=d&KEEP=FALSE");             /* d is empty now */
    static http_reply r;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, waiting_read, &r), 0);
    double waiting = 0;
    for (int i = 0; i < 200 && waiting < 1; i++) {
        char *m = scrape();
        waiting = sample(m, "stsd_list_waiters{list=\"_other\"}");   /* d is past maxLists */
        free(m);
        if (waiting < 1)
            usleep(10000);
    }
    assert_int_equal(waiting, 1);
    http_reply s;
    assert_int_equal(http_get(d.port, "/sts/STATUS?FORMAT=JSON", &s), 0);
    assert_non_null(strstr(s.body, "{\"name\":\"d\",\"lines\":0,\"leased\":0,\"waiters\":1,"));
    http_reply_free(&s);
    get("/sts/ADD?FILENAME=d&LINE=z");
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>z</body>\n</html>");
    http_reply_free(&r);
    char *m = scrape();
    assert_int_equal(sample(m, "stsd_list_waiters{list=\"_other\"}"), 0);
    assert_int_equal(sample(m, "stsd_list_waiters{list=\"b\\\\xff\"}"), 0);
    free(m);
}

/* stsd_barrier_arrived and stsd_barrier_parties: arrivals waiting now, by barrier (the
 * name escaped as a label value); an opened generation leaves 0. */
static void test_barriers(void **state)
{
    http_conn c[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(http_conn_open(&c[i], d.port), 0);
        assert_int_equal(http_conn_send(&c[i], "/sts/BARRIER?NAME=m%22x%0A&PARTIES=3&TIMEOUT=10"), 0);
    }
    td_sleep_ms(200);
    char *m = scrape();
    assert_non_null(strstr(m, "# TYPE stsd_barrier_arrived gauge\n"));
    assert_int_equal(sample(m, "stsd_barrier_arrived{barrier=\"m\\\"x\\n\"}"), 2);
    assert_int_equal(sample(m, "stsd_barrier_parties{barrier=\"m\\\"x\\n\"}"), 3);
    free(m);
    get("/sts/BARRIER?NAME=m%22x%0A&PARTIES=3&TIMEOUT=10");
    for (int i = 0; i < 2; i++) {
        assert_true(http_conn_ready(&c[i], 2000));
        http_reply r;
        assert_int_equal(http_conn_recv(&c[i], &r), 0);
        http_reply_free(&r);
        http_conn_close(&c[i]);
    }
    m = scrape();
    assert_int_equal(sample(m, "stsd_barrier_arrived{barrier=\"m\\\"x\\n\"}"), 0);
    free(m);
}

static const char *promtool(void)
{
    static const char *paths[] = {"/usr/bin/promtool", "/usr/local/bin/promtool", NULL};
    for (int i = 0; paths[i]; i++)
        if (access(paths[i], X_OK) == 0)
            return paths[i];
    return NULL;
}

static void test_promtool(void **state)
{
    const char *tool = promtool();
    if (!tool) {
        print_message("skipped: promtool is not installed (Debian package prometheus; "
                      "scripts/deps.sh test installs it)\n");
        skip();
    }
    get("/sts/ADD?FILENAME=%0Aq&LINE=1");       /* a newline in a label value, first by name */
    http_conn bc;                               /* a barrier's series too */
    assert_int_equal(http_conn_open(&bc, d.port), 0);
    assert_int_equal(http_conn_send(&bc, "/sts/BARRIER?NAME=p%5C%FF&PARTIES=2&TIMEOUT=10"), 0);
    td_sleep_ms(200);
    char *m = scrape();
    http_conn_close(&bc);
    assert_non_null(strstr(m, "\nstsd_list_lines{list=\"\\nq\"} 1\n"));
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/scrape.txt", d.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(m, f);
    fclose(f);
    free(m);
    snprintf(cmd, sizeof cmd, "%s check metrics < '%s' > '%s.out' 2>&1", tool, path, path);
    int st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(cmd, sizeof cmd, "cat '%s.out'", path);
        if (system(cmd) != 0)
            print_message("(no promtool output)\n");
        fail_msg("promtool check metrics failed");
    }
}

/* ---- a small JSON reader: validates and collects every "expr" string ---------------- */

typedef struct reader {
    const char *p;
    char exprs[64][1024];
    int n_exprs;
    int panels;
} reader;

static void ws(reader *r)
{
    while (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t')
        r->p++;
}

static int value(reader *r, const char *key);

/* A string into out (escapes kept simple: \" \\ \/ \n \t and \uXXXX as '?'). */
static int string(reader *r, char *out, size_t outlen)
{
    size_t n = 0;
    if (*r->p != '"')
        return -1;
    r->p++;
    while (*r->p != '"') {
        char c = *r->p++;
        if (!c || (unsigned char)c < 0x20)
            return -1;
        if (c == '\\') {
            c = *r->p++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++)
                    if (!isxdigit((unsigned char)*r->p++))
                        return -1;
                c = '?';
            } else if (c == 'n' || c == 't' || c == 'r' || c == 'b' || c == 'f') {
                c = ' ';
            } else if (c != '"' && c != '\\' && c != '/') {
                return -1;
            }
        }
        if (n + 1 < outlen)
            out[n++] = c;
    }
    r->p++;
    if (outlen)
        out[n] = '\0';
    return 0;
}

static int value(reader *r, const char *key)
{
    ws(r);
    char s[1024];
    if (*r->p == '{') {
        r->p++;
        ws(r);
        if (*r->p == '}')
            return r->p++, 0;
        for (;;) {
            ws(r);
            char k[128];
            if (string(r, k, sizeof k) != 0)
                return -1;
            ws(r);
            if (*r->p++ != ':')
                return -1;
            if (strcmp(k, "gridPos") == 0)
                r->panels++;
            if (value(r, k) != 0)
                return -1;
            ws(r);
            if (*r->p == '}')
                return r->p++, 0;
            if (*r->p++ != ',')
                return -1;
        }
    }
    if (*r->p == '[') {
        r->p++;
        ws(r);
        if (*r->p == ']')
            return r->p++, 0;
        for (;;) {
            if (value(r, NULL) != 0)
                return -1;
            ws(r);
            if (*r->p == ']')
                return r->p++, 0;
            if (*r->p++ != ',')
                return -1;
        }
    }
    if (*r->p == '"') {
        if (string(r, s, sizeof s) != 0)
            return -1;
        if (key && strcmp(key, "expr") == 0 && r->n_exprs < 64)
            snprintf(r->exprs[r->n_exprs++], sizeof r->exprs[0], "%s", s);
        return 0;
    }
    if (strncmp(r->p, "true", 4) == 0 || strncmp(r->p, "null", 4) == 0)
        return r->p += 4, 0;
    if (strncmp(r->p, "false", 5) == 0)
        return r->p += 5, 0;
    char *end;
    strtod(r->p, &end);
    if (end == r->p)
        return -1;
    r->p = end;
    return 0;
}

static void test_dashboard(void **state)
{
    FILE *f = fopen("conf/grafana-dashboard.json", "r");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    static reader r;
    memset(&r, 0, sizeof r);
    r.p = text;
    if (value(&r, NULL) != 0)
        fail_msg("conf/grafana-dashboard.json is not valid JSON near offset %ld",
                 (long)(r.p - text));
    ws(&r);
    assert_int_equal(*r.p, '\0');
    assert_true(r.panels >= 8);
    assert_true(r.n_exprs >= 10);
    get("/sts/READ?FILENAME=c");
    char *m = scrape();
    int checked = 0;
    /* Every metric name a query uses is a series of the scrape. */
    for (int i = 0; i < r.n_exprs; i++)
        for (const char *p = r.exprs[i]; *p; p++) {
            if (p > r.exprs[i] && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
                continue;
            if (strncmp(p, "stsd_", 5) != 0 && strncmp(p, "process_", 8) != 0)
                continue;
            char name[128], line[140];
            size_t k = 0;
            while ((isalnum((unsigned char)p[k]) || p[k] == '_') && k < sizeof name - 1)
                name[k] = p[k], k++;
            name[k] = '\0';
            snprintf(line, sizeof line, "\n%s{", name);
            char plain[140];
            snprintf(plain, sizeof plain, "\n%s ", name);
            if (!strstr(m, line) && !strstr(m, plain))
                fail_msg("the dashboard's query \"%s\" uses %s, which /metrics lacks",
                         r.exprs[i], name);
            checked++;
        }
    assert_true(checked >= 15);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_waiters),
        cmocka_unit_test(test_barriers),
        cmocka_unit_test(test_promtool),
        cmocka_unit_test(test_dashboard),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
