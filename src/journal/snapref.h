/* SPDX-License-Identifier: Apache-2.0 */
/* snapref.h - which snapshot file holds each list's defining state (its last REPLACE or
 * compaction SNAPSHOT), and the files superseded since: such a file is needed by no
 * recovery once the record that superseded it is on disk, and is removed then. Also sets
 * of snapshot ids (the files a log refers to, those written and not yet referred to).
 * Private to the journal; its callers lock. */
#ifndef STSD_SNAPREF_H
#define STSD_SNAPREF_H

#include <stddef.h>
#include <stdint.h>

typedef struct snapref_ent snapref_ent;

/* A superseded snapshot file: removable once the log is on disk up to lsn. */
typedef struct snapref_old {
    uint64_t id;
    uint64_t lsn;
} snapref_old;

typedef struct snapref {
    snapref_ent **b;       /* names, hashed; entries live as long as the map */
    size_t nb, n;
    snapref_old *old;      /* superseded files, in lsn order */
    size_t nold, oldcap;
} snapref;

#define SNAPREF_INIT {NULL, 0, 0, NULL, 0, 0}

/* A set of snapshot ids, small enough for linear search. */
typedef struct snapref_ids {
    uint64_t *v;
    size_t n, cap;
} snapref_ids;

/* Sets the snapshot id defining list name (0: none, an inline or empty state) and
 * returns the one it replaces in *prev (0 when none or unknown). Returns 0, or -1 on
 * ENOMEM (the map then forgets name: its files are only removed by compaction). */
int snapref_set(snapref *m, const char *name, uint64_t id, uint64_t *prev);

/* Queues file id as superseded by the record ending at lsn. Returns 0 or -1 on ENOMEM
 * (the file then stays until the next compaction). */
int snapref_retire(snapref *m, uint64_t id, uint64_t lsn);

/* Moves into out[0..max) the ids of the superseded files whose successor is on disk
 * (lsn <= durable) and returns how many. */
size_t snapref_due(snapref *m, uint64_t durable, uint64_t *out, size_t max);

/* The highest lsn a queued file waits for (0: none queued). */
uint64_t snapref_waiting(const snapref *m);

/* Adds id to s: 0, or -1 on ENOMEM. */
int snapref_ids_add(snapref_ids *s, uint64_t id);
/* Removes id from s (one of it, if there), not keeping the order. */
void snapref_ids_del(snapref_ids *s, uint64_t id);

/* Frees everything m holds and leaves it empty. */
void snapref_free(snapref *m);

#endif
