/* SPDX-License-Identifier: Apache-2.0 */
/* journal_mirror.h - what journal_mirror.c offers the journal's other files. */
#ifndef STSD_JOURNAL_MIRROR_H
#define STSD_JOURNAL_MIRROR_H

#include <stdint.h>

#include "journal_int.h"

/* INITFILE on a replica: snapshot file id (written, whole) goes to the cluster in chunks
 * of 1 MiB, each committed before the next, before the record that names it. Returns 0,
 * or -1 (logged; the file's record must not be made). */
int journal_ship_snapshot_file(journal *j, uint64_t id);

#endif
