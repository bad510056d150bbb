/* SPDX-License-Identifier: Apache-2.0 */
/* journal_writer.h - group commit (journal_writer.c), for the journal's other files: the
 * record being built, the writes and fdatasyncs of the log, durability, the writer
 * thread, superseded snapshot files. Every *_locked call wants j->mu held. Private to the
 * journal. */
#ifndef STSD_JOURNAL_WRITER_H
#define STSD_JOURNAL_WRITER_H

#include "journal_int.h"

/* Whether the log has outgrown its threshold, and grown since the last compaction by
 * more than that compaction wrote: time for the next one. */
int journal_outgrown_locked(const journal *j);

/* Starts a record at the end of j->pend: room for the frame, then the caller appends a
 * body to j->pend and calls journal_append_locked. */
void journal_rec_start(journal *j);
/* Frames the record started last and makes it part of the log (written by the next
 * flush). internal: compaction's own records, taken even while changes are refused.
 * Returns 0 with *lsn set, or -1 (the record is dropped: refused, no room on disk, or
 * malformed; the caller must not apply its change). */
int journal_append_locked(journal *j, int internal, uint64_t *lsn);
/* Writes every record in pend with one write and, with sync, one fdatasync (releasing
 * the mutex meanwhile unless keep_lock). Needs j->io clear. Returns 0, or -1 when the
 * log failed (its generation is then dead, its pending changes held, changes refused). */
int journal_flush_locked(journal *j, int sync, int keep_lock);
/* Writes what waits, then fdatasyncs the log without holding the mutex nor the io role,
 * so that changes go on being written meanwhile (everysec's timer, the reaper). Returns 0,
 * or -1 when the log failed. */
int journal_sync_bg_locked(journal *j);
/* Blocks until the record at lsn in generation gen is on disk (fdatasync). Returns 0, or
 * -1 if that generation died first. */
int journal_sync_to_locked(journal *j, uint64_t lsn, uint32_t gen);
/* Calls back (without the mutex) every waiter whose record is durable now. */
void journal_fire_locked(journal *j);
/* Every wait not durable now fails (-1), and so will every later one, until `cancelled`
 * is cleared (journal_demote alone does). */
void journal_cancel_waits_locked(journal *j);
/* Whether lsn is one of the records a leadership that ended left uncommitted. Takes no
 * lock. */
int journal_voided(const journal *j, uint64_t lsn);
/* Turns on refusal of changes, logging what failed. */
void journal_set_broken_locked(journal *j, const char *what, int err);
/* Removes the superseded snapshot files whose successor is on disk (the mutex is
 * released while unlinking). */
void journal_reap_locked(journal *j);

/* A replica's snapshot file id (written, whole: INITFILE's, a compaction's) goes to the
 * cluster in chunks of 1 MiB before the record that names it. Returns 0, or -1 (logged;
 * the file's record must not be made). */
int journal_ship_snapshot_file(journal *j, uint64_t id);

/* Starts the writer thread (fsync=always). Returns 0 or -1. */
int journal_writer_start(journal *j);
/* Writes what is left, answers it, then stops the writer thread. */
void journal_writer_stop(journal *j);

#endif
