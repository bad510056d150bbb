/* SPDX-License-Identifier: Apache-2.0 */
/* reply.h - turns command results into the exact bytes of an STS page. */
#ifndef STSD_REPLY_H
#define STSD_REPLY_H

#include "base/buf.h"
#include "cmd/command.h"

/* Sets the charset answers are sent in ("UTF-8" sends stored bytes as they are).
 * Returns 0, or -1 if iconv does not know it. Call once before serving. */
int reply_set_charset(const char *charset);

/* The Content-Type header value for every answer. */
const char *reply_content_type(void);

/* Writes the page for r into out (cleared first). Returns 0, or -1 on ENOMEM. */
int reply_render(const cmd_result *r, buf *out);

/* The Content-Type of JSON answers. */
#define REPLY_JSON_CONTENT_TYPE "application/json; charset=utf-8"

/* Writes r as a JSON answer into out (cleared first) and sets *status to its HTTP
 * status: 200, or a KO's (400 when it has none). Returns 0, or -1 on ENOMEM. */
int reply_render_json(const cmd_result *r, buf *out, unsigned *status);

#endif
