/* SPDX-License-Identifier: Apache-2.0 */
/* journal.h - the write-ahead log that makes lists survive a crash: every change is
 * recorded before it is answered; snapshots keep the log short; recovery at start.
 *
 * Files in the state directory: journal.<gen>.log (the change records of one
 * generation) and snap-<gen>-<n>.dat (a list's lines, written once, never changed).
 * A record carries a length and a checksum; each file starts with magic and a version.
 * Locking: the store calls journal_log_* while holding the list's lock (so the log has
 * each list's changes in the order they were applied); the journal never takes a list
 * lock while holding its own. */
#ifndef STSD_JOURNAL_H
#define STSD_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "config/config.h"
#include "base/hist.h"
#include "list/list.h"
#include "meet/keys.h"
#include "store/store.h"

typedef struct journal journal;

/* Opens the state directory dir (created if absent) with the given fsync policy. Unless
 * fresh, restores every list recorded there into st (which must be empty) and logs each
 * with its line count. A torn record at the tail of the last log is cut off with a
 * warning; any other damage fails with a message in err pointing to
 * `stsd --check-journal DIR`. fresh: set the old state aside (renamed, not deleted) and
 * start empty. Returns NULL with a message in err. The store must then be given the
 * journal with journal_attach, and journal_start called once serving. (Lists are
 * logged by name up to 100, then counted.) The directory is locked against a second
 * stsd; a log is kept open for appending (the newest one, or a new one). */
journal *journal_open(const char *dir, conf_fsync policy, store *st, int fresh, buf *err);

/* Makes j the recorder of st's changes (store_set_recorder): from then on every change
 * is recorded before it is applied, and the store hands its caller the record's lsn, to
 * be answered once journal_when_durable says so. j NULL: st records nothing any more. */
void journal_attach(journal *j, store *st);

/* Stops the background threads, flushes and fsyncs the log and frees j. If changes are
 * still refused after a write error, first tries once more to rewrite the log from the
 * store given to journal_start. */
void journal_close(journal *j);

/* Starts the background thread: fsync every second (everysec), retries after a write
 * error, and compacts the log (snapshots of every list, then a new log) when it has
 * grown past its threshold. st is the store to snapshot. Returns 0 or -1. */
int journal_start(journal *j, store *st);

/* Records of changes. Each returns 0 and sets *lsn (the record's place in the log, for
 * journal_when_durable or journal_wait), or -1 if the record cannot be taken: the change
 * must then not be applied (the caller answers KO). That happens while the journal
 * refuses changes after a write error (until it has rewritten a healthy log from memory;
 * the background thread retries each second) and while no disk space can be reserved for
 * the log (until there is). */
int journal_log_push(journal *j, const char *name, int at_tail, const char *line,
                     size_t len, uint64_t *lsn);
/* A lease of a line of name (its take logged just before; to owner[0..olen), NULL: to
 * nobody), its renewal to a new deadline, and its ACK (release 0) or RELEASE/expiry (1).
 * Return 0 with *lsn set, or -1 (changes refused). */
int journal_log_lease(journal *j, const char *name, uint64_t id, int64_t until,
                      const char *owner, size_t olen, const char *line, size_t len,
                      uint64_t *lsn);
int journal_log_renew(journal *j, const char *name, uint64_t id, int64_t until,
                      uint64_t *lsn);
int journal_log_settle(journal *j, const char *name, uint64_t id, int release,
                       const char *line, size_t len, uint64_t *lsn);
/* A change of a key (meet/keys.h): its state after the change. Returns as above. */
int journal_log_key(journal *j, const store_key_rec *k, uint64_t *lsn);
/* READ/READMULTI/FIND: n lines taken at positions pos[0..n) one after the other (each
 * relative to the list as left by the previous one); keep: moved to the tail rather
 * than removed. */
int journal_log_take(journal *j, const char *name, int keep, const size_t *pos, size_t n,
                     uint64_t *lsn);
int journal_log_reset(journal *j, const char *name, uint64_t *lsn);
/* ADDMULTI: the n lines v[0..n) pushed at once, in one record. */
int journal_log_push_many(journal *j, const char *name, int at_tail, const store_span *v,
                          size_t n, uint64_t *lsn);
