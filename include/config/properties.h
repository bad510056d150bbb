/* SPDX-License-Identifier: Apache-2.0 */
/* properties.h - a reader of the java.util.Properties text format (key=value, key: value,
 * key value; # and ! comments; backslash continuations and escapes; \uXXXX). */
#ifndef STSD_PROPERTIES_H
#define STSD_PROPERTIES_H

#include <stddef.h>

#include "base/buf.h"

/* Called for each pair with the line it starts on; a nonzero return stops the parse. */
typedef int (*props_fn)(const char *key, const char *value, size_t line, void *ctx);

/* Parses text (a leading UTF-8 BOM is skipped), calling fn for every pair in order.
 * Returns 0, fn's nonzero value, or -1 with a message in err and the line in *bad_line
 * (a NUL byte, a bad escape, out of memory). */
int properties_parse(const char *text, size_t len, props_fn fn, void *ctx, buf *err,
                     size_t *bad_line);

#endif
