/* SPDX-License-Identifier: Apache-2.0 */
/* reply_json.c - command results as JSON answers: {"ok":true,...} or
 * {"ok":false,"error":"..."} with an HTTP status. */
#include "http/reply.h"

#include <stdlib.h>

#include "base/json.h"
#include "store/store.h"

/* The payload (digits) of an OK as a number. */
static unsigned long long payload_number(const cmd_result *r)
{
    return r->text.data ? strtoull(r->text.data, NULL, 10) : 0;
}

int reply_render_json(const cmd_result *r, buf *out, unsigned *status)
{
    buf_clear(out);
    *status = 200;
    if (r->kind == REPLY_JSON || r->kind == REPLY_RAW) {
        if (r->kind == REPLY_RAW && r->status)
            *status = r->status;
        buf_append(out, r->text.data ? r->text.data : "", r->text.len);
        return out->oom ? -1 : 0;
    }
    const char *text = r->text.data ? r->text.data : "";
    json j;
    json_init(&j, out);
    json_obj_begin(&j);
    json_key(&j, "ok");
    json_bool(&j, r->kind != REPLY_KO);
    size_t off = 0, len;
    const char *s;
    switch (r->kind) {
    case REPLY_KO:
        *status = r->status ? r->status : 400;
        json_key(&j, "error");
        json_str(&j, text, r->text.len);
        break;
    case REPLY_OK:
        switch (r->field) {
        case FIELD_LINE:
            json_line(&j, "line", text, r->text.len);
            break;
        case FIELD_LENGTH:
            json_key(&j, "length");
            json_uint(&j, payload_number(r));
            break;
        case FIELD_COUNT:
            json_key(&j, "message");
            json_str(&j, text, r->text.len);
            json_key(&j, "lines");
            json_uint(&j, payload_number(r));
            break;
        case FIELD_MESSAGE:
            json_key(&j, "message");
            json_str(&j, text, r->text.len);
            break;
        }
        break;
    case REPLY_LINES:
    case REPLY_LISTING:
        json_key(&j, r->kind == REPLY_LINES ? "lines" : "entries");
        json_arr_begin(&j);
        while ((s = store_next_line(&r->text, &off, &len)))
            json_line_elem(&j, s, len);
        json_arr_end(&j);
        break;
    case REPLY_HELP:
        json_key(&j, "commands");
        json_arr_begin(&j);
        for (int i = 0; command_name(i); i++)
            json_cstr(&j, command_name(i));
        json_arr_end(&j);
        break;
    case REPLY_JSON:
    case REPLY_RAW:
        break;
    case REPLY_VIEW:        /* never rendered: the edge runs it first (http_view.h) */
        return -1;
    }
    json_obj_end(&j);
    return out->oom ? -1 : 0;
}
