/* SPDX-License-Identifier: Apache-2.0 */
/* test_ctl.c - unit tests of stsctl's pieces that need no server: the JSON reader
 * (src/ctl/ctl_json), how a command row becomes a verb and options (ctl_table, so that a
 * command added to the server's table gets a usable verb with no code), printing
 * answers for scripts (ctl_out; the bare results of get, incr, set, barrier and done),
 * and top's tables (ctl_frame: a cluster's nodes, lists, keys, barriers and
 * runs cut to the screen, control bytes never reach the terminal). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/command.h"
#include "ctl/ctl_doc.h"
#include "ctl/ctl_frame.h"
#include "ctl/ctl_json.h"
#include "ctl/ctl_out.h"
#include "ctl/ctl_table.h"

#define PARSE(text) cj_parse(text, strlen(text))

static void test_json_values(void **state)
{
    cj *v = PARSE(" {\"ok\":true,\"line\":\"a\\u00e9\\ud83d\\ude00\\n\\\"\",\"n\":-1.5e3,"
                  "\"z\":null,\"arr\":[1,[],{}],\"f\":false} ");
    assert_non_null(v);
    assert_int_equal(cj_get(v, "ok")->type, CJ_BOOL);
    assert_true(cj_get(v, "ok")->b);
    const cj *line = cj_get(v, "line");
    assert_int_equal(line->len, strlen("a\xc3\xa9\xf0\x9f\x98\x80\n\""));
    assert_memory_equal(line->s, "a\xc3\xa9\xf0\x9f\x98\x80\n\"", line->len);
    assert_string_equal(cj_get(v, "n")->s, "-1.5e3");   /* numbers as sent */
    assert_int_equal(cj_get(v, "z")->type, CJ_NULL);
    assert_int_equal(cj_get(v, "arr")->n, 3);
    assert_false(cj_get(v, "f")->b);
    assert_null(cj_get(v, "missing"));
    assert_null(cj_get(cj_get(v, "arr"), "ok"));         /* not an object */
    cj_free(v);
    /* Empty keys and strings are terminated C strings (fuzz_ctl_json found the key). */
    v = PARSE("{\"\":\"\"}");
    assert_non_null(v);
    assert_string_equal(v->keys[0], "");
    assert_string_equal(v->items[0]->s, "");
    cj_free(v);
    /* A NUL inside a string survives (a line is bytes). */
    v = PARSE("\"a\\u0000b\"");
    assert_int_equal(v->len, 3);
    assert_memory_equal(v->s, "a\0b", 3);
    cj_free(v);
}

static void test_json_refuses(void **state)
{
    const char *bad[] = {"", "{", "{\"a\"}", "{\"a\":1,}", "[1 2]", "\"open", "tru",
                         "{\"a\":1} x", "\"\\x\"", "\"\\u12\"", "\"a\nb\"", "<html>KO</html>"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cj *v = PARSE(bad[i]);
        if (v)
            fail_msg("parsed: %s", bad[i]);
    }
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    assert_null(PARSE(deep));   /* depth bounded, no stack overflow */
}

/* A command that does not exist yet (as INCR or BARRIER will land): its verb and options
 * come from its row alone. */
static const ctl_command future = {"INCR", CTL_CHANGES, CTL_FIELD_LENGTH, "Add to a counter.",
    {{"NAME", "key", 0, "the counter"},
     {"BY", "n", 1, "how much (default 1)"},
     {"INCR_MODE", "SUM|MAX", 1, "how"},
     {"CREATE", "TRUE|FALSE", 1, "create it"}}};

