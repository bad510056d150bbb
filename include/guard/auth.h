/* SPDX-License-Identifier: Apache-2.0 */
/* auth.h - who may do what: data and admin tokens, disabled commands, and the penalty
 * box for addresses that keep failing. Everything is off until a key turns it on. */
#ifndef STSD_AUTH_H
#define STSD_AUTH_H

#include <stddef.h>
#include <sys/socket.h>

#include "base/buf.h"
#include "config/config.h"

typedef struct auth auth;

typedef enum auth_verdict {
    AUTH_OK,
    AUTH_MISSING,        /* 401: no token where one is needed */
    AUTH_WRONG,          /* 401: a token that is none of ours */
    AUTH_NEED_ADMIN,     /* 403: the data token for an admin command */
    AUTH_DISABLED,       /* 403: stsd.disabledCommands */
    AUTH_TOO_MANY,       /* 429: this address failed too often lately */
} auth_verdict;

/* Failures from one address that start its penalty, the window they are counted in, and
 * how long the penalty lasts (429s). */
#define AUTH_MAX_FAILURES 20
#define AUTH_WINDOW_MS 10000
#define AUTH_PENALTY_MS 10000

/* Builds the rules from conf: stsd.token / stsd.adminToken, STSD_TOKEN / STSD_ADMIN_TOKEN
 * in the environment, stsd.tokenFile / stsd.adminTokenFile (all sources add up) and
 * stsd.disabledCommands, whose names (any case: stored in upper case) is_command must
 * know. Returns the rules (free with auth_free), or NULL with a message
 * in err that names the key but never shows a token. */
auth *auth_create(const config *conf, int (*is_command)(const char *name, size_t len),
                  buf *err);
void auth_free(auth *a);

/* 1 if requests must be checked at all (a token or a disabled command is set). */
int auth_active(const auth *a);
/* 1 if a data token is set (every request needs a token). */
int auth_has_data_token(const auth *a);
/* Number of data and admin tokens, for the start-up log line. */
void auth_counts(const auth *a, size_t *data, size_t *admin);

/* Decides a request for command (its name as the table has it, NULL when the request
 * names no command), which needs the admin token if admin_only and one is set, from the
 * client address (addr, addr_len bytes: NULL, 0 if unknown; IPv4 and its IPv4-mapped
 * IPv6 form count as one address), with the Authorization header (NULL if absent) and the
 * TOKEN parameter (NULL if absent). Counts a 401 as a failure of addr
 * (stsd_auth_failures_total) and may put addr in the penalty box. Thread-safe. */
auth_verdict auth_check(auth *a, const struct sockaddr *addr, socklen_t addr_len,
                        const char *command, int admin_only, const char *authorization,
                        const char *token,
                        size_t token_len);

/* A token's name, as the audit log shows who did what: its role and the first 8 hex
 * digits of its SHA-256, "data:1a2b3c4d" or "admin:5e6f7a8b" (tokens have no names of
 * their own; the same token keeps its name across restarts and hosts, and
 * `printf %s "$TOKEN" | sha256sum | cut -c1-8` tells which it is). With its NUL. */
#define AUTH_NAME_SIZE 16

/* auth_check, and when it says AUTH_OK and a token was sent and accepted, that token's
 * name into name (else name is ""). name may be NULL. */
auth_verdict auth_check_named(auth *a, const struct sockaddr *addr, socklen_t addr_len,
                              const char *command, int admin_only, const char *authorization,
                              const char *token, size_t token_len,
                              char name[AUTH_NAME_SIZE]);

/* The name of token[0..len) in role ("data", "admin"), into name. Returns 0, or -1 if
 * hashing failed. */
int auth_name_of(const char *role, const char *token, size_t len, char name[AUTH_NAME_SIZE]);

/* The HTTP status and the KO message (no "Error : ") for a verdict other than AUTH_OK. */
unsigned auth_status(auth_verdict v);
const char *auth_message(auth_verdict v);

/* stsd_auth_failures_total: 401s answered since start, over every address. For the
 * metrics page; readable from any thread. */
unsigned long long auth_failures_total(void);

/* 1 if the n bytes at given equal expected (of expected_len bytes), else 0, in a time
 * that depends only on expected_len (not on where they differ, nor on given's bytes). */
int auth_equal(const char *expected, size_t expected_len, const char *given, size_t n);

#endif
