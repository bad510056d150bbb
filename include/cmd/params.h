/* SPDX-License-Identifier: Apache-2.0 */
/* params.h - a request's parameters: decoding of query strings, urlencoded and multipart
 * bodies into the values of the parameters STS commands know. */
#ifndef STSD_PARAMS_H
#define STSD_PARAMS_H

#include <stddef.h>

#include "base/buf.h"

typedef enum param_id {
    PARAM_FILENAME, PARAM_LINE, PARAM_READ_MODE, PARAM_KEEP, PARAM_NB_LINES,
    PARAM_ADD_MODE, PARAM_UNIQUE, PARAM_FIND_MODE, PARAM_ADD_TIMESTAMP,
    PARAM_FORMAT, PARAM_OFFSET, PARAM_LIMIT, PARAM_MATCH,     /* JSON answers, PEEK */
    PARAM_TIMEOUT, PARAM_LEASE,
    PARAM_OWNER,      /* READ, ACK, RELEASE: lines that stick to their owner */
    PARAM_TOKEN,      /* stsd.token's alternative to an Authorization header */
    PARAM_FILE,                                               /* LOAD's file */
    PARAM_NAME, PARAM_VALUE, PARAM_VERSION, PARAM_IF_VERSION,  /* keys */
    PARAM_PREFIX, PARAM_BY, PARAM_MIN, PARAM_MAX,
    PARAM_PARTIES, PARAM_ON_TIMEOUT,                          /* BARRIER, OPEN */
    PARAM_RUN,                                                /* ONCE's renewal */
    PARAM_LINES,      /* ADDMULTI: lines one per line (a text/plain body, or LINES=) */
    PARAM_TTL,        /* SET, INCR, EXPIRE, ONCE, DONE: a key's time to live */
    PARAM_HEADER, PARAM_SEPARATOR, PARAM_COLUMN, PARAM_FIELDS,  /* named columns */
    PARAM_NODE, PARAM_RAFT, PARAM_URL,                        /* CLUSTERADD, CLUSTERREMOVE */
    PARAM_COUNT
} param_id;

typedef struct params {
    /* Decoded values live in store; offsets rather than pointers since it grows. */
    size_t off[PARAM_COUNT];
    size_t len[PARAM_COUNT];
    unsigned char set[PARAM_COUNT];
    buf store;
    /* LINE's values after its first (ADDMULTI's repeated LINE=): (offset, length) pairs
     * into store; empty unless a request repeats LINE. */
    buf more_lines;
    size_t n_more_lines;
} params;

typedef enum params_rc { PARAMS_OK = 0, PARAMS_BAD_ESCAPE, PARAMS_BAD_BODY, PARAMS_NOMEM }
    params_rc;

/* Prepares p for a new request, keeping the memory of earlier ones. */
void params_reset(params *p);
void params_free(params *p);

/* Value of id, and its length in *len (values may hold NUL). NULL when absent. */
const char *params_get(const params *p, param_id id, size_t *len);

/* How many LINE values the request holds (LINE may repeat; params_get gives the first),
 * and the i-th of them (i < that count) with its length in *len. */
size_t params_line_count(const params *p);
const char *params_line_at(const params *p, size_t i, size_t *len);

/* Percent-decodes s[0..len) ('+' is a space) appending to out. Returns PARAMS_OK, or
 * PARAMS_BAD_ESCAPE on a '%' not followed by two hex digits (out then holds a prefix). */
params_rc params_decode(const char *s, size_t len, buf *out);

/* Adds the pairs of an application/x-www-form-urlencoded text (a query string or a POST
 * body). A name seen before keeps its first value; unknown names are skipped. */
params_rc params_parse_urlencoded(params *p, const char *s, size_t len);

/* Adds the fields of a multipart/form-data body whose Content-Type header is ctype. */
params_rc params_parse_multipart(params *p, const char *ctype, const char *body, size_t len);

/* Adds the fields of a POST body according to its Content-Type (urlencoded, multipart;
 * a text/csv body is the FILE parameter, a text/plain body the LINES parameter; anything
 * else is ignored, as the reference does). */
params_rc params_parse_body(params *p, const char *ctype, const char *body, size_t len);

#endif
