/* SPDX-License-Identifier: Apache-2.0 */
/* addr.h - a client's address as a key: the same 16 bytes whatever the listening
 * socket's family, for the rules and counts kept per client. */
#ifndef STSD_ADDR_H
#define STSD_ADDR_H

#include <sys/socket.h>

#define ADDR_KEY_SIZE 16

/* Fills key with addr's IPv6 bytes; an IPv4 address (AF_INET, or IPv4-mapped IPv6 as a
 * dual-stack socket shows it) becomes ::ffff:a.b.c.d. Returns 0, or -1 for another
 * family, a NULL addr or a len too short for its family. */
int addr_key(const struct sockaddr *addr, socklen_t len, unsigned char key[ADDR_KEY_SIZE]);

/* 1 if key holds an IPv4 address (its last 4 bytes), else 0. */
int addr_key_is_v4(const unsigned char key[ADDR_KEY_SIZE]);

#endif