static void test_names(void **state)
{
    char s[64];
    ctl_verb_name(&future, s, sizeof s);
    assert_string_equal(s, "incr");
    assert_int_equal(ctl_param_kind(&future.params[0]), CTL_POSITIONAL);
    assert_int_equal(ctl_param_kind(&future.params[1]), CTL_VALUE);
    assert_int_equal(ctl_param_kind(&future.params[2]), CTL_CHOICE);
    assert_int_equal(ctl_param_kind(&future.params[3]), CTL_BOOL);
    assert_int_equal(ctl_param_free_value(&future.params[3]), 0);
    /* TRUE|FALSE with a placeholder ("column"): still a flag, --unique=login passes on. */
    const ctl_param unique = {"UNIQUE", "FALSE|TRUE|column", 1, "refuse a duplicate"};
    const ctl_param mode = {"ADD_MODE", "FIRST|LAST|other", 1, "where"};
    assert_int_equal(ctl_param_kind(&unique), CTL_BOOL);
    assert_int_equal(ctl_param_free_value(&unique), 1);
    assert_int_equal(ctl_param_kind(&mode), CTL_CHOICE);
    ctl_option_name(&future, &future.params[2], s, sizeof s);
    assert_string_equal(s, "mode");   /* the one *_MODE is --mode */
    ctl_option_name(&future, &future.params[1], s, sizeof s);
    assert_string_equal(s, "by");
    /* Every row of the server's table: a verb, and options no two alike. */
    for (int i = 0; i < command_count(); i++) {
        const cmd_def *c = command_at(i);
        ctl_command row = {c->name, 0, 0, c->summary, {{0}}};
        for (int k = 0; k < CMD_MAX_PARAMS && c->params[k].name; k++)
            row.params[k] = (ctl_param){c->params[k].name, c->params[k].value,
                                        c->params[k].optional, c->params[k].help};
        char a[64], b[64];
        for (int k = 0; k < CTL_MAX_PARAMS && row.params[k].name; k++)
            for (int m = k + 1; m < CTL_MAX_PARAMS && row.params[m].name; m++) {
                ctl_option_name(&row, &row.params[k], a, sizeof a);
                ctl_option_name(&row, &row.params[m], b, sizeof b);
                if (strcmp(a, b) == 0)
                    fail_msg("%s: two parameters make --%s", c->name, a);
            }
    }
    /* The future verb shows in the help of a table that has it. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ctl_doc_verb(f, &future, NULL);
    fclose(f);
    assert_non_null(strstr(text, "incr NAME [--by n] [--mode sum|max] [--create[=true|false]]"));
    free(text);
}

static char *printed(const char *json, int tty)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cj *v = PARSE(json);
    assert_non_null(v);
    assert_int_equal(ctl_print(f, v, tty), 0);
    fclose(f);
    cj_free(v);
    return text;
}

static void out_is(const char *json, int tty, const char *want)
{
    char *got = printed(json, tty);
    if (strcmp(got, want) != 0)
        fail_msg("%s printed [%s], not [%s]", json, got, want);
    free(got);
}

static void test_print(void **state)
{
    out_is("{\"ok\":true,\"line\":\"a b\"}", 0, "a b\n");
    out_is("{\"ok\":true,\"line_base64\":\"Y2Fm6Q==\"}", 0, "caf\xe9\n");
    out_is("{\"ok\":true,\"lines\":[\"x\",{\"base64\":\"/w==\"}]}", 0, "x\n\xff\n");
    out_is("{\"ok\":true,\"message\":\"3\",\"lines\":3}", 0, "3\n");
    out_is("{\"ok\":true,\"length\":12}", 0, "12\n");
    out_is("{\"ok\":true,\"message\":\"\"}", 0, "");
    out_is("{\"ok\":true,\"name\":\"l\",\"lines\":[{\"pos\":0,\"line\":\"p\"}],\"next_offset\":null}",
           0, "p\n");
    out_is("{\"ok\":true,\"lists\":[{\"name\":\"a.csv\",\"lines\":2,\"leased\":0}]}", 0, "a.csv\t2\n");
    out_is("{\"ok\":true,\"keys\":[\"k1\",\"k2\"]}", 0, "k1\nk2\n");   /* a listing to come */
    out_is("{\"ok\":true,\"value\":\"v\"}", 0, "v\n");                 /* a value to come */
    out_is("{\"ok\":true,\"version\":\"1\",\"journal\":{\"on\":false}}", 0,
           "version\t1\njournal.on\tfalse\n");
    char *t = printed("{\"ok\":true,\"lists\":[{\"name\":\"a.csv\",\"lines\":2,\"leased\":1,"
                      "\"waiters\":0,\"added_per_s\":1.5,\"removed_per_s\":0,"
                      "\"empty_in_s\":200}]}", 1);
    assert_non_null(strstr(t, "LIST"));
    assert_non_null(strstr(t, "a.csv"));
    assert_non_null(strstr(t, "3m20s"));
    free(t);
}

