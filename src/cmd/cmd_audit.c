/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_audit.c - which answers go to the audit log, and what each line says: every OK
 * that hands out a line or changes a list or a key (docs/audit.md). */
#include "cmd/command.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "audit/audit_record.h"
#include "base/clock.h"
#include "cmd_bulk.h"
#include "cmd_param.h"
#include "store/store.h"

/* What an audited command's lines hold. */
typedef enum audit_kind {
    AK_TAKE,       /* READ, FIND: the line handed out (the answer), KEEP, lease, owner */
    AK_MULTI,      /* READMULTI: one line per line handed out, each with its lease */
    AK_ADD,        /* ADD: the line given */
    AK_LIST,       /* INITFILE, LOAD, RESET: the list, whose lines are all replaced */
    AK_SETTLE,     /* ACK, RELEASE: the list or key, and the LINE, LEASE, OWNER given */
    AK_KEY,        /* SET, DONE (VALUE), DEL, INCR (its lease), EXPIRE: the key (DEL's
                    * PREFIX when it names none) */
    AK_RUN,        /* ONCE: only when it hands out a run (a lease) */
    AK_ADDS,       /* ADDMULTI: one line per line given, as that many ADDs would write */
    AK_DROP,       /* DROP: the list, or the PREFIX of the lists */
} audit_kind;

/* The rule: a command not named here hands out and changes nothing (LENGTH, STATUS,
 * PEEK, GET, ...), or changes no data a test reads (SAVE writes a file; BARRIER and OPEN
 * only let callers through). */
static const struct {
    const char *name;
    audit_kind kind;
} audited[] = {
    {"READ", AK_TAKE},     {"FIND", AK_TAKE},      {"READMULTI", AK_MULTI},
    {"ADD", AK_ADD},       {"INITFILE", AK_LIST},  {"LOAD", AK_LIST},
    {"RESET", AK_LIST},    {"ACK", AK_SETTLE},     {"RELEASE", AK_SETTLE},
    {"SET", AK_KEY},       {"DONE", AK_KEY},       {"DEL", AK_KEY},
    {"INCR", AK_KEY},      {"ONCE", AK_RUN},       {"ADDMULTI", AK_ADDS},
    {"DROP", AK_DROP},     {"EXPIRE", AK_KEY},
};

static int kind_of(const char *name, audit_kind *k)
{
    for (size_t i = 0; i < sizeof audited / sizeof audited[0]; i++)
        if (strcmp(audited[i].name, name) == 0) {
            *k = audited[i].kind;
            return 0;
        }
    return -1;
}

/* The value of the answer's header name ("Name\0value\0" pairs, cmd_header), or NULL. */
static const char *header_value(const buf *h, const char *name)
{
    size_t off = 0;
    while (off < h->len) {
        const char *n = h->data + off;
        size_t nl = strnlen(n, h->len - off);
        if (off + nl + 1 >= h->len)
            return NULL;
        const char *v = n + nl + 1;
        if (strcmp(n, name) == 0)
            return v;
        off += nl + 1 + strnlen(v, h->len - off - nl - 1) + 1;
    }
    return NULL;
}

/* Formats rec and hands it to the writer; a line that cannot be made (out of memory)
 * is lost like one the writer had no room for. */
static void emit(audit *a, buf *out, const audit_record *rec)
{
    buf_clear(out);
    if (audit_format(out, rec, audit_hashes(a)) == 0)
        audit_append(a, out->data, out->len);
    else
        audit_drop(a);
}

/* ADDMULTI's lines, one record each, split as ADDMULTI splits them (cmd_bulk_lines).
 * Only an OK comes here, so every line was added. */
static void emit_adds(audit *a, buf *out, const params *p, audit_record *rec)
{
    store_span *v;
    size_t n = cmd_bulk_lines(p, &v);
    if (n == SIZE_MAX) {
        audit_drop(a);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        rec->line = v[i].s;
        rec->line_len = v[i].len;
        emit(a, out, rec);
    }
    free(v);
}

/* A parameter into *s and *len, left NULL when absent. */
static void param(const params *p, param_id id, const char **s, size_t *len)
{
    *len = 0;
    *s = params_get(p, id, len);
}

