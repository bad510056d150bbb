/* SPDX-License-Identifier: Apache-2.0 */
/* http_view.c - a follower's reads: the ReadIndex rounds of the `stsd-reads` thread.
 *
 * Why a read answered here is as fresh as the leader's (linearizable): the round starts
 * after the read came. The leader answers READINDEX with the raft index it had applied
 * when the question came, which covers every change answered before it (an answer goes
 * after its entry is applied), and only once a record appended after the question is
 * committed, so a leader that was deposed meanwhile answers nothing. This node then waits
 * until raft has applied that index here, and until its standby has applied the batches
 * up to there, and the read runs against the standby: it sees every change answered
 * before it came, and only changes committed.
 *
 * Why one thread and one question at a time: the reads that come while a question is out
 * wait for the next one, so the leader answers one question per round trip whatever the
 * number of reads (etcd batches its ReadIndex the same way). */
#include "http_view.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"
#include "cluster/cluster.h"
#include "cmd/command.h"
#include "http_forward.h"
#include "journal/journal.h"

/* How long the leader may take to accept the connection (as forwarding's). */
#define VIEW_CONNECT_MS 1000L
/* At most one warning about a failed round in this long. */
#define VIEW_LOG_MS 10000
/* The longest answer READINDEX gives (a page or a JSON document). */
#define VIEW_ANSWER_MAX 512

typedef struct view_read {
    struct view_read *next;
    park_slot *slot;              /* the queue's reference, dropped once ended */
    unsigned leader;
    char *authorization;          /* the client's Authorization header, or NULL */
} view_read;

struct http_view {
    const cmd_server *srv;
    cmd_server reader;            /* srv with view set: what view_run's commands read */
    int64_t round_ms;             /* the longest round: the leader's fence and our apply */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    view_read *queue, *tail;      /* under mu */
    int stop;                     /* under mu */
    CURL *easy;                   /* the thread's own: one connection to the leader, kept */
    buf answer;                   /* the thread's own: READINDEX's answer */
    int64_t logged_ms;
};

/* ---- the queue ------------------------------------------------------------------------- */

/* Deadline or shutdown: the lot ended the slot; the round that finds it claimed skips it. */
static void on_expire(park_slot *s, park_why why, cmd_result *r, void *ctx)
{
    (void)s, (void)why;
    forward_unavailable(r, (unsigned)(uintptr_t)ctx, FORWARD_NO_LEADER, 1);
}

int view_send(http_view *v, park_lot *lot, struct MHD_Connection *c, request *q,
              unsigned leader)
{
    view_read *rd = calloc(1, sizeof *rd);
    if (!rd)
        return -1;
    /* The leader checks the question's credentials as it would the read's: the
     * client's header, or its TOKEN parameter as one. */
    const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_AUTHORIZATION);
    size_t tlen = 0;
    const char *token = authz ? NULL : params_get(&q->prm, PARAM_TOKEN, &tlen);
    if (token && (tlen != strlen(token) || strpbrk(token, "\r\n")))
        token = NULL;             /* no token of ours (the checks here refused it if needed) */
    if (token && asprintf(&rd->authorization, "Bearer %s", token) < 0)
        rd->authorization = NULL;
    /* The round's deadline, and a second for the answer to be sent. */
    int64_t deadline = clock_now_ms() + v->round_ms + 1000;
    if ((authz && !(rd->authorization = strdup(authz))) || (token && !rd->authorization) ||
        !(rd->slot = park_new(lot, &q->result, deadline, on_expire,
                              (void *)(uintptr_t)leader))) {
        free(rd->authorization);
        free(rd);
        return -1;
    }
    rd->leader = leader;
    q->result.park = rd->slot;
    pthread_mutex_lock(&v->mu);
    if (v->tail)
        v->tail->next = rd;
    else
        v->queue = rd;
    v->tail = rd;
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
    return 0;
}

/* Ends every read of the list: REPLY_VIEW when ok (leader: the one asked), else the
 * retryable 503; frees them. */
