/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_columns.c - named columns (INITFILE HEADER=TRUE): COLUMNS, the parameters that ask
 * for them, and lines answered with their fields, so that a test plan reads $.fields.login
 * or a header instead of cutting the line with a regex. */
#include "cmd_columns.h"

#include <stdio.h>
#include <string.h>

#include "base/csv.h"
#include "cmd_answer.h"
#include "cmd_param.h"
#include "journal/journal.h"

#define MSG_HEADER     "HEADER value has to be TRUE or FALSE !"
#define MSG_SEPARATOR  "SEPARATOR has to be one byte other than a quote, CR, LF or NUL !"
#define MSG_SEP_ALONE  "SEPARATOR needs HEADER=TRUE !"
#define MSG_FIELDS     "FIELDS value has to be TRUE or FALSE !"
/* The X-STS-Field-* headers live in the connection's memory pool (http.c), as
 * X-STS-Value does: a line whose encoded fields need more goes without them. */
#define FIELDS_HEADERS_MAX 8192

int cmd_header_params(const params *p, cmd_result *r, char *sep)
{
    size_t len = 0;
    int header = cmd_flag_param(p, PARAM_HEADER, 0);
    const char *s = params_get(p, PARAM_SEPARATOR, &len);
    *sep = 0;
    if (header < 0) {
        cmd_ko(r, 400, MSG_HEADER);
        return -1;
    }
    if (s && (len != 1 || !csv_sep_ok(*s))) {
        cmd_ko(r, 400, MSG_SEPARATOR);
        return -1;
    }
    if (s && !header) {
        cmd_ko(r, 400, MSG_SEP_ALONE);
        return -1;
    }
    if (header)
        *sep = s ? *s : ',';
    return 0;
}

int cmd_fields_param(const params *p, cmd_result *r, int *on)
{
    *on = cmd_flag_param(p, PARAM_FIELDS, 0);
    if (*on >= 0)
        return 0;
    cmd_ko(r, 400, MSG_FIELDS);
    return -1;
}

void cmd_columns(const cmd_server *srv, const params *p, cmd_result *r)
{
    size_t nlen;
    const char *name = cmd_list_name(p, r, &nlen);
    if (!name)
        return;
    list *cols = NULL;
    store_rc rc = strlen(name) != nlen ? STORE_NOT_LOADED
                : srv->view            ? journal_view_columns(srv->view, name, &cols)
                                       : store_columns(srv->st, name, &cols);
    if (rc != STORE_OK)
        return cmd_ko_store(r, rc, name, nlen);
    size_t n = list_column_count(cols);
    if (r->json) {
        json j;
        char sep = list_column_sep(cols);
        cmd_json_start(r, &j);
        json_key(&j, "columns");
        json_arr_begin(&j);
        for (size_t k = 0; k < n; k++) {
            size_t len;
            const char *c = list_column_name(cols, k, &len);
            json_str(&j, c, len);
        }
        json_arr_end(&j);
        json_key(&j, "separator");
        if (n)
            json_str(&j, &sep, 1);
        else
            json_null(&j);
        json_obj_end(&j);
    } else {
        /* The header line SAVE would write: names in quotes where they hold the
         * separator, so that the body splits back into them. */
        r->kind = REPLY_OK;
        if (dataset_header_line(cols, &r->text) != 0)
            r->text.oom = 1;
    }
    list_free(cols);
}

/* The fields of line s[0..len) as an object {"name":"value",...}: a field the line lacks
 * is null, one not UTF-8 is "name_base64". */
static void fields_object(json *j, const list *cols, const char *s, size_t len, buf *tmp)
{
    csv_cur c;
    csv_field f;
    int more;
    char sep = list_column_sep(cols);
    csv_start(&c, s, len, sep);
    json_obj_begin(j);
    for (size_t k = 0; k < list_column_count(cols); k++) {
        const char *name = list_column_name(cols, k, NULL);
        more = csv_next(&c, &f) == 1;
        buf_clear(tmp);
        if (!more) {
            json_key(j, name);
            json_null(j);
        } else if (csv_field_append(tmp, &f) != 0) {
            j->out->oom = 1;
        } else {
            json_line(j, name, tmp->data ? tmp->data : "", tmp->len);
        }
    }
    json_obj_end(j);
}

