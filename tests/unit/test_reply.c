/* SPDX-License-Identifier: Apache-2.0 */
/* test_reply.c - the page bytes for each kind of result, and charset conversion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/reply.h"

static void entry(buf *b, const char *s, size_t len)
{
    buf_append(b, &len, sizeof len);
    buf_append(b, s, len);
}

static void render(cmd_result *r, const char *want, size_t want_len)
{
    buf out = BUF_INIT;
    assert_int_equal(reply_render(r, &out), 0);
    assert_int_equal(out.len, want_len);
    assert_memory_equal(out.data, want, want_len);
    buf_free(&out);
}

static void test_pages(void **state)
{
    assert_int_equal(reply_set_charset("UTF-8"), 0);
    assert_string_equal(reply_content_type(), "text/html; charset=UTF-8");
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT};
    buf_puts(&r.text, "a<b>&c");
    const char ok[] = "<html><title>OK</title>\n<body>a<b>&c</body>\n</html>";
    render(&r, ok, sizeof ok - 1);
    r.kind = REPLY_KO;
    buf_clear(&r.text);
    buf_puts(&r.text, "No more line !");
    const char ko[] = "<html><title>KO</title>\n<body>Error : No more line !</body>\n</html>";
    render(&r, ko, sizeof ko - 1);
    r.kind = REPLY_LINES;
    buf_clear(&r.text);
    entry(&r.text, "l1", 2);
    entry(&r.text, "", 0);
    entry(&r.text, "x\0y", 3);
    const char lines[] = "<html><title>OK</title>\n<body>\nl1<br />\n<br />\nx\0y<br />\n</body>\n</html>";
    render(&r, lines, sizeof lines - 1);
    r.kind = REPLY_LISTING;
    buf_clear(&r.text);
    entry(&r.text, "a.csv = 3", 9);
    const char listing[] = "<html><title>OK</title>\n<body>\na.csv = 3<br />\n</body></html>";
    render(&r, listing, sizeof listing - 1);
    r.kind = REPLY_HELP;
    buf out = BUF_INIT;
    assert_int_equal(reply_render(&r, &out), 0);
    assert_memory_equal(out.data, "<html><head><title>Help URL for the dataset</title><head>", 57);
    const char *cmds[] = {"INITFILE", "READMULTI", "ADD", "FIND", "LENGTH", "STATUS", "SAVE", "RESET",
                          "CONFIG", "STOP"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        assert_non_null(strstr(out.data, cmds[i]));
    buf_free(&out);
    buf_free(&r.text);
}

static void test_charset(void **state)
{
    assert_int_equal(reply_set_charset("ISO-8859-1"), 0);
    assert_string_equal(reply_content_type(), "text/html; charset=ISO-8859-1");
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT};
    buf_puts(&r.text, "Zo\xc3\xab \xe2\x82\xac \xff");   /* ë, € (not in Latin-1), a stray byte */
    const char want[] = "<html><title>OK</title>\n<body>Zo\xeb ? ?</body>\n</html>";
    render(&r, want, sizeof want - 1);
    assert_int_equal(reply_set_charset("NO-SUCH-CHARSET"), -1);
    assert_int_equal(reply_set_charset("UTF-8"), 0);
    buf_free(&r.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_charset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
