/* test_ctl.c - unit tests of stsctl's pieces that need no server: the JSON reader
 * (src/ctl/ctl_json), how a command row becomes a verb and options (ctl_table, so that a
 * command added to the server's table gets a usable verb with no code), and printing
 * answers for scripts (ctl_out). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "ctl/ctl_doc.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_json_refuses),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_print),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
