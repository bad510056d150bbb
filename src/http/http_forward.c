/* SPDX-License-Identifier: Apache-2.0 */
/* http_forward.c - a cluster node's requests for the leader: one thread drives every
 * transfer with a curl multi handle while the requests stay parked, so that a READ
 * waiting 30 s at the leader holds no HTTP thread here. */
#include "http_forward.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "answer.h"
#include "batch_frame.h"
#include "forward_clock.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/num.h"
#include "base/thread.h"
#include "cluster/cluster.h"
#include "http/reply.h"

/* How long the leader may take to accept the connection: it is on the cluster's own
 * network, and a node that does not accept within this is taken for gone. */
#define FORWARD_CONNECT_MS 1000L
/* Beyond the longest wait a request may ask (stsd.maxWait) and the connection timeout
 * (an fsync that never ends closes the leader's connection after it), the time the
 * work itself may take at the leader (a large INITFILE): only then is the leader
 * taken for lost. */
#define FORWARD_SLACK_S 60L
/* How often the thread looks for clients that left: their transfers are cut, so that
 * the leader sees its client gone too and hands no line to nobody. */
#define FORWARD_GONE_MS 200
/* Why forwarded requests have a deadline (stsd.cluster.forwardWithin). A request's bytes
 * can reach the leader long after they were sent: retransmitted once a partition heals,
 * or read from the socket by a leader that was paused. Run then, a READ hands its line
 * to a client that gave up seconds ago, and the line is lost (docs/faults.md, seed
 * 1206072). So every request says by when it must start, on the leader's own clock,
 * which each answer from the leader samples (ANSWER_CLOCK_HEADER): the follower reckons
 * the leader's time as the sample plus the time elapsed here since it came, an
 * underestimate by the answer's one-way delay, so a deadline is never later than meant.
 * Until a first answer from that node, nothing goes to it but a probe of its clock
 * (GET CLOCK_PATH), and requests wait for it, at most their time. */

/* After a probe of a leader's clock failed, the next one no sooner than this. */
#define FORWARD_PROBE_RETRY_MS 100

/* At most one warning about an unreachable leader in this long. */
#define FORWARD_LOG_MS 10000
/* Idle connections to the leader kept for the next transfers. */
#define FORWARD_MAX_CONNECTS 1024L
/* At most this many bytes in one batch (and stsd.maxBodySize, which the leader takes). */
#define FORWARD_BATCH_BYTES (1024 * 1024)
/* A batch's request beyond its target, headers and body: the frame's separators. */
#define FORWARD_ITEM_SLACK 64

typedef struct forward_job {
    struct forward_job *next, *prev;  /* in the queue (next only) or among the active */
    CURL *easy;
    park_slot *slot;                  /* the job's reference, dropped in job_free */
    struct curl_slist *headers;       /* sent */
    buf url;                          /* the leader's URL, then the target */
    size_t base_len;                  /* the leader's URL alone: what a log line shows */
    buf body;                         /* sent: the client's body, moved here */
    buf rbody;                        /* the leader's answer: body, headers kept */
    buf rheaders;                     /* "Name\0value\0" each, as cmd_result.headers */
    int has_leader;                   /* the leader's answer has its own X-STS-Leader */
    unsigned leader;
    /* A request that goes in a batch: no transfer of its own. */
    int batched;
    const char *method;               /* "GET" or "POST" */
    buf sent_headers;                 /* the client's that count: "Name\0value\0" each */
    /* A batch's transfer: its requests, in order, linked by next. */
    struct forward_job *members;
    size_t n_members;
    int64_t arrived_ms;               /* clock_now_ms() when the request came here */
    int64_t leader_clock;             /* its answer's ANSWER_CLOCK_HEADER; -1: none */
    int probe;                        /* a probe of the leader's clock: no request, no slot */
} forward_job;

struct http_forward {
    pthread_t thread;
    CURLM *multi;
    long total_ms;                    /* CURLOPT_TIMEOUT_MS of every transfer */
    long max_age_s;                   /* CURLOPT_MAXAGE_CONN */
    pthread_mutex_t mu;
    forward_job *queue, *tail;        /* under mu: handed over, not yet started */
    int stop;                         /* under mu */
    forward_job *active;              /* the thread's own: transfers going on */
    int64_t logged_ms;                /* the thread's own: the last warning */
    forward_job *pending, *pending_tail; /* the thread's own: waiting for a batch */
    forward_job *unclocked;           /* the thread's own: requests alone, waiting for a
                                       * sample of their leader's clock */
    forward_job *probe;               /* the thread's own: the probe on its way, or NULL */
    int64_t probe_after_ms;           /* no new probe before this (one failed) */
    int batches_out;                  /* the thread's own: batches on their way */
    /* stsd.cluster.forwardBatches: at most this many on their way. The requests that come
     * meanwhile wait for one to come back, and go together in the next: one transfer,
     * one turn of the leader's loop, one commit for them all (docs/benchmarks.md, H). */
    int batches_max;
    size_t batch_bytes;               /* a batch's limit */
    int64_t within_ms;                /* stsd.cluster.forwardWithin */
    forward_clock clock;              /* the thread's own: the last leader's, sampled */
    cluster *cl;                      /* counts what is sent (/metrics) */
};

