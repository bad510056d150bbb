/* ctl_top.h - `stsctl top`: every list, live, on a terminal. */
#ifndef STSCTL_TOP_H
#define STSCTL_TOP_H

#include "ctl_http.h"

/* Redraws STATUS each second until q (or Ctrl-C). Returns stsctl's exit status: 0, or 3
 * if the server cannot be reached at the start, 2 if stdout is not a terminal. */
int ctl_top_run(const ctl_conn *c);

#endif
