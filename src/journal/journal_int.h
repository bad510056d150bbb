/* SPDX-License-Identifier: Apache-2.0 */
/* journal_int.h - the journal's state, the type its files share (journal.c,
 * journal_writer.c, journal_map.c, journal_open.c, journal_compact.c); private to them.
 * Types only: each file's functions for the others are in its own header
 * (journal_writer.h, journal_map.h, journal_compact.h). */
#ifndef STSD_JOURNAL_INT_H
#define STSD_JOURNAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/heap.h"
#include "journal/journal.h"
#include "snapref.h"

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
    size_t gather_until;        /* a replica's gather: wake the writer once this many
                                 * records are pending (0: none) */
    int writer_stop;
    uint32_t snap_n;            /* last snapshot number taken in gen */
    snapref_ids pending;              /* snapshot files written, their REPLACE not logged yet */
    snapref_ids refs;                 /* snapshot ids referenced by records of gen */
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
    /* Replicas (journal_mirror.c): each batch goes to ship before it counts as written;
     * NULL: alone. own_* is what this node appended as leader (its records in pend). */
    journal_ship_hooks ship;    /* ship.batch set: a replica's journal */
    void *ship_ctx;
    int inflight;               /* batches proposed, not yet committed */
    uint64_t fired_at;          /* synced when the writer last called waiters back */
    int holds;                  /* changes of several records being logged (journal_hold):
                                 * no batch is cut before they end */
    int leading;                /* journal_reload ran: this node's own records are in the
                                 * lsn space, so no other leader's may be counted in it */
    uint32_t demotions;         /* journal_demote's calls: a ship or a reload begun before
                                 * one belongs to a leadership that is over */
    /* The lsns of the last leadership's records that the cluster had not committed when
     * it ended, (void_lo, void_hi]: never answerable, though the follower's lsns move
     * past them (journal_answerable reads them without the lock). One range is enough:
     * the demotion fails every wait at once and calls the answer hook, so every request
     * polling in place learns its fate in its loop's next turn, long before the node
     * can have led and been deposed again. */
    _Atomic uint64_t void_lo, void_hi;
    struct journal_standby *standby; /* a follower's state in memory (journal_standby.c),
                                 * taken by journal_reload; NULL: read the directory */
    pthread_t sync_thread, compact_thread, writer_thread;
    int sync_started, compact_started, writer_started;
};

#endif
