/* SPDX-License-Identifier: Apache-2.0 */
/* store.h - the named lists, and the only API that reads or changes them.
 *
 * Every operation is atomic with respect to every other: the table of names is under a
 * read-mostly lock and each list under its own mutex, so commands on different lists run
 * in parallel. Every change goes through one of the store_* calls below, which is where a
 * recorder (the journal, a room above) is told of it. The store knows nothing of HTTP,
 * of page formats or of files. */
#ifndef STSD_STORE_H
#define STSD_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "list/list.h"

typedef enum store_rc {
    STORE_OK = 0,
    STORE_NOT_LOADED,   /* no list of that name */
    STORE_EMPTY,        /* the list has no line */
    STORE_TOO_FEW,      /* READMULTI asked for more lines than the list holds */
    STORE_EXISTS,       /* ADD UNIQUE=TRUE and the line is there already */
    STORE_NO_MATCH,     /* FIND matched nothing */
    STORE_MATCH_LIMIT,  /* FIND's regex hit its match limit */
    STORE_FULL,         /* a configured limit (lists, bytes) would be exceeded */
    STORE_NOMEM,        /* out of memory; nothing changed */
    STORE_JOURNAL,      /* the recorder (journal) cannot record changes; nothing changed */
    STORE_WAITING,      /* store_*_wait: not servable now; the waiter is queued */
    STORE_NO_LEASE,     /* ACK/RELEASE: no such open lease in that list */
    STORE_NO_KEY,       /* keys (keys.h): no key of that name */
    STORE_VERSION,      /* SET/DEL IF_VERSION: the key's version is another */
    STORE_NOT_INT,      /* INCR: the key's value is not a signed 64-bit integer */
    STORE_OVERFLOW,     /* INCR: the result would not fit in a signed 64-bit integer */
    STORE_BOUND,        /* INCR: the result would leave [MIN, MAX] */
    STORE_DROPPED,      /* a waiter's list was dropped (DROP) while it waited */
    STORE_NO_COLUMN,    /* FIND COLUMN=, ADD UNIQUE=column: the list has no such column */
    STORE_FIELDS,       /* ADD: the line has fewer fields than the list has columns (or
                         * broken quoting) */
} store_rc;

typedef enum store_end { STORE_FIRST, STORE_LAST, STORE_RANDOM } store_end;

/* How FIND tests a line; ctx is handed back to match (see list_match_fn). */
typedef struct store_matcher {
    list_match_fn match;
    void *ctx;
    const char *equal;     /* non-NULL: EQUALS on these bytes (uses the content index) */
    size_t equal_len;
    /* Non-NULL (with equal): FIND COLUMN=, equal is the value of this column (its name,
     * column_len bytes), looked up in its index; match still tests one line (waiters,
     * PEEK). */
    const char *column;
    size_t column_len;
} store_matcher;

/* A request waiting on a list until it can be served whole (a READ, READMULTI or FIND
 * with TIMEOUT). The caller owns it; the store keeps a pointer while it is queued, from
 * store_read_wait/store_find_wait answering STORE_WAITING until it is served (then
 * `served` runs, and the store never touches it again) or store_unwait returns. Waiters
 * on a list are served in arrival order: a READ waiter that needs more lines than there
 * are holds the READ waiters behind it; a FIND waiter is tried only against lines that
 * may match it; a KEEP=TRUE waiter leaves the line for the next one. An owner's waiter
 * (READ OWNER=) takes one line and lends it to its owner as store_read_owned does; once
 * its owner holds a line (taken by an earlier waiter of the same owner, or otherwise) it
 * is answered that line and takes none. */
