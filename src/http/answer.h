/* SPDX-License-Identifier: Apache-2.0 */
/* answer.h - an answer's headers made once, in the order they go out, then queued on a
 * connection or written into a batch's answer (http_batch.c). Private to http/. */
#ifndef STSD_ANSWER_H
#define STSD_ANSWER_H

#include <microhttpd.h>
#include <stddef.h>

#include "base/buf.h"

/* Appends header name: value[0..vlen) to h, as "Name\0value\0" (cmd_header's form). */
void answer_header(buf *h, const char *name, const char *value, size_t vlen);
void answer_header_str(buf *h, const char *name, const char *value);

/* The header at *off of h[0..len) ("Name\0value\0" each): 1 with *name and *value set
 * and *off past it, 0 at the end. */
int answer_next_header(const char *h, size_t len, size_t *off, const char **name,
                       const char **value);

/* X-STS-Leader: leader (a cluster node's answers); nothing when leader < 0. */
void answer_leader(buf *h, int leader);

/* The headers of every page of ours: Content-Type ctype, then the three that forbid
 * caching; then extra's ("Name\0value\0" each; NULL: none), then X-STS-Leader. */
/* This node's clock (clock_now_ms, in decimal) on its answers to a follower, which takes
 * its deadlines from it (http_forward.h). */
#define ANSWER_CLOCK_HEADER "X-STS-Clock"

/* Adds ANSWER_CLOCK_HEADER with this node's clock now to h. */
void answer_clock(buf *h);

void answer_page_headers(buf *h, const char *ctype, const buf *extra, int leader);

/* Queues status with headers (as above) and body[0..len) on c. The body is not copied:
 * it must stay as it is until the answer is sent. MHD_NO if out of memory. */
enum MHD_Result answer_queue(struct MHD_Connection *c, unsigned status, const buf *headers,
                             const char *body, size_t len);

/* Queues a plain-text page of ours with status: text, a static string. */
enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, const char *text);
/* answer_text's plain text with this node's clock (answer_clock): what a follower is
 * answered by a node that ran none of its requests. */
enum MHD_Result answer_clocked(struct MHD_Connection *c, unsigned status, const char *text);

#endif