static void end_reads(view_read *rd, int ok, unsigned leader)
{
    for (view_read *next; rd; rd = next) {
        next = rd->next;
        if (park_claim(rd->slot)) {
            cmd_result *r = park_result(rd->slot);
            if (ok) {
                r->kind = REPLY_VIEW;
                r->status = leader;
            } else {
                forward_unavailable(r, rd->leader, FORWARD_NO_LEADER, 1);
            }
            park_finish(rd->slot);
        }
        park_unref(rd->slot);
        free(rd->authorization);
        free(rd);
    }
}

/* ---- a round ------------------------------------------------------------------------------ */

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    buf *b = arg;
    if (b->len + size * n > VIEW_ANSWER_MAX || buf_append(b, p, size * n) != 0)
        return 0;                 /* not READINDEX's answer: the transfer fails */
    return size * n;
}

/* The index in READINDEX's OK page ("<body>N</body>"). Returns 0, or -1. */
static int parse_index(const buf *b, uint64_t *idx)
{
    const char *p = b->data ? memmem(b->data, b->len, "<body>", 6) : NULL;
    if (!p)
        return -1;
    p += 6;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || strncmp(end, "</body>", 7) != 0)
        return -1;
    *idx = v;
    return 0;
}

/* Asks the leader at url for its applied index, with the first read's credentials.
 * Returns 0, or -1 with the reason in why. */
