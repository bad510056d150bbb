/* SPDX-License-Identifier: Apache-2.0 */
/* keys.h - the keys beside the lists: a name, a string value and a version per key; SET
 * (with compare-and-set), GET, DEL, KEYS, INCR (signed 64-bit, bounds, lent increments),
 * waiters on a key (watchers, INCRs waiting until they fit), ONCE's runs and RUNS.
 *
 * One lock guards every key: a change records itself with the store's recorder under it,
 * so the log holds each key's changes in the order they were applied. A key's version
 * starts at 1 and grows by 1 on each change; a key that does not exist has version 0.
 * Names are C strings (the caller checks them as FILENAME's); values are bytes. */
#ifndef STSD_MEET_KEYS_H
#define STSD_MEET_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/store.h"

/* INCR's arithmetic, without any lock (cmocka tests it alone). Parses value[0..len) as
 * a signed 64-bit decimal (empty: absent, 0); adds by; checks [min, max]. Returns
 * STORE_OK with *out, STORE_NOT_INT, STORE_OVERFLOW or STORE_BOUND. */
store_rc keys_add(const char *value, size_t len, int exists, int64_t by, int64_t min,
                  int64_t max, int64_t *out);
/* Writes v in decimal into out (at least 21 bytes); returns its length. */
size_t keys_format(int64_t v, char *out);

/* Gives st an empty table of keys, freed with st (store_free). Call it once, right after
 * store_create and before any call below. Returns 0, or -1 on ENOMEM (st unchanged).
 * On a store without keys, only the looks at everything (keys_count, keys_waiters,
 * keys_lease_expire, keys_each_locked, keys_each_run_locked) are allowed: none, 0. */
int keys_attach(store *st);

/* SET: value[0..len) as name's value. if_version < 0: always; 0: only if name does not
 * exist; n: only if its version is n (else STORE_VERSION, *version the current one).
 * Drops the key's open counter leases. *version: the new version. STORE_FULL past
 * maxKeys or maxBytes. */
store_rc keys_set(store *st, const char *name, const char *value, size_t len,
                       int64_t if_version, uint64_t *version, uint64_t *lsn);

/* SET with TTL=: as keys_set, and the key disappears ttl_ms from now (0: never; a
 * SET without TTL ends an earlier one). */
store_rc keys_set_ttl(store *st, const char *name, const char *value, size_t len,
                           int64_t if_version, int64_t ttl_ms, uint64_t *version,
                           uint64_t *lsn);

/* EXPIRE: name disappears ttl_ms (> 0) from now, recorded as a deadline; its version is
 * unchanged. STORE_NO_KEY if absent. */
store_rc keys_expire(store *st, const char *name, int64_t ttl_ms, uint64_t *lsn);

/* DEL PREFIX: removes every key whose name starts with prefix (non-empty), each as DEL
 * does (its own record, its watchers woken). *n: how many. Stops at the first error. */
store_rc keys_del_prefix(store *st, const char *prefix, size_t *n, uint64_t *lsn);
/* Every key, counter lease, run and TTL forgotten, recorded nowhere: a replica that
 * stopped leading (the committed state is its standby's). Waiters are told
 * STORE_JOURNAL. Returns how many keys there were. Never fails. */
size_t keys_clear(store *st);

/* GET: appends name's value to out and sets *version. STORE_NO_KEY if absent. */
store_rc keys_get(store *st, const char *name, buf *out, uint64_t *version);

/* DEL: removes name (and its counter leases); if_version as SET's. STORE_NO_KEY if absent. */
store_rc keys_del(store *st, const char *name, int64_t if_version, uint64_t *version,
                       uint64_t *lsn);

/* One key as KEYS sees it, valid only during the callback. */
typedef struct key_info {
    const char *name;
    const char *value;
    size_t len;
    uint64_t version;
    size_t watchers;        /* GETs waiting for a change of it */
    size_t waiters;         /* INCRs waiting until they fit */
} key_info;

