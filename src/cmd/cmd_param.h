/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_param.h - strict parsers of the commands' parameters: each returns the value, or
 * sets the KO the reference gives for it; FIND_MODE's matchers. Private to cmd/. */
#ifndef STSD_CMD_PARAM_H
#define STSD_CMD_PARAM_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/command.h"
#include "list/rx.h"
#include "store/store.h"

/* FIND_MODE's values, in the order of their names. */
enum { FIND_SUBSTRING, FIND_EQUALS, FIND_REGEX_FIND, FIND_REGEX_MATCH };

/* The most lines one leased READMULTI takes: their ids must fit in its answer's header. */
#define CMD_LEASE_MAX_LINES 1000

/* FILENAME (len bytes, may hold NUL), or NULL with the reference's KO set when absent. */
const char *cmd_list_name(const params *p, cmd_result *r, size_t *len);
/* FILENAME checked as a file name for INITFILE, LOAD and SAVE (a C string), or NULL with
 * the reference's KO set. */
const char *cmd_file_name(const params *p, cmd_result *r);

/* NAME of a key (SET, GET, DEL, INCR, ONCE, DONE), by FILENAME's rules; NULL with the KO
 * set. */
const char *cmd_key_name(const params *p, cmd_result *r);

/* A TRUE/FALSE parameter (exact upper case, as the reference): 1/0, dflt when absent, -1
 * when invalid. */
int cmd_flag_param(const params *p, param_id id, int dflt);
/* Index of id's value among choices (NULL-terminated, exact), dflt when absent, -1 when
 * none matches. */
int cmd_choice_param(const params *p, param_id id, const char *const *choices, int dflt);

extern const char *const cmd_read_modes[];    /* FIRST LAST RANDOM: store_end */
extern const char *const cmd_add_modes[];     /* FIRST LAST */
/* FIND_MODE (FIND_SUBSTRING when absent), or -1 when invalid. */
int cmd_find_mode_of(const params *p);
/* The same, with the reference's KO set when invalid. */
int cmd_find_mode(const params *p, cmd_result *r);

/* FIND_MODE turned into the store's matcher (FIND, waiting FINDs, PEEK's MATCH):
 * substring, equality, or a pcre2 regex (found anywhere, or matching the whole line). */
typedef struct cmd_matcher {
    store_matcher m;          /* what the store calls; points into this struct */
    rx *re;                   /* the compiled regex (the cache's reference), or NULL */
    const char *needle;       /* SUBSTRING's and EQUALS's pattern (not owned) */
    size_t len;
    size_t col;               /* COLUMN=: the field EQUALS compares, cut by sep */
    char sep;
} cmd_matcher;

/* Sets cm up for mode (FIND_SUBSTRING...) and pattern[0..len), which must outlive it;
 * cm must not move afterwards. Returns 0, or -1 if a regex does not compile (cm is then
 * empty). */
int cmd_matcher_init(cmd_matcher *cm, int mode, const char *pattern, size_t len);

/* FIND COLUMN=: turns cm, set up for FIND_EQUALS, into a match of field col (of lines
 * cut by sep) of column[0..clen), which must outlive cm. */
void cmd_matcher_column(cmd_matcher *cm, const char *column, size_t clen, size_t col,
                        char sep);

/* Releases cm's regex. */
void cmd_matcher_free(cmd_matcher *cm);

/* A decimal in [min, max] (dflt when absent) into *out. Returns 0, or -1 when invalid. */
int cmd_size_param(const params *p, param_id id, size_t min, size_t max, size_t dflt,
                   size_t *out);

/* TIMEOUT in ms into *ms (0 when absent). Returns 0, or -1 with the KO set. */
int cmd_timeout_param(const cmd_server *srv, const params *p, cmd_result *r, int64_t *ms);
/* LEASE= of READ, READMULTI, FIND (keep: their KEEP; n: the lines asked) in ms into *ms
 * (0 when absent). Returns 0, or -1 with the KO set (bad value, KEEP=TRUE, more than
 * CMD_LEASE_MAX_LINES lines). */
int cmd_lease_param(const cmd_server *srv, const params *p, int keep, long n, cmd_result *r,
                    int64_t *ms);
/* The longest TTL= a key may be given: 30 days. Not stsd.maxLease, which bounds how
 * long a line is lent: a run's flag may well need to outlive a day of tests. */
#define CMD_TTL_MAX_S 2592000
#define MSG_TTL_VALUE "TTL value has to be seconds from 0.001 to 2592000, nothing changed !"
/* TTL= (SET, INCR, EXPIRE, ONCE, DONE) in ms into *ms (0 when absent). Returns 0, or -1
 * with the KO (400) set for a bad or zero value. */
int cmd_ttl_param(const params *p, cmd_result *r, int64_t *ms);
/* A lease id as X-STS-Lease gave it: 16 hex digits. 0 when it cannot be one. */
uint64_t cmd_lease_id(const char *v, size_t len);
/* OWNER= of READ, ACK, RELEASE into *owner and *len (*owner NULL when absent). Returns 0,
 * or -1 with the KO set (empty, longer than STORE_OWNER_MAX bytes, or holding NUL). */
int cmd_owner_param(const params *p, cmd_result *r, const char **owner, size_t *len);
/* The KO of an OWNER= where it has no meaning (READMULTI, FIND). */
#define MSG_OWNER_ONLY  "OWNER works with READ, ACK and RELEASE only !"

/* FORMAT=JSON|HTML (any case) into r->json, which holds what Accept asked for. Returns 0,
 * or -1 with the KO set. */
int cmd_format_param(const params *p, cmd_result *r);

#endif
