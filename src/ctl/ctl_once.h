/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_once.h - `stsctl once`: COMMAND run by exactly one of the callers of ONCE NAME. */
#ifndef STSCTL_ONCE_H
#define STSCTL_ONCE_H

#include "ctl_http.h"

/* Asks ONCE NAME (TIMEOUT and LEASE as given, NULL: the server's defaults). DONE: exits
 * with the run's status (its value when a number 0..255, else 0) without running cmd. RUN:
 * runs cmd (argv style), renewing the run while it does, then DONE with its status, which
 * is returned. Stopped by SIGINT, SIGTERM or SIGHUP meanwhile: passes the signal on if it
 * was not a terminal's, waits for cmd, gives the run up (RELEASE) and returns 128 + it.
 * Failures before the run are said and returned as exit statuses (ctl_out.h). */
int ctl_once(const ctl_conn *c, const char *name, const char *timeout, const char *lease,
             char **cmd);

#endif