static void result_is(const char *json, const char *member, int rc, const char *want)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cj *v = PARSE(json);
    assert_non_null(v);
    assert_int_equal(ctl_print_result(f, v, member), rc);
    fclose(f);
    cj_free(v);
    if (strcmp(text, want) != 0)
        fail_msg("%s, %s: printed [%s], not [%s]", json, member, text, want);
    free(text);
}

/* The bare results of get, incr, set, barrier and done, and the rules they rest on: each
 * names a command of the server's table, an "instead of X" names a parameter X of its
 * own row, and -h, -l are the only letters. */
static void test_results(void **state)
{
    result_is("{\"ok\":true,\"name\":\"k\",\"value\":\"v 1\",\"version\":2}", "value", 0,
              "v 1\n");
    result_is("{\"ok\":true,\"name\":\"n\",\"value\":-42,\"version\":9}", "value", 0, "-42\n");
    result_is("{\"ok\":true,\"name\":\"k\",\"value_base64\":\"Y2Fm6Q==\",\"version\":1}", "value",
              0, "caf\xe9\n");
    result_is("{\"ok\":true,\"name\":\"k\",\"value\":\"\",\"version\":1}", "value", 0, "\n");
    result_is("{\"ok\":true,\"generation\":3,\"arrival\":1}", "generation", 0, "3\n");
    result_is("{\"ok\":true,\"name\":\"k\"}", "version", 1, "");   /* not there: whole */
    const char *with[] = {"GET", "INCR", "SET", "BARRIER", "DONE"};
    for (size_t i = 0; i < sizeof with / sizeof with[0]; i++) {
        const ctl_result *r = ctl_result_of(with[i]);
        assert_non_null(r);
        assert_non_null(command_lookup(r->command, strlen(r->command)));
    }
    assert_null(ctl_result_of("DEL"));
    assert_null(ctl_result_of("READ"));
    int insteads = 0;
    for (int i = 0; i < command_count(); i++) {
        const cmd_def *c = command_at(i);
        for (int k = 0; k < CMD_MAX_PARAMS && c->params[k].name; k++) {
            if (strncmp(c->params[k].help, "instead of ", 11) != 0)
                continue;
            ctl_param p = {c->params[k].name, c->params[k].value, c->params[k].optional,
                           c->params[k].help};
            int found = 0;
            for (int m = 0; m < CMD_MAX_PARAMS && c->params[m].name; m++)
                found |= m != k && ctl_param_instead_of(&p, c->params[m].name);
            if (!found)
                fail_msg("%s: %s stands in for no parameter of its row", c->name, p.name);
            insteads++;
        }
    }
    assert_true(insteads >= 2);             /* ACK's and RELEASE's NAME */
    ctl_param name = {"NAME", "key", 1, "instead of FILENAME: settle"};
    assert_true(ctl_param_instead_of(&name, "FILENAME"));
    assert_false(ctl_param_instead_of(&name, "FILE"));
    assert_false(ctl_param_instead_of(&name, "LINE"));
    assert_string_equal(ctl_option_of_letter("-h")->name, "help");
    assert_string_equal(ctl_option_of_letter("-l")->name, "long");
    assert_null(ctl_option_of_letter("-"));
    assert_null(ctl_option_of_letter("-5"));
    assert_null(ctl_option_of_letter("--"));
    assert_null(ctl_option_of_letter("-hl"));
    assert_null(ctl_option_of_letter("x"));
}

