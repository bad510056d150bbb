/* SPDX-License-Identifier: Apache-2.0 */
/* journal_map.h - the log mapped into memory (journal_map.c), for the writer, open and
 * compaction. Every call wants j->mu held. Private to the journal. */
#ifndef STSD_JOURNAL_MAP_H
#define STSD_JOURNAL_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "journal_int.h"

/* After a log is opened or created: extends it a chunk ahead and maps it, or leaves it
 * to be written (the file system cannot allocate ahead, or no mapping). */
void journal_map_open_locked(journal *j);
/* Makes the mapping cover end, growing it. Returns 0, or -1 if it cannot grow: the
 * mapping is then dropped (the log is cut back to its records and written from then on). */
int journal_map_grow_locked(journal *j, uint64_t end);
/* Lets the pages of the mapped log before the chunk now written leave stsd's memory
 * (they stay in the page cache, dirty ones included), so that RSS does not grow with the
 * log. Called once per chunk reserved. */
void journal_map_release_locked(journal *j, uint64_t chunk);
/* Copies the framed record rec[0..len) to the end of the mapped log, its length last. */
void journal_map_copy_locked(journal *j, const uint8_t *rec, size_t len);
/* Before the log is closed (mapped or written): unmaps it and cuts the space reserved
 * after its records (not in a failed log: what its records are is unknown there). */
void journal_map_close_locked(journal *j);

#endif