static int ask_leader(http_view *v, const char *url, const char *authz, int64_t deadline,
                      uint64_t *idx, char *why, size_t wl)
{
    char target[FORWARD_URL_MAX + 32];
    snprintf(target, sizeof target, "%s/sts/READINDEX", url);
    struct curl_slist *h = curl_slist_append(NULL, "Accept:");
    char line[4096];
    if (h && authz && snprintf(line, sizeof line, "Authorization: %s", authz) < (int)sizeof line) {
        struct curl_slist *h2 = curl_slist_append(h, line);
        if (h2)
            h = h2;
    }
    long left = (long)(deadline - clock_now_ms());
    buf_clear(&v->answer);
    CURLcode rc = CURLE_OK;
#define SET(opt, val) (rc = rc != CURLE_OK ? rc : curl_easy_setopt(v->easy, opt, val))
    SET(CURLOPT_URL, target);
    SET(CURLOPT_HTTPHEADER, h);
    SET(CURLOPT_TIMEOUT_MS, left > 1 ? left : 1L);
#undef SET
    long code = 0;
    if (rc == CURLE_OK)
        rc = curl_easy_perform(v->easy);
    curl_easy_getinfo(v->easy, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_setopt(v->easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(h);
    if (rc != CURLE_OK) {
        snprintf(why, wl, "%s", curl_easy_strerror(rc));
        return -1;
    }
    if (code != 200 || buf_append(&v->answer, "", 1) != 0 || parse_index(&v->answer, idx) != 0) {
        snprintf(why, wl, "HTTP %ld, not an index", code);
        return -1;
    }
    return 0;
}

/* One round for the reads in rd: ends each of them. */
static void round_for(http_view *v, view_read *rd)
{
    cluster *cl = v->srv->cluster;
    char url[FORWARD_URL_MAX], why[256] = "";
    unsigned leader = 0;
    uint64_t idx = 0;
    int64_t deadline = clock_now_ms() + v->round_ms;
    int ok = 0;
    /* This node may lead by now, or know none: the reads are tried again. */
    if (cluster_route(cl, &leader, url, sizeof url) != CLUSTER_FORWARD)
        snprintf(why, sizeof why, "no leader to ask");
    else if (ask_leader(v, url, rd->authorization, deadline, &idx, why, sizeof why) != 0)
        ;
    else if (cluster_wait_applied(cl, idx, deadline) != 0)
        snprintf(why, sizeof why, "raft index %" PRIu64 " not applied here in time", idx);
    else if (journal_view_wait(v->srv->j, journal_view_position(v->srv->j), deadline) != 0)
        snprintf(why, sizeof why, "the standby is behind or does not follow");
    else
        ok = 1;
    if (!ok) {
        int64_t now = clock_now_ms();
        if (now - v->logged_ms >= VIEW_LOG_MS) {
            v->logged_ms = now;
            log_warn("reads: a follower's reads answered 503 (retry): %s", why);
        }
    }
    size_t n = 0;
    for (view_read *x = rd; x; x = x->next)
        n++;
    cluster_count_reads(cl, n, ok);
    end_reads(rd, ok, leader);
}

static void *view_main(void *arg)
{
    http_view *v = arg;
    pthread_mutex_lock(&v->mu);
    for (;;) {
        while (!v->queue && !v->stop)
            pthread_cond_wait(&v->cv, &v->mu);
        view_read *rd = v->queue;
        v->queue = v->tail = NULL;
        int stop = v->stop;
        pthread_mutex_unlock(&v->mu);
        if (stop) {
            end_reads(rd, 0, 0);
            return NULL;
        }
        round_for(v, rd);
        pthread_mutex_lock(&v->mu);
    }
}

/* ---- the answer ------------------------------------------------------------------------- */

void view_run(const http_view *v, request *q)
{
    cmd_result *r = &q->result;
    /* Named by the answer: the leader that answered the round, which may have been
     * elected after the read came. */
    q->leader = (int)r->status;
    buf_clear(&r->text);
    buf_clear(&r->headers);
    r->kind = REPLY_OK;
    r->status = 0;
    if (journal_view_begin(v->srv->j) != 0) {
        forward_unavailable(r, (unsigned)(q->leader > 0 ? q->leader : 0), FORWARD_NO_LEADER, 1);
        return;
    }
    cmd_request cq = {.path = q->path.data, .path_len = q->path.len, .prm = &q->prm};
    command_exec(&v->reader, &cq, r);
    journal_view_end(v->srv->j);
}

/* ---- start and stop ------------------------------------------------------------------------ */

http_view *view_start(const config *conf, const cmd_server *srv, buf *err)
{
    http_view *v = calloc(1, sizeof *v);
    /* libcurl is initialised: forward_start runs first on every cluster node. */
    if (!v || !(v->easy = curl_easy_init())) {
        free(v);
        buf_puts(err, "out of memory");
        return NULL;
    }
    v->srv = srv;
    v->reader = *srv;
    v->reader.view = srv->j;
    v->reader.lot = NULL;         /* nothing waits: a read with TIMEOUT is the leader's */
    /* The leader's fence waits for a commit, which a leader cut off never gets: it is
     * deposed within an election timeout, and the next one answers. */
    v->round_ms = 2 * (int64_t)conf->cluster_election_ms + VIEW_CONNECT_MS;
    v->logged_ms = clock_now_ms() - VIEW_LOG_MS;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) (rc = rc != CURLE_OK ? rc : curl_easy_setopt(v->easy, opt, val))
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_NOPROXY, "*");
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SET(CURLOPT_CONNECTTIMEOUT_MS, VIEW_CONNECT_MS);
    SET(CURLOPT_MAXAGE_CONN, conf->connection_timeout > 2 ? conf->connection_timeout / 2L : 1L);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, &v->answer);
#undef SET
    pthread_mutex_init(&v->mu, NULL);
    pthread_cond_init(&v->cv, NULL);
    if (rc != CURLE_OK || thread_start(&v->thread, "stsd-reads", view_main, v) != 0) {
        buf_puts(err, "a follower's reads: cannot start their thread");
        pthread_mutex_destroy(&v->mu);
        pthread_cond_destroy(&v->cv);
        curl_easy_cleanup(v->easy);
        free(v);
        return NULL;
    }
    return v;
}

void view_stop(http_view *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&v->mu);
    v->stop = 1;
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
    pthread_join(v->thread, NULL);
    curl_easy_cleanup(v->easy);
    buf_free(&v->answer);
    pthread_mutex_destroy(&v->mu);
    pthread_cond_destroy(&v->cv);
    free(v);
}