static void cell_is(const char *s, size_t len, int width, int pad, const char *want)
{
    char out[128];
    ctl_cell(out, sizeof out, s, len, width, pad);
    if (strcmp(out, want) != 0)
        fail_msg("cell of [%.*s] in %d: [%s], not [%s]", (int)len, s, width, out, want);
}

static void test_frame_cell(void **state)
{
    cell_is("abc", 3, 5, 1, "abc  ");
    cell_is("abc", 3, 5, 0, "abc");
    cell_is("abcdefgh", 8, 6, 0, "abc...");
    cell_is("a\x1b[2Jb\tc\x7f", 9, 20, 0, "a?[2Jb?c?");
    cell_is("caf\xc3\xa9!", 6, 5, 1, "caf\xc3\xa9!");       /* one column per character */
    cell_is("\xc2\x9b" "1m", 4, 9, 0, "??1m");               /* C1 CSI: 8-bit escape */
    cell_is("caf\xe9", 4, 9, 0, "caf?");                     /* Latin-1: not UTF-8 */
    cell_is("\xe2\x82", 2, 9, 0, "??");                      /* a sequence cut short */
    cell_is("\xed\xa0\x80", 3, 9, 0, "???");                 /* a surrogate */
    cell_is("\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80x", 17, 4,
            0, "\xf0\x9f\x98\x80...");
    char small[4];
    ctl_cell(small, sizeof small, "abcdef", 6, 6, 1);   /* cap wins, NUL kept */
    assert_string_equal(small, "abc");
}

/* The frame of documents status, keys, barriers and runs (NULL: failed with "HTTP 404")
 * in rows x cols, its lines counted. */
static char *frame4(const char *status, const char *keys, const char *barriers,
                    const char *runs, int rows, int cols, int *lines)
{
    cj *s = PARSE(status), *k = keys ? PARSE(keys) : NULL;
    cj *b = barriers ? PARSE(barriers) : NULL, *r = runs ? PARSE(runs) : NULL;
    ctl_frame f = {cj_get(s, "lists"), cj_get(k, "keys"), cj_get(b, "barriers"),
                   cj_get(r, "runs"), "", "HTTP 404", "HTTP 404", "HTTP 404", NULL};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    *lines = ctl_frame_draw(out, &f, rows, cols);
    fclose(out);
    cj_free(s);
    cj_free(k);
    cj_free(b);
    cj_free(r);
    int nl = 0;
    for (size_t i = 0; i < len; i++)
        nl += text[i] == '\n';
    assert_int_equal(nl, *lines);
    assert_true(*lines <= rows);
    return text;
}

/* The same with no runs. */
static char *frame(const char *status, const char *keys, const char *barriers, int rows,
                   int cols, int *lines)
{
    return frame4(status, keys, barriers, "{\"ok\":true,\"runs\":[]}", rows, cols, lines);
}

