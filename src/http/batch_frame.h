/* SPDX-License-Identifier: Apache-2.0 */
/* batch_frame.h - the bytes of a batch: a follower's requests for the leader in one POST
 * body (http_forward.c), and the leader's answers to them in one answer (http_batch.c).
 * Pure functions, no libmicrohttpd. Private to http/.
 *
 * A batch is "STSB1" NUL count NUL, then count items in order:
 *   a request:  method NUL target NUL (name NUL value NUL)* NUL length NUL body
 *   an answer:  status NUL (name NUL value NUL)* NUL length NUL body
 * count, status and length in decimal; body is length bytes, NULs and all. Names,
 * values, methods and targets come from libmicrohttpd's C strings: they hold no NUL. */
#ifndef STSD_BATCH_FRAME_H
#define STSD_BATCH_FRAME_H

#include <stddef.h>

#include "base/buf.h"

/* Where the leader takes batches, and their Content-Type. */
#define BATCH_PATH "/_stsd/batch"
/* Where a node answers its clock (ANSWER_CLOCK_HEADER) to a follower that has none yet
 * (http_forward.c): a GET, answered 200 with no other effect. */
#define CLOCK_PATH "/_stsd/clock"
#define BATCH_CONTENT_TYPE "application/x-stsd-batch"
/* At most this many requests in one batch. */
#define BATCH_MAX 64
/* The body of the 503 that a node which is stopping gives any request it did not run
 * (http_send_stopping), a batch included. */
#define BATCH_STOPPING_TEXT "503 stopping\n"

/* The body of the 503 to a batch that came after its deadline (http_forward.h): none of
 * its requests ran. */
#define BATCH_LATE_TEXT "503 too late\n"

typedef struct frame_item {
    const char *method;       /* a request's; NULL in an answer */
    const char *target;       /* a request's, NUL-terminated; NULL in an answer */
    size_t target_len;
    unsigned status;          /* an answer's */
    const char *headers;      /* "Name\0value\0" each */
    size_t headers_len;
    const char *body;
    size_t body_len;
} frame_item;

void frame_begin(buf *b, size_t count);
void frame_put_request(buf *b, const char *method, const char *target, size_t target_len,
                       const buf *headers, const char *body, size_t body_len);
void frame_put_answer(buf *b, unsigned status, const buf *headers, const char *body,
                      size_t body_len);

/* The number of items of the batch p[0..len) into *count (1 to BATCH_MAX), and where
 * the first starts into *off. Returns 0, or -1 if the head is malformed. */
int frame_head(const char *p, size_t len, size_t *count, size_t *off);

/* The item at *off (a request if request, else an answer) into *it, pointing into p;
 * *off moves past it. Returns 0, or -1 if it is malformed or cut short. */
int frame_next(const char *p, size_t len, size_t *off, int request, frame_item *it);

/* Whether the leader's answer to a batch, other than a batch of answers, says that
 * none of its requests ran: a refusal made before any ran (400, 403, 405, 413, 415; 404
 * from a leader of a version without batches, during a rolling upgrade; the 503 of a
 * leader that is stopping, which handed its leadership over first; the 503 of a batch
 * that came too late). Any other answer
 * came after they may have run: their outcome is unknown. */
int frame_refused(long status, const char *body, size_t len);

#endif