/* DROP: list name is gone; its defining snapshot file, if any, is retired. */
int journal_log_drop(journal *j, const char *name, uint64_t *lsn);

/* A change of several records (a take and its line's lease): from hold(j, 1) to
 * hold(j, 0) no batch is written, so none can be committed or made durable without the
 * others. */
void journal_hold(journal *j, int on);

/* INITFILE: writes l to a new snapshot file durably (call without any lock: it is slow
 * for big lists) and sets *snap to its id. Returns 0 or -1 (nothing recorded). */
int journal_write_snapshot(journal *j, const list *l, uint64_t *snap);
/* Then, under the list's lock: records that list name is now snapshot snap. If it fails
 * the snapshot file is removed. */
int journal_log_replace(journal *j, const char *name, uint64_t snap, uint64_t *lsn);
/* Right after, for a list l with columns: records their names and separator (a COLUMNS
 * record). Returns 0 or -1 as journal_log_replace. */
int journal_log_columns(journal *j, const char *name, const list *l, uint64_t *lsn);

/* What journal_when_durable calls back: rc 0 once the change is as durable as the fsync
 * policy promises, -1 if it never will be known to be (the journal is stopping while the
 * log could not be written). Called from a journal thread, without any lock held. */
typedef void (*journal_done_fn)(void *ctx, int rc);

/* Group commit without a thread waiting: returns 0 if the record at lsn is already as
 * durable as the policy promises (fsync=always: covered by an fdatasync; everysec and no:
 * written to the kernel, which this call does if no other thread is doing it), and then
 * fn is not called; 1 if fn(ctx, rc) will be called exactly once, later, from another
 * thread; -1 if it will never be durable (stopping after a log failure). A change whose
 * write or fdatasync failed is held until a rewrite of the log from memory is on disk. */
int journal_when_durable(journal *j, uint64_t lsn, journal_done_fn fn, void *ctx);

/* Only asks: returns 0 if the record at lsn is durable now (everysec and no: once this
 * call has written it through, if needed), 1 if not yet, -1 if it never will be known to
 * be. Cheap: try it before preparing to wait. */
int journal_poll(journal *j, uint64_t lsn);

/* journal_poll without the lock, for a request that waits in place and asks again at
 * each turn of its thread: 0 if the change at lsn may be answered, -1 if it never will
 * be known to be durable, 1 if not yet. With fsync=always it never takes the lock (and
 * while a failed write holds earlier changes, it says 1 for later ones until the rewrite
 * is on disk); with everysec and no it is journal_poll past its lock-free check. */
int journal_answerable(journal *j, uint64_t lsn);

/* Called, without the journal's lock, each time changes become answerable or the
 * journal gives up (journal_cancel_waits): whoever waits on journal_answerable asks
 * again. One hook; fn NULL removes it. Set it before the first change, or while no
 * change can be made (the hook is read under the journal's lock). */
typedef void (*journal_hook_fn)(void *ctx);
void journal_set_answer_hook(journal *j, journal_hook_fn fn, void *ctx);

/* The same as journal_when_durable, blocking the calling thread until then. Call it after releasing the list's
 * lock, before answering. Returns 0, or -1 as fn's rc. */
int journal_wait(journal *j, uint64_t lsn);

/* Stopping: every wait still pending fails now (fn called with -1), and so does every
 * later one for a change not durable yet. Call before the answers' connections go. */
void journal_cancel_waits(journal *j);

/* Memory and log may disagree (a change was logged, then could not be applied): refuse
 * changes until a healthy log has been rewritten from memory. */
void journal_mark_broken(journal *j);

/* Whether changes are refused because the log cannot be written. */
int journal_broken(const journal *j);

/* What INFO and the metrics show of the journal. */
typedef struct journal_stats {
    conf_fsync policy;
    uint64_t bytes;              /* size of the current log */
    uint64_t errors;             /* write and fsync errors since start */
    uint64_t records;            /* change records appended to the log since start */
    uint64_t log_syncs;          /* fdatasyncs of the log since start (a batch each, with
                                  * fsync=always: records / log_syncs is its size) */
    int writable;                /* changes are accepted (not refused after an error) */
    double last_fsync_seconds;   /* how long the last fsync took; -1 if none yet */
    hist_sum fsync;              /* every fsync's time */
} journal_stats;

