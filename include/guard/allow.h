/* SPDX-License-Identifier: Apache-2.0 */
/* allow.h - stsd.allow: the client addresses (CIDRs, IPv4 and IPv6) that may connect. */
#ifndef STSD_ALLOW_H
#define STSD_ALLOW_H

#include <sys/socket.h>

#include "base/buf.h"

typedef struct allow_list allow_list;

/* Parses a comma-separated list of CIDRs ("10.0.0.0/8, ::1, fd00::/8"; an address alone
 * is a /32 or /128). Returns the list (free with allow_free), or NULL with a message
 * naming stsd.allow in err (empty text is an error too: callers skip it). */
allow_list *allow_parse(const char *text, buf *err);
void allow_free(allow_list *a);

/* 1 if addr (AF_INET or AF_INET6; IPv4-mapped IPv6 counts as IPv4) is inside one of a's
 * ranges, else 0. */
int allow_match(const allow_list *a, const struct sockaddr *addr, socklen_t len);

/* 1 if addr is a loopback address (127.0.0.0/8, ::1), else 0. */
int allow_is_loopback_text(const char *addr);

#endif
