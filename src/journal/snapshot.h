/* SPDX-License-Identifier: Apache-2.0 */
/* snapshot.h - snapshot files: one list's lines, written once (temp file, fsync, rename),
 * read back at recovery; and the same lines inline in a SNAPSHOT record for small lists.
 *
 * File: a header (magic "STSDSNAP", version, id), then framed records (see wal.h): LINES
 * records of about 1 MiB each, and one END_LINES record with the line count and bytes. */
#ifndef STSD_SNAPSHOT_H
#define STSD_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "list/list.h"
#include "wal.h"

/* Writes l to snapshot file id in the directory dirfd: a temp file filled by big
 * buffered writes, fsync, rename; with sync_dir the directory is fsynced too. Sets *bytes
 * to the file's size. Returns 0, or -1 with a message in err and no file left behind. */
int snap_write(int dirfd, uint64_t id, const list *l, int sync_dir, uint64_t *bytes,
               buf *err);

/* Reads snapshot file id of directory dirfd into a new list, *out (the caller frees it).
 * Returns 0, or -1 with a message in err naming the file, the offset and the damage. */
int snap_read(int dirfd, uint64_t id, list **out, buf *err);

/* Parses a snapshot file image p[0..len) that should carry id. Returns 0 with *out set,
 * or -1 with *off and *why (static text) saying where and what is wrong. */
int snap_parse(const uint8_t *p, size_t len, uint64_t id, list **out, size_t *off,
               const char **why);

/* Lists at most this big go inline in their SNAPSHOT record rather than in a file. */
#define SNAP_INLINE_MAX (64u << 10)

/* Appends the body of a SNAPSHOT record for list name holding l's lines inline (id 0).
 * Returns 0 or -1 on ENOMEM. */
int snap_enc_inline(buf *out, const char *name, const list *l);

/* Appends the inline lines of decoded SNAPSHOT record r (id 0) to l. Returns 0, or -1
 * if they are malformed or on ENOMEM (*why says which). */
int snap_inline_lines(const wal_rec *r, list *l, const char **why);

#endif
