/* SPDX-License-Identifier: Apache-2.0 */
/* recover.c - replays a state directory into lists, by the rules in recover.h. */
#include "recover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "recover_map.h"
#include "snapshot.h"
#include "wal.h"

/* One log being replayed. */
typedef struct rlog {
    uint32_t gen;
    char name[32];
    const uint8_t *p;
    size_t len;
    size_t end;            /* after the last whole record */
    int complete;          /* holds COMPACT_DONE */
    int empty;             /* newest log without a single record */
    size_t count[WAL_TYPE_MAX + 1];
    const char *torn_why;
} rlog;

/* Everything one run works on. */
typedef struct replay {
    int dirfd;
    recover_state *rs;
    FILE *report;
    buf *err;
    uint32_t *gens;
    size_t ngens, gcap;
    uint64_t *snaps;
    size_t nsnaps, scap;
    rlog *logs;            /* logs[0..nlogs): base to newest kept */
    size_t nlogs;
    recover_map map;       /* the lists by name, their open leases by (list, id) */
    size_t refs_cap;       /* room in rs->refs */
    rkeys *keys;
    int keep;              /* recover_replay: map and keys stay the caller's */
} replay;

/* ---- failures ----------------------------------------------------------------------- */

/* Records the damage in file at off; a repair would cut the history at cut_gen/cut_off. */
static int fail(replay *x, const char *file, size_t off, const char *why, uint32_t cut_gen,
                size_t cut_off)
{
    buf_printf(x->err, "%s, offset %zu: %s", file, off, why);
    x->rs->cut_gen = cut_gen;
    x->rs->cut_off = cut_off;
    return -1;
}

/* ---- the directory ---------------------------------------------------------------------- */

