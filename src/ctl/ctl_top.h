/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_top.h - `stsctl top`: every list, key, barrier and run, and a cluster's nodes,
 * live, on a terminal. */
#ifndef STSCTL_TOP_H
#define STSCTL_TOP_H

#include "ctl_http.h"

/* Redraws CLUSTER, STATUS, KEYS, BARRIERS and RUNS each second until q (or Ctrl-C).
 * Returns stsctl's exit status: 0, or 3 if STATUS fails at the start, 2 if stdout is not a
 * terminal. */
int ctl_top_run(const ctl_conn *c);

#endif