static void test_frame(void **state)
{
    const char *st = "{\"ok\":true,\"lists\":[{\"name\":\"a.csv\",\"lines\":2},"
                     "{\"name\":\"b\\u001b[2J.csv\",\"lines\":5},{\"name\":\"c.csv\"}]}";
    const char *ks = "{\"ok\":true,\"keys\":[{\"name\":\"k1\",\"value\":\"red\\u001b[31m\","
                     "\"version\":3,\"watchers\":1,\"waiters\":0},{\"name\":\"k2\","
                     "\"value_base64\":\"Y2Fm6Q==\",\"version\":1,\"watchers\":0,\"waiters\":2},"
                     "{\"name\":\"k3\",\"value\":\"\"}]}";
    const char *bs = "{\"ok\":true,\"barriers\":[{\"name\":\"b1\",\"parties\":2,"
                     "\"arrived\":1,\"generation\":4}]}";
    int n;
    char *t = frame(st, ks, bs, 30, 120, &n);
    assert_int_equal(n, 4 + 1 + 4 + 1 + 2 + 1 + 1);
    assert_non_null(strstr(t, "no runs"));
    assert_non_null(strstr(t, "LIST "));
    assert_non_null(strstr(t, "b?[2J.csv "));
    assert_non_null(strstr(t, "KEY "));
    assert_non_null(strstr(t, "red?[31m "));
    assert_non_null(strstr(t, "caf? "));
    assert_non_null(strstr(t, "BARRIER "));
    assert_non_null(strstr(t, "1/2          4"));
    for (const char *p = t; (p = strchr(p, '\x1b')); p++)   /* only our bold, dim, plain */
        assert_true(strncmp(p, "\x1b[1m", 4) == 0 || strncmp(p, "\x1b[2m", 4) == 0 ||
                    strncmp(p, "\x1b[0m", 4) == 0);
    free(t);
    /* Cut: 8 rows hold the lists (4), a blank and the keys' header, a row and "more". */
    t = frame(st, ks, bs, 8, 120, &n);
    assert_int_equal(n, 8);
    assert_non_null(strstr(t, "k1 "));
    assert_null(strstr(t, "k2 "));
    assert_non_null(strstr(t, "... 2 more keys"));
    assert_null(strstr(t, "BARRIER"));
    free(t);
    /* Too few rows for a key: the section in one line; past a blank, nothing. */
    t = frame(st, ks, bs, 7, 120, &n);
    assert_int_equal(n, 6);
    assert_non_null(strstr(t, "keys: 3, not shown"));
    free(t);
    t = frame(st, ks, bs, 5, 120, &n);
    assert_int_equal(n, 4);
    free(t);
    /* Cut within the lists: the other sections are left out. */
    t = frame(st, ks, bs, 3, 120, &n);
    assert_int_equal(n, 3);
    assert_non_null(strstr(t, "a.csv "));
    assert_non_null(strstr(t, "... 2 more lists"));
    assert_null(strstr(t, "KEY"));
    free(t);
    /* Narrow: no line wider than the screen. */
    t = frame(st, ks, bs, 30, 40, &n);
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n"))
        assert_true(strlen(line) <= 40 + 8);   /* the bold or dim codes around it */
    free(t);
    /* Empty sections and a server without KEYS or BARRIERS: one dim line each. */
    t = frame("{\"ok\":true,\"lists\":[]}", NULL, "{\"ok\":true,\"barriers\":[]}", 30, 80, &n);
    assert_int_equal(n, 7);
    assert_non_null(strstr(t, "no lists"));
    assert_non_null(strstr(t, "keys: HTTP 404"));
    assert_non_null(strstr(t, "no barriers"));
    assert_non_null(strstr(t, "no runs"));
    free(t);
    /* Runs after the barriers: the lease left as a duration (0s past its deadline), the
     * ONCE callers waiting; a server without RUNS says so in their place. */
    const char *rs = "{\"ok\":true,\"runs\":[{\"name\":\"setup\\u001b[2J\",\"expires_in_ms\":41234,"
                     "\"waiters\":3},{\"name\":\"late\",\"expires_in_ms\":0,\"waiters\":0},"
                     "{\"name\":\"long\",\"expires_in_ms\":3599000,\"waiters\":12}]}";
    t = frame4(st, ks, bs, rs, 30, 120, &n);
    assert_int_equal(n, 4 + 1 + 4 + 1 + 2 + 1 + 4);
    const char *b = strstr(t, "BARRIER "), *r = strstr(t, "RUN ");
    assert_true(b && r && b < r);
    assert_non_null(strstr(t, "ENDS IN  WAITING"));
    assert_non_null(strstr(t, "setup?[2J "));
    assert_non_null(strstr(t, "       41s        3\n"));
    assert_non_null(strstr(t, "        0s        0\n"));
    assert_non_null(strstr(t, "    59m59s       12\n"));
    free(t);
    t = frame4(st, ks, bs, NULL, 30, 120, &n);
    assert_int_equal(n, 4 + 1 + 4 + 1 + 2 + 1 + 1);
    assert_non_null(strstr(t, "runs: HTTP 404"));
    assert_non_null(strstr(t, "b1 "));
    free(t);
    /* Cut: the runs' header, one row and "more". */
    t = frame4(st, ks, bs, rs, 4 + 1 + 4 + 1 + 2 + 1 + 3, 120, &n);
    assert_non_null(strstr(t, "setup?[2J "));
    assert_null(strstr(t, "late "));
    assert_non_null(strstr(t, "... 2 more runs"));
    free(t);
}

