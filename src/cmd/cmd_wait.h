/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_wait.h - READ, READMULTI and FIND with TIMEOUT: waiting without a thread. Private
 * to cmd/. */
#ifndef STSD_CMD_WAIT_H
#define STSD_CMD_WAIT_H

#include <stdint.h>

#include "cmd/command.h"

/* What a READ or READMULTI asks; n is NB_LINES. */
typedef struct cmd_read_req {
    const char *name;
    size_t nlen;
    store_end end;
    int keep;
    long n;
    int multi;
    int64_t lease_ms;     /* LEASE (keep 0), 0: none */
    const char *owner;    /* OWNER (a READ, keep 0): olen bytes; NULL: none */
    size_t olen;
    int fields;           /* FIELDS=TRUE: the line's fields as headers too */
} cmd_read_req;

/* What a FIND asks: LINE, its mode (FIND_SUBSTRING...), keep. */
typedef struct cmd_find_req {
    const char *name;
    size_t nlen;
    const char *line;
    size_t llen;
    int mode;
    int keep;
    int64_t lease_ms;
    int fields;           /* FIELDS=TRUE */
    const char *column;   /* COLUMN= (clen bytes; NULL: none): LINE is its field number col,
                           * cut by sep, as the list had them when asked */
    size_t clen, col;
    char sep;
} cmd_find_req;

/* Runs READ/READMULTI q, waiting up to deadline_ms (clock_now_ms clock) when it cannot be
 * served now: the answer is in r, or r->park is set and it comes later. */
void cmd_wait_read(const cmd_server *srv, const cmd_read_req *q, int64_t deadline_ms,
                   cmd_result *r);

/* READ OWNER= q now (the owner's line, taken if it holds none): its line into out, its
 * lease id appended to ids, *count 1 when served (out->oom when ids could not grow). */
store_rc cmd_read_owned(const cmd_server *srv, const cmd_read_req *q, buf *out, buf *ids,
                        size_t *count, uint64_t *lsn);

/* Runs FIND q the same way. */
void cmd_wait_find(const cmd_server *srv, const cmd_find_req *q, int64_t deadline_ms,
                   cmd_result *r);

#endif
