/* SPDX-License-Identifier: Apache-2.0 */
/* ui.h - the dashboard's routes: GET / redirects to /ui/, and /ui/ serves the files
 * embedded at build time, gzip'd when the client takes it, with ETags and caching. */
#ifndef STSD_UI_H
#define STSD_UI_H

#include <stddef.h>

#define UI_MAX_HEADERS 10

/* What to answer; every pointer is static (nothing to free). */
typedef struct ui_reply {
    unsigned status;                      /* 200, 302, 304, 404 or 405 */
    const void *body;
    size_t len;
    const char *headers[UI_MAX_HEADERS][2];  /* name, value */
    int nheaders;
} ui_reply;

/* 1 if path (decoded, no query) is the dashboard's ("/", "/ui", "/ui/..."), else 0:
 * everything else (/sts/...) stays with the commands. */
int ui_owns(const char *path, size_t len);

/* Fills out with the answer to method on path (which ui_owns), given the request's
 * Accept-Encoding and If-None-Match headers (NULL when absent). Never fails. */
void ui_route(const char *method, const char *path, size_t len, const char *accept_encoding,
              const char *if_none_match, ui_reply *out);

/* 1 if an Accept-Encoding value accepts gzip (named, or "*", with a q above 0). */
int ui_accepts_gzip(const char *accept_encoding);

/* Bytes the first load of the dashboard transfers gzip'd (index.html and every asset
 * it needs); for tests and the size budget. */
size_t ui_first_load_bytes(void);

#endif