/* ---- answers made here -------------------------------------------------------------- */

void forward_unavailable(cmd_result *r, unsigned leader, const char *msg, int retry)
{
    /* Written as a command's KO is, so that a client tells it from other KOs by its text
     * alone; 503 whatever the command, since none of them ran. */
    cmd_result ko = {.kind = REPLY_KO, .status = 503, .cmd = -1};
    unsigned status;
    buf_puts(&ko.text, msg);
    buf_clear(&r->text);
    if (ko.text.oom || (r->json ? reply_render_json(&ko, &r->text, &status)
                                : reply_render(&ko, &r->text)) != 0)
        r->text.oom = 1;
    buf_free(&ko.text);
    buf_clear(&r->headers);
    answer_page_headers(&r->headers, r->json ? REPLY_JSON_CONTENT_TYPE : reply_content_type(),
                        NULL, -1);
    if (retry)
        answer_header_str(&r->headers, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    answer_leader(&r->headers, (int)leader);
    if (r->headers.oom)
        r->text.oom = 1;
    r->kind = REPLY_RAW;
    r->status = 503;
}

void forward_redirect(cmd_result *r, unsigned leader, const char *url, const char *target,
                      size_t target_len)
{
    buf loc = BUF_INIT;
    buf_puts(&loc, url);
    buf_append(&loc, target, target_len);
    buf_clear(&r->text);
    buf_clear(&r->headers);
    answer_header(&r->headers, MHD_HTTP_HEADER_LOCATION, loc.data ? loc.data : "", loc.len);
    answer_header_str(&r->headers, MHD_HTTP_HEADER_CACHE_CONTROL,
                      "no-cache, no-store, must-revalidate");
    answer_leader(&r->headers, (int)leader);
    if (loc.oom || r->headers.oom)
        r->text.oom = 1;
    buf_free(&loc);
    r->kind = REPLY_RAW;
    r->status = 307;
}

int forward_local(const char *path, size_t len)
{
    if (len < 4 || memcmp(path, "/sts", 4) != 0 || (len > 4 && path[4] != '/'))
        return 1;
    /* The command table says which: CMD_LOCAL (STOP, CLUSTER). */
    const cmd_def *d = len > 5 ? command_lookup(path + 5, len - 5) : NULL;
    return d && (d->flags & CMD_LOCAL);
}

/* ---- a job: one request on its way to the leader ------------------------------------ */

static void job_free(forward_job *jb)
{
    if (jb->easy)
        curl_easy_cleanup(jb->easy);
    curl_slist_free_all(jb->headers);
    if (jb->slot)
        park_unref(jb->slot);
    buf_free(&jb->url);
    buf_free(&jb->body);
    buf_free(&jb->rbody);
    buf_free(&jb->rheaders);
    buf_free(&jb->sent_headers);
    free(jb);
}

/* The leader's headers that its answer is made of: what a client of stsd reads (the
 * X-STS-* ones, Content-Type, Location, Retry-After) and what keeps the answer the same
 * page (caching, the 401's challenge). Not the connection's own (Content-Length,
 * Connection, Date), which this node's connection has. */
static int relayed_header(const char *name, size_t len)
{
    static const char *const names[] = {
        MHD_HTTP_HEADER_CONTENT_TYPE, MHD_HTTP_HEADER_CACHE_CONTROL, MHD_HTTP_HEADER_PRAGMA,
        MHD_HTTP_HEADER_EXPIRES, MHD_HTTP_HEADER_WWW_AUTHENTICATE, MHD_HTTP_HEADER_RETRY_AFTER,
        MHD_HTTP_HEADER_LOCATION,
    };
    if (len > 6 && strncasecmp(name, "X-STS-", 6) == 0)
        return 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && strncasecmp(name, names[i], len) == 0)
            return 1;
    return 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    forward_job *jb = arg;
    size_t len = size * n;
    if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        /* A status line: an interim answer's (100 Continue) headers are not the answer's. */
        buf_clear(&jb->rheaders);
        jb->has_leader = 0;
        return len;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon || !relayed_header(p, (size_t)(colon - p)))
        return len;
    const char *v = colon + 1, *end = p + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t nlen = (size_t)(colon - p);
    if (nlen == sizeof ANSWER_CLOCK_HEADER - 1 &&
        strncasecmp(p, ANSWER_CLOCK_HEADER, nlen) == 0) {
        int64_t ms;
        if (num_parse_i64(v, (size_t)(end - v), 0, INT64_MAX, &ms) == 0)
            jb->leader_clock = ms;
        return len;
    }
    buf_append(&jb->rheaders, p, nlen);
    buf_append(&jb->rheaders, "", 1);
    buf_append(&jb->rheaders, v, (size_t)(end - v));
    buf_append(&jb->rheaders, "", 1);
    if (nlen == 12 && strncasecmp(p, "X-STS-Leader", 12) == 0)
        jb->has_leader = 1;
    return jb->rheaders.oom ? 0 : len;       /* 0 ends the transfer: CURLE_WRITE_ERROR */
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    forward_job *jb = arg;
    return buf_append(&jb->rbody, p, size * n) == 0 ? size * n : 0;
}

