/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_frame.h - the tables of `stsctl top`: CLUSTER (on a cluster node), LISTS, KEYS,
 * BARRIERS and RUNS cut to the screen, names and values made safe for a terminal. */
#ifndef STSCTL_FRAME_H
#define STSCTL_FRAME_H

#include <stddef.h>
#include <stdio.h>

#include "ctl_json.h"

/* What one frame shows: the arrays of STATUS ("lists"), KEYS ("keys"), BARRIERS
 * ("barriers") and RUNS ("runs"), as the JSON answers hold them. An array that could not
 * be had is NULL and its error says why (a KO, an HTTP error: a server without KEYS). */
typedef struct ctl_frame {
    const cj *lists, *keys, *barriers, *runs;
    const char *lists_error, *keys_error, *barriers_error, *runs_error;
    const cj *cluster;      /* CLUSTER's answer; NULL: alone (or not had), no section */
} ctl_frame;

/* Draws CLUSTER's answer on out in at most rows lines (cut to cols columns), and a blank
 * line under it when at least one more line would follow: a bold header, a row per node
 * (the leader marked '*', its role as this node sees it, its lag, its URL) and a dim line
 * (this node and its role, who leads since when, the term, the commit index); only that
 * line when the nodes do not fit. Returns the lines written. */
int ctl_frame_cluster(FILE *out, const cj *cluster, int rows, int cols);

/* Draws f on out in at most rows lines, each cut to cols columns: the cluster first (as
 * ctl_frame_cluster, when f->cluster: a few lines, so that many lists never push it off
 * the screen), then the lists, the keys, the barriers and the runs, a blank line between
 * them, each a bold header row and its rows. A section with nothing in it is one dim
 * line ("no keys"), one that could not be had one dim line with its error (NULL or empty:
 * "not an answer of stsd"). One cut short ends in a dim "... N more keys" (only "keys: N,
 * not shown" when not even a row fits), and the sections after it are left out. Returns
 * the lines written. */
int ctl_frame_draw(FILE *out, const ctl_frame *f, int rows, int cols);

#endif
