/* SPDX-License-Identifier: Apache-2.0 */
/* journal_compact.h - new logs (journal_compact.c), for open. Private to the journal. */
#ifndef STSD_JOURNAL_COMPACT_H
#define STSD_JOURNAL_COMPACT_H

#include <stdint.h>

#include "journal_int.h"

/* Creates log gen durably (header; with new_history a COMPACT_DONE record saying no
 * older log is needed) and sets *size. Returns its descriptor, or -1 (logged). Needs no
 * lock: only open and compaction create logs. */
int journal_create_log(journal *j, uint32_t gen, int new_history, uint64_t *size);

#endif