typedef struct store_waiter store_waiter;
struct store_waiter {
    /* What it waits for, set by the caller: */
    const char *name;             /* the list's name; valid while queued */
    store_end end;                /* READ: from which end, how many, keep */
    size_t n;
    int keep;
    const store_matcher *m;       /* FIND: the matcher (NULL: a READ); valid while queued */
    const char *owner;            /* READ OWNER= (n 1, keep 0): owner_len bytes, valid while
                                   * queued; NULL: none. lease_ms is then the loan's (0: no
                                   * deadline), ids gets its id, count 1 */
    size_t owner_len;
    /* Called under the lock that guards the queue, just before w is queued: returns 0 to
     * queue it (whoever ends w otherwise must call store_unwait, which waits for that
     * lock), or -1 to answer at once with the error it would have had without waiting. */
    int (*arm)(store_waiter *w);
    /* Called under the list's lock when the waiter can be served: returns 1 if the caller
     * won the right to answer it (then it is served), 0 if it was ended already (it is
     * dropped from the queue, takes no line, and is not touched again). */
    int (*claim)(store_waiter *w);
    /* Called after a claim: nonzero if nobody will read the answer (the client left).
     * It then takes no line and `served` gets STORE_EMPTY. */
    int (*gone)(store_waiter *w);
    /* Called once served, outside every lock: rc STORE_OK with the lines in out
     * (store_next_line format), count and lsn set, or the error. May free w. */
    void (*served)(store_waiter *w, store_rc rc);
    int64_t lease_ms;             /* > 0 (with keep 0): each line taken is leased this long */
    buf out;
    buf ids;                      /* the leases' ids (uint64_t each), in line order */
    size_t count;
    /* Set when w is served, now or later: the place of its change's record (0: none). As
     * with every change (below), its answer waits until the recorder says it is durable. */
    uint64_t lsn;
    /* The store's own: */
    store_waiter *prev, *next;
    void *where;                  /* the entry it is queued on, NULL: not created yet */
    uint64_t owner_hash;          /* owner's place in an owner table */
    int queued;
    store_rc rc;
};

/* Limits the store enforces; 0 means unlimited. */
typedef struct store_limits {
    size_t max_lists;
    size_t max_bytes;      /* total bytes of line contents and keys (name and value) */
    size_t max_keys;
} store_limits;

typedef struct store store;

/* Returns an empty store, or NULL on ENOMEM. */
store *store_create(const store_limits *limits);
/* Frees the store and every list. */
void store_free(store *st);

/* What the rooms built on the store share with its lists (meet/: the keys). The keys'
 * table rides with the store, so that whatever holds the store (the commands, the
 * journal's recovery and compaction) reaches the keys; the store never looks inside it,
 * and store_free hands it to drop. Set once, before the store is shared. */
struct keys_table;
void store_set_keys(store *st, struct keys_table *t, void (*drop)(struct keys_table *t));
struct keys_table *store_keys(store *st);
/* The limits the store was made with. */
const store_limits *store_get_limits(const store *st);
/* The bytes budget (limits.max_bytes) shared by lines and keys: reserves n more bytes, 0
 * or -1 (over the limit: nothing reserved); adds n whatever the limit (what was counted
 * before coming back: an undone increment, recovery); gives n back. */
int store_bytes_reserve(store *st, size_t n);
void store_bytes_add(store *st, size_t n);
void store_bytes_release(store *st, size_t n);

/* Durability. Every call below that changes a list records the change with the recorder
 * (if any) first, and sets *lsn to that record's place in the log (0: nothing recorded).
 * It does not wait for the record to reach the disk: the caller must not report the
 * change as done before the recorder says that lsn is durable (journal_when_durable,
 * journal_wait). lsn may be NULL when the caller does not report the change. */

/* Replaces (or creates) list name by l, which the store then owns (also on error:
 * it frees l). The old list is freed after the swap, outside every lock. */
store_rc store_replace(store *st, const char *name, list *l, uint64_t *lsn);

/* READ / READMULTI: takes n lines from the chosen end (RANDOM: uniformly among those
 * left), appending each to out (read them back with store_next_line), and sets *count. keep: move each read line to the tail (after all n are read) instead of
 * removing it. n > length gives STORE_TOO_FEW and *count = length. */
store_rc store_read(store *st, const char *name, store_end end, int keep, size_t n,
                    buf *out, size_t *count, uint64_t *lsn);

/* ADD: inserts line at the head (at_tail = 0) or the tail; creates the list if absent.
 * unique: refuse with STORE_EXISTS if an equal line is in the list. */
store_rc store_add(store *st, const char *name, const char *line, size_t len, int at_tail,
                   int unique, uint64_t *lsn);

