/* SPDX-License-Identifier: Apache-2.0 */
/* notify.h - readiness and stopping notices for systemd (Type=notify). */
#ifndef STSD_NOTIFY_H
#define STSD_NOTIFY_H

/* Sends state (e.g. "READY=1", newline-separated assignments) to the socket named by
 * $NOTIFY_SOCKET, as sd_notify(3) does. Returns 1 when sent, 0 when $NOTIFY_SOCKET is
 * unset (not started by systemd: nothing to do), or -1 with errno set on failure. */
int notify_send(const char *state);

#endif
