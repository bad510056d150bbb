/* journal_int.h - the journal's state and the helpers its files share (journal.c,
 * journal_writer.c, journal_open.c, journal_compact.c); private to them. */
#ifndef STSD_JOURNAL_INT_H
#define STSD_JOURNAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/heap.h"
#include "journal/journal.h"
#include "snapref.h"

#define DEFAULT_THRESHOLD (64ull << 20)

/* A set of snapshot ids, small enough for linear search except when sorted for lookups. */
typedef struct idset {
    uint64_t *v;
    size_t n, cap;
} idset;

/* Someone to call back once the record ending at lsn is durable: an item of the
 * journal's `waits` heap (base/heap, which reads lsn as an int64_t: lsns stay below
 * 2^63), allocated by journal_when_durable and freed once called back. */
typedef struct journal_waiter {
    uint64_t lsn;
    uint32_t heap_at;
    journal_done_fn fn;
    void *ctx;
} journal_waiter;

/* Positions in the log are lsns: bytes appended since open, across generations. A record
 * is appended to `pend` (in memory) under the list's lock, its change is then applied,
 * and it is durable once the write (fsync=everysec, no) or the fdatasync (always) that
 * took it succeeded. When a write or an fdatasync fails, nothing more goes to that log
 * (its generation is dead) and the changes in (held_from, held] are held: applied in
 * memory, answered by no one, until a compaction has rewritten every list from memory
 * into a new log and synced it. */
struct journal {
    char *dir;
    int dirfd, lockfd;
    conf_fsync policy;

    pthread_mutex_t mu;         /* guards everything down to `stop`; never held while
                                 * taking a list lock (the order is list, then journal) */
    pthread_cond_t cv;          /* io ended, durability moved, held changes settled */
    pthread_cond_t wake;        /* for the writer thread: records are waiting (monotonic) */
    pthread_cond_t tick;        /* the background threads' naps: a stop, a compaction due */
    int fd;                     /* the current log (records at fsize, by pwrite) */
    uint8_t *map;               /* the log mapped (journal_map.c), or NULL: written */
    size_t maplen;
    uint64_t map_released;      /* its pages before this are out of stsd's memory */
    uint32_t gen, max_gen;
    uint32_t dead_gen;          /* a write or fsync failed in this generation (0: none) */
    uint64_t size;              /* of the current log, records still in pend included */
    uint64_t fsize;             /* of the current log file: what was written */
    uint64_t alloc;             /* disk space reserved for the log file up to here (when
                                 * mapped, the file's size: zeros after `size`) */
    int prealloc;               /* the file system can reserve space (fallocate) */
    int nospace;                /* the last reservation failed: changes are refused */
    uint64_t pos;               /* end of the last record appended: the lsn space */
    uint64_t written;           /* up to here handed to the kernel */
    uint64_t synced;            /* up to here on disk */
    uint64_t held_from, held;   /* changes in (held_from, held] wait for a rewrite */
    int io;                     /* a thread writes or syncs the log without the mutex */
    int syncing;                /* a background fdatasync runs (without the io role: the
                                 * fd stays open until it ends) */
    buf pend;                   /* framed records appended, not yet written */
    buf out;                    /* the batch being written (the io thread's) */
    size_t rec_off;             /* where the record being built starts in pend */
    heap waits;                 /* journal_waiters, least lsn on top */
    atomic_int cancelled;       /* stopping: waits that are not durable now fail (set
                                 * under the mutex, read without it by answerable) */
    /* For journal_answerable, which takes no lock: every change up to here may be
     * answered (durable as promised, not held). */
    _Atomic uint64_t answerable;
    journal_hook_fn hook;       /* journal_set_answer_hook's */
    void *hook_ctx;
    uint64_t hooked;            /* answerable when the hook was last called */
    int hook_calls;             /* calls of the hook in progress (without the mutex) */
    size_t pend_recs;           /* records in pend, not mapped (fsync=always) */
    size_t last_batch;          /* records of the writer's last batch */
    uint64_t records;           /* change records appended since start (not internal ones) */
    uint64_t log_syncs;         /* fdatasyncs of the log that succeeded */
    int writer_idle;            /* the writer thread sleeps on `wake` */
    int writer_stop;
    uint32_t snap_n;            /* last snapshot number taken in gen */
    idset pending;              /* snapshot files written, their REPLACE not logged yet */
    idset refs;                 /* snapshot ids referenced by records of gen */
    int refs_lost;              /* refs missed one (ENOMEM): delete no snapshot file */
    snapref defs;               /* each list's defining snapshot; superseded files */
    atomic_int broken;          /* changes are refused */
    uint32_t broken_gen;        /* the generation it broke in */
    atomic_ulong refused;       /* changes refused while broken */
    atomic_ulong errors;        /* write and fsync errors since start */
    uint64_t base_size;         /* log size right after the last compaction */
    uint64_t snapset;           /* bytes the last compaction (or recovery) read or wrote */
    uint64_t threshold;
    int compact_due;            /* the log just outgrew it: compaction starts now */
    int stop;

    pthread_mutex_t compact_mu; /* one compaction at a time */
    store *st;
    pthread_t sync_thread, compact_thread, writer_thread;
    int sync_started, compact_started, writer_started;
};

/* Adds id to s / removes it. Add returns 0 or -1 on ENOMEM. */
int journal_idset_add(idset *s, uint64_t id);
void journal_idset_del(idset *s, uint64_t id);

/* The helpers below are called with j->mu held (journal_writer.c). */

/* Whether the log has outgrown its threshold, and grown since the last compaction by
 * more than that compaction wrote: time for the next one. */
static inline int journal_outgrown_locked(const journal *j)
{
    return j->size > j->threshold && j->size - j->base_size > j->snapset;
}

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
/* Publishes how far changes may be answered, for journal_answerable. */
void journal_publish_locked(journal *j);
/* Turns on refusal of changes, logging what failed. */
void journal_set_broken_locked(journal *j, const char *what, int err);
/* Removes the superseded snapshot files whose successor is on disk (the mutex is
 * released while unlinking). */
void journal_reap_locked(journal *j);

/* The log mapped into memory (journal_map.c). After a log is opened or created: extends
 * it a chunk ahead and maps it, or leaves it to be written (the file system cannot
 * allocate ahead, or no mapping). */
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

/* Starts the writer thread (fsync=always). Returns 0 or -1. */
int journal_writer_start(journal *j);
/* Writes what is left, answers it, then stops the writer thread. */
void journal_writer_stop(journal *j);

/* Creates log gen durably (header; with new_history a COMPACT_DONE record saying no
 * older log is needed) and sets *size. Returns its descriptor, or -1 (logged). Needs no
 * lock: only open and compaction create logs. */
int journal_create_log(journal *j, uint32_t gen, int new_history, uint64_t *size);

#endif