/* READ and FIND in JSON: {"ok":true,"line":...,"fields":{...}}; READMULTI: the lines,
 * then "fields" holding one object per line in the same order. */
static void fields_json(cmd_result *r, const list *cols)
{
    buf text = r->text, tmp = BUF_INIT;
    int multi = r->kind == REPLY_LINES;
    json j;
    r->text = (buf)BUF_INIT;
    cmd_json_start(r, &j);
    if (!multi) {
        json_line(&j, "line", text.data ? text.data : "", text.len);
        json_key(&j, "fields");
        fields_object(&j, cols, text.data ? text.data : "", text.len, &tmp);
    } else {
        size_t off = 0, len;
        const char *s;
        json_key(&j, "lines");
        json_arr_begin(&j);
        while ((s = store_next_line(&text, &off, &len)))
            json_line_elem(&j, s, len);
        json_arr_end(&j);
        json_key(&j, "fields");
        json_arr_begin(&j);
        for (off = 0; (s = store_next_line(&text, &off, &len));)
            fields_object(&j, cols, s, len, &tmp);
        json_arr_end(&j);
    }
    json_obj_end(&j);
    if (tmp.oom || text.oom)
        r->text.oom = 1;
    buf_free(&tmp);
    buf_free(&text);
}

/* X-STS-Field-<name>: value, both percent-encoded (cmd_percent), for each field of the
 * line in r->text that is not empty (a header cannot be). All or none. */
static void fields_headers(cmd_result *r, const list *cols)
{
    buf names = BUF_INIT, values = BUF_INIT;
    csv_cur c;
    csv_field f;
    csv_start(&c, r->text.data ? r->text.data : "", r->text.len, list_column_sep(cols));
    buf tmp = BUF_INIT;
    for (size_t k = 0; k < list_column_count(cols) && csv_next(&c, &f) == 1; k++) {
        size_t nlen;
        const char *name = list_column_name(cols, k, &nlen);
        buf_clear(&tmp);
        if (f.len == 0)
            continue;
        /* Both NUL-terminated, one after the other, for cmd_header below. */
        if (buf_puts(&names, "X-STS-Field-") != 0 || cmd_percent(&names, name, nlen) != 0 ||
            buf_append(&names, "", 1) != 0 || csv_field_append(&tmp, &f) != 0 ||
            cmd_percent(&values, tmp.data, tmp.len) != 0 || buf_append(&values, "", 1) != 0)
            r->headers.oom = 1;
    }
    if (!r->headers.oom && names.len + values.len <= FIELDS_HEADERS_MAX)
        for (size_t a = 0, b = 0; a < names.len; a += strlen(names.data + a) + 1,
                                               b += strlen(values.data + b) + 1)
            cmd_header(r, names.data + a, values.data + b);
    buf_free(&tmp);
    buf_free(&names);
    buf_free(&values);
}

void cmd_fields_answer(const cmd_server *srv, cmd_result *r, const char *name, int headers)
{
    int multi = r->kind == REPLY_LINES;
    if ((r->kind != REPLY_OK && !multi) || (!r->json && !headers))
        return;
    list *cols = NULL;
    /* The columns as they are now, a moment after the line was taken: only an INITFILE
     * in between could make them another list's. */
    store_rc rc = store_columns(srv->st, name, &cols);
    if (rc == STORE_NOMEM)
        return cmd_ko_store(r, rc, name, strlen(name));
    if (rc == STORE_OK && list_column_count(cols)) {
        if (headers && !multi)
            fields_headers(r, cols);
        if (r->json)
            fields_json(r, cols);
    }
    list_free(cols);
    if (r->text.oom || r->headers.oom)
        cmd_ko_store(r, STORE_NOMEM, name, strlen(name));
}