/* Fills *s. Takes the journal's lock for a moment. */
void journal_get_stats(journal *j, journal_stats *s);

/* Compaction starts once the log is bigger than bytes (default 64 MiB) and its growth
 * since the last compaction outweighs what that compaction wrote. */
void journal_set_compact_threshold(journal *j, uint64_t bytes);

/* Runs one compaction now in the caller's thread (what the background thread does):
 * a new log generation, a SNAPSHOT record per list of st, the snapshot files, then
 * COMPACT_DONE and fsync, then older logs and unreferenced snapshot files are removed.
 * Clears the refusal of changes if it predates the compaction. Returns 0, or -1 (the
 * reason logged; the journal stays valid and the attempt is ignored by recovery). */
int journal_compact(journal *j, store *st);

/* ---- Replicas (journal_mirror.c; the cluster room drives these) ------------------------ */

/* What goes to the cluster. A batch of framed records goes through batch, up to
 * inflight of them on their way at once (copied before batch returns): the cluster calls
 * journal_shipped(j, upto, rc) once it is committed and written here, or lost, batches in
 * the order proposed; batch returns 0, or -1 (nothing will be called). A compaction's two
 * steps go through piece, which blocks until the piece is committed and written here by
 * journal_mirror_*: JOURNAL_GEN (id: the log generation every later batch goes to) and
 * JOURNAL_TIDY (id: the generation whose COMPACT_DONE is committed; data: the snapshot ids
 * of older generations still needed, 8 bytes each, little-endian). Snapshot files
 * (INITFILE's, a compaction's) go whole through file, before the record that names them,
 * blocking until committed. piece and file return 0, or -1 if it never will be known to
 * be (no longer the leader): the changes waiting are then answered "outcome unknown".
 * JOURNAL_BATCH and JOURNAL_FILE name the others in the cluster's entries; 3 and 4 are
 * the cluster's own kinds. */
typedef enum journal_piece {
    JOURNAL_BATCH = 1, JOURNAL_FILE = 2, JOURNAL_GEN = 5, JOURNAL_TIDY = 6
} journal_piece;
typedef struct journal_ship_hooks {
    int (*piece)(void *ctx, journal_piece kind, uint64_t id, const void *data, size_t len);
    int (*batch)(void *ctx, const void *data, size_t len, uint64_t upto);
    int (*file)(void *ctx, uint64_t id, int fd, uint64_t size);
    int inflight;           /* batches on their way at once, at least 1 */
} journal_ship_hooks;

/* Makes j replicated through h (copied), or alone again with NULL (set before the first
 * change, with policy always). Only the leader compacts, once the directory's log
 * outgrows journal_set_compact_threshold: its snapshot of every list goes through the
 * cluster like any change, so every node's directory is compacted at the same place of
 * the log, and raft's snapshots (images of it) stay as small. */
void journal_set_ship(journal *j, const journal_ship_hooks *h, void *ctx);
/* From the cluster's thread: the batch that ends at lsn upto is committed and written
 * into the directory (rc 0), or its outcome will never be known here (rc -1: every wait
 * not answered yet fails, as a failed ship does). */
void journal_shipped(journal *j, uint64_t upto, int rc);
/* Whether j is replicated: its failures are "outcome unknown", not "not writable". */
int journal_replicated(const journal *j);
/* Whether j counts this node's own records (journal_reload ran, no journal_demote
 * since). */
int journal_leading(journal *j);
/* A replica that stopped leading, from the cluster's thread, before it applies any other
 * leader's entry: every record the cluster has not committed is dropped and its wait
 * fails ("outcome unknown"), the journal counts the directory's committed history as a
 * follower's, and the hot standby is rebuilt from it (O(data), as a snapshot's restore).
 * The store still holds the leadership's changes: the caller empties it (store_clear,
 * keys_clear) before the next promotion. Returns the lsn the journal is at, or 0 when j
 * did not lead. */
uint64_t journal_demote(journal *j);