/* The request headers the leader's answer depends on: the body's type, what the client
 * accepts, its token, the CSRF check's (Origin, Sec-Fetch-Site, X-STS-UI) and every
 * other X-STS-* header. */
static int sent_header(const char *name)
{
    static const char *const names[] = {
        MHD_HTTP_HEADER_CONTENT_TYPE, MHD_HTTP_HEADER_ACCEPT, MHD_HTTP_HEADER_AUTHORIZATION,
        MHD_HTTP_HEADER_ORIGIN, "Sec-Fetch-Site",
    };
    if (strncasecmp(name, "X-STS-", 6) == 0)
        return 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i]) == 0)
            return 1;
    return 0;
}

static enum MHD_Result on_sent_header(void *arg, enum MHD_ValueKind kind, const char *name,
                                      const char *value)
{
    /* A client's own deadline or clock would stand for this node's: dropped. */
    if (name && sent_header(name) && strcasecmp(name, FORWARD_DEADLINE_HEADER) != 0 &&
        strcasecmp(name, ANSWER_CLOCK_HEADER) != 0)
        answer_header_str(arg, name, value ? value : "");
    return MHD_YES;
}

/* jb->sent_headers: the client's headers that count (sent_header), as the leader gets
 * them alone or in a batch. */
static int job_sent_headers(forward_job *jb, struct MHD_Connection *c)
{
    MHD_get_connection_values(c, MHD_HEADER_KIND, on_sent_header, &jb->sent_headers);
    return jb->sent_headers.oom ? -1 : 0;
}

/* A request sent alone: jb->headers, curl's list of jb->sent_headers, then none of those
 * curl would add itself and the leader would read (a default Accept or form Content-Type,
 * Expect), and FORWARD_HEADER. */
static int job_curl_headers(forward_job *jb)
{
    int accept = 0, ctype = 0;
    const char *name, *value;
    buf line = BUF_INIT;
    for (size_t off = 0; answer_next_header(jb->sent_headers.data, jb->sent_headers.len, &off,
                                            &name, &value);) {
        accept |= strcasecmp(name, MHD_HTTP_HEADER_ACCEPT) == 0;
        ctype |= strcasecmp(name, MHD_HTTP_HEADER_CONTENT_TYPE) == 0;
        buf_clear(&line);
        /* "Name;" is curl's way of sending a header with an empty value. */
        if (*value)
            buf_printf(&line, "%s: %s", name, value);
        else
            buf_printf(&line, "%s;", name);
        struct curl_slist *l = line.oom ? NULL : curl_slist_append(jb->headers, line.data);
        if (!l) {
            buf_free(&line);
            return -1;
        }
        jb->headers = l;
    }
    buf_free(&line);
    const char *more[] = {"Expect:", accept ? NULL : "Accept:",
                          ctype ? NULL : "Content-Type:", FORWARD_HEADER ": 1"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        struct curl_slist *l = more[i] ? curl_slist_append(jb->headers, more[i]) : jb->headers;
        if (!l)
            return -1;
        jb->headers = l;
    }
    return 0;
}

/* The leader's URL of the request: url then the target as the client wrote it. A '#' is
 * data in a request target but would end curl's URL, so it goes as %23, which the
 * leader decodes to the same byte. */
static int job_url(forward_job *jb, const char *url, const char *target, size_t len)
{
    buf_puts(&jb->url, url);
    jb->base_len = jb->url.len;
    for (size_t i = 0; i < len; i++)
        if (target[i] == '#')
            buf_puts(&jb->url, "%23");
        else
            buf_append(&jb->url, target + i, 1);
    return jb->url.oom ? -1 : 0;
}