void command_audit(const cmd_server *srv, const params *p, const cmd_result *r,
                   const struct sockaddr *addr, socklen_t addr_len)
{
    audit_kind kind;
    const char *name = command_name(r->cmd);
    if (!srv->audit || !name || r->kind == REPLY_KO || r->refused != REFUSED_NONE ||
        kind_of(name, &kind) != 0)
        return;
    const char *lease = header_value(&r->headers, "X-STS-Lease");
    if (kind == AK_RUN && !lease)
        return;                 /* ONCE answered DONE: nothing handed out */
    audit_record rec = {
        .wall_ms = clock_wall_ms(), .addr = addr, .addr_len = addr_len,
        .token = r->who[0] ? r->who : NULL, .cmd = name, .keep = -1,
    };
    if (kind == AK_KEY || kind == AK_RUN)
        param(p, PARAM_NAME, &rec.key, &rec.key_len);
    else
        param(p, PARAM_FILENAME, &rec.list, &rec.list_len);
    /* DEL PREFIX and DROP PREFIX name no key or list: the prefix says which went. */
    if ((kind == AK_KEY || kind == AK_DROP) && !rec.key && !rec.list)
        param(p, PARAM_PREFIX, &rec.prefix, &rec.prefix_len);
    if (lease) {
        rec.lease = lease;
        rec.lease_len = strlen(lease);
    }
    switch (kind) {
    case AK_TAKE:
        rec.line = r->text.data ? r->text.data : "";
        rec.line_len = r->text.len;
        param(p, PARAM_OWNER, &rec.owner, &rec.owner_len);
        /* A line lent (LEASE, OWNER) is taken until it comes back. */
        rec.keep = lease ? 0 : cmd_flag_param(p, PARAM_KEEP, 1) == 1;
        break;
    case AK_MULTI:
        rec.keep = lease ? 0 : cmd_flag_param(p, PARAM_KEEP, 1) == 1;
        break;
    case AK_ADD:
        param(p, PARAM_LINE, &rec.line, &rec.line_len);
        break;
    case AK_SETTLE:
        param(p, PARAM_LINE, &rec.line, &rec.line_len);
        param(p, PARAM_LEASE, &rec.lease, &rec.lease_len);
        param(p, PARAM_OWNER, &rec.owner, &rec.owner_len);
        if (!rec.list)
            param(p, PARAM_NAME, &rec.key, &rec.key_len);
        break;
    case AK_KEY:
        param(p, PARAM_VALUE, &rec.value, &rec.value_len);
        if (!rec.lease)
            param(p, PARAM_LEASE, &rec.lease, &rec.lease_len);
        break;
    case AK_LIST:
    case AK_RUN:
    case AK_ADDS:
    case AK_DROP:
        break;
    }
    buf out = BUF_INIT;
    if (kind == AK_ADDS) {
        emit_adds(srv->audit, &out, p, &rec);
    } else if (kind != AK_MULTI) {
        emit(srv->audit, &out, &rec);
    } else {
        /* One line per line: grep finds a login whichever READMULTI took it. */
        size_t off = 0, len;
        const char *ids = lease;
        for (const char *l; (l = store_next_line(&r->text, &off, &len)) != NULL;) {
            rec.line = l;
            rec.line_len = len;
            if (ids) {
                const char *comma = strchr(ids, ',');
                rec.lease = ids;
                rec.lease_len = comma ? (size_t)(comma - ids) : strlen(ids);
                ids = comma ? comma + 1 : NULL;
            }
            emit(srv->audit, &out, &rec);
        }
    }
    buf_free(&out);
}

void command_audit_expired(const cmd_server *srv, const char *name, const char *line,
                           size_t len, uint64_t id, const char *owner, size_t owner_len)
{
    if (!srv->audit)
        return;
    char lease[17];
    snprintf(lease, sizeof lease, "%016llx", (unsigned long long)id);
    audit_record rec = {
        .wall_ms = clock_wall_ms(), .cmd = "LEASE_EXPIRED", .keep = -1,
        .list = name, .list_len = strlen(name), .line = line, .line_len = len,
        .lease = lease, .lease_len = 16, .owner = owner, .owner_len = owner_len,
    };
    buf out = BUF_INIT;
    emit(srv->audit, &out, &rec);
    buf_free(&out);
}
