/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_answer.c - KO builders and the shapes of answers, shared by every command family. */
#include "cmd_answer.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "list/rx.h"

#define MSG_FILE_NOT_FOUND "file not found !"
#define MSG_NOT_LOADED     " not loaded yet !"
#define MSG_NO_MORE_LINE   "No more line !"
#define MSG_EXISTS         "ENTRY already exists !"
#define MSG_NOT_FOUND      "Not find !"
#define MSG_OUTSIDE        "FILENAME leads outside the dataset directory !"
#define MSG_MATCH_LIMIT    "Regex too complex for this line (match limit reached) !"
#define MSG_FULL           "Storage limit reached, nothing changed !"
#define MSG_CHARSET        "File has bytes invalid in the configured charset !"
#define MSG_NO_COLUMN      "The list has no such column !"
#define MSG_FIELDS_SHORT   "LINE has fewer fields than the list has columns, or a quote not closed !"

void cmd_ok(cmd_result *r, const char *payload)
{
    r->kind = REPLY_OK;
    buf_puts(&r->text, payload);
}

void cmd_ko(cmd_result *r, unsigned status, const char *msg)
{
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    r->status = status;
    buf_puts(&r->text, msg);
}

void cmd_ko_illegal(cmd_result *r, const char *param, const char *s, size_t len)
{
    cmd_ko(r, 400, MSG_ILLEGAL);
    if (!r->json)
        return;
    size_t i = 0;
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '/' || c == '\\' || c == ':' || c < 0x20 || c == 0x7f)
            break;
    }
    unsigned char c = i < len ? (unsigned char)s[i] : 0;
    if (len == 0)
        cmd_ko_format(r, "Illegal character found: %s is empty !", param);
    else if (i == len)
        cmd_ko_format(r, "Illegal character found: %s may not be \"%.*s\" !", param,
                      (int)len, s);
    else if (c >= 0x20 && c != 0x7f)
        cmd_ko_format(r, "Illegal character found: '%c' at byte %zu of %s !", c, i + 1, param);
    else
        cmd_ko_format(r, "Illegal character found: the control byte 0x%02x at byte %zu of %s !",
                      c, i + 1, param);
}

void cmd_ko_regex(cmd_result *r, const char *pattern, size_t len, int whole)
{
    char msg[160];
    size_t off;
    cmd_ko(r, 400, MSG_REGEX);
    if (r->json && rx_explain(pattern, len, whole, msg, sizeof msg, &off) == 0)
        cmd_ko_format(r, "Regex compile error: %s, at offset %zu of the pattern !", msg, off);
}

