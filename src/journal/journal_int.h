/* journal_int.h - the journal's state and the helpers its files share (journal.c,
 * journal_open.c, journal_compact.c); private to them. */
#ifndef STSD_JOURNAL_INT_H
#define STSD_JOURNAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/buf.h"
#include "journal/journal.h"

#define DEFAULT_THRESHOLD (64ull << 20)

/* A set of snapshot ids, small enough for linear search except when sorted for lookups. */
typedef struct idset {
    uint64_t *v;
    size_t n, cap;
} idset;

struct journal {
    char *dir;
    int dirfd, lockfd;
    conf_fsync policy;

    pthread_mutex_t mu;         /* guards everything down to `stop`; never held while
                                 * taking a list lock (the order is list, then journal) */
    pthread_cond_t cv;          /* a sync ended, or a stop was asked for */
    int fd;                     /* the current log, O_APPEND */
    uint32_t gen, max_gen;
    uint64_t size;              /* of the current log */
    uint64_t pos;               /* bytes appended since open: the lsn space */
    uint64_t synced;            /* up to here on disk */
    uint64_t sync_failed;       /* up to here an fsync failed: never known on disk */
    int syncing;                /* a thread is in fsync(fd) without the mutex */
    uint32_t snap_n;            /* last snapshot number taken in gen */
    idset pending;              /* snapshot files written, their REPLACE not logged yet */
    idset refs;                 /* snapshot ids referenced by records of gen */
    int refs_lost;              /* refs missed one (ENOMEM): delete no snapshot file */
    buf rec;                    /* the record being appended: frame space, then body */
    atomic_int broken;          /* changes are refused */
    uint32_t broken_gen;        /* the generation it broke in */
    atomic_ulong refused;       /* changes refused while broken */
    atomic_ulong errors;        /* write and fsync errors since start */
    uint64_t base_size;         /* log size right after the last compaction */
    uint64_t snapset;           /* bytes the last compaction (or recovery) read or wrote */
    uint64_t threshold;
    int stop;

    pthread_mutex_t compact_mu; /* one compaction at a time */
    store *st;
    pthread_t sync_thread, compact_thread;
    int sync_started, compact_started;
};

/* Adds id to s / removes it. Add returns 0 or -1 on ENOMEM. */
int journal_idset_add(idset *s, uint64_t id);
void journal_idset_del(idset *s, uint64_t id);

/* The helpers below are called with j->mu held. */

/* Starts j->rec: room for the frame, then the caller appends a body. */
void journal_rec_start(journal *j);
/* Appends the record in j->rec to the current log (internal: compaction's own records,
 * written even while changes are refused). Returns 0 with *lsn set, or -1 (on a write
 * error the partial record is cut off and the journal refuses changes). */
int journal_append_locked(journal *j, int internal, uint64_t *lsn);
/* One fsync of the current log covering everything appended so far, run without the
 * mutex (needs j->syncing clear). Returns 0, or -1 (the journal then refuses changes). */
int journal_sync_locked(journal *j);
/* Turns on refusal of changes, logging what failed. */
void journal_set_broken_locked(journal *j, const char *what, int err);

/* Creates log gen durably (header; with new_history a COMPACT_DONE record saying no
 * older log is needed) and sets *size. Returns its descriptor, or -1 (logged). Needs no
 * lock: only open and compaction create logs. */
int journal_create_log(journal *j, uint32_t gen, int new_history, uint64_t *size);

#endif
