/* SPDX-License-Identifier: Apache-2.0 */
/* reply.c - STS page bytes: the exact layouts test plans cut with regexes. */
#include "http/reply.h"

#include <errno.h>
#include <iconv.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cmd/command.h"
#include "base/utf8.h"
#include "store/store.h"

static char content_type[96] = "text/html; charset=UTF-8";
static char charset[64] = "UTF-8";
static int convert;             /* answers leave in another charset than stored bytes */
/* iconv_t is stateful: one converter per worker thread, freed when the thread ends. */
static pthread_key_t conv_key;
static pthread_once_t conv_once = PTHREAD_ONCE_INIT;

static void conv_free(void *cd)
{
    iconv_close((iconv_t)cd);
}

static void conv_key_init(void)
{
    pthread_key_create(&conv_key, conv_free);
}

int reply_set_charset(const char *cs)
{
    if (strlen(cs) >= sizeof charset)
        return -1;
    convert = strcasecmp(cs, "UTF-8") != 0 && strcasecmp(cs, "UTF8") != 0;
    if (convert) {
        iconv_t cd = iconv_open(cs, "UTF-8");
        if (cd == (iconv_t)-1)
            return -1;
        iconv_close(cd);
    }
    snprintf(charset, sizeof charset, "%s", cs);
    snprintf(content_type, sizeof content_type, "text/html; charset=%s", cs);
    pthread_once(&conv_once, conv_key_init);
    return 0;
}

const char *reply_content_type(void)
{
    return content_type;
}

/* Appends s[0..len) converted to the answer charset; bytes it cannot convert are sent
 * as '?' so that one odd line never turns an answer into an error. */
static int put_text(buf *out, const char *s, size_t len)
{
    if (!convert)
        return buf_append(out, s, len);
    iconv_t cd = pthread_getspecific(conv_key);
    if (!cd) {
        cd = iconv_open(charset, "UTF-8");
        if (cd == (iconv_t)-1 || pthread_setspecific(conv_key, cd) != 0)
            return buf_append(out, s, len);
    }
    iconv(cd, NULL, NULL, NULL, NULL);
    char *in = (char *)s;
    size_t left = len;
    while (left > 0) {
        if (buf_reserve(out, left * 4 + 16) != 0)
            return -1;
        char *o = out->data + out->len;
        size_t room = out->cap - out->len - 1;
        size_t r = iconv(cd, &in, &left, &o, &room);
        out->len = (size_t)(o - out->data);
        if (r == (size_t)-1 && errno != E2BIG) {
            /* EILSEQ or EINVAL: one '?' for the whole character (or the stray byte). */
            size_t skip = utf8_lead_len((unsigned char)*in);
            if (skip > left)
                skip = left;
            in += skip;
            left -= skip;
            if (buf_append(out, "?", 1) != 0)
                return -1;
        }
    }
    out->data[out->len] = '\0';
    return 0;
}

static void put_entries(buf *out, const buf *text)
{
    size_t off = 0, len;
    const char *s;
    while ((s = store_next_line(text, &off, &len))) {
        put_text(out, s, len);
        buf_puts(out, "<br />\n");
    }
}

/* The help page (GET /sts/), made from the command table: its first bytes are the
 * reference's, which test plans look for. */
static void put_html(buf *out, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': buf_puts(out, "&amp;"); break;
        case '<': buf_puts(out, "&lt;"); break;
        case '>': buf_puts(out, "&gt;"); break;
        default:  buf_append(out, s, 1); break;
        }
}

static void put_usage(buf *out, const cmd_def *c)
{
    buf_puts(out, c->name);
    for (int i = 0; i < CMD_MAX_PARAMS && c->params[i].name; i++) {
        const cmd_param *p = &c->params[i];
        buf_puts(out, p->optional ? "[" : "");
        buf_puts(out, i ? "&amp;" : "?");
        put_html(out, p->name);
        buf_puts(out, "=");
        put_html(out, p->value);
        buf_puts(out, p->optional ? "]" : "");
    }
}

static void put_help(buf *out)
{
    buf_puts(out,
        /* The reference's prefix, then a line per item, so that the page reads in a
         * terminal (curl) and a diff too. */
        "<html><head><title>Help URL for the dataset</title><head>\n<body>\n"
        "<h4>stsd: HTTP Simple Table Server</h4>\n"
        "<p>Every command is <code>/sts/COMMAND?PARAM=value&amp;...</code>, by GET or POST "
        "(urlencoded or multipart). Parameters in [brackets] are optional; the first value "
        "listed is the default. Answers: <code>&lt;title&gt;OK&lt;/title&gt;</code> with the "
        "result in <code>&lt;body&gt;</code>, or <code>&lt;title&gt;KO&lt;/title&gt;</code> "
        "with <code>Error : message</code>.</p>\n<dl>\n");
    for (int i = 0; i < command_count(); i++) {
        const cmd_def *c = command_at(i);
        buf_puts(out, "<dt>");
        put_usage(out, c);
        buf_puts(out, "</dt>\n<dd>");
        put_html(out, c->summary);
        if (c->flags & CMD_ADMIN)
            buf_puts(out, " Needs the admin token, once one is set.");
        if (c->params[0].name)
            buf_puts(out, "\n<ul>\n");
        for (int k = 0; k < CMD_MAX_PARAMS && c->params[k].name; k++) {
            buf_puts(out, "<li><code>");
            put_html(out, c->params[k].name);
            buf_puts(out, "</code>: ");
            put_html(out, c->params[k].help);
            buf_puts(out, "</li>\n");
        }
        buf_puts(out, c->params[0].name ? "</ul></dd>\n" : "</dd>\n");
    }
    buf_puts(out,
        "<dt>[&amp;FORMAT=JSON]</dt>\n<dd>On any command: the answer in JSON, with an HTTP "
        "status that says how it went (also by <code>Accept: application/json</code>, for "
        "the commands beyond the reference's). Metrics for Prometheus: "
        "<code>GET /metrics</code>.</dd>\n"
        "</dl>\n</body></html>\n");
}

int reply_render(const cmd_result *r, buf *out)
{
    buf_clear(out);
    switch (r->kind) {
    case REPLY_OK:
        buf_puts(out, "<html><title>OK</title>\n<body>");
        put_text(out, r->text.data ? r->text.data : "", r->text.len);
        buf_puts(out, "</body>\n</html>");
        break;
    case REPLY_KO:
        buf_puts(out, "<html><title>KO</title>\n<body>Error : ");
        put_text(out, r->text.data ? r->text.data : "", r->text.len);
        buf_puts(out, "</body>\n</html>");
        break;
    case REPLY_LINES:
        buf_puts(out, "<html><title>OK</title>\n<body>\n");
        put_entries(out, &r->text);
        buf_puts(out, "</body>\n</html>");
        break;
    case REPLY_LISTING:
        buf_puts(out, "<html><title>OK</title>\n<body>\n");
        put_entries(out, &r->text);
        buf_puts(out, "</body></html>");
        break;
    case REPLY_HELP:
        put_help(out);
        break;
    case REPLY_JSON:        /* a handler's JSON document: sent as it is */
    case REPLY_RAW:         /* made whole already (http_forward.c) */
        buf_append(out, r->text.data ? r->text.data : "", r->text.len);
        break;
    case REPLY_VIEW:        /* never rendered: the edge runs it first (http_view.h) */
        return -1;
    }
    return out->oom ? -1 : 0;
}