/* One line of a bulk add: len bytes at s. */
typedef struct store_span {
    const char *s;
    size_t len;
} store_span;

/* ADDMULTI: inserts v[0..n) as n ADDs in that order would (at the head: the last ends
 * first), all or none, in one record; creates the list if absent. unique: refuse with
 * STORE_EXISTS if a line is in the list already or earlier in v, *bad set to its index
 * (0-based). STORE_FULL past maxBytes. Waiters are served once, after all are in. */
store_rc store_add_many(store *st, const char *name, const store_span *v, size_t n,
                        int at_tail, int unique, size_t *bad, uint64_t *lsn);

/* DROP: deletes list name, its lines, leases, owners and waiters (each waiter is served
 * STORE_DROPPED). STORE_NOT_LOADED if there is no such list. See store_names.c for how
 * a name leaves a table that is read without locks. */
store_rc store_drop(store *st, const char *name, uint64_t *lsn);
/* DROP PREFIX: store_drop for every list whose name starts with prefix (non-empty), one
 * after the other; *n: how many were dropped. Stops at the first error (STORE_JOURNAL,
 * STORE_NOMEM) with *n those dropped before it. */
store_rc store_drop_prefix(store *st, const char *prefix, size_t *n, uint64_t *lsn);

/* Every list dropped as DROP does, but recorded nowhere: a replica that stopped leading
 * forgets what it held (the committed state is its standby's). Waiters are told
 * STORE_JOURNAL. *n: how many were dropped. Returns 0, or -1 on ENOMEM (some lists may
 * be left). */
int store_clear(store *st, size_t *n);

/* ADD with UNIQUE=column: as store_add, refusing with STORE_EXISTS a line whose field
 * ucol (ulen bytes, a column's name) equals that of a line in the list; STORE_NO_COLUMN
 * when the list has no such column (nothing is created then). Every ADD to a list with
 * columns refuses with STORE_FIELDS a line with fewer fields, or broken quoting. */
store_rc store_add_unique(store *st, const char *name, const char *line, size_t len,
                          int at_tail, const char *ucol, size_t ulen, uint64_t *lsn);

/* COLUMNS: a new empty list holding list name's columns (none: a list without), in
 * *cols, which the caller frees. */
store_rc store_columns(store *st, const char *name, list **cols);

/* FIND: the first line from the head that m accepts; appended to out as by store_read; removed, and with
 * keep moved to the tail. */
store_rc store_find(store *st, const char *name, const store_matcher *m, int keep, buf *out,
                    uint64_t *lsn);

/* READ/READMULTI that waits: serves w (w->end, n, keep) now into out as store_read does
 * (with w->owner: as store_read_owned, its id into w->ids), or, when the list is absent,
 * empty or too short (an owner: holds no line and the list is absent or empty) and
 * w->arm agrees, queues w and returns STORE_WAITING (then the caller must not touch w
 * until it is ended). Any other error is returned as store_read's. */
store_rc store_read_wait(store *st, store_waiter *w, buf *out, size_t *count);

/* FIND that waits: as store_find with w->m and w->keep, or STORE_WAITING (queued) when the
 * list is absent, empty or holds no matching line. */
store_rc store_find_wait(store *st, store_waiter *w, buf *out);

/* Takes w out of its queue if it is still there. After it returns, the store no longer
 * refers to w (call it from whoever ended w by other means: deadline, shutdown). */
void store_unwait(store *st, store_waiter *w);

/* Leases. A line taken with a lease (KEEP=FALSE) leaves its list but stays on loan until
 * settled: ACK forgets it, RELEASE puts it back at the head of its list (feeding waiters),
 * and so does its deadline, by store_lease_expire. RESET and INITFILE drop the list's
 * leases. Ids are unique, nonzero and do not look sequential; an id settles only in its
 * own list. Deadlines are wall-clock milliseconds (clock_wall_ms, base/clock.h), so that
 * they keep their meaning across a restart. Each lease costs 64 bytes plus its line (an
 * owner 48 more, with its bucket, plus its name). */