static int job_easy(http_forward *f, forward_job *jb, const char *method)
{
    CURL *e = jb->easy = curl_easy_init();
    if (!e)
        return -1;
    int post = strcmp(method, "POST") == 0;
    CURLcode rc = CURLE_OK;
#define SET(opt, v) (rc = rc != CURLE_OK ? rc : curl_easy_setopt(e, opt, v))
    SET(CURLOPT_URL, jb->url.data);
    SET(CURLOPT_PATH_AS_IS, 1L);          /* "/sts/../x" goes as the client wrote it */
    SET(CURLOPT_PROXY, "");               /* the leader is reached directly, whatever */
    SET(CURLOPT_NOPROXY, "*");            /* http_proxy the environment sets */
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SET(CURLOPT_CONNECTTIMEOUT_MS, FORWARD_CONNECT_MS);
    SET(CURLOPT_TIMEOUT_MS, f->total_ms);
    SET(CURLOPT_MAXAGE_CONN, f->max_age_s);
    SET(CURLOPT_HTTPHEADER, jb->headers);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, jb);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, jb);
    SET(CURLOPT_PRIVATE, jb);
    if (strcmp(method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (post || jb->body.len) {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)jb->body.len);
        SET(CURLOPT_POSTFIELDS, jb->body.data ? jb->body.data : "");
        if (!post)
            SET(CURLOPT_CUSTOMREQUEST, method);
    } else if (strcmp(method, "GET") != 0) {
        SET(CURLOPT_CUSTOMREQUEST, method);
    }
#undef SET
    return rc == CURLE_OK ? 0 : -1;
}

/* Deadline or shutdown: the lot ended the slot. ctx is the leader's id, not the job,
 * which the thread may free meanwhile. The request may have reached the leader. */
static void on_expire(park_slot *s, park_why why, cmd_result *r, void *ctx)
{
    forward_unavailable(r, (unsigned)(uintptr_t)ctx, FORWARD_UNKNOWN, 0);
}

/* jb's bytes in a batch. */
static size_t job_bytes(const forward_job *jb)
{
    return jb->url.len + jb->sent_headers.len + jb->body.len + FORWARD_ITEM_SLACK;
}

/* Whether jb, a request answered at once, goes in a batch: a GET or a POST that fits. */
static int job_batched(const http_forward *f, forward_job *jb, const char *method)
{
    jb->method = strcmp(method, "GET") == 0 ? "GET" : strcmp(method, "POST") == 0 ? "POST"
                                                                                 : NULL;
    return jb->method && job_bytes(jb) <= f->batch_bytes;
}

int forward_send(http_forward *f, park_lot *lot, struct MHD_Connection *c, request *q,
                 const char *method, const char *url, unsigned leader, int batchable)
{
    if (!f)
        return -1;
    forward_job *jb = calloc(1, sizeof *jb);
    if (!jb)
        return -1;
    jb->leader = leader;
    jb->arrived_ms = clock_now_ms();
    jb->leader_clock = -1;
    /* The body moves to the job: a stop may close the connection, and free its request,
     * while curl still sends it. */
    buf body = q->body;
    jb->body = body;
    q->body = (buf)BUF_INIT;
    int ok = job_url(jb, url, q->uri.data + q->target, q->uri.len - q->target) == 0 &&
             job_sent_headers(jb, c) == 0;
    if (ok) {
        jb->batched = batchable && f->batches_max && job_batched(f, jb, method);
        ok = jb->batched || (job_curl_headers(jb) == 0 && job_easy(f, jb, method) == 0);
    }
    if (!ok || !(jb->slot = park_new(lot, &q->result, 0, on_expire, (void *)(uintptr_t)leader))) {
        q->body = jb->body;
        jb->body = (buf)BUF_INIT;
        job_free(jb);
        return -1;
    }
    park_keep(jb->slot);          /* the leader's answer is what ends it */
    q->result.park = jb->slot;
    pthread_mutex_lock(&f->mu);
    if (f->tail)
        f->tail->next = jb;
    else
        f->queue = jb;
    f->tail = jb;
    pthread_mutex_unlock(&f->mu);
    curl_multi_wakeup(f->multi);
    return 0;
}

/* ---- deadlines ----------------------------------------------------------------------- */

int forward_in_time(const char *dl)
{
    return forward_clock_in_time(dl, clock_now_ms());
}

/* jb's answer sampled its leader's clock: the sample the next deadlines start from. */
static void clock_note(http_forward *f, const forward_job *jb)
{
    if (jb->leader_clock >= 0)
        forward_clock_note(&f->clock, jb->leader, jb->leader_clock, clock_now_ms());
}

/* Adds to *headers the deadline of a request for leader that came here at arrived_ms.
 * Returns 0 (none added when no sample of that leader's clock is known), -1 out of
 * memory. */
static int deadline_header(const http_forward *f, unsigned leader, int64_t arrived_ms,
                           struct curl_slist **headers)
{
    int64_t dl;
    if (!forward_clock_deadline(&f->clock, leader, arrived_ms, f->within_ms, &dl))
        return 0;
    char line[sizeof FORWARD_DEADLINE_HEADER + 32];
    snprintf(line, sizeof line, "%s: %lld", FORWARD_DEADLINE_HEADER, (long long)dl);
    struct curl_slist *l = curl_slist_append(*headers, line);
    if (!l)
        return -1;
    *headers = l;
    return 0;
}

