/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_param.c - the commands' parameters, parsed strictly, with the reference's KOs; FIND_MODE
 * turned into a matcher. */
#include "cmd_param.h"

#include <string.h>
#include <strings.h>

#include "base/csv.h"
#include "base/num.h"
#include "cmd_answer.h"
#include "dataset/dataset.h"

#define MSG_TIMEOUT     "TIMEOUT value has to be a number of seconds from 0 to %d !"
#define MSG_LEASE_VALUE "LEASE value has to be a number of seconds above 0 up to %d !"
#define MSG_LEASE_KEEP  "LEASE needs KEEP=FALSE !"
#define MSG_LEASE_LINES "LEASE takes at most %d lines at once !"
#define MSG_OWNER_VALUE "OWNER value has to be 1 to %d bytes, without NUL !"

const char *const cmd_read_modes[] = {"FIRST", "LAST", "RANDOM", NULL};
const char *const cmd_add_modes[] = {"FIRST", "LAST", NULL};
static const char *const find_modes[] = {"SUBSTRING", "EQUALS", "REGEX_FIND", "REGEX_MATCH",
                                         NULL};

/* A name holding NUL can name no list: ADD refuses it, and lookups find nothing. */
const char *cmd_list_name(const params *p, cmd_result *r, size_t *len)
{
    const char *name = params_get(p, PARAM_FILENAME, len);
    if (!name)
        cmd_ko(r, 400, MSG_NO_FILENAME);
    return name;
}

/* name (len bytes) checked by the dataset's name rules; NULL with the KO set. */
static const char *checked_name(const char *name, size_t len, cmd_result *r)
{
    switch (dataset_check_name(name, len)) {
    case DATASET_OK:       return name;
    case DATASET_TOO_LONG: cmd_ko(r, 400, MSG_TOO_LONG); return NULL;
    default:               cmd_ko_illegal(r, "FILENAME", name, len); return NULL;
    }
}

const char *cmd_file_name(const params *p, cmd_result *r)
{
    size_t len;
    const char *name = cmd_list_name(p, r, &len);
    return name ? checked_name(name, len, r) : NULL;
}

const char *cmd_key_name(const params *p, cmd_result *r)
{
    size_t len;
    const char *name = params_get(p, PARAM_NAME, &len);
    if (!name) {
        cmd_ko(r, 400, MSG_NO_NAME);
        return NULL;
    }
    return checked_name(name, len, r);
}

int cmd_flag_param(const params *p, param_id id, int dflt)
{
    static const char *const flags[] = {"FALSE", "TRUE", NULL};
    return cmd_choice_param(p, id, flags, dflt);
}

int cmd_choice_param(const params *p, param_id id, const char *const *choices, int dflt)
{
    size_t len;
    const char *v = params_get(p, id, &len);
    if (!v)
        return dflt;
    for (int i = 0; choices[i]; i++)
        if (strlen(choices[i]) == len && memcmp(choices[i], v, len) == 0)
            return i;
    return -1;
}

int cmd_find_mode_of(const params *p)
{
    return cmd_choice_param(p, PARAM_FIND_MODE, find_modes, FIND_SUBSTRING);
}

int cmd_find_mode(const params *p, cmd_result *r)
{
    int mode = cmd_find_mode_of(p);
    if (mode < 0)
        cmd_ko(r, 400, MSG_FIND_MODE);
    return mode;
}

int cmd_size_param(const params *p, param_id id, size_t min, size_t max, size_t dflt,
                   size_t *out)
{
    size_t len;
    uint64_t n;
    const char *v = params_get(p, id, &len);
    *out = dflt;
    if (!v)
        return 0;
    /* More than 19 digits is refused however many of them are leading zeros. */
    if (len > 19 || num_parse_u64(v, len, min, max, &n) != 0)
        return -1;
    *out = (size_t)n;
    return 0;
}

int cmd_timeout_param(const cmd_server *srv, const params *p, cmd_result *r, int64_t *ms)
{
    size_t len;
    const char *v = params_get(p, PARAM_TIMEOUT, &len);
    *ms = 0;
    if (!v || num_parse_seconds_ms(v, len, srv->conf->max_wait, ms) == 0)
        return 0;
    cmd_ko_format(r, MSG_TIMEOUT, srv->conf->max_wait);
    return -1;
}

