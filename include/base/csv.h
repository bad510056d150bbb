/* SPDX-License-Identifier: Apache-2.0 */
/* csv.h - the fields of one line as RFC 4180 reads them: a field in double quotes may
 * hold the separator and doubled quotes; fields are found, compared, hashed and copied
 * where they lie, without allocating. */
#ifndef STSD_CSV_H
#define STSD_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* A field as it lies in its line: raw[0..len) is the text between the quotes of a quoted
 * field (each quote of the value still doubled), or the whole field when not quoted. */
typedef struct csv_field {
    const char *raw;
    size_t len;
    int quoted;
} csv_field;

/* Walks the fields of one line: start it with csv_start, then call csv_next. */
typedef struct csv_cur {
    const char *p, *end;
    char sep;
    int done;          /* the last field has been handed out */
} csv_cur;

/* Whether sep can separate fields: any byte but the quote, CR, LF and NUL. */
int csv_sep_ok(char sep);

void csv_start(csv_cur *c, const char *s, size_t len, char sep);
/* The next field into *f: 1, or 0 after the last one (an empty line has one empty
 * field), or -1 when the quoting is broken (a quote never closed, or a closing quote
 * followed by something other than the separator). A quote inside a field that does not
 * start with one is taken as a plain byte. */
int csv_next(csv_cur *c, csv_field *f);

/* The number of fields of s[0..len), or -1 when its quoting is broken. */
long csv_count(const char *s, size_t len, char sep);
/* Field k (0 is the first) of s[0..len) into *f. Returns 0, or -1 when the line has
 * fewer fields or its quoting breaks before field k ends. */
int csv_get(const char *s, size_t len, char sep, size_t k, csv_field *f);

/* Whether f's value (quotes undoubled) is v[0..vlen). */
int csv_field_eq(const csv_field *f, const char *v, size_t vlen);
/* FNV-1a (base/hash.h) of f's value, the same for equal values however quoted. */
uint64_t csv_field_hash(const csv_field *f);
/* Appends f's value to out. Returns 0, or -1 on ENOMEM. */
int csv_field_append(buf *out, const csv_field *f);

/* Appends v[0..vlen) as a field of a line separated by sep: in quotes, its quotes
 * doubled, when it holds sep, a quote, CR or LF, else as it is. Returns 0, or -1. */
int csv_put(buf *out, const char *v, size_t vlen, char sep);

#endif
