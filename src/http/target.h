/* SPDX-License-Identifier: Apache-2.0 */
/* target.h - a request target in absolute form ("http://host:port/sts/X?...", what a
 * client sends through a forward proxy) reduced to its origin form. Pure functions, no
 * libmicrohttpd. Private to http/. */
#ifndef STSD_TARGET_H
#define STSD_TARGET_H

#include <stddef.h>

/* Where the origin form of request target t[0..len) starts, in *off: 0 when t is not in
 * absolute form (it starts with '/', or with no scheme: left to the routes as it is),
 * else the offset just past "http://authority" or "https://authority" (scheme case-
 * insensitive; the authority itself is not looked at for routing). *empty_path is set
 * when that leaves no path ("http://h:1" or "http://h:1?q"), which RFC 9110 says means
 * "/". Returns 0, or -1 for a malformed absolute form: a scheme other than http or https,
 * no "//" after it, an empty authority, userinfo ('@', which RFC 9110 says to treat as an
 * error), or a byte an authority cannot hold. */
int target_origin(const char *t, size_t len, size_t *off, int *empty_path);

#endif