/* Ends jb, which waited here past its time (for a batch, or for the leader's clock):
 * nothing was sent, the client may retry. */
static void job_late(http_forward *f, forward_job *jb)
{
    cluster_count_late(f->cl, 0);
    if (park_claim(jb->slot)) {
        forward_unavailable(park_result(jb->slot), jb->leader, FORWARD_NO_LEADER, 1);
        park_finish(jb->slot);
    }
    job_free(jb);
}

/* Whether requests for leader may go: a sample of its clock is known. */
static int clocked(const http_forward *f, unsigned leader)
{
    return forward_clock_ready(&f->clock, leader);
}

/* Ends the requests that waited here past their time: those waiting for a batch (oldest
 * first) and those alone waiting for their leader's clock. */
static void drop_late(http_forward *f)
{
    int64_t now = clock_now_ms();
    while (f->pending && now - f->pending->arrived_ms > f->within_ms) {
        forward_job *late = f->pending;
        f->pending = late->next;
        job_late(f, late);
    }
    if (!f->pending)
        f->pending_tail = NULL;
    for (forward_job **link = &f->unclocked; *link;) {
        forward_job *jb = *link;
        if (now - jb->arrived_ms > f->within_ms) {
            *link = jb->next;
            job_late(f, jb);
        } else {
            link = &jb->next;
        }
    }
}

/* ---- the thread ---------------------------------------------------------------------- */

static void active_remove(http_forward *f, forward_job *jb)
{
    if (jb->prev)
        jb->prev->next = jb->next;
    else
        f->active = jb->next;
    if (jb->next)
        jb->next->prev = jb->prev;
    curl_multi_remove_handle(f->multi, jb->easy);
}

/* r, holding the leader's answer with status: a REPLY_RAW result, named for the leader
 * unless the answer names it already (has_leader). */
static void relay_finish(cmd_result *r, const forward_job *jb, int has_leader, unsigned status)
{
    if (!has_leader)
        answer_leader(&r->headers, (int)jb->leader);
    if (r->headers.oom)
        r->text.oom = 1;
    r->kind = REPLY_RAW;
    r->status = status;
}

/* The leader's answer, as it is, into the slot's result. */
static void relay(cmd_result *r, forward_job *jb)
{
    long code = 0;
    curl_easy_getinfo(jb->easy, CURLINFO_RESPONSE_CODE, &code);
    buf t = r->text;
    r->text = jb->rbody;
    jb->rbody = t;
    t = r->headers;
    r->headers = jb->rheaders;
    jb->rheaders = t;
    relay_finish(r, jb, jb->has_leader, (unsigned)code);
}

/* The leader's answer to one request of a batch (it), as relay makes an answer that came
 * alone: its status, its body, the headers relayed_header keeps. */
static void relay_item(cmd_result *r, forward_job *jb, const frame_item *it)
{
    int has_leader = 0;
    const char *name, *value;
    buf_clear(&r->text);
    buf_clear(&r->headers);
    buf_append(&r->text, it->body, it->body_len);
    for (size_t off = 0; answer_next_header(it->headers, it->headers_len, &off, &name, &value);) {
        if (relayed_header(name, strlen(name)))
            answer_header_str(&r->headers, name, value);
        has_leader |= strcasecmp(name, "X-STS-Leader") == 0;
    }
    relay_finish(r, jb, has_leader, it->status);
}

/* A warning that the leader could not be reached or was lost, at most one in
 * FORWARD_LOG_MS. The target stays out of the log: its query may hold a TOKEN. */
static void warn_lost(http_forward *f, forward_job *jb, const char *what, int sent)
{
    int64_t now = clock_now_ms();
    if (now - f->logged_ms < FORWARD_LOG_MS)
        return;
    f->logged_ms = now;
    log_warn("forward: leader %u at %.*s: %s%s", jb->leader, (int)jb->base_len, jb->url.data,
             what, sent ? " (after the request was sent)" : "");
}

/* Ends request jb: with the leader's answer (it, or jb's own transfer's when it is NULL
 * and rc is CURLE_OK), or with the 503 that says what is known (sent: bytes of the
 * request went out, on this connection or one curl retried: the leader may have acted on
 * it). Frees jb. */
static void job_settle(forward_job *jb, CURLcode rc, int sent, const frame_item *it)
{
    if (park_claim(jb->slot)) {
        cmd_result *r = park_result(jb->slot);
        if (it)
            relay_item(r, jb, it);
        else if (rc == CURLE_OK)
            relay(r, jb);
        else
            forward_unavailable(r, jb->leader, sent ? FORWARD_UNKNOWN : FORWARD_NO_LEADER,
                                !sent);
        park_finish(jb->slot);
    }
    job_free(jb);
}