/* READ/READMULTI with keep 0 and a lease of lease_ms each (lease_ms 0: store_read); the
 * ids are appended to ids (uint64_t each) in line order. *lsn as for store_read: the
 * answer waits for it. */
store_rc store_read_leased(store *st, const char *name, store_end end, size_t n,
                           int64_t lease_ms, buf *out, size_t *count, buf *ids,
                           uint64_t *lsn);

/* FIND with keep 0 and a lease, as store_read_leased. */
store_rc store_find_leased(store *st, const char *name, const store_matcher *m,
                           int64_t lease_ms, buf *out, buf *ids, uint64_t *lsn);

/* ACK (release 0) or RELEASE (1) of list name's lease id, or with line non-NULL of the
 * oldest lease of that exact line. STORE_NO_LEASE when there is none (settled already,
 * expired, unknown, or of another list); STORE_NOT_LOADED without the list. */
store_rc store_settle(store *st, const char *name, int release, uint64_t id, const char *line,
                      size_t len, uint64_t *lsn);

/* Owners. READ KEEP=FALSE OWNER=o lends one line to owner o (any bytes but NUL, 1 to
 * STORE_OWNER_MAX of them): a lease as above, which every later READ of o answers again
 * without taking anything. Settling it (by owner, id, line or deadline), RESET and
 * INITFILE end the ownership with the lease. A loan with no LEASE= has no deadline. */
#define STORE_OWNER_MAX 128
#define STORE_LOAN_FOREVER INT64_MAX

/* READ for owner[0..olen): the line o holds, appended to out as by store_read (with
 * lease_ms > 0 its deadline moves to now + lease_ms, recorded); or, if o holds none, one
 * line taken from end and lent to o (until now + lease_ms, or for good with lease_ms 0).
 * Sets *id to the lease's id and *taken to 1 if a line was taken now. *lsn: the record
 * the answer waits for (the renewal's, the loan's, or the last one of this loan). */
store_rc store_read_owned(store *st, const char *name, store_end end, const char *owner,
                          size_t olen, int64_t lease_ms, buf *out, uint64_t *id, int *taken,
                          uint64_t *lsn);

/* ACK (release 0) or RELEASE (1) of the line owner[0..olen) holds in list name, as
 * store_settle. STORE_NO_LEASE when o holds none there. */
store_rc store_settle_owner(store *st, const char *name, int release, const char *owner,
                            size_t olen, uint64_t *lsn);

/* LEASES: the number of open leases of list name, in *n. */
store_rc store_leases(store *st, const char *name, size_t *n);

/* Puts back every lease whose deadline is at or before now (wall-clock ms). Returns how
 * many; sets *next to the next deadline (0: none). */
size_t store_lease_expire(store *st, int64_t now, int64_t *next);

/* Recovery: an open lease of list name (created if absent), lent to owner[0..olen) (NULL:
 * nobody; an owner holding a line already keeps that one), without recording; an id known
 * already is ignored. */
store_rc store_lease_adopt(store *st, const char *name, uint64_t id, int64_t until,
                           const char *owner, size_t olen, const char *line, size_t len);

/* Compaction, from inside a store_each_locked callback for list name (its lock held):
 * calls fn for each open lease of the list, oldest first, with its owner (NULL: none); stops at fn's first nonzero
 * value and returns it. */
int store_each_lease_locked(store *st, const char *name,
                            int (*fn)(uint64_t id, int64_t until, const char *owner,
                                      size_t olen, const char *line, size_t len, void *ctx),
                            void *ctx);

/* The next line of a READ/FIND result, from offset *off (start at 0), which it advances.
 * Returns the line and sets *len, or NULL after the last one. */
const char *store_next_line(const buf *out, size_t *off, size_t *len);

/* Number of lines, in *len. */
store_rc store_length(store *st, const char *name, size_t *len);

/* RESET: empties list name if it exists (OK either way; nothing is created). Its columns
 * stay. */
store_rc store_reset(store *st, const char *name, uint64_t *lsn);

/* A private copy of list name for SAVE, taken atomically; the caller frees it. */
store_rc store_snapshot(store *st, const char *name, list **copy);

/* STATUS: calls fn(name, length) for every list, sorted by name. Returns the number of
 * lists, or -1 on ENOMEM. */
