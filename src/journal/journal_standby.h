/* SPDX-License-Identifier: Apache-2.0 */
/* journal_standby.h - a follower's hot standby (journal_standby.c): the cluster's
 * committed records applied as they come, so that a promotion takes the state from
 * memory. Private to journal/ (journal_open.c, journal_mirror.c). */
#ifndef STSD_JOURNAL_STANDBY_H
#define STSD_JOURNAL_STANDBY_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "list/list.h"
#include "meet/keys.h"
#include "recover.h"

typedef struct journal_standby journal_standby;

/* A standby of directory dirfd (path dir, for messages), which is empty (a replica's
 * start emptied it), at lsn pos, with its `stsd-standby` thread started. Returns it, or
 * NULL (logged: promotions then read the directory). Free with journal_standby_free. */
journal_standby *journal_standby_new(int dirfd, const char *dir, uint64_t pos);

/* A committed batch of another node's records (framed, data[0..len)), written into log
 * generation gen and ending at lsn end: copied and queued for the standby's thread, which
 * applies batches in the order given (len 0: none, the lsn moves to end). Called by one
 * thread (raft's). On ENOMEM the standby stops following (logged). */
void journal_standby_push(journal_standby *sb, const void *data, size_t len, uint64_t end,
                          uint32_t gen);

/* Waits until every batch queued is applied: before files the batches may need are
 * removed (old logs' snapshot files, once a compaction is done). */
void journal_standby_wait(journal_standby *sb);

/* The directory was replaced (raft's snapshot restored) and holds the state at lsn pos:
 * drops what is queued and the state, and replays the directory into memory, in the
 * caller's thread (O(data), as a start's recovery). Returns 0, or -1 (logged: the standby
 * no longer follows; promotions read the directory). */
int journal_standby_build(journal_standby *sb, uint64_t pos);

/* Promotion: waits until every batch queued is applied; if the state is at lsn pos (what
 * the journal counted), moves it into rs (lists sorted by name, leases, keys, runs, and
 * last_gen / last_snap_n / max_gen / snap_bytes for the journal's bookkeeping) as
 * recover_run would, in time that grows with the lists, leases and keys. The standby then
 * follows no more. Returns 0, or -1 with the reason in err (rs is then empty). Release rs
 * with recover_free. */
int journal_standby_take(journal_standby *sb, uint64_t pos, recover_state *rs, buf *err);

/* ---- a follower's reads: the state between two batches (READINDEX, journal.h) ---------- */

/* Waits until the state is at lsn or later, or until deadline_ms (clock_now_ms()).
 * Returns 0, or -1 on the deadline or a stop. */
int journal_standby_wait_applied(journal_standby *sb, uint64_t lsn, int64_t deadline_ms);
/* Holds the state still for reading (against the busy thread's writes); several readers
 * at once. Returns 0, or -1 (nothing held) when the standby does not follow the cluster
 * or was taken by a promotion. The functions below only between begin and end. */
int journal_standby_view_begin(journal_standby *sb);
void journal_standby_view_end(journal_standby *sb);
/* List name[0..len), or NULL when there is none. Read only: several readers share it. */
list *journal_standby_list(journal_standby *sb, const char *name, size_t len);
/* Calls fn for every list, in the order of their names (strcmp); returns their number,
 * or -1 on ENOMEM (no call). */
long journal_standby_lists(journal_standby *sb,
                           void (*fn)(const char *name, const list *l, void *ctx), void *ctx);
/* Key name[0..len): 1 with its value appended to out and its version, 0 if it does not
 * exist. */
int journal_standby_key(journal_standby *sb, const char *name, size_t len, buf *out,
                        uint64_t *version);

/* KEYS: fn for every key whose name starts with prefix (NULL: every key), sorted by name
 * as keys_list sorts them, with no watchers or waiters. Returns their number, or -1 on
 * ENOMEM (no call). */
long journal_standby_keys(journal_standby *sb, const char *prefix,
                          void (*fn)(const key_info *k, void *ctx), void *ctx);

/* Stops the thread and frees sb and its state (NULL is fine). */
void journal_standby_free(journal_standby *sb);

#endif