/* CLUSTER as node 1, a follower, sees it: node 3 leads, node 2's role unknown here, a URL
 * with an escape in it (the configuration's bytes, which a terminal must not get). */
#define CLUSTER_DOC(leader) \
    "{\"ok\":true,\"self\":1,\"leader\":" leader ",\"role\":\"follower\"," \
    "\"serving\":false,\"term\":7,\"commit_index\":1234,\"applied_index\":1234," \
    "\"last_index\":1235,\"leader_changes\":2,\"leader_since\":1796417589.299," \
    "\"nodes\":[{\"id\":1,\"url\":\"http://h1:9191\",\"raft\":\"h1:9201\"," \
    "\"role\":\"follower\",\"match_index\":null,\"lag\":null},{\"id\":2," \
    "\"url\":\"http://h2\\u001b[2J:9191\",\"raft\":\"h2:9201\",\"role\":\"?\"," \
    "\"match_index\":null,\"lag\":null},{\"id\":3,\"url\":\"http://h3:9191\"," \
    "\"raft\":\"h3:9201\",\"role\":\"leader\",\"match_index\":1230,\"lag\":4}]}"

/* The frame of CLUSTER's answer cluster (NULL: alone) and STATUS's status, the other
 * sections empty, in rows x cols, its lines counted. */
static char *frame_cluster(const char *cluster, const char *status, int rows, int cols,
                           int *lines)
{
    cj *c = cluster ? PARSE(cluster) : NULL, *s = PARSE(status);
    cj *k = PARSE("{\"ok\":true,\"keys\":[]}"), *b = PARSE("{\"ok\":true,\"barriers\":[]}");
    cj *r = PARSE("{\"ok\":true,\"runs\":[]}");
    ctl_frame f = {cj_get(s, "lists"), cj_get(k, "keys"), cj_get(b, "barriers"),
                   cj_get(r, "runs"), "", "", "", "", c};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    *lines = ctl_frame_draw(out, &f, rows, cols);
    fclose(out);
    cj_free(c);
    cj_free(s);
    cj_free(k);
    cj_free(b);
    cj_free(r);
    int nl = 0;
    for (size_t i = 0; i < len; i++)
        nl += text[i] == '\n';
    assert_int_equal(nl, *lines);
    assert_true(*lines <= rows);
    return text;
}

/* `stsctl cluster` on a terminal and piped; top's CLUSTER section above the lists, the
 * leader marked, cut to the screen, and nothing of it for a lone stsd. */
