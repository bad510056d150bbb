/* SPDX-License-Identifier: Apache-2.0 */
/* audit_record.h - one line of the audit log: a change as a JSON object (time, client,
 * token, command, list or key, line or its SHA-256, lease, owner), and its pieces. */
#ifndef STSD_AUDIT_RECORD_H
#define STSD_AUDIT_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/buf.h"

/* "2026-12-03T16:47:05.123Z" and its NUL. */
#define AUDIT_TIME_SIZE 25
/* An IPv6 address as text, and its NUL (INET6_ADDRSTRLEN). */
#define AUDIT_ADDR_SIZE 46

/* What one line says. Pointers with a length may hold any bytes; NULL leaves the member
 * out (token: written as null). */
typedef struct audit_record {
    int64_t wall_ms;                  /* when, ms since the epoch (UTC) */
    const struct sockaddr *addr;      /* the client, NULL if unknown (written as null) */
    socklen_t addr_len;
    const char *token;                /* the token's name (C string), NULL: none */
    const char *cmd;                  /* the command's name (C string) */
    const char *list;                 /* FILENAME, or NULL */
    size_t list_len;
    const char *key;                  /* NAME of a key, or NULL */
    size_t key_len;
    const char *prefix;               /* PREFIX of DROP or DEL: every list or key it names */
    size_t prefix_len;
    const char *line;                 /* the line handed out or given, or NULL */
    size_t line_len;
    const char *value;                /* a key's value, or NULL */
    size_t value_len;
    int keep;                         /* READ/READMULTI/FIND: 1 kept, 0 taken; -1: none */
    const char *lease;                /* the lease id (16 hex digits), or NULL */
    size_t lease_len;
    const char *owner;                /* OWNER=, or NULL */
    size_t owner_len;
} audit_record;

/* Appends r to out as one JSON object and a '\n'. With hash, the line and the value are
 * written as "line_sha256" / "value_sha256" (hex) instead of themselves. Returns 0, or
 * -1 when out ran out of memory or hashing failed (out may hold part of the line: the
 * caller drops it). */
int audit_format(buf *out, const audit_record *r, int hash);

/* wall_ms as ISO 8601 in UTC with milliseconds, into out. */
void audit_time_text(int64_t wall_ms, char out[AUDIT_TIME_SIZE]);

/* The address as text (an IPv4-mapped IPv6 address as plain IPv4), into out. Returns 0,
 * or -1 for an unknown family (out is then empty). */
int audit_addr_text(const struct sockaddr *a, socklen_t len, char out[AUDIT_ADDR_SIZE]);

#endif