/* KEYS: fn for every key whose name starts with prefix, sorted by name (under the keys'
 * lock: fn must not call back into the store). Returns the number of keys, or -1 on
 * ENOMEM. */
long keys_list(store *st, const char *prefix,
                     void (*fn)(const key_info *k, void *ctx), void *ctx);

/* A run in progress (ONCE) as RUNS sees it, valid only during the callback. */
typedef struct key_run_info {
    const char *name;
    int64_t until;          /* the run lease's deadline, wall-clock ms (may be past: the
                             * lease timer has not ended it yet) */
    size_t waiters;         /* ONCE callers waiting for it */
} key_run_info;

/* RUNS: fn for every run in progress whose key's name starts with prefix, sorted by name.
 * The runs are copied under the keys' lock and fn is called after it (fn may call the
 * store). Returns the number of runs, or -1 on ENOMEM (fn not called). */
long keys_runs(store *st, const char *prefix,
                     void (*fn)(const key_run_info *r, void *ctx), void *ctx);

/* What an INCR asks. */
typedef struct key_incr {
    int64_t by;
    int64_t min, max;       /* INT64_MIN, INT64_MAX: no bound */
    int64_t lease_ms;       /* > 0: the increment is lent this long */
    int64_t ttl_ms;         /* > 0: the key disappears this long after (TTL=); ONCE: the
                             * TTL its DONE gives the key */
} key_incr;

/* What an INCR (or a waiter) gets: the new value, the key's version, the lease. */
typedef struct key_out {
    int64_t value;
    uint64_t version;
    uint64_t lease;         /* the lease id (0: none) */
    uint64_t lsn;
} key_out;

/* INCR now: STORE_OK with *o, or STORE_NOT_INT, STORE_OVERFLOW, STORE_BOUND, STORE_FULL
 * (a new key past maxKeys/maxBytes), STORE_JOURNAL, STORE_NOMEM; nothing changed then. */
store_rc keys_incr(store *st, const char *name, const key_incr *q, key_out *o);

/* A request waiting on a key: a watcher (incr 0: a GET that waits while the key's
 * version is still `version`) or an INCR that waits until it fits. Its life is a
 * store_waiter's (store.h): owned by the caller, queued from keys_wait answering
 * STORE_WAITING until `served` runs or keys_unwait returns. Watchers wake on any
 * change of the key; INCRs are tried in arrival order at each change, and stop at the
 * first that does not fit. */
typedef struct key_waiter key_waiter;
struct key_waiter {
    const char *name;              /* valid while queued */
    int incr;
    int once;                      /* ONCE (incr 0, version 0, q.lease_ms: the run's) */
    uint64_t version;              /* watcher: waits while the key's version is this */
    key_incr q;                    /* INCR */
    int (*arm)(key_waiter *w);     /* as store_waiter's, under the keys' lock */
    int (*claim)(key_waiter *w);
    int (*gone)(key_waiter *w);
    void (*served)(key_waiter *w, store_rc rc);   /* outside the lock; may free w */
    /* The answer: a watcher's value (and o.version, 0: absent) or INCR's o. */
    buf value;
    key_out o;
    /* The store's own: */
    key_waiter *prev, *next;
    void *where;
    store_rc rc;
};

/* Serves w now (a watcher whose version differs: STORE_OK with the value, or
 * STORE_NO_KEY; an INCR that fits or fails otherwise than at its bound) or queues it
 * when w->arm agrees (STORE_WAITING). An INCR queues behind earlier waiting INCRs. */
store_rc keys_wait(store *st, key_waiter *w);
/* A ONCE waiter (w->once): the key exists: STORE_OK with its value (done); no run is in
 * progress: STORE_OK with o.lease, a new run lease of q.lease_ms (the caller runs it);
 * else queued (STORE_WAITING) or, when w->arm refuses, STORE_NO_KEY. A queued ONCE waiter
 * is served as a watcher when the key comes to exist, or with a run of its own
 * (STORE_OK, o.lease set) when the run ends unfinished (RELEASE, its deadline). */