static int collect(const char *name, int kind, uint64_t num, void *ctx)
{
    replay *x = ctx;
    if (kind == 1) {
        if (array_grow(&x->gens, &x->gcap, x->ngens, sizeof *x->gens) != 0)
            return -1;
        x->gens[x->ngens++] = (uint32_t)num;
    } else if (kind == 2) {
        if (array_grow(&x->snaps, &x->scap, x->nsnaps, sizeof *x->snaps) != 0)
            return -1;
        x->snaps[x->nsnaps++] = num;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- reading logs --------------------------------------------------------------------- */

/* Checks log g whole (framing and record structure); newest: the one log whose torn tail
 * is tolerated and which may be empty. */
static int scan_log(replay *x, rlog *g, int newest)
{
    uint64_t id;
    const char *why;
    size_t off, next, len;
    const uint8_t *body;
    wal_rec r;
    static const uint8_t zeros[WAL_HEADER_SIZE];
    if (newest && (g->len < WAL_HEADER_SIZE || memcmp(g->p, zeros, sizeof zeros) == 0)) {
        g->empty = 1;        /* a crash while the file was being created */
        return 0;
    }
    if (wal_header_check(g->p, g->len, WAL_MAGIC_LOG, &id, &why) != 0)
        return fail(x, g->name, 0, why, g->gen, 0);
    if (id != g->gen)
        return fail(x, g->name, 0, "header names another generation", g->gen, 0);
    for (off = WAL_HEADER_SIZE;; off = next) {
        wal_scan s = wal_next(g->p, g->len, off, &body, &len, &next, &why);
        if (s == WAL_END)
            break;
        if (s == WAL_TORN && why == wal_why_reserved) {
            if (newest)
                g->torn_why = why;    /* cut at the start; an older log just ends here */
            break;
        }
        if (s == WAL_BAD && newest && wal_unfinished(g->p, g->len, off)) {
            s = WAL_TORN;
            why = "a record left unfinished in the space reserved for the log";
        }
        if (s == WAL_TORN && newest) {
            g->torn_why = why;
            break;
        }
        if (s == WAL_TORN)
            return fail(x, g->name, off, "torn record in a log that is not the newest",
                        g->gen, off);
        if (s == WAL_BAD || wal_decode(body, len, &r, &why) != 0)
            return fail(x, g->name, off, why, g->gen, off);
        if (r.type == WAL_COMPACT_DONE) {
            if (r.id != g->gen)
                return fail(x, g->name, off, "COMPACT_DONE names another generation",
                            g->gen, off);
            g->complete = 1;
        }
        g->count[r.type]++;
    }
    g->end = off;
    size_t total = 0;
    for (int t = 0; t <= WAL_TYPE_MAX; t++)
        total += g->count[t];
    g->empty = newest && total == 0;
    return 0;
}

/* The next record of a checked log: 1 with *r and *off (its offset) set, 0 at the end. */
static int log_next(const rlog *g, size_t *pos, size_t *off, wal_rec *r)
{
    const uint8_t *body;
    size_t len, next;
    const char *why;
    if (*pos >= g->end ||
        wal_next(g->p, g->end, *pos, &body, &len, &next, &why) != WAL_OK ||
        wal_decode(body, len, r, &why) != 0)
        return 0;
    *off = *pos;
    *pos = next;
    return 1;
}

/* ---- replay ------------------------------------------------------------------------------ */

static int add_ref(recover_state *rs, uint64_t id, size_t *cap)
{
    if (array_grow(&rs->refs, cap, rs->nrefs, sizeof *rs->refs) != 0)
        return -1;
    rs->refs[rs->nrefs++] = id;
    return 0;
}

/* Called for each list record: log_no counts logs from 1, e is the record's list. */
typedef int (*record_fn)(replay *x, size_t log_no, const rlog *g, size_t off,
                         const wal_rec *r, rent *e);

/* Calls fn for every record that concerns a list, in log order; stops at its first
 * nonzero return and returns it. */
static int each_record(replay *x, record_fn fn)
{
    for (size_t i = 0; i < x->nlogs; i++) {
        const rlog *g = &x->logs[i];
        size_t pos = WAL_HEADER_SIZE, off;
        wal_rec r;
        while (log_next(g, &pos, &off, &r)) {
            if (r.type == WAL_COMPACT_DONE || r.type == WAL_NOOP || WAL_IS_KEY(r.type))
                continue;
            rent *e = recover_map_get(&x->map, r.name, r.name_len);
            if (!e)
                return fail(x, g->name, off, "out of memory", 0, 0);
            int rc = fn(x, i + 1, g, off, &r, e);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Pass 1, per record: where its list's state is last defined, and which snapshots are
 * referenced. */
static int note_definition(replay *x, size_t log_no, const rlog *g, size_t off,
                           const wal_rec *r, rent *e)
{
    /* A DROP defines the list too (as absent): it retires the file of the REPLACE before
     * it, which replay must then not need. */
    if (r->type == WAL_REPLACE || r->type == WAL_DROP ||
        (r->type == WAL_SNAPSHOT && g->complete)) {
        e->def_log = log_no;
        e->def_off = off;
        e->def_id = r->id;
    }
    if ((r->type == WAL_REPLACE || r->type == WAL_SNAPSHOT) && r->id &&
        add_ref(x->rs, r->id, &x->refs_cap) != 0)
        return fail(x, g->name, off, "out of memory", 0, 0);
    return 0;
}

static int find_definitions(replay *x)
{
    if (each_record(x, note_definition) != 0)
        return -1;
    if (x->rs->nrefs)
        qsort(x->rs->refs, x->rs->nrefs, sizeof *x->rs->refs, cmp_u64);
    return 0;
}

/* The list a defining record sets: empty, inline lines, or a snapshot file. */
static int load_definition(replay *x, const rlog *g, size_t off, const wal_rec *r, list **out)
{
    const char *why = "out of memory";
    char name[64];
    struct stat sb;
    *out = NULL;
    if (r->id == 0) {
        list *l = list_create();
        if (!l || (r->type == WAL_SNAPSHOT && snap_inline_lines(r, l, &why) != 0)) {
            list_free(l);
            return fail(x, g->name, off, why, g->gen, off);
        }
        x->rs->snap_bytes += r->data_len;
        *out = l;
        return 0;
    }
    buf msg = BUF_INIT;
    if (snap_read(x->dirfd, r->id, out, &msg) != 0) {
        buf_puts(&msg, " (referenced by this record)");
        fail(x, g->name, off, msg.data ? msg.data : "out of memory", g->gen, off);
        buf_free(&msg);
        return -1;
    }
    buf_free(&msg);
    wal_snap_name(name, sizeof name, r->id);
    if (fstatat(x->dirfd, name, &sb, 0) == 0)
        x->rs->snap_bytes += (uint64_t)sb.st_size;
    if (x->report)
        fprintf(x->report, "%s: %zu lines, list %.*s\n", name, list_length(*out),
                (int)r->name_len, r->name);
    return 0;
}

/* Pass 2, per record: applied if it comes at or after its list's defining record. */
static int apply_record(replay *x, size_t log_no, const rlog *g, size_t off,
                        const wal_rec *r, rent *e)
{
    char why[128];
    list *def = NULL;
    if (log_no < e->def_log || (log_no == e->def_log && off < e->def_off))
        return 0;               /* superseded by the list's defining record */
    if (r->type != WAL_DROP && log_no == e->def_log && off == e->def_off &&
        load_definition(x, g, off, r, &def) != 0)
        return -1;
    int rc = recover_map_apply(&x->map, e, r, def, why, sizeof why);
    if (rc == RECOVER_NOMEM)
        return fail(x, g->name, off, "out of memory", 0, 0);
    return rc ? fail(x, g->name, off, why, g->gen, off) : 0;
}

/* Applies the key records of every log, in log order. */
static int replay_keys(replay *x)
{
    for (size_t i = 0; i < x->nlogs; i++) {
        const rlog *g = &x->logs[i];
        size_t pos = WAL_HEADER_SIZE, off;
        wal_rec r;
        while (log_next(g, &pos, &off, &r))
            if (WAL_IS_KEY(r.type) &&
                rkeys_apply(&x->keys, &r) != 0)
                return fail(x, g->name, off, "out of memory", 0, 0);
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Moves the replayed lists of m into rs, sorted by name. */
static int hand_over(recover_map *m, recover_state *rs)
{
    size_t k = 0;
    rs->names = calloc(m->n ? m->n : 1, sizeof *rs->names);
    rs->lists = calloc(m->n ? m->n : 1, sizeof *rs->lists);
    rs->def_ids = calloc(m->n ? m->n : 1, sizeof *rs->def_ids);
    if (!rs->names || !rs->lists || !rs->def_ids)
        return -1;
    for (size_t i = 0; i < m->nb; i++)
        for (rent *e = m->b[i]; e; e = e->next) {
            if (!e->l)
                continue;
            if (!(rs->names[k] = strdup(e->name)))
                return -1;
            rs->nlists = ++k;     /* so that recover_free frees what is there */
        }
    qsort(rs->names, k, sizeof *rs->names, cmp_name);
    size_t nl = 0;
    for (size_t j = 0; j < k; j++)
        nl += recover_map_find(m, rs->names[j], strlen(rs->names[j]))->nleases;
    if (nl && !(rs->leases = calloc(nl, sizeof *rs->leases)))
        return -1;
    for (size_t j = 0; j < k; j++) {
        rent *e = recover_map_find(m, rs->names[j], strlen(rs->names[j]));
        rs->lists[j] = e->l;
        rs->def_ids[j] = e->def_id;
        e->l = NULL;
        /* Oldest first: the replay chained them newest first. */
        size_t at = rs->nleases + e->nleases;
        for (rlease *l = e->leases; l; l = l->next) {
            struct recover_lease *o = &rs->leases[--at];
            if (!(o->line = malloc(l->len ? l->len : 1)))
                return -1;
            memcpy(o->line, l->line, l->len);
            if (l->who_len && !(o->owner = malloc(l->who_len)))
                return -1;
            if (l->who_len)
                memcpy(o->owner, l->line + l->len, l->who_len);
            o->owner_len = l->who_len;
            o->list = j;
            o->id = l->id;
            o->until = l->until;
            o->len = l->len;
        }
        rs->nleases += e->nleases;
    }
    return 0;
}

int recover_hand_over(recover_map *map, rkeys *keys, recover_state *rs)
{
    return hand_over(map, rs) == 0 && rkeys_hand_over(keys, rs) == 0 ? 0 : -1;
}

/* ---- the run --------------------------------------------------------------------------- */

static void report_logs(const replay *x, size_t first_kept)
{
    static const char *types[] = {"", "push", "take", "reset", "replace", "snapshot", "done",
                                  "lease", "settle", "key set", "key del", "key lease",
                                  "key settle", "own", "renew", "key run", "", "",
                                  "push many", "drop", "key expire", "columns", "fence"};
    for (size_t i = 0; i < first_kept; i++) {
        char name[32];
        wal_log_name(name, sizeof name, x->gens[i]);
        fprintf(x->report, "%s: superseded by the compaction in %s; not read (removed at "
                "the next start)\n", name, x->logs[0].name);
    }
    for (size_t i = 0; i < x->nlogs; i++) {
        const rlog *g = &x->logs[i];
        fprintf(x->report, "%s: %zu bytes, compaction %s;", g->name, g->len,
                g->complete ? "complete" : "not complete");
        for (int t = WAL_PUSH; t <= WAL_TYPE_MAX; t++)
            if (*types[t])
                fprintf(x->report, " %zu %s", g->count[t], types[t]);
        fputc('\n', x->report);
        if (g->torn_why == wal_why_reserved)
            fprintf(x->report, "  %zu bytes reserved after the last record (offset %zu): "
                    "the start cuts them\n", g->len - g->end, g->end);
        else if (g->torn_why)
            fprintf(x->report, "  torn tail at offset %zu (%s): the start cuts its %zu "
                    "bytes\n", g->end, g->torn_why, g->len - g->end);
    }
}

/* Lists the logs and snapshots of the directory into x, the logs' generations sorted;
 * notes the highest generation in rs. Returns 0, or -1 with err set. */
static int list_files(replay *x)
{
    recover_state *rs = x->rs;
    if (wal_list(x->dirfd, collect, x) != 0) {
        buf_printf(x->err, "cannot list the state directory: %s", strerror(errno));
        return -1;
    }
    if (x->ngens)
        qsort(x->gens, x->ngens, sizeof *x->gens, cmp_u32);
    for (size_t i = 0; i < x->ngens; i++)
        rs->max_gen = x->gens[i] > rs->max_gen ? x->gens[i] : rs->max_gen;
    for (size_t i = 0; i < x->nsnaps; i++)
        rs->max_gen = (x->snaps[i] >> 32) > rs->max_gen ? (uint32_t)(x->snaps[i] >> 32) : rs->max_gen;
    return 0;
}

/* Maps and scans the logs newest first, down to the newest complete one: the older ones
 * do not matter. *top: one past the newest log with a record (0: none); *base: the
 * newest complete log (ngens: none). Returns 0, or -1 with err set. */
static int scan_logs(replay *x, size_t ngens, size_t *top, size_t *base)
{
    *top = ngens;
    *base = ngens;
    for (size_t i = ngens; i-- > 0;) {
        rlog *g = &x->logs[i];
        g->gen = x->gens[i];
        wal_log_name(g->name, sizeof g->name, g->gen);
        if (wal_map(x->dirfd, g->name, &g->p, &g->len) != 0) {
            buf_printf(x->err, "%s: %s", g->name, strerror(errno));
            return -1;
        }
        if (scan_log(x, g, i + 1 == *top) != 0)
            return -1;
        if (g->empty) {
            x->rs->empty_gen = g->gen;
            if (x->report)
                fprintf(x->report, "%s: no record; ignored (removed at the next start)\n",
                        g->name);
            *top = i;
            continue;
        }
        if (g->complete) {
            *base = i;
            break;
        }
    }
    return 0;
}

/* Replays logs [base, top) into the lists and hands them over to rs. Returns 0, or -1
 * with err set. */
static int replay_logs(replay *x, size_t base, size_t top)
{
    recover_state *rs = x->rs;
    int rc;
    rs->base_gen = x->gens[base];
    rs->last_gen = x->gens[top - 1];
    rs->last_end = x->logs[top - 1].end;
    rs->last_size = x->logs[top - 1].len;
    rs->torn_why = x->logs[top - 1].torn_why;
    x->logs += base;
    x->nlogs = top - base;
    if (x->report)
        report_logs(x, base);
    rc = find_definitions(x) == 0 && each_record(x, apply_record) == 0 &&
         replay_keys(x) == 0 ? 0 : -1;
    x->logs -= base;
    if (rc == 0 && !x->keep && recover_hand_over(&x->map, x->keys, rs) != 0) {
        buf_puts(x->err, "out of memory");
        rc = -1;
    }
    return rc;
}

/* The newest snapshot number of the last generation, among the files and the references. */
static void note_last_snapshot(const replay *x, recover_state *rs)
{
    for (size_t i = 0; i < x->nsnaps; i++)
        if ((uint32_t)(x->snaps[i] >> 32) == rs->last_gen && (uint32_t)x->snaps[i] > rs->last_snap_n)
            rs->last_snap_n = (uint32_t)x->snaps[i];
    for (size_t i = 0; i < rs->nrefs; i++)
        if ((uint32_t)(rs->refs[i] >> 32) == rs->last_gen && (uint32_t)rs->refs[i] > rs->last_snap_n)
            rs->last_snap_n = (uint32_t)rs->refs[i];
}

/* recover_run's work; with x->keep (recover_replay) the state stays in x's map and keys. */
static int run(replay *x)
{
    recover_state *rs = x->rs;
    buf *err = x->err;
    int rc = -1;
    size_t ngens = 0, top, base;
    memset(rs, 0, sizeof *rs);
    if (list_files(x) != 0)
        goto cleanup;
    ngens = x->ngens;
    x->logs = calloc(ngens ? ngens : 1, sizeof *x->logs);
    if (!x->logs) {
        buf_puts(err, "out of memory");
        goto cleanup;
    }
    if (scan_logs(x, ngens, &top, &base) != 0)
        goto cleanup;
    if (top == 0) {              /* nothing yet: a new history */
        rc = x->keep ? 0 : hand_over(&x->map, rs);
        goto cleanup;
    }
    if (base == ngens) {
        fail(x, x->logs[0].name, 0, "the history is incomplete: no log from here on holds a "
             "finished compaction, so the logs before it are missing", 0, 0);
        goto cleanup;
    }
    rc = replay_logs(x, base, top);
    note_last_snapshot(x, rs);
cleanup:
    for (size_t i = 0; x->logs && i < ngens; i++)
        wal_unmap(x->logs[i].p, x->logs[i].len);
    free(x->logs);
    free(x->gens);
    free(x->snaps);
    return rc;
}

int recover_run(int dirfd, recover_state *rs, FILE *report, buf *err)
{
    replay x = {.dirfd = dirfd, .rs = rs, .report = report, .err = err};
    int rc = run(&x);
    recover_map_free(&x.map);
    rkeys_free(x.keys);
    return rc;
}

int recover_replay(int dirfd, recover_state *rs, recover_map *map, rkeys **keys, buf *err)
{
    replay x = {.dirfd = dirfd, .rs = rs, .err = err, .keep = 1};
    int rc = run(&x);
    *map = x.map;
    *keys = x.keys;
    return rc;
}

void recover_free(recover_state *rs)
{
    for (size_t i = 0; i < rs->nlists; i++) {
        free(rs->names[i]);
        list_free(rs->lists[i]);
    }
    for (size_t i = 0; i < rs->nleases; i++) {
        free(rs->leases[i].line);
        free(rs->leases[i].owner);
    }
    free(rs->leases);
    for (size_t i = 0; i < rs->nkeys; i++) {
        free(rs->keys[i].name);
        free(rs->keys[i].value);
    }
    free(rs->keys);
    free(rs->key_leases);
    for (size_t i = 0; i < rs->nruns; i++)
        free(rs->runs[i].name);
    free(rs->runs);
    free(rs->names);
    free(rs->lists);
    free(rs->def_ids);
    free(rs->refs);
    memset(rs, 0, sizeof *rs);
}

/* ---- tidying --------------------------------------------------------------------------- */

static int tidy_one(const char *name, int kind, uint64_t num, void *ctx)
{
    const void **a = ctx;
    int dirfd = *(const int *)a[0];
    const recover_state *rs = a[1];
    int *failed = (int *)a[2];
    int drop = kind == 3 ||
               (kind == 1 && ((uint32_t)num < rs->base_gen || (uint32_t)num == rs->empty_gen)) ||
               (kind == 2 && (!rs->nrefs ||
                              !bsearch(&num, rs->refs, rs->nrefs, sizeof num, cmp_u64)));
    if (drop && unlinkat(dirfd, name, 0) != 0 && errno != ENOENT) {
        log_warn("journal: cannot remove %s: %s", name, strerror(errno));
        ++*failed;
    }
    return 0;
}

int recover_tidy(int dirfd, const recover_state *rs)
{
    int failed = 0;
    const void *a[3] = {&dirfd, rs, &failed};
    if (wal_list(dirfd, tidy_one, a) != 0) {
        log_warn("journal: cannot list the state directory: %s", strerror(errno));
        failed++;
    }
    return failed;
}
