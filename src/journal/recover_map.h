/* SPDX-License-Identifier: Apache-2.0 */
/* recover_map.h - the replay's lists by name and their open leases by (list, id), a list
 * record applied to them, and the keys: key records applied in log order, then handed
 * over to the recovered state. Private to journal/ (recover.c, journal_standby.c). */
#ifndef STSD_RECOVER_MAP_H
#define STSD_RECOVER_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "list/list.h"
#include "meet/keys.h"
#include "recover.h"
#include "wal.h"

/* One open lease during the replay: in its list's chain (newest first) and in the
 * replay's table by (list, id), so that a SETTLE finds it at once among a million. */
typedef struct rlease {
    struct rlease *next, *prev;
    struct rlease *hnext;
    const void *owner;     /* its rent */
    uint64_t id;
    int64_t until;
    size_t len;
    size_t who_len;        /* OWN: its owner's bytes, after the line's; 0: no owner */
    char line[];
} rlease;

/* One list during the replay. */
typedef struct rent {
    struct rent *next;
    list *l;
    rlease *leases;        /* newest first */
    size_t nleases;
    size_t def_log;        /* 1 + index of the log of its defining record; 0: none */
    size_t def_off;
    uint64_t def_id;       /* its snapshot file (0: none) */
    uint64_t snap_id;      /* a standby's: the SNAPSHOT record's file that defines it */
    uint32_t snap_gen;     /* once that log's COMPACT_DONE comes (0: none pending) */
    size_t name_len;
    char name[];
} rent;

typedef struct recover_map {
    rent **b;              /* the lists, hashed by name */
    size_t nb, n;
    rlease **lb;           /* the open leases, hashed by (list, id) */
    size_t lnb, ln;
} recover_map;

/* The entry for name[0..len), or NULL. */
rent *recover_map_find(const recover_map *m, const char *name, size_t len);
/* The entry for name, created (with no list) if absent; NULL on ENOMEM. */
rent *recover_map_get(recover_map *m, const char *name, size_t len);

/* Lease id of e, or NULL. */
rlease *recover_lease_find(const recover_map *m, const rent *e, uint64_t id);
/* Chains l at the head of e's leases and into the table; -1 on ENOMEM (nothing done). */
int recover_lease_add(recover_map *m, rent *e, rlease *l);
/* Unchains l from its list and the table, and frees it. */
void recover_lease_remove(recover_map *m, rent *e, rlease *l);
/* Forgets e's leases (RESET, INITFILE, a snapshot that carries them again). */
void recover_drop_leases(recover_map *m, rent *e);

/* What recover_map_apply found. */
enum { RECOVER_BAD = -1, RECOVER_NOMEM = -2 };

/* Applies list record r (not a key's, COMPACT_DONE or NOOP) to e, by the rules of
 * recover.h for a record at or after e's defining one: def is the list r defines when r
 * is that record (REPLACE, SNAPSHOT: loaded by the caller; e takes it, or it is freed),
 * NULL otherwise (a REPLACE or SNAPSHOT then changes nothing). Returns 0, RECOVER_BAD with
 * the reason in why[0..wl) (the record does not fit the state), or RECOVER_NOMEM. */
int recover_map_apply(recover_map *m, rent *e, const wal_rec *r, list *def,
                      char *why, size_t wl);

/* Frees every entry, its list and its leases. */
void recover_map_free(recover_map *m);

/* ---- the keys --------------------------------------------------------------------------- */

typedef struct rkeys rkeys;

/* Applies key record r (types WAL_KEY_*) to *m (made on first use). Returns 0, or -1 on
 * ENOMEM. */
int rkeys_apply(rkeys **m, const wal_rec *r);

/* Moves the keys that exist and their open leases into rs (sorted by name). Returns 0,
 * or -1 on ENOMEM (what was moved is rs's, freed by recover_free). */
int rkeys_hand_over(rkeys *m, recover_state *rs);

/* Key name[0..len): 1 with its value appended to out and its version, 0 if it does not
 * exist (never set, or deleted). Read only. */
int rkeys_get(const rkeys *m, const char *name, size_t len, buf *out, uint64_t *version);

/* KEYS over m (journal_standby_keys). Read only. */
long rkeys_list(const rkeys *m, const char *prefix, void (*fn)(const key_info *k, void *ctx),
                void *ctx);

/* Frees m (NULL is fine). */
void rkeys_free(rkeys *m);

#endif