/* Takes w out of its queue if still there; after it, the store no longer refers to w. */
void keys_unwait(store *st, key_waiter *w);

/* A run lease id of name (ONCE): RELEASE gives the run up, to the first ONCE waiter
 * (served with a new run) or the next caller; ACK of it is STORE_NO_LEASE.
 * ACK (undo 0) or RELEASE (undo 1) of counter lease id of name: RELEASE takes the
 * increment back and wakes the key's waiters. STORE_NO_LEASE if there is none.
 * *o: the key's value and version after. */
store_rc keys_settle(store *st, const char *name, int undo, uint64_t id, key_out *o);

/* Keeps run lease id of name (ONCE) going: its deadline becomes now + lease_ms, recorded
 * before the answer (*lsn). STORE_NO_LEASE when id is not name's run (stale: expired,
 * given up, or the key was set); nothing changed then. */
store_rc keys_run_renew(store *st, const char *name, uint64_t id, int64_t lease_ms,
                             uint64_t *lsn);

/* DONE: sets name to value[0..len) as SET does, if id is name's run lease; the run ends.
 * STORE_NO_LEASE when it is not (stale: expired, given up, or the key was set). */
store_rc keys_done(store *st, const char *name, uint64_t id, const char *value,
                        size_t len, uint64_t *version, uint64_t *lsn);
/* The same, the key expiring ttl_ms from now (0: the TTL its ONCE asked, if any). */
store_rc keys_done_ttl(store *st, const char *name, uint64_t id, const char *value,
                            size_t len, int64_t ttl_ms, uint64_t *version, uint64_t *lsn);

/* Undoes every counter lease whose deadline is at or before now (wall-clock ms), ends
 * the runs past theirs and deletes the keys whose TTL is up (a DEL record each, their
 * watchers woken). Returns how many; *next: the next deadline (0: none). */
size_t keys_lease_expire(store *st, int64_t now, int64_t *next);

/* Number of keys, and of requests waiting on keys. */
size_t keys_count(store *st);
size_t keys_waiters(store *st);

/* Recovery, unrecorded: a key with its value and version; an open counter lease of it. */
store_rc keys_adopt(store *st, const char *name, const char *value, size_t len,
                         uint64_t version);
/* Recovery: name's run in progress, lease id until `until` (expiry hands it over), whose
 * DONE gives the key ttl_ms (0: none). */
store_rc keys_run_adopt(store *st, const char *name, uint64_t id, int64_t until);
store_rc keys_run_adopt_ttl(store *st, const char *name, uint64_t id, int64_t until,
                                 int64_t ttl_ms);
/* Recovery: key name (which exists) disappears at the wall-clock ms until. */
store_rc keys_expire_adopt(store *st, const char *name, int64_t until);
store_rc keys_lease_adopt(store *st, const char *name, uint64_t id, int64_t until,
                               int64_t by);

/* Compaction: under the keys' lock, fn for every key (expires: its deadline, 0: none),
 * then lease for each of its open counter leases. Stops at and returns the first nonzero
 * value. */
int keys_each_locked(store *st,
                          int (*fn)(const char *name, const char *value, size_t len,
                                    uint64_t version, int64_t expires, void *ctx),
                          int (*lease_fn)(const char *name, uint64_t id, int64_t until,
                                       int64_t by, uint64_t version, const char *value,
                                       size_t len, void *ctx),
                          void *ctx);

/* Compaction: under the keys' lock, fn for every run in progress (ONCE), with the TTL
 * its DONE gives (0: none). Stops at and returns the first nonzero value. */
int keys_each_run_locked(store *st,
                              int (*fn)(const char *name, uint64_t id, int64_t until,
                                        int64_t ttl_ms, void *ctx),
                              void *ctx);

#endif