/* A read on a replica's leader: *lsn is set to a record that will be shipped after now
 * (the records pending, or a NOOP appended), so that the read is answered once the
 * cluster has committed it: proof that this node still led after the read came in (a
 * deposed leader answers none). Returns 0, or -1 if changes are refused (not leading). */
int journal_fence(journal *j, uint64_t *lsn);

/* ---- a follower's reads --------------------------------------------------------------------
 * A replica that follows answers a read itself, from its hot standby, once it has
 * applied as far as the leader had when asked (a ReadIndex round, http/http_view.c):
 * journal_view_position after cluster_wait_applied, journal_view_wait, then the reads
 * between journal_view_begin and journal_view_end. */

/* The lsn of the committed history this node holds (a follower's: every batch applied by
 * raft so far). */
uint64_t journal_view_position(journal *j);
/* Waits until the hot standby is at lsn or later, or deadline_ms (clock_now_ms()).
 * Returns 0, or -1 (the deadline, no standby). */
int journal_view_wait(journal *j, uint64_t lsn, int64_t deadline_ms);
/* Holds the standby's state still for reads (several threads at once). Returns 0, or -1
 * (nothing held) when there is none to read: this node leads now, or its standby stopped
 * following. */
int journal_view_begin(journal *j);
void journal_view_end(journal *j);
/* As store_length, store_status, store_peek, store_columns, keys_get and keys_list (no
 * watchers or waiters: they are the leader's), from the standby. */
store_rc journal_view_length(journal *j, const char *name, size_t *len);
long journal_view_status(journal *j, void (*fn)(const char *name, size_t len, void *ctx),
                         void *ctx);
store_rc journal_view_peek(journal *j, const char *name, const store_peek_req *q, buf *out,
                           size_t *length, size_t *next);
store_rc journal_view_columns(journal *j, const char *name, list **cols);
store_rc journal_view_get(journal *j, const char *name, buf *out, uint64_t *version);
long journal_view_keys(journal *j, const char *prefix,
                       void (*fn)(const key_info *k, void *ctx), void *ctx);

/* A planned handover: waits up to ms until every record appended is committed (nothing
 * pending, nothing in flight). Returns 0, or -1 on timeout. */
int journal_quiesce(journal *j, int ms);

/* A committed piece written into j's directory. own: this node shipped it as leader
 * (its records are counted already). Returns 0, or -1 (logged: the directory no longer
 * follows the cluster; the node must restart). Called by the cluster's thread. */
int journal_mirror_batch(journal *j, int own, const void *data, size_t len);
int journal_mirror_file(journal *j, int own, uint64_t id, uint64_t off, const void *data,
                        size_t len);
/* JOURNAL_GEN: later batches go into a new log, generation gen. */
int journal_mirror_gen(journal *j, int own, uint32_t gen);
/* JOURNAL_TIDY: the logs before gen go, and the snapshot files of older generations
 * except the len / 8 ids in keep. */
int journal_mirror_tidy(journal *j, int own, uint32_t gen, const void *keep, size_t len);
/* Every file of the directory as one image (for raft's snapshot), in memory from
 * alloc: *out, *len. Returns 0, or -1 (logged) with *out, if not NULL, the caller's to
 * free. */
int journal_mirror_dump(journal *j, void *(*alloc)(size_t), void **out, size_t *len);
/* Replaces every file of the directory by those of an image from journal_mirror_dump.
 * Only while no store is loaded from j (a follower). Returns 0 or -1 (logged). */
int journal_mirror_restore(journal *j, const void *img, size_t len);
/* Leader now: puts the state into st (empty): the hot standby's, from memory, in time
 * that grows with the lists, leases and keys; or, if there is none or it stopped
 * following, the directory's, loaded as a start would. Returns 0, or -1 with the reason
 * in err. */
int journal_reload(journal *j, store *st, buf *err);
/* Opens dir for a replica: its logs and snapshot files are removed first (they are a
 * copy of raft's state, written again from it). As journal_open otherwise. */
journal *journal_open_replica(const char *dir, store *st, buf *err);

/* Checks every file of a state directory and prints what it finds (records, lists,
 * damage and where). Returns 0 if recovery would succeed, 1 if not. With repair, cuts a
 * damaged log at its last good record (keeping a .damaged copy). */
int journal_check(const char *dir, int repair);

#endif
