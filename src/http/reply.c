/* reply.c - STS page bytes: the exact layouts test plans cut with regexes. */
#include "http/reply.h"

#include <errno.h>
#include <iconv.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

static const char help_page[] =
    "<html><head><title>Help URL for the dataset</title><head><body>"
    "<h4>stsd: HTTP Simple Table Server</h4>"
    "<p>Every command is <code>/sts/COMMAND?PARAM=value&amp;...</code>, by GET or POST "
    "(urlencoded or multipart). Parameters in [brackets] are optional; the first value "
    "listed is the default. Answers: <code>&lt;title&gt;OK&lt;/title&gt;</code> with the "
    "result in <code>&lt;body&gt;</code>, or <code>&lt;title&gt;KO&lt;/title&gt;</code> "
    "with <code>Error : message</code>.</p><dl>"
    "<dt>INITFILE?FILENAME=file.csv</dt><dd>Load a file of the dataset directory as a list "
    "(one line per element), replacing a list of that name. Answers the number of lines.</dd>"
    "<dt>READ?FILENAME=file.csv[&amp;READ_MODE=FIRST|LAST|RANDOM][&amp;KEEP=TRUE|FALSE]</dt>"
    "<dd>Take a line from the head, the tail or anywhere. KEEP=TRUE puts it back at the "
    "tail; KEEP=FALSE consumes it.</dd>"
    "<dt>READMULTI?FILENAME=file.csv&amp;NB_LINES=n[&amp;READ_MODE=FIRST|LAST|RANDOM]"
    "[&amp;KEEP=TRUE|FALSE]</dt><dd>Take n lines at once, one per &lt;br /&gt; line.</dd>"
    "<dt>ADD?FILENAME=file.csv&amp;LINE=text[&amp;ADD_MODE=FIRST|LAST][&amp;UNIQUE=FALSE|TRUE]"
    "</dt><dd>Insert a line at the head or the tail (creates the list). UNIQUE=TRUE refuses "
    "a line already present. GET or POST only.</dd>"
    "<dt>FIND?FILENAME=file.csv&amp;LINE=text[&amp;FIND_MODE=SUBSTRING|EQUALS|REGEX_FIND|"
    "REGEX_MATCH][&amp;KEEP=TRUE|FALSE]</dt><dd>The first line that contains, equals, or "
    "matches (anywhere / as a whole) LINE; KEEP=TRUE moves it to the tail, KEEP=FALSE "
    "removes it. GET or POST only.</dd>"
    "<dt>LENGTH?FILENAME=file.csv</dt><dd>Number of lines in the list.</dd>"
    "<dt>STATUS</dt><dd>Every list and its length, sorted by name.</dd>"
    "<dt>SAVE?FILENAME=file.csv[&amp;ADD_TIMESTAMP=true|false]</dt><dd>Write the list to the "
    "dataset directory, atomically; with a timestamp, as yyyyMMddTHHhmmmsss.file.csv "
    "(default from addTimestamp).</dd>"
    "<dt>RESET?FILENAME=file.csv</dt><dd>Empty the list (it stays, with 0 lines).</dd>"
    "<dt>CONFIG</dt><dd>The effective configuration.</dd>"
    "<dt>STOP</dt><dd>Answer OK, finish the requests in flight, and exit.</dd>"
    "<dt>PEEK?FILENAME=file.csv[&amp;OFFSET=0][&amp;LIMIT=100][&amp;MATCH=text"
    "[&amp;FIND_MODE=SUBSTRING|EQUALS|REGEX_FIND|REGEX_MATCH]]</dt><dd>Up to LIMIT (at most "
    "1000) lines from position OFFSET, each with its position, without changing the list; "
    "with MATCH, only the matching lines. next_offset is where the next page starts.</dd>"
    "<dt>FILES</dt><dd>The files INITFILE can load, with their size and time.</dd>"
    "<dt>INFO</dt><dd>Version, uptime, connections, lists and the journal's state.</dd>"
    "<dt>[&amp;FORMAT=JSON]</dt><dd>On any command (or with <code>Accept: "
    "application/json</code>): the answer in JSON, with an HTTP status that says how it "
    "went. Metrics for Prometheus: <code>GET /metrics</code>.</dd>"
    "</dl></body></html>";

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
        buf_append(out, help_page, sizeof help_page - 1);
        break;
    case REPLY_JSON:        /* a handler's JSON document: sent as it is */
        buf_append(out, r->text.data ? r->text.data : "", r->text.len);
        break;
    }
    return out->oom ? -1 : 0;
}
