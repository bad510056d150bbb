/* SPDX-License-Identifier: Apache-2.0 */
/* test_json.c - the JSON writer: structure, escaping of control bytes and U+2028/2029,
 * UTF-8 validation, base64 for lines that are not UTF-8; and JSON answers of results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"
#include "http/reply.h"

/* Writes s[0..len) as a JSON string and compares with want. */
static void check_str(const char *s, size_t len, const char *want)
{
    buf b = BUF_INIT;
    json j;
    json_init(&j, &b);
    json_str(&j, s, len);
    assert_false(b.oom);
    if (strcmp(b.data, want) != 0)
        fail_msg("want %s, got %s", want, b.data);
    buf_free(&b);
}

static void test_escapes(void **state)
{
    check_str("plain", 5, "\"plain\"");
    check_str("", 0, "\"\"");
    check_str("a\"b\\c/", 6, "\"a\\\"b\\\\c/\"");
    check_str("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
    check_str("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
    check_str("a\0b", 3, "\"a\\u0000b\"");
    /* U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR break JavaScript strings. */
    check_str("x\xe2\x80\xa8y\xe2\x80\xa9z", 9, "\"x\\u2028y\\u2029z\"");
    /* Other characters pass as UTF-8 bytes. */
    check_str("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x80\xaa", 12,
              "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x80\xaa\"");
    /* Invalid bytes in a string that must not fail become U+FFFD, one per byte. */
    check_str("a\xff" "b\xc3", 4, "\"a\\ufffdb\\ufffd\"");
    check_str("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
}

static void test_base64(void **state)
{
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        buf b = BUF_INIT;
        assert_int_equal(json_base64(&b, in[i], strlen(in[i])), 0);
        assert_string_equal(b.data ? b.data : "", out[i]);
        buf_free(&b);
    }
}

static void test_document(void **state)
{
    buf b = BUF_INIT;
    json j;
    json_init(&j, &b);
    json_obj_begin(&j);
    json_key(&j, "ok");
    json_bool(&j, 1);
    json_key(&j, "n");
    json_int(&j, -3);
    json_key(&j, "u");
    json_uint(&j, 18446744073709551615ULL);
    json_key(&j, "d");
    json_double(&j, 2.5);
    json_key(&j, "nan");
    json_double(&j, NAN);
    json_key(&j, "t");
    json_fixed(&j, 1796420123.4567, 3);
    json_key(&j, "inf");
    json_fixed(&j, INFINITY, 3);
    json_key(&j, "z");
    json_null(&j);
    json_key(&j, "a");
    json_arr_begin(&j);
    json_line_elem(&j, "x", 1);
    json_line_elem(&j, "\xff\x00", 2);
    json_arr_begin(&j);
    json_arr_end(&j);
    json_obj_begin(&j);
    json_obj_end(&j);
    json_arr_end(&j);
    json_line(&j, "line", "ok", 2);
    json_line(&j, "line", "\xfe", 1);
    json_obj_end(&j);
    assert_string_equal(b.data,
                        "{\"ok\":true,\"n\":-3,\"u\":18446744073709551615,\"d\":2.5,"
                        "\"nan\":null,\"t\":1796420123.457,\"inf\":null,\"z\":null,"
                        "\"a\":[\"x\",{\"base64\":\"/wA=\"},[],{}],"
                        "\"line\":\"ok\",\"line_base64\":\"/g==\"}");
    buf_free(&b);
}

static void render(cmd_result *r, const char *want, unsigned want_status)
{
    buf out = BUF_INIT;
    unsigned status = 0;
    assert_int_equal(reply_render_json(r, &out, &status), 0);
    if (strcmp(out.data, want) != 0)
        fail_msg("want %s, got %s", want, out.data);
    assert_int_equal(status, want_status);
    buf_free(&out);
}

static void entry(buf *b, const char *s, size_t len)
{
    buf_append(b, &len, sizeof len);
    buf_append(b, s, len);
}

static void test_answers(void **state)
{
    cmd_result r = {.kind = REPLY_OK, .text = BUF_INIT, .field = FIELD_LINE};
    buf_puts(&r.text, "l\x01");
    render(&r, "{\"ok\":true,\"line\":\"l\\u0001\"}", 200);
    buf_clear(&r.text);
    buf_append(&r.text, "\xc3(", 2);
    render(&r, "{\"ok\":true,\"line_base64\":\"wyg=\"}", 200);
    buf_clear(&r.text);
    buf_puts(&r.text, "42");
    r.field = FIELD_LENGTH;
    render(&r, "{\"ok\":true,\"length\":42}", 200);
    r.field = FIELD_COUNT;
    render(&r, "{\"ok\":true,\"message\":\"42\",\"lines\":42}", 200);
    buf_clear(&r.text);
    r.field = FIELD_MESSAGE;
    render(&r, "{\"ok\":true,\"message\":\"\"}", 200);
    r.kind = REPLY_KO;
    buf_puts(&r.text, "ENTRY already exists !");
    r.status = 409;
    render(&r, "{\"ok\":false,\"error\":\"ENTRY already exists !\"}", 409);
    r.status = 0;
    render(&r, "{\"ok\":false,\"error\":\"ENTRY already exists !\"}", 400);
    buf_clear(&r.text);
    r.kind = REPLY_LINES;
    entry(&r.text, "a", 1);
    entry(&r.text, "\xff", 1);
    entry(&r.text, "\xe2\x80\xa9", 3);
    render(&r, "{\"ok\":true,\"lines\":[\"a\",{\"base64\":\"/w==\"},\"\\u2029\"]}", 200);
    buf_free(&r.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_document),
        cmocka_unit_test(test_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