/* Ends jb, a request sent alone, with curl's rc. Aborted is our own doing (the client
 * left, the node stops): nothing to say. */
static void job_end(http_forward *f, forward_job *jb, CURLcode rc)
{
    long sent = 0;
    if (jb->easy)
        curl_easy_getinfo(jb->easy, CURLINFO_REQUEST_SIZE, &sent);
    if (rc != CURLE_OK && rc != CURLE_ABORTED_BY_CALLBACK)
        warn_lost(f, jb, curl_easy_strerror(rc), sent != 0);
    if (rc == CURLE_OK)
        clock_note(f, jb);
    job_settle(jb, rc, sent != 0, NULL);
}

/* Ends batch bj and each of its requests with its answer, or all with what is known:
 * an answer that is no batch of as many answers came after the requests ran (outcome
 * unknown), except a refusal made before any ran (frame_refused). */
static void batch_end(http_forward *f, forward_job *bj, CURLcode rc)
{
    long sent = 0, code = 0;
    curl_easy_getinfo(bj->easy, CURLINFO_REQUEST_SIZE, &sent);
    curl_easy_getinfo(bj->easy, CURLINFO_RESPONSE_CODE, &code);
    f->batches_out--;
    size_t count = 0, off = 0;
    int whole = rc == CURLE_OK && code == 200 &&
                frame_head(bj->rbody.data, bj->rbody.len, &count, &off) == 0 &&
                count == bj->n_members;
    int refused = rc == CURLE_OK && frame_refused(code, bj->rbody.data, bj->rbody.len);
    if (rc == CURLE_OK)
        clock_note(f, bj);
    if (rc != CURLE_OK && rc != CURLE_ABORTED_BY_CALLBACK)
        warn_lost(f, bj, curl_easy_strerror(rc), sent != 0);
    else if (rc == CURLE_OK && !whole)
        warn_lost(f, bj, refused ? "batch refused" : "no batch in the answer", 1);
    for (forward_job *jb = bj->members, *next; jb; jb = next) {
        next = jb->next;
        frame_item it;
        whole = whole && frame_next(bj->rbody.data, bj->rbody.len, &off, 0, &it) == 0;
        if (whole)
            job_settle(jb, CURLE_OK, 1, &it);
        else
            job_settle(jb, refused ? CURLE_SEND_ERROR : rc == CURLE_OK ? CURLE_RECV_ERROR : rc,
                       !refused && sent != 0, NULL);
    }
    bj->members = NULL;
    job_free(bj);
}

/* The probe pj came back: the sample it brings, or a wait before the next. */
static void probe_end(http_forward *f, forward_job *pj, CURLcode rc)
{
    long code = 0;
    curl_easy_getinfo(pj->easy, CURLINFO_RESPONSE_CODE, &code);
    if (rc == CURLE_OK && pj->leader_clock >= 0) {
        clock_note(f, pj);
    } else if (rc == CURLE_OK && code == 404) {
        /* A leader of a version without deadlines, during a rolling upgrade: it could
         * not refuse a late request anyway. */
        forward_clock_absent(&f->clock, pj->leader);
    } else {
        f->probe_after_ms = clock_now_ms() + FORWARD_PROBE_RETRY_MS;
    }
    if (f->probe == pj)
        f->probe = NULL;
    job_free(pj);
}

/* Ends transfer jb, whatever it is, with curl's rc. */
static void end_transfer(http_forward *f, forward_job *jb, CURLcode rc)
{
    if (jb->probe)
        probe_end(f, jb, rc);
    else if (jb->members)
        batch_end(f, jb, rc);
    else
        job_end(f, jb, rc);
}

static void reap(http_forward *f)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(f->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        char *p = NULL;
        CURLcode rc = m->data.result;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
        forward_job *jb = (forward_job *)p;
        active_remove(f, jb);
        end_transfer(f, jb, rc);
    }
}

/* Cuts the transfers whose client has left, and drops the requests still waiting for a
 * batch. A batch goes on: its other requests are still awaited. A slot the lot ended at
 * shutdown may say gone wrongly (its socket closed and reused): its claim fails whatever
 * happens here. */
static void drop_gone(http_forward *f)
{
    for (forward_job *jb = f->active, *next; jb; jb = next) {
        next = jb->next;
        if (jb->members || jb->probe || !park_client_gone(jb->slot))
            continue;
        active_remove(f, jb);
        job_end(f, jb, CURLE_ABORTED_BY_CALLBACK);
    }
    forward_job **link = &f->pending;
    f->pending_tail = NULL;
    while (*link) {
        forward_job *jb = *link;
        if (park_client_gone(jb->slot)) {
            *link = jb->next;
            job_end(f, jb, CURLE_ABORTED_BY_CALLBACK);
        } else {
            f->pending_tail = jb;
            link = &jb->next;
        }
    }
}

