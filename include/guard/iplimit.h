/* SPDX-License-Identifier: Apache-2.0 */
/* iplimit.h - stsd.maxConnectionsPerIp: open connections counted per client address,
 * across every HTTP thread. */
#ifndef STSD_IPLIMIT_H
#define STSD_IPLIMIT_H

#include <sys/socket.h>

typedef struct iplimit iplimit;

/* A counter that admits at most max connections per address (max >= 1); NULL if out of
 * memory. */
iplimit *iplimit_new(unsigned max);
void iplimit_free(iplimit *l);

/* 1 if addr has fewer than max connections open, else 0. Connections from one address
 * accepted at the same instant on several threads may each be admitted: the count can
 * pass max by at most the number of HTTP threads less one, until they close. */
int iplimit_admits(iplimit *l, const struct sockaddr *addr, socklen_t len);

/* Counts one connection of addr open (0), or -1 if out of memory (not counted). */
int iplimit_open(iplimit *l, const struct sockaddr *addr, socklen_t len);

/* Counts one connection of addr closed; only after an iplimit_open that returned 0. */
void iplimit_close(iplimit *l, const struct sockaddr *addr, socklen_t len);

/* Open connections counted for addr. */
unsigned iplimit_count(iplimit *l, const struct sockaddr *addr, socklen_t len);

#endif