int cmd_lease_param(const cmd_server *srv, const params *p, int keep, long n, cmd_result *r,
                    int64_t *ms)
{
    size_t len;
    const char *v = params_get(p, PARAM_LEASE, &len);
    *ms = 0;
    if (!v)
        return 0;
    if (num_parse_seconds_ms(v, len, srv->conf->max_lease, ms) != 0 || *ms == 0) {
        cmd_ko_format(r, MSG_LEASE_VALUE, srv->conf->max_lease);
        return -1;
    }
    if (keep) {
        cmd_ko(r, 400, MSG_LEASE_KEEP);
        return -1;
    }
    /* Each id is 17 bytes of the X-STS-Lease header, which must fit in libmicrohttpd's
     * connection memory (32 KiB): past it the answer could not be sent, its lines leased. */
    if (n > CMD_LEASE_MAX_LINES) {
        cmd_ko_format(r, MSG_LEASE_LINES, CMD_LEASE_MAX_LINES);
        return -1;
    }
    return 0;
}

int cmd_ttl_param(const params *p, cmd_result *r, int64_t *ms)
{
    size_t len;
    const char *v = params_get(p, PARAM_TTL, &len);
    *ms = 0;
    if (!v)
        return 0;
    if (num_parse_seconds_ms(v, len, CMD_TTL_MAX_S, ms) != 0 || *ms == 0) {
        cmd_ko(r, 400, MSG_TTL_VALUE);
        return -1;
    }
    return 0;
}

uint64_t cmd_lease_id(const char *v, size_t len)
{
    uint64_t id = 0;
    if (len != 16)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = v[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
        if (d < 0)
            return 0;
        id = id << 4 | (uint64_t)d;
    }
    return id;
}

int cmd_owner_param(const params *p, cmd_result *r, const char **owner, size_t *len)
{
    *owner = params_get(p, PARAM_OWNER, len);
    if (!*owner || (*len >= 1 && *len <= STORE_OWNER_MAX && !memchr(*owner, '\0', *len)))
        return 0;
    cmd_ko_format(r, MSG_OWNER_VALUE, STORE_OWNER_MAX);
    *owner = NULL;
    return -1;
}

int cmd_format_param(const params *p, cmd_result *r)
{
    size_t len;
    const char *v = params_get(p, PARAM_FORMAT, &len);
    if (!v)
        return 0;
    if (len == 4 && strncasecmp(v, "JSON", 4) == 0)
        r->json = 1;
    else if (len == 4 && strncasecmp(v, "HTML", 4) == 0)
        r->json = 0;
    else {
        cmd_ko(r, 400, MSG_FORMAT);
        return -1;
    }
    return 0;
}

/* ---- FIND_MODE's matchers ------------------------------------------------------------ */

static int substring_match(const char *s, size_t len, void *ctx)
{
    const cmd_matcher *cm = ctx;
    return memmem(s, len, cm->needle, cm->len) != NULL;
}

int cmd_matcher_init(cmd_matcher *cm, int mode, const char *pattern, size_t len)
{
    memset(cm, 0, sizeof *cm);
    cm->needle = pattern;
    cm->len = len;
    if (mode == FIND_EQUALS) {
        cm->m.equal = pattern;
        cm->m.equal_len = len;
    } else if (mode == FIND_REGEX_FIND || mode == FIND_REGEX_MATCH) {
        cm->re = rx_get(pattern, len, mode == FIND_REGEX_MATCH);
        if (!cm->re)
            return -1;
        cm->m.match = rx_match;
        cm->m.ctx = cm->re;
    } else {
        cm->m.match = substring_match;
        cm->m.ctx = cm;
    }
    return 0;
}

/* The field's value is the pattern: the store's index finds it, this tests one line. */
static int column_match(const char *s, size_t len, void *ctx)
{
    const cmd_matcher *cm = ctx;
    csv_field f;
    return csv_get(s, len, cm->sep, cm->col, &f) == 0 && csv_field_eq(&f, cm->needle, cm->len);
}

void cmd_matcher_column(cmd_matcher *cm, const char *column, size_t clen, size_t col,
                        char sep)
{
    cm->col = col;
    cm->sep = sep;
    cm->m.column = column;
    cm->m.column_len = clen;
    cm->m.match = column_match;
    cm->m.ctx = cm;
}

void cmd_matcher_free(cmd_matcher *cm)
{
    rx_release(cm->re);
    cm->re = NULL;
}