static void test_cluster(void **state)
{
    char since[32];
    time_t at = 1796417589;
    strftime(since, sizeof since, "since %H:%M:%S", localtime(&at));
    char want_line[160];
    snprintf(want_line, sizeof want_line, "this is node 1 (follower); * node 3 leads %s; "
             "term 7, commit index 1234", since);
    /* On a terminal: a table, the leader's row marked, the escape a '?'. */
    char *t = printed(CLUSTER_DOC("3"), 1);
    assert_non_null(strstr(t, "  NODE ROLE            LAG  URL\n"));
    assert_non_null(strstr(t, "\n  1    follower          -  http://h1:9191\n"));
    assert_non_null(strstr(t, "\n  2    ?                 -  http://h2?[2J:9191\n"));
    assert_non_null(strstr(t, "\n* 3    leader            4  http://h3:9191\n"));
    assert_non_null(strstr(t, want_line));
    assert_null(strchr(t, '\x1b'));
    free(t);
    /* Piped: the fields for scripts, as before: key<TAB>value, a line per node. */
    t = printed(CLUSTER_DOC("3"), 0);
    assert_non_null(strstr(t, "self\t1\nleader\t3\nrole\tfollower\n"));
    assert_non_null(strstr(t, "leader_since\t1796417589.299\n"));
    assert_non_null(strstr(t, "\n3\thttp://h3:9191\th3:9201\tleader\t1230\t4\n"));
    free(t);
    /* No leader: nobody marked, and the line says so. */
    t = printed(CLUSTER_DOC("null"), 1);
    assert_null(strstr(t, "\n* "));
    assert_non_null(strstr(t, "(follower); no leader since "));
    free(t);

    /* top: the cluster first (header, 3 nodes, its line), a blank, then the lists. */
    const char *st = "{\"ok\":true,\"lists\":[{\"name\":\"a.csv\",\"lines\":2}]}";
    int n;
    t = frame_cluster(CLUSTER_DOC("3"), st, 30, 120, &n);
    assert_int_equal(n, 5 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1);
    const char *node = strstr(t, "\n* 3    leader "), *row = strstr(t, "\na.csv ");
    assert_true(strncmp(t, "\x1b[1m  NODE ROLE ", 11) == 0);
    assert_true(node && row && node < row);
    assert_non_null(strstr(t, want_line));
    assert_non_null(strstr(t, "http://h2?[2J:9191\n"));
    for (const char *p = t; (p = strchr(p, '\x1b')); p++)   /* only our bold, dim, plain */
        assert_true(strncmp(p, "\x1b[1m", 4) == 0 || strncmp(p, "\x1b[2m", 4) == 0 ||
                    strncmp(p, "\x1b[0m", 4) == 0);
    free(t);
    /* Narrow: every line cut to the width, the URLs last. */
    t = frame_cluster(CLUSTER_DOC("3"), st, 30, 24, &n);
    assert_non_null(strstr(t, "\n* 3    leader        ...\n"));
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n"))
        assert_true(strlen(line) <= 24 + 8);   /* the bold or dim codes around it */
    free(t);
    /* Just the nodes: no blank line under them, nothing else. */
    t = frame_cluster(CLUSTER_DOC("3"), st, 5, 120, &n);
    assert_int_equal(n, 5);
    assert_null(strstr(t, "a.csv"));
    free(t);
    /* Too few rows for the nodes: the cluster's line alone, then the lists if they fit. */
    t = frame_cluster(CLUSTER_DOC("3"), st, 4, 120, &n);
    assert_int_equal(n, 4);
    assert_null(strstr(t, "NODE"));
    assert_true(strncmp(t, "\x1b[2mthis is node 1 (follower); * node 3 leads", 45) == 0);
    assert_non_null(strstr(t, "\n\n\x1b[1mLIST "));
    free(t);
    t = frame_cluster(CLUSTER_DOC("3"), st, 1, 120, &n);
    assert_int_equal(n, 1);
    free(t);
    /* Alone (CLUSTER's KO): the frame as it always was. */
    t = frame_cluster(NULL, st, 30, 120, &n);
    assert_int_equal(n, 2 + 1 + 1 + 1 + 1 + 1 + 1);
    assert_true(strncmp(t, "\x1b[1mLIST ", 9) == 0);
    assert_null(strstr(t, "NODE"));
    free(t);
    /* top while STATUS fails (no leader yet): the cluster alone, as ctl_top draws it. */
    cj *c = PARSE(CLUSTER_DOC("null"));
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(ctl_frame_cluster(out, c, 10, 120), 6);
    fclose(out);
    assert_non_null(strstr(text, "no leader since "));
    assert_true(len > 2 && text[len - 1] == '\n' && text[len - 2] == '\n');
    free(text);
    cj_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_json_refuses),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_results),
        cmocka_unit_test(test_frame_cell),
        cmocka_unit_test(test_frame),
        cmocka_unit_test(test_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
