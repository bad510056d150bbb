/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_http.h - one request to stsd through libcurl: GET, a urlencoded POST, or LOAD's
 * multipart upload of a local file, with FORMAT=JSON. */
#ifndef STSCTL_HTTP_H
#define STSCTL_HTTP_H

#include "base/buf.h"

/* The most nodes --url may list. */
#define CTL_MAX_URLS 9

typedef struct ctl_conn {
    const char *url;          /* "http://localhost:9191" (a trailing /sts is allowed), or
                               * a comma separated list: a cluster's nodes */
    const char *token;        /* NULL: none */
    const char *cacert;       /* NULL: the system's */
    int insecure;
    long connect_timeout_ms;
} ctl_conn;

typedef struct ctl_answer {
    long status;              /* HTTP status */
    buf body;                 /* owned: ctl_answer_free */
    buf lease;                /* X-STS-Lease (ids, comma separated), or empty; owned */
    char error[512];          /* why the request failed (when ctl_request returns -1) */
} ctl_answer;

/* Starts libcurl; returns 0 or -1. */
int ctl_http_init(void);

/* Sends command (upper case) with the urlencoded parameters query ("A=1&B=2", may be
 * empty), as a POST body when post is set. upload, when not NULL, is a local file sent as
 * the multipart part FILE (LOAD), "-" standard input; progress then draws a bar on stderr
 * (for a file: standard input has no size). Fills a (freed by
 * the caller with ctl_answer_free). Returns 0 when an HTTP answer came, or -1 with
 * a->error set (unreachable, TLS, timeout, unreadable upload). With several URLs, a
 * refused connection or a 503 that no change lies behind (no leader, leader changed) is
 * tried again on the next node, for up to 5 rounds a second apart; a 503 "Outcome
 * unknown" is never sent again. */
int ctl_request(const ctl_conn *c, const char *command, const char *query, int post,
                const char *upload, int progress, ctl_answer *a);

/* Appends "&NAME=value" (urlencoded; no '&' when q is empty) to q. Returns 0 or -1. */
int ctl_query_add(buf *q, const char *name, const char *value);

void ctl_answer_free(ctl_answer *a);

#endif