long store_status(store *st, void (*fn)(const char *name, size_t len, void *ctx), void *ctx);

/* What STATUS in JSON and the metrics show of one list. Traffic counts lines added by
 * ADD and taken by READ/READMULTI/FIND with KEEP=FALSE; rates are over the last 10 s. */
typedef struct store_list_stats {
    const char *name;
    size_t lines;
    uint64_t added_total, removed_total;
    double added_per_s, removed_per_s;
    double empty_in_s;        /* lines / net drain rate; -1 when not draining */
    size_t leased;            /* lines on loan (open leases) */
    size_t waiters;           /* requests waiting for lines (TIMEOUT) */
} store_list_stats;

/* Calls fn for every list, sorted by name (s is valid during the call only); rates and
 * empty_in_s only with rates (else 0 and -1). Returns the number of lists, or -1 on
 * ENOMEM. Each list's lock is held only while it is read. */
long store_stats(store *st, int rates, void (*fn)(const store_list_stats *s, void *ctx),
                 void *ctx);

/* A PEEK: lines from position offset, without changing the list. */
typedef struct store_peek_req {
    size_t offset;
    size_t limit;             /* lines returned at most */
    const store_matcher *m;   /* NULL: every line; else only the lines m accepts */
    size_t max_scan;          /* with m: lines examined at most */
    int64_t budget_ms;        /* with m: time spent at most */
} store_peek_req;

/* PEEK: appends the chosen lines to out (read them back with store_next_peek), sets
 * *length to the list's length and *next to where the next page or scan starts, or
 * SIZE_MAX at the end. A matching scan takes the list's lock in short stretches, so
 * positions are those of the moment each line was looked at. Returns STORE_NOT_LOADED,
 * STORE_MATCH_LIMIT (a regex gave up), STORE_NOMEM or STORE_OK. */
store_rc store_peek(store *st, const char *name, const store_peek_req *q, buf *out,
                    size_t *length, size_t *next);
/* The same over list l, which the caller holds still for the whole PEEK (a follower's
 * standby, journal_view_peek). */
store_rc store_peek_list(const list *l, const store_peek_req *q, buf *out, size_t *length,
                         size_t *next);

/* The next line of a PEEK result from offset *off (start at 0), which it advances: sets
 * *pos and *len and returns the bytes, or NULL after the last one. */
const char *store_next_peek(const buf *out, size_t *off, size_t *pos, size_t *len);

/* Total number of lists. */
size_t store_count(store *st);

/* A change of a key (keys.h), as the recorder gets it: the key's state after it. */
typedef enum store_key_kind {
    STORE_KEY_SET,        /* flag 1: SET (drops the key's counter leases); 0: INCR */
    STORE_KEY_DEL,
    STORE_KEY_LEASE,      /* INCR with LEASE: id, until, by */
    STORE_KEY_SETTLE,     /* flag 1: RELEASE or expiry (undone); 0: ACK; id */
    STORE_KEY_RUN,        /* ONCE: the key's run is now lease id until `until` (id 0: none;
                           * by: the TTL in ms its DONE's key gets, 0: none) */
    STORE_KEY_EXPIRE,     /* EXPIRE: the key disappears at the wall-clock ms `until` */
} store_key_kind;

/* SET and INCR (STORE_KEY_SET) carry in `until` the deadline (wall-clock ms) this change
 * gives the key (TTL=), 0: none given (a SET then clears the key's, an INCR keeps it). */
typedef struct store_key_rec {
    store_key_kind kind;
    const char *name;
    int flag;
    uint64_t id;
    int64_t until;
    int64_t by;
    uint64_t version;
    const char *value;
    size_t len;
} store_key_rec;

/* What records the store's changes: the journal implements it (the store calls up only
 * through this table). The record calls run under the list's lock, before the change is
 * applied, and return 0 with *lsn set (the record's place, handed to the store's caller)
 * or -1: the change is then not applied and the caller gets STORE_JOURNAL. ctx is the
 * recorder's own. */
