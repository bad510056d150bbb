/* SPDX-License-Identifier: Apache-2.0 */
/* answer.c - an answer's headers in order, and their queueing on a connection. */
#include "answer.h"

#include <stdio.h>
#include <string.h>

#include "base/clock.h"

void answer_header(buf *h, const char *name, const char *value, size_t vlen)
{
    buf_append(h, name, strlen(name) + 1);
    buf_append(h, value, vlen);
    buf_append(h, "", 1);
}

void answer_header_str(buf *h, const char *name, const char *value)
{
    answer_header(h, name, value, strlen(value));
}

int answer_next_header(const char *h, size_t len, size_t *off, const char **name,
                       const char **value)
{
    if (*off >= len)
        return 0;
    *name = h + *off;
    *value = *name + strlen(*name) + 1;
    *off = (size_t)(*value - h) + strlen(*value) + 1;
    return 1;
}

void answer_leader(buf *h, int leader)
{
    char id[16];
    if (leader < 0)
        return;
    snprintf(id, sizeof id, "%d", leader);
    answer_header_str(h, "X-STS-Leader", id);
}

void answer_clock(buf *h)
{
    char ms[24];
    snprintf(ms, sizeof ms, "%lld", (long long)clock_now_ms());
    answer_header_str(h, ANSWER_CLOCK_HEADER, ms);
}

void answer_page_headers(buf *h, const char *ctype, const buf *extra, int leader)
{
    answer_header_str(h, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    answer_header_str(h, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, no-store, must-revalidate");
    answer_header_str(h, MHD_HTTP_HEADER_PRAGMA, "no-cache");
    answer_header_str(h, MHD_HTTP_HEADER_EXPIRES, "0");
    if (extra && !extra->oom && extra->len)
        buf_append(h, extra->data, extra->len);
    answer_leader(h, leader);
}

enum MHD_Result answer_queue(struct MHD_Connection *c, unsigned status, const buf *headers,
                             const char *body, size_t len)
{
    if (headers->oom)
        return MHD_NO;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    const char *name, *value;
    /* One libmicrohttpd refuses (a line break in a value) is left out, the rest go. */
    for (size_t off = 0; answer_next_header(headers->data, headers->len, &off, &name, &value);)
        MHD_add_response_header(r, name, value);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result answer_clocked(struct MHD_Connection *c, unsigned status, const char *text)
{
    buf h = BUF_INIT;
    answer_page_headers(&h, "text/plain; charset=UTF-8", NULL, -1);
    answer_clock(&h);
    enum MHD_Result ret = answer_queue(c, status, &h, text, strlen(text));
    buf_free(&h);
    return ret;
}

enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    buf h = BUF_INIT;
    answer_page_headers(&h, "text/plain; charset=UTF-8", NULL, -1);
    enum MHD_Result ret = answer_queue(c, status, &h, text, strlen(text));
    buf_free(&h);
    return ret;
}
