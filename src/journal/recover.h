/* SPDX-License-Identifier: Apache-2.0 */
/* recover.h - reading a state directory back into lists: which logs count, the replay
 * rules, and what the start may tidy afterwards. Shared by journal_open and the
 * --check-journal tool.
 *
 * Rules. The newest log holding a COMPACT_DONE record is the base: older logs are
 * superseded (a crash came between that record and their removal) and not read. A log
 * that starts a history from nothing carries COMPACT_DONE as its first record; with no
 * complete log at all, the start of the history is missing. Logs from the base on are
 * replayed oldest first. A REPLACE record, or a SNAPSHOT record in a complete log,
 * defines its list's whole state: earlier records of that list are skipped. SNAPSHOT
 * records of a log without COMPACT_DONE are ignored (the logs they would replace are
 * still there). A torn record at the tail of the newest log is where recovery stops;
 * any other damage fails. A newest log without a single record is ignored. */
#ifndef STSD_RECOVER_H
#define STSD_RECOVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "list/list.h"

typedef struct recover_state {
    /* What was recovered, by name; the caller takes lists (setting them NULL) or not. */
    size_t nlists;
    char **names;
    list **lists;
    uint64_t *def_ids;       /* the snapshot file defining each list (0: none, or inline) */
    uint64_t snap_bytes;     /* bytes of the snapshot files and inline snapshots loaded */
    /* The open leases, by list (index into names), oldest first per list. */
    size_t nleases;
    struct recover_lease {
        size_t list;
        uint64_t id;
        int64_t until;       /* wall-clock ms */
        char *line;          /* owned */
        size_t len;
        char *owner;         /* owned; NULL: lent to nobody in particular */
        size_t owner_len;
    } *leases;
    /* The keys that exist, sorted by name, and their open counter leases. */
    size_t nkeys;
    struct recover_key {
        char *name;          /* owned */
        char *value;         /* owned (NULL when empty) */
        size_t len;
        uint64_t version;
        int64_t expires;     /* wall-clock ms it disappears at (TTL=, EXPIRE); 0: never */
    } *keys;
    size_t nkey_leases;
    struct recover_key_lease {
        size_t key;          /* index into keys */
        uint64_t id;
        int64_t until;       /* wall-clock ms */
        int64_t by;
    } *key_leases;
    /* ONCE's runs in progress (their keys do not exist). */
    size_t nruns;
    struct recover_run {
        char *name;          /* owned */
        uint64_t id;
        int64_t until;       /* wall-clock ms */
        int64_t ttl_ms;      /* the TTL its DONE gives the key (ONCE TTL=); 0: none */
    } *runs;
    /* The log to go on appending to; last_gen 0: none, start a new history. */
    uint32_t last_gen;
    size_t last_end;         /* where its last whole record ends */
    size_t last_size;        /* its size: more than last_end means a torn tail to cut */
    const char *torn_why;
    uint32_t last_snap_n;    /* highest snapshot number used so far in last_gen */
    uint32_t max_gen;        /* highest generation named by any file */
    /* What a successful start may remove. */
    uint32_t base_gen;       /* logs older than this are superseded */
    uint32_t empty_gen;      /* the newest log, holding no record (0: none) */
    uint64_t *refs;          /* snapshot ids referenced by kept logs, sorted */
    size_t nrefs;
    /* On failure: where, and where a repair would cut the history (cut_gen 0: nowhere). */
    uint32_t cut_gen;
    size_t cut_off;
} recover_state;

/* Reads the state directory dirfd (path dir, for messages) and replays it into rs. With
 * report, describes every file, list and problem there (the check tool). Returns 0, or
 * -1 with a message in err naming the file and offset of the damage (rs->cut_* set when
 * cutting the history there would be a repair). Release rs with recover_free. */
int recover_run(int dirfd, recover_state *rs, FILE *report, buf *err);

struct recover_map;
struct rkeys;
/* recover_run for a standby (journal_standby.c): the lists with their leases, and the
 * keys, stay in *map and *keys (the caller's after the call, even on failure; free them
 * with recover_map_free and rkeys_free) instead of going into rs, which gets the rest. */
int recover_replay(int dirfd, recover_state *rs, struct recover_map *map,
                   struct rkeys **keys, buf *err);

/* Moves map's lists (their entries stay, without a list) with their leases, and keys'
 * keys, into rs, sorted by name, as recover_run hands them over. Returns 0, or -1 on
 * ENOMEM (what was moved is rs's, freed by recover_free). */
int recover_hand_over(struct recover_map *map, struct rkeys *keys, recover_state *rs);

/* Frees what rs still owns. */
void recover_free(recover_state *rs);

/* After a successful start: removes superseded logs, the empty newest log, snapshot
 * files no kept log references, and leftover temp files. Returns the number of files
 * that could not be removed (each logged). */
int recover_tidy(int dirfd, const recover_state *rs);

#endif
