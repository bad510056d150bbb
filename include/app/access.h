/* SPDX-License-Identifier: Apache-2.0 */
/* access.h - start-up of the access rules (tokens, allowlist, TLS) from the settings,
 * their log lines, and the SIGHUP reload. */
#ifndef STSD_ACCESS_H
#define STSD_ACCESS_H

#include "base/buf.h"
#include "config/config.h"
#include "http/http.h"

typedef struct access_rules {
    http_access http;             /* what http_start gets; members owned here */
    allow_list *allow;
} access_rules;

#define ACCESS_RULES_INIT {{NULL, NULL, NULL}, NULL}

/* Builds every rule conf asks for (none: all NULL, stsd serves as before). Returns 0, or
 * -1 with a message in err naming the key (never a token); a is then empty. */
int access_setup(const config *conf, access_rules *a, buf *err);

/* Logs, once listening, what protects the port, and the one warning when it listens
 * beyond loopback with no token. Never logs a token. */
void access_log_start(const config *conf, const access_rules *a);

/* SIGHUP: reloads the TLS certificate and key (a bad pair is refused, the old stays),
 * logging the outcome. ctx is the access_rules. */
void access_reload(void *ctx);

/* Frees the rules. Call after http_stop. */
void access_free(access_rules *a);

#endif
