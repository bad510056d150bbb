/* command_int.h - what the command table (command.c), the commands that look without
 * changing anything (browse.c) and the commands that wait (command_wait.c) share;
 * private to them. */
#ifndef STSD_COMMAND_INT_H
#define STSD_COMMAND_INT_H

#include <stdint.h>

#include "cmd/command.h"

typedef void (*cmd_handler)(const cmd_server *srv, const params *p, cmd_result *r);

/* A KO with message msg; status is its HTTP status when answered in JSON. */
void command_ko(cmd_result *r, unsigned status, const char *msg);
/* The KO for store error rc concerning list name[0..len). */
void command_ko_store(cmd_result *r, store_rc rc, const char *name, size_t len);

/* FILENAME (len bytes, may hold NUL), or NULL with the reference's KO set when absent. */
const char *command_list_name(const params *p, cmd_result *r, size_t *len);

/* FIND_MODE: 0 SUBSTRING (the default), 1 EQUALS, 2 REGEX_FIND, 3 REGEX_MATCH; -1 with
 * the reference's KO set when invalid. */
int command_find_mode(const params *p, cmd_result *r);
/* The reference's KO for a pattern that does not compile. */
void command_ko_regex(cmd_result *r);

/* STATUS and CONFIG in JSON (browse.c). */
void browse_status_json(const cmd_server *srv, cmd_result *r);
void browse_config_json(const cmd_server *srv, cmd_result *r);

/* PEEK, FILES and INFO (browse.c). */
void browse_peek(const cmd_server *srv, const params *p, cmd_result *r);
void browse_files(const cmd_server *srv, const params *p, cmd_result *r);
void browse_info(const cmd_server *srv, const params *p, cmd_result *r);

/* READ's and READMULTI's answer to the store's rc (lines in r->text, count as set). */
void cmd_read_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen, long n,
                     size_t count, int multi);

/* FIND's answer to the store's rc (the line in r->text). */
void cmd_find_answer(cmd_result *r, store_rc rc, const char *name, size_t nlen);

/* What a READ or READMULTI asks; n is NB_LINES. */
typedef struct cmd_read_req {
    const char *name;
    size_t nlen;
    store_end end;
    int keep;
    long n;
    int multi;
    int64_t lease_ms;     /* LEASE (keep 0), 0: none */
} cmd_read_req;

/* What a FIND asks: LINE, its mode (FIND_SUBSTRING...), keep. */
enum { FIND_SUBSTRING, FIND_EQUALS, FIND_REGEX_FIND, FIND_REGEX_MATCH };
typedef struct cmd_find_req {
    const char *name;
    size_t nlen;
    const char *line;
    size_t llen;
    int mode;
    int keep;
    int64_t lease_ms;
} cmd_find_req;

/* The most lines one leased READMULTI takes: their ids must fit in its answer's header. */
#define CMD_LEASE_MAX_LINES 1000

/* LEASE= of READ, READMULTI, FIND (keep: their KEEP; n: the lines asked) in ms into *ms (0
 * when absent); 0, or -1 with the KO set (bad value, KEEP=TRUE, more than
 * CMD_LEASE_MAX_LINES lines). */
int cmd_lease_param(const cmd_server *srv, const params *p, int keep, long n, cmd_result *r,
                    int64_t *ms);
/* Writes the lease ids in ids (uint64_t each) as r's X-STS-Lease value. */
void cmd_lease_ids(cmd_result *r, const buf *ids);
/* ACK, RELEASE, LEASES (command_lease.c). */
void cmd_ack(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_release(const cmd_server *srv, const params *p, cmd_result *r);
void cmd_leases(const cmd_server *srv, const params *p, cmd_result *r);

/* Runs READ/READMULTI q, waiting up to deadline_ms (clock_now_ms clock) when it cannot be
 * served now: the answer is in r, or r->park is set and it comes later. */
void cmd_wait_read(const cmd_server *srv, const cmd_read_req *q, int64_t deadline_ms,
                   cmd_result *r);

/* Runs FIND q the same way. */
void cmd_wait_find(const cmd_server *srv, const cmd_find_req *q, int64_t deadline_ms,
                   cmd_result *r);

/* Parses TIMEOUT (decimal seconds, 0..max_s) into *ms. Returns 0, or -1 if invalid. */
int cmd_parse_seconds(const char *v, size_t len, int max_s, int64_t *ms);

#endif
