/* SPDX-License-Identifier: Apache-2.0 */
/* json.h - the one JSON writer: objects, arrays, numbers and correctly escaped strings
 * (control bytes, U+2028/U+2029, invalid UTF-8) appended to a buf. */
#ifndef STSD_JSON_H
#define STSD_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define JSON_MAX_DEPTH 32

/* A document being written into out; commas between members are the writer's job. */
typedef struct json {
    buf *out;
    int depth;
    unsigned char first[JSON_MAX_DEPTH];  /* nothing written yet at this depth */
} json;

/* Starts writing into out (appended to, not cleared). */
void json_init(json *j, buf *out);

/* Containers. Nesting deeper than JSON_MAX_DEPTH marks out as failed (out->oom). */
void json_obj_begin(json *j);
void json_obj_end(json *j);
void json_arr_begin(json *j);
void json_arr_end(json *j);

/* A member name inside an object; the next value written is its value. */
void json_key(json *j, const char *key);

/* Values. json_str writes s[0..len) as a JSON string: invalid UTF-8 bytes become
 * U+FFFD (use json_line for data that must come back exactly). */
void json_str(json *j, const char *s, size_t len);
void json_cstr(json *j, const char *s);
void json_int(json *j, long long v);
void json_uint(json *j, unsigned long long v);
/* A finite double (NaN and infinities are written as null). */
void json_double(json *j, double v);
/* A finite double with decimals digits after the point, whatever its size (null when
 * not finite): seconds since the epoch to the millisecond, which %.6g would round to
 * hours. */
void json_fixed(json *j, double v, int decimals);
void json_bool(json *j, int v);
void json_null(json *j);

/* Member key (e.g. "line") with s[0..len) exactly: as a string when it is valid UTF-8,
 * else as key_base64 (e.g. "line_base64") holding its bytes in base64. */
void json_line(json *j, const char *key, const char *s, size_t len);
/* An array element with s[0..len) exactly: a string, or {"base64":"..."}. */
void json_line_elem(json *j, const char *s, size_t len);

/* Appends s[0..len) in base64 (RFC 4648, with padding). Returns 0 or -1 on ENOMEM. */
int json_base64(buf *out, const char *s, size_t len);

#endif