typedef struct store_recorder {
    int (*push)(void *ctx, const char *name, int at_tail, const char *line, size_t len,
                uint64_t *lsn);
    /* n lines taken at pos[0..n), each relative to the list as left by the previous. */
    int (*take)(void *ctx, const char *name, int keep, const size_t *pos, size_t n,
                uint64_t *lsn);
    int (*reset)(void *ctx, const char *name, uint64_t *lsn);
    /* INITFILE, without any lock: saves l durably and sets *snap; then, under the lock,
     * replace records that name is now snapshot snap. */
    int (*write_snapshot)(void *ctx, const list *l, uint64_t *snap);
    int (*replace)(void *ctx, const char *name, uint64_t snap, uint64_t *lsn);
    /* Blocks until lsn is as durable as the recorder promises (the lease calls, which
     * do not hand their lsn up, wait with it before returning). */
    int (*wait)(void *ctx, uint64_t lsn);
    /* A recorded change could not be applied in memory: memory and record disagree. */
    void (*mark_broken)(void *ctx);
    /* A line of name taken (its take recorded just before) is on loan as lease id until
     * the wall-clock ms until, to owner[0..olen) (NULL: to nobody in particular). */
    int (*lease)(void *ctx, const char *name, uint64_t id, int64_t until, const char *owner,
                 size_t olen, const char *line, size_t len, uint64_t *lsn);
    /* Lease id of name is settled: acked (release 0), or its line back at the head. */
    int (*settle)(void *ctx, const char *name, uint64_t id, int release, const char *line,
                  size_t len, uint64_t *lsn);
    /* The records from hold(ctx, 1) to hold(ctx, 0) are one change (a take and the
     * lease of its line): no batch, so no commit, ends between them. */
    void (*hold)(void *ctx, int on);
    /* A change of a key, under the keys' lock. */
    int (*key)(void *ctx, const store_key_rec *r, uint64_t *lsn);
    /* Lease id of name now lasts until the wall-clock ms until (READ OWNER= LEASE=). */
    int (*renew)(void *ctx, const char *name, uint64_t id, int64_t until, uint64_t *lsn);
    /* n lines pushed at once, in that order (ADDMULTI): one record. */
    int (*push_many)(void *ctx, const char *name, int at_tail, const store_span *v, size_t n,
                     uint64_t *lsn);
    /* List name is dropped: its lines and leases gone, the name free (DROP). */
    int (*drop)(void *ctx, const char *name, uint64_t *lsn);
    /* Right after replace, when the new list l has columns: their names and separator
     * (NULL: columns are not recorded). RESET keeps a list's columns without a record. */
    int (*columns)(void *ctx, const char *name, const list *l, uint64_t *lsn);
} store_recorder;

/* From now on, every change is first given to r (with ctx). r must outlive the store's
 * use; NULL: changes live in memory only. */
void store_set_recorder(store *st, const store_recorder *r, void *ctx);
/* For the keys (meet/), under the keys' lock: gives r to the recorder (none: *lsn 0),
 * 0 or -1 (refused); and says that a recorded change could not be applied in memory. */
int store_record_key(store *st, const store_key_rec *r, uint64_t *lsn);
void store_mark_broken(store *st);

/* What the lease timer reports of each line lease it ended at its deadline: the list,
 * the line put back, the lease id and the owner it was lent to (NULL, 0: none). Called on
 * the lease timer's thread with no lock of the store held; the pointers live only during
 * the call. */
typedef void (*store_expired_fn)(void *ctx, const char *name, const char *line, size_t len,
                                 uint64_t id, const char *owner, size_t owner_len);

/* Sets the hook of expired leases (fn NULL: none). Set it before the lease timer starts. */
void store_set_expiry_hook(store *st, store_expired_fn fn, void *ctx);

/* Recovery: installs l (owned by the store from then on) as list name without recording
 * anything. */
store_rc store_adopt(store *st, const char *name, list *l);

/* Compaction: calls fn for every list while holding that list's lock (so fn sees it
 * between two changes, and may record in the journal). Stops at and returns fn's first
 * nonzero value; 0 otherwise. */
int store_each_locked(store *st, int (*fn)(const char *name, const list *l, void *ctx),
                      void *ctx);

#endif
