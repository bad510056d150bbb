/* SPDX-License-Identifier: Apache-2.0 */
/* dataset_core.h - what dataset.c offers dataset_save.c and dataset_text.c: the errno
 * it reports, and the checks of bytes and names. */
#ifndef STSD_DATASET_CORE_H
#define STSD_DATASET_CORE_H

#include "dataset_int.h"

/* Sets the errno dataset_errno reports to this thread. */
void dataset_set_errno(int err);
/* dataset_parse_lines, giving up once d's stop flag is set: DATASET_OK, DATASET_NOMEM or
 * DATASET_STOPPING (l then holds some of the lines). */
dataset_rc dataset_parse_until_stop(const dataset *d, const char *text, size_t len, list *l);
/* 1 if p[0..n) has no byte >= 0x80. */
int dataset_ascii_only(const char *p, size_t n);
/* The length of the UTF-8 byte order mark text[0..len) starts with: 3, or 0 if none.
 * INITFILE and LOAD drop it, so that it does not stick to the first line. */
size_t dataset_bom_len(const char *text, size_t len);
/* 1 if name must not reach the filesystem (illegal characters; length is not checked,
 * since a timestamped SAVE name may pass 128 bytes). */
int dataset_name_unsafe(const char *name);

#endif