static void start(http_forward *f, forward_job *jb)
{
    jb->next = f->active;
    jb->prev = NULL;
    if (curl_multi_add_handle(f->multi, jb->easy) != CURLM_OK) {
        if (jb->members)
            f->batches_out++;               /* batch_end counts it back */
        end_transfer(f, jb, CURLE_OUT_OF_MEMORY);
        return;
    }
    if (f->active)
        f->active->prev = jb;
    f->active = jb;
    if (jb->members)
        f->batches_out++;
    if (!jb->probe)
        cluster_count_forward(f->cl, jb->n_members);
}

/* A probe of the clock of the node like's requests go to, unless one is on its way or
 * one failed a moment ago: GET CLOCK_PATH, given the requests' own time at most. */
static void probe_start(http_forward *f, const forward_job *like)
{
    int64_t now = clock_now_ms();
    if (f->probe || now < f->probe_after_ms)
        return;
    forward_job *pj = calloc(1, sizeof *pj);
    if (!pj)
        return;
    pj->probe = 1;
    pj->leader = like->leader;
    pj->leader_clock = -1;
    buf_append(&pj->url, like->url.data, like->base_len);
    pj->base_len = pj->url.len;
    buf_puts(&pj->url, CLOCK_PATH);
    if (pj->url.oom || job_easy(f, pj, "GET") != 0 ||
        curl_easy_setopt(pj->easy, CURLOPT_TIMEOUT_MS, (long)f->within_ms) != CURLE_OK) {
        job_free(pj);
        f->probe_after_ms = now + FORWARD_PROBE_RETRY_MS;
        return;
    }
    f->probe = pj;
    start(f, pj);
}

/* Starts jb, a request alone whose leader's clock is known, with its deadline. */
static void start_alone(http_forward *f, forward_job *jb)
{
    if (deadline_header(f, jb->leader, jb->arrived_ms, &jb->headers) != 0 ||
        curl_easy_setopt(jb->easy, CURLOPT_HTTPHEADER, jb->headers) != CURLE_OK)
        job_end(f, jb, CURLE_OUT_OF_MEMORY);
    else
        start(f, jb);
}

/* Starts the requests alone whose leader's clock became known; asks for a probe for the
 * first that still waits, or for the next batch's leader. */
static void start_clocked(http_forward *f)
{
    for (forward_job **link = &f->unclocked; *link;) {
        forward_job *jb = *link;
        if (clocked(f, jb->leader)) {
            *link = jb->next;
            jb->next = NULL;
            start_alone(f, jb);
        } else {
            link = &jb->next;
        }
    }
    if (f->pending && !clocked(f, f->pending->leader))
        probe_start(f, f->pending);
    else if (f->unclocked)
        probe_start(f, f->unclocked);
}

/* The next batch: the requests waiting, in order, as many as go to the same leader and
 * fit, as one transfer. */
static void batch_start(http_forward *f)
{
    forward_job *bj = calloc(1, sizeof *bj);
    forward_job *first = f->pending;
    size_t bytes = 0;
    if (bj) {
        bj->leader_clock = -1;
        bj->leader = first->leader;
        buf_append(&bj->url, first->url.data, first->base_len);
        bj->base_len = bj->url.len;
        buf_puts(&bj->url, BATCH_PATH);
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: " BATCH_CONTENT_TYPE);
        struct curl_slist *h2 = h ? curl_slist_append(h, "Expect:") : NULL;
        bj->headers = h2 ? curl_slist_append(h2, "Accept:") : NULL;
        if (!bj->headers)
            curl_slist_free_all(h2 ? h2 : h);
        /* The first request is the oldest: the batch starts in its time or not at all. */
        else if (deadline_header(f, first->leader, first->arrived_ms, &bj->headers) != 0)
            bj->url.oom = 1;
    }
    /* Out of memory: the first request ends alone with the 503 of nothing sent. */
    if (!bj || !bj->headers || bj->url.oom) {
        f->pending = first->next;
        if (!f->pending)
            f->pending_tail = NULL;
        job_end(f, first, CURLE_OUT_OF_MEMORY);
        if (bj)
            job_free(bj);
        return;
    }
    forward_job **tail = &bj->members;
    while (f->pending && bj->n_members < BATCH_MAX && f->pending->leader == bj->leader &&
           (bj->n_members == 0 || bytes + job_bytes(f->pending) <= f->batch_bytes)) {
        forward_job *jb = f->pending;
        f->pending = jb->next;
        jb->next = NULL;
        *tail = jb;
        tail = &jb->next;
        bj->n_members++;
        bytes += job_bytes(jb);
    }
    if (!f->pending)
        f->pending_tail = NULL;
    frame_begin(&bj->body, bj->n_members);
    for (forward_job *jb = bj->members; jb; jb = jb->next)
        frame_put_request(&bj->body, jb->method, jb->url.data + jb->base_len,
                          jb->url.len - jb->base_len, &jb->sent_headers, jb->body.data,
                          jb->body.len);
    if (bj->body.oom || job_easy(f, bj, "POST") != 0) {
        f->batches_out++;                   /* batch_end counts it back */
        batch_end(f, bj, CURLE_OUT_OF_MEMORY);
        return;
    }
    start(f, bj);
}

