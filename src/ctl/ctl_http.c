/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_http.c - stsctl's requests with libcurl. */
#include "ctl_http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

int ctl_http_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
    buf *b = ctx;
    return buf_append(b, p, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
    ctl_answer *a = ctx;
    size_t len = size * n;
    static const char name[] = "X-STS-Lease:";
    if (len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
        const char *v = p + sizeof name - 1;
        const char *end = p + len;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
            end--;
        buf_append(&a->lease, v, (size_t)(end - v));
    }
    return len;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void human(char *out, size_t n, double bytes)
{
    const char *unit[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) {
        bytes /= 1000;
        u++;
    }
    snprintf(out, n, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

/* LOAD's progress bar on stderr (a terminal: the caller checked), at most 10 times a
 * second and once at the end. */
typedef struct progress {
    double start, last;
    int drawn;
} progress;

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    progress *pr = ctx;
    double t = now_s();
    int done = ultotal > 0 && ulnow >= ultotal;
    if (ultotal <= 0 || (!done && t - pr->last < 0.1) || (done && pr->drawn == 2))
        return 0;
    pr->last = t;
    pr->drawn = done ? 2 : 1;
    double frac = (double)ulnow / (double)ultotal;
    int width = 30, fill = (int)(frac * width);
    char bar[64], sent[32], total[32], rate[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    human(sent, sizeof sent, (double)ulnow);
    human(total, sizeof total, (double)ultotal);
    human(rate, sizeof rate, t > pr->start ? (double)ulnow / (t - pr->start) : 0);
    fprintf(stderr, "\r[%s] %3.0f%% %s of %s, %s/s ", bar, frac * 100, sent, total, rate);
    if (done)
        fputc('\n', stderr);
    fflush(stderr);
    return 0;
}

/* LOAD's part from standard input, read as curl sends it: a pipe has no size to say, so
 * the request goes chunked and nothing is held in memory. */
static size_t on_stdin(char *p, size_t size, size_t n, void *ctx)
{
    size_t got = fread(p, 1, size * n, stdin);
    if (got == 0 && ferror(stdin))
        return CURL_READFUNC_ABORT;
    return got;
}

int ctl_query_add(buf *q, const char *name, const char *value)
{
    char *e = curl_easy_escape(NULL, value, (int)strlen(value));
    if (!e)
        return -1;
    int rc = buf_printf(q, "%s%s=%s", q->len ? "&" : "", name, e);
    curl_free(e);
    return rc;
}

/* The command's URL: base without a trailing "/" or "/sts", then "/sts/COMMAND". */
static int command_url(buf *u, const char *base, const char *command, const char *query,
                       int post)
{
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    if (n >= 4 && memcmp(base + n - 4, "/sts", 4) == 0)
        n -= 4;
    buf_append(u, base, n);
    buf_printf(u, "/sts/%s", command);
    if (!post && query && *query)
        buf_printf(u, "?%s", query);
    return u->oom ? -1 : 0;
}

/* The options of every request: where, its headers, timeouts, TLS, where answers go. */
static void set_options(CURL *h, const ctl_conn *c, const char *url, struct curl_slist *hdr,
                        char *cerr, ctl_answer *a)
{
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "stsctl");
    if (c->cacert)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

/* One request to the node at base (one URL). Returns as ctl_request; *refused is set
 * when the connection was refused or could not be made (another node may answer). */
static int request_one(const ctl_conn *c, const char *base, const char *command,
                       const char *query, int post, const char *upload, int progress_bar,
                       ctl_answer *a, int *refused)
{
    int rc = -1;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = NULL;
    curl_mime *mime = NULL;
    buf url = BUF_INIT, auth = BUF_INIT;
    char cerr[CURL_ERROR_SIZE] = "";
    progress pr = {now_s(), 0, 0};

    memset(a, 0, sizeof *a);
    if (!h) {
        snprintf(a->error, sizeof a->error, "could not start libcurl");
        goto cleanup;
    }
    int from_stdin = upload && strcmp(upload, "-") == 0;
    if (upload && !from_stdin) {
        FILE *f = fopen(upload, "rb");   /* its path in the message, before curl tries */
        if (!f) {
            snprintf(a->error, sizeof a->error, "%s: %m", upload);
            goto cleanup;
        }
        fclose(f);
    }
    /* LOAD takes FILENAME from the query string beside its multipart body. */
    if (command_url(&url, base, command, query, post && !upload) != 0)
        goto oom;
    /* JSON is asked for with FORMAT=JSON in every query: Accept alone would not turn the
     * reference's commands to JSON (stsd.jsonByAccept). */
    if (c->token) {
        buf_printf(&auth, "Authorization: Bearer %s", c->token);
        if (auth.oom)
            goto oom;
        hdr = curl_slist_append(hdr, auth.data);
    }
    hdr = curl_slist_append(hdr, "Expect:");   /* no 100-continue round trip */
    if (!hdr)
        goto oom;
    set_options(h, c, url.data, hdr, cerr, a);
    if (upload) {
        mime = curl_mime_init(h);
        curl_mimepart *part = mime ? curl_mime_addpart(mime) : NULL;
        if (!part)
            goto oom;
        curl_mime_name(part, "FILE");
        if (from_stdin) {
            if (curl_mime_data_cb(part, -1, on_stdin, NULL, NULL, NULL) != CURLE_OK ||
                curl_mime_filename(part, "stdin") != CURLE_OK)
                goto oom;
        } else if (curl_mime_filedata(part, upload) != CURLE_OK) {
            snprintf(a->error, sizeof a->error, "%s: cannot be read", upload);
            goto cleanup;
        }
        curl_mime_type(part, "text/csv");
        curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
        if (progress_bar) {
            curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
            curl_easy_setopt(h, CURLOPT_XFERINFODATA, &pr);
            curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        }
    } else if (post) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, query ? query : "");
    }
    CURLcode cc = curl_easy_perform(h);
    if (pr.drawn == 1)
        fputc('\n', stderr);
    if (cc != CURLE_OK) {
        snprintf(a->error, sizeof a->error, "%.200s: %.256s", base,
                 *cerr ? cerr : curl_easy_strerror(cc));
        *refused = cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST;
        goto cleanup;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
    if (a->body.oom || a->lease.oom)
        goto oom;
    rc = 0;
    goto cleanup;
oom:
    snprintf(a->error, sizeof a->error, "out of memory");
cleanup:
    curl_mime_free(mime);
    curl_slist_free_all(hdr);
    if (h)
        curl_easy_cleanup(h);
    buf_free(&url);
    buf_free(&auth);
    return rc;
}

/* A 503 another node may answer: no leader, or the leader changed; never "Outcome
 * unknown", whose change may have been made (doing it again could do it twice). */
static int retryable_503(const ctl_answer *a)
{
    return a->status == 503 && !(a->body.data && strstr(a->body.data, "Outcome unknown"));
}

int ctl_request(const ctl_conn *c, const char *command, const char *query, int post,
                const char *upload, int progress_bar, ctl_answer *a)
{
    /* --url A,B,C: the nodes of a cluster, tried in turn from the one that answered
     * last, for ROUNDS rounds a second apart. Standard input cannot be sent twice. */
    enum { ROUNDS = 5 };
    static size_t last;
    char urls[CTL_MAX_URLS][512];
    size_t n = 0;
    const char *p = c->url;
    while (n < CTL_MAX_URLS && *p) {
        size_t len = strcspn(p, ",");
        if (len && len < sizeof urls[0]) {
            memcpy(urls[n], p, len);
            urls[n++][len] = '\0';
        }
        p += len + (p[len] == ',');
    }
    if (n == 0) {
        memset(a, 0, sizeof *a);
        snprintf(a->error, sizeof a->error, "--url: no URL in \"%.200s\"", c->url);
        return -1;
    }
    /* One URL: one request, as always (a lone stsd's 503s are not a cluster's). */
    int once = n == 1 || (upload && strcmp(upload, "-") == 0);
    int rc = -1;
    for (int round = 0; round < ROUNDS; round++) {
        if (round)
            sleep(1);
        for (size_t k = 0; k < n; k++) {
            size_t i = (last + k) % n;
            if (round || k)
                ctl_answer_free(a);       /* the previous node's answer */
            int refused = 0;
            rc = request_one(c, urls[i], command, query, post, upload, progress_bar, a,
                             &refused);
            if (once || !(rc == 0 ? retryable_503(a) : refused)) {
                last = i;
                return rc;
            }
        }
    }
    return rc;                            /* the last node's answer, as it is */
}

void ctl_answer_free(ctl_answer *a)
{
    buf_free(&a->body);
    buf_free(&a->lease);
}