void cmd_ko_format(cmd_result *r, const char *fmt, ...)
{
    va_list ap;
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    r->status = 400;
    va_start(ap, fmt);
    char msg[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    buf_puts(&r->text, msg);
}

static void ko_not_loaded(cmd_result *r, const char *name, size_t len)
{
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    r->status = 404;
    buf_append(&r->text, name, len);
    buf_puts(&r->text, MSG_NOT_LOADED);
}

/* A waiter whose list DROP deleted: 410 Gone, the name said, so that a client can tell it
 * from a list that never was (404). */
static void ko_dropped(cmd_result *r, const char *name, size_t len)
{
    buf_clear(&r->text);
    r->kind = REPLY_KO;
    r->status = 410;
    buf_append(&r->text, name, len);
    buf_puts(&r->text, " was dropped !");
}

void cmd_ko_store(cmd_result *r, store_rc rc, const char *name, size_t len)
{
    switch (rc) {
    case STORE_NOT_LOADED:  ko_not_loaded(r, name, len); break;
    case STORE_DROPPED:     ko_dropped(r, name, len); break;
    case STORE_EMPTY:       cmd_ko(r, 404, MSG_NO_MORE_LINE); break;
    case STORE_EXISTS:      cmd_ko(r, 409, MSG_EXISTS); break;
    case STORE_NO_MATCH:    cmd_ko(r, 404, MSG_NOT_FOUND); break;
    case STORE_MATCH_LIMIT: cmd_ko(r, 400, MSG_MATCH_LIMIT); break;
    case STORE_FULL:        cmd_ko(r, 413, MSG_FULL); break;
    case STORE_JOURNAL:     cmd_ko(r, 503, MSG_JOURNAL); break;
    case STORE_NO_COLUMN:   cmd_ko(r, 400, MSG_NO_COLUMN); break;
    case STORE_FIELDS:      cmd_ko(r, 400, MSG_FIELDS_SHORT); break;
    case STORE_NOMEM:
    default:                cmd_ko(r, 503, MSG_NOMEM); break;
    }
}

void cmd_ko_dataset(cmd_result *r, dataset_rc rc)
{
    switch (rc) {
    case DATASET_NOT_FOUND: cmd_ko(r, 404, MSG_FILE_NOT_FOUND); break;
    case DATASET_OUTSIDE:   cmd_ko(r, 400, MSG_OUTSIDE); break;
    case DATASET_CHARSET:   cmd_ko(r, 422, MSG_CHARSET); break;
    case DATASET_NOMEM:     cmd_ko(r, 503, MSG_NOMEM); break;
    case DATASET_STOPPING:  cmd_ko(r, 503, MSG_FILE_STOPPING); break;
    default:
        buf_clear(&r->text);
        r->kind = REPLY_KO;
        r->status = 500;
        buf_printf(&r->text, "File error: %s !", strerror(dataset_errno()));
        break;
    }
}

/* READ and FIND answer the bare line: drop the length header the store wrote. */
static void ok_single_line(cmd_result *r)
{
    size_t off = 0, len;
    const char *line = store_next_line(&r->text, &off, &len);
    memmove(r->text.data, line, len);
    r->text.len = len;
    r->kind = REPLY_OK;
}

void cmd_read_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen, long n,
                     size_t count, int multi)
{
    if (rc == STORE_TOO_FEW) {
        buf_clear(&r->text);
        r->kind = REPLY_KO;
        r->status = 409;
        buf_printf(&r->text, "Number lines to read greater than file size, %ld greater than %zu !",
                   n, count);
        return;
    }
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    if (multi)
        r->kind = REPLY_LINES;
    else
        ok_single_line(r);
}

void cmd_find_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen)
{
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    ok_single_line(r);
}

void cmd_count_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen, size_t n)
{
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    r->kind = REPLY_OK;
    buf_printf(&r->text, "%zu", n);
}

void cmd_header(cmd_result *r, const char *name, const char *value)
{
    buf_append(&r->headers, name, strlen(name) + 1);
    buf_append(&r->headers, value, strlen(value) + 1);
}

int cmd_percent(buf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    if (buf_reserve(out, len * 3) != 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            out->data[out->len++] = (char)c;
        } else {
            out->data[out->len++] = '%';
            out->data[out->len++] = hex[c >> 4];
            out->data[out->len++] = hex[c & 15];
        }
    }
    out->data[out->len] = '\0';
    return 0;
}

void cmd_lease_ids(cmd_result *r, const buf *ids)
{
    buf v = BUF_INIT;
    for (size_t off = 0; off + sizeof(uint64_t) <= ids->len; off += sizeof(uint64_t)) {
        uint64_t id;
        memcpy(&id, ids->data + off, sizeof id);
        buf_printf(&v, "%s%016llx", off ? "," : "", (unsigned long long)id);
    }
    if (v.oom)
        r->headers.oom = 1;
    else if (v.len)
        cmd_header(r, "X-STS-Lease", v.data);
    buf_free(&v);
}

void cmd_entry(buf *b, const char *a, size_t alen, const char *sep, const char *v,
               size_t vlen)
{
    size_t len = alen + strlen(sep) + vlen;
    buf_append(b, &len, sizeof len);
    buf_append(b, a, alen);
    buf_puts(b, sep);
    buf_append(b, v, vlen);
}

void cmd_entry_s(buf *b, const char *a, const char *sep, const char *v)
{
    cmd_entry(b, a, strlen(a), sep, v, strlen(v));
}

void cmd_json_start(cmd_result *r, json *j)
{
    buf_clear(&r->text);
    r->kind = REPLY_JSON;
    json_init(j, &r->text);
    json_obj_begin(j);
    json_key(j, "ok");
    json_bool(j, 1);
}

void cmd_json_name(json *j, const char *name)
{
    size_t len = strlen(name);
    json_key(j, "name");
    json_str(j, name, len);
    if (!utf8_valid(name, len))
        json_line(j, "name", name, len);
}
