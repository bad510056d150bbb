/* SPDX-License-Identifier: Apache-2.0 */
/* accept.h - weighing an Accept header (RFC 9110 section 12.5.1): which media type a
 * client prefers. Pure functions, no libmicrohttpd. Private to http/. */
#ifndef STSD_ACCEPT_H
#define STSD_ACCEPT_H

/* The weight (0 to 1000, thousandths of q) that Accept header value accept gives the
 * media type type/subtype (no parameters): the q of the most specific range that matches
 * it (type/subtype, then type with a star subtype, then the star-star range), the highest
 * if several ranges are as specific; 0 when none matches or accept is NULL. Names compare
 * case-insensitively. A range that is malformed (no '/', a star type with a concrete
 * subtype, a parameter without '=', an unclosed quote) or whose q is not an RFC qvalue
 * ("0" to "1", at most three decimals) is ignored, as if it had not been sent. Media-type
 * parameters other than q are not compared. */
int accept_weight(const char *accept, const char *type, const char *subtype);

/* 1 when accept gives application/json a strictly greater weight than text/html, else 0
 * (no header, the star-star range, equal weights: HTML, the reference's answer). */
int accept_prefers_json(const char *accept);

#endif
