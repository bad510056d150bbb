/* SPDX-License-Identifier: Apache-2.0 */
/* result.h - what a command answers, in results (never bytes): shared by the command
 * table, the parking of requests that wait, and the page formatter. */
#ifndef STSD_RESULT_H
#define STSD_RESULT_H

#include <stdint.h>

#include "base/buf.h"

typedef struct park_lot park_lot;
typedef struct park_slot park_slot;

typedef enum reply_kind {
    REPLY_OK,       /* text is the payload */
    REPLY_KO,       /* text is the message after "Error : " */
    REPLY_LINES,    /* text holds lines (store_next_line format): READMULTI's page */
    REPLY_LISTING,  /* text holds entries (same format): STATUS's and CONFIG's page */
    REPLY_HELP,     /* the help page */
    REPLY_JSON,     /* text is a whole JSON document (built with server/json.h) */
    REPLY_RAW,      /* an answer made whole elsewhere (a cluster node's: relayed from the
                     * leader, or its 503 or 307): text is the body, sent as it is, status
                     * its HTTP status, headers every header it has (Content-Type too) */
    REPLY_VIEW,     /* not an answer yet: a follower's read whose ReadIndex round is done
                     * (http/http_view.c), status the id of the leader that answered the
                     * round (the answer's X-STS-Leader); the edge runs its command
                     * against the hot standby, which makes the answer */
} reply_kind;

/* Where a REPLY_OK's text goes in a JSON answer. */
typedef enum reply_field {
    FIELD_MESSAGE,  /* "message": the OK text (ADD, RESET, STOP) */
    FIELD_LINE,     /* "line" (or "line_base64"): READ, FIND */
    FIELD_LENGTH,   /* "length": n (LENGTH) */
    FIELD_COUNT,    /* "message" and "lines": n (INITFILE, SAVE) */
} reply_field;

/* Why the access checks refused a request (the dispatcher's first step). */
typedef enum reply_refusal {
    REFUSED_NONE,
    REFUSED_AUTH,   /* verdict says why: 401, 403 or 429 (guard/auth.h) */
    REFUSED_CSRF,   /* a browser's change without the dashboard's header (guard/csrf.h) */
} reply_refusal;

typedef struct cmd_result {
    reply_kind kind;
    buf text;       /* owned; reused across requests by whoever owns the result */
    int stop;       /* STOP: shut the server down once this answer is sent */
    struct park_slot *park;  /* set by a handler that parked the request (server/park.h):
                              * the answer comes later, through the slot */
    int json;       /* in: the client asked for JSON (Accept); out: answer in JSON */
    unsigned status;     /* HTTP status of a KO answered in JSON (400 when 0); of any
                          * REPLY_RAW answer */
    reply_field field;   /* set by the dispatcher from the command table */
    int cmd;        /* the command run (command_name), -1 for none */
    reply_refusal refused;  /* nonzero: refused before any command ran */
    int verdict;    /* REFUSED_AUTH: the auth_verdict */
    buf headers;    /* owned: extra headers of the answer (X-STS-Lease, X-STS-Arrival), each
                     * "Name\0value\0" (cmd_header); empty: none */
    char who[16];   /* the accepted token's name (guard/auth.h, AUTH_NAME_SIZE), "" for
                     * none: the audit log's "token" */
    uint64_t lsn;   /* nonzero: the answer reports a change whose journal record must be
                     * durable first (journal_when_durable; if that fails, send what
                     * command_not_durable makes of the result instead) */
} cmd_result;

#endif