static void *forward_main(void *arg)
{
    http_forward *f = arg;
    int64_t next_check = clock_now_ms() + FORWARD_GONE_MS;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        forward_job *in = f->queue;
        f->queue = f->tail = NULL;
        int stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        for (forward_job *jb = in, *next; jb; jb = next) {
            next = jb->next;
            jb->next = NULL;
            if (stop) {     /* never sent; park_lot_shutdown has most likely ended it */
                job_end(f, jb, CURLE_ABORTED_BY_CALLBACK);
            } else if (jb->batched) {
                if (f->pending_tail)
                    f->pending_tail->next = jb;
                else
                    f->pending = jb;
                f->pending_tail = jb;
            } else if (clocked(f, jb->leader)) {
                start_alone(f, jb);
            } else {
                jb->next = f->unclocked;
                f->unclocked = jb;
            }
        }
        if (stop)
            break;
        drop_late(f);
        start_clocked(f);
        while (f->pending && f->batches_out < f->batches_max &&
               clocked(f, f->pending->leader))
            batch_start(f);
        int running;
        curl_multi_perform(f->multi, &running);
        reap(f);
        int64_t now = clock_now_ms();
        if (now >= next_check) {
            drop_gone(f);
            next_check = now + FORWARD_GONE_MS;
        }
        /* A batch that came back makes room for the next at once. */
        if (f->pending && f->batches_out < f->batches_max && clocked(f, f->pending->leader))
            continue;
        curl_multi_poll(f->multi, NULL, 0, FORWARD_GONE_MS, NULL);
    }
    while (f->pending) {
        forward_job *jb = f->pending;
        f->pending = jb->next;
        job_end(f, jb, CURLE_ABORTED_BY_CALLBACK);
    }
    while (f->unclocked) {
        forward_job *jb = f->unclocked;
        f->unclocked = jb->next;
        job_end(f, jb, CURLE_ABORTED_BY_CALLBACK);
    }
    while (f->active) {
        forward_job *jb = f->active;
        active_remove(f, jb);
        end_transfer(f, jb, CURLE_ABORTED_BY_CALLBACK);
    }
    return NULL;
}

http_forward *forward_start(const config *conf, cluster *cl, buf *err)
{
    /* Before any thread of ours uses curl: its global init is not thread-safe in every
     * build. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        buf_puts(err, "forwarding: cannot initialise libcurl");
        return NULL;
    }
    http_forward *f = calloc(1, sizeof *f);
    if (!f || !(f->multi = curl_multi_init())) {
        free(f);
        curl_global_cleanup();
        buf_puts(err, "out of memory");
        return NULL;
    }
    /* Connections to the leader kept between transfers. curl's default (four per
     * transfer going on when one ends) closed and opened again about one connection in
     * thirty under 50 clients: 235 connects in 4 s. */
    if (curl_multi_setopt(f->multi, CURLMOPT_MAXCONNECTS, FORWARD_MAX_CONNECTS) != CURLM_OK)
        log_warn("forwarding: cannot keep %ld connections to the leader", FORWARD_MAX_CONNECTS);
    f->total_ms = ((long)conf->connection_timeout + conf->max_wait + FORWARD_SLACK_S) * 1000;
    /* A connection to the leader idle for its connection timeout is closed by the leader:
     * curl drops it well before, rather than find it closed at its next request. */
    f->max_age_s = conf->connection_timeout > 2 ? conf->connection_timeout / 2 : 1;
    f->logged_ms = clock_now_ms() - FORWARD_LOG_MS;
    f->cl = cl;
    f->batches_max = conf->cluster_forward_batches;
    f->within_ms = conf->cluster_forward_within;
    f->batch_bytes = conf->max_body < FORWARD_BATCH_BYTES ? conf->max_body : FORWARD_BATCH_BYTES;
    pthread_mutex_init(&f->mu, NULL);
    if (thread_start(&f->thread, "stsd-forward", forward_main, f) != 0) {
        buf_puts(err, "forwarding: cannot start its thread");
        pthread_mutex_destroy(&f->mu);
        curl_multi_cleanup(f->multi);
        free(f);
        curl_global_cleanup();
        return NULL;
    }
    return f;
}

void forward_stop(http_forward *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_mutex_unlock(&f->mu);
    curl_multi_wakeup(f->multi);
    pthread_join(f->thread, NULL);
    curl_multi_cleanup(f->multi);
    pthread_mutex_destroy(&f->mu);
    free(f);
    curl_global_cleanup();
}
