/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_out.h - a server's JSON answer as stsctl prints it for scripts: raw lines, counts
 * as numbers, STATUS as a table on a terminal or "name<TAB>lines" when piped, CLUSTER as
 * a table on a terminal or "key<TAB>value" lines and a line per node when piped. */
#ifndef STSCTL_OUT_H
#define STSCTL_OUT_H

#include <stdio.h>

#include "ctl_http.h"
#include "ctl_json.h"

/* stsctl's exit statuses. */
enum { CTL_EXIT_OK = 0, CTL_EXIT_KO = 1, CTL_EXIT_USAGE = 2, CTL_EXIT_SERVER = 3 };

/* Prints answer v (an OK) on out. tty: out is a terminal (STATUS and CLUSTER as tables).
 * Returns 0, or -1 on a write error. */
int ctl_print(FILE *out, const cj *v, int tty);

/* Decodes base64 text s[0..n) and writes the bytes on out. Returns 0 or -1 (bad text). */
int ctl_put_base64(FILE *out, const char *s, size_t n);

/* Time to empty in seconds as "42s", "3m20s", "1h05m", or "-" for null, written to out. */
void ctl_duration(char *out, size_t n, const cj *seconds);
/* s seconds (>= 0) the same way. */
void ctl_seconds(char *out, size_t n, double s);

/* How a verb's answer prints, from stsctl's options. */
typedef struct ctl_show {
    int json;              /* --json: the server's JSON as sent */
    int long_form;         /* --long: every field, not result alone */
    int print_lease;       /* --print-lease: lease ids on stdout after the answer */
    const char *result;    /* the member printed alone (ctl_result_of), or NULL */
    int quiet;             /* an OK prints nothing (but its JSON with json) */
} ctl_show;

/* Prints answer a as a verb's result: an OK on stdout (its JSON as sent with json; the
 * member show->result alone unless long_form); the lease ids (X-STS-Lease) one a line,
 * on stderr first, or with print_lease on stdout after the answer; a KO's message on
 * stderr; 401/403 and answers that are not stsd's said with url. show NULL: all unset.
 * Returns the exit status. */
int ctl_finish(const ctl_answer *a, const char *url, const ctl_show *show);

/* Prints the bare result member of OK answer v on out: a string or number as it is,
 * "<member>_base64" as its bytes, then a newline. Returns 0, 1 when v has no such
 * member (nothing printed), -1 on a write error. */
int ctl_print_result(FILE *out, const cj *v, const char *member);

/* Names and values are the clients' bytes: on a terminal a control byte among them
 * would move the cursor or change the terminal. s[0..len) as one cell of width columns into out (NUL-ended; cap >= 4 * width + 1 holds
 * any cell): one column per character, a control byte (C0, DEL, C1) or a byte that is
 * not well-formed UTF-8 as '?', cut with "..." when longer than width, padded with spaces
 * to width when pad is set. */
void ctl_cell(char *out, size_t cap, const char *s, size_t len, int width, int pad);

/* STATUS's table on a terminal, as `stsctl status` and `stsctl top` draw it: the header,
 * and the row of list l (an item of "lists") under the name given (the caller's: top
 * shows it made safe and cut to its column). Neither writes a newline. */
void ctl_status_head(FILE *out);
void ctl_status_row(FILE *out, const char *name, const cj *l);

/* CLUSTER's table on a terminal, as `stsctl cluster` and `stsctl top` draw it: the header,
 * the row of node (an item of c's "nodes": '*' before the leader's, its role as this node
 * sees it, its lag as the leader knows it, its URL made safe) and the line under them
 * (this node and its role, who leads since when, the term and the commit index). None
 * writes a newline. */
void ctl_cluster_head(FILE *out);
void ctl_cluster_row(FILE *out, const cj *c, const cj *node);
void ctl_cluster_line(FILE *out, const cj *c);

#endif
