/* SPDX-License-Identifier: Apache-2.0 */
/* tls.h - HTTPS: the certificate and key stsd serves, swapped on SIGHUP for new
 * handshakes while open connections carry on. */
#ifndef STSD_TLS_H
#define STSD_TLS_H

#include "base/buf.h"
#include "config/config.h"

typedef struct tls_ctx tls_ctx;

/* The priority string used when stsd.tls.priorities is empty: TLS 1.2 and 1.3 only. */
#define TLS_DEFAULT_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* 1 if conf asks for TLS (stsd.tls.cert or stsd.tls.key set). */
int tls_wanted(const config *conf);

/* Checks that libmicrohttpd can do TLS, the priority string, and loads the certificate
 * chain and key named by conf (warning if the key file is readable by others). Only one
 * tls_ctx may exist at a time (the handshake callback has no user pointer). Returns the
 * context, or NULL with a message in err. */
tls_ctx *tls_create(const config *conf, buf *err);

/* Frees ctx and every pair it has served. Call after the HTTP server has stopped. */
void tls_free(tls_ctx *ctx);

/* The priority string libmicrohttpd should use. */
const char *tls_priorities(const tls_ctx *ctx);

/* A function pointer of no particular type: gnutls.h cannot be included next to our
 * params.h (both define a "params" tag). */
typedef void (*tls_fn)(void);

/* The certificate callback to give libmicrohttpd (MHD_OPTION_HTTPS_CERT_CALLBACK): a
 * gnutls_certificate_retrieve_function2, cast to tls_fn, that hands out the current pair. */
tls_fn tls_cert_callback(void);

/* Loads the files again; if the new pair is good, later handshakes use it. Returns 0, or
 * -1 with the reason in err (the current pair stays). Not reentrant: one caller (main). */
int tls_reload(tls_ctx *ctx, buf *err);

#endif
