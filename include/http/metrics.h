/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.h - GET /metrics: every counter of stsd in the Prometheus text format. */
#ifndef STSD_METRICS_H
#define STSD_METRICS_H

#include "base/buf.h"
#include "cmd/command.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Writes a scrape into out (cleared first): requests, durations, connections, lists
 * (the first stsd.metrics.maxLists by name with their own series, the rest summed in
 * list="_other"), journal and process metrics. Takes no lock that requests wait on for
 * longer than reading one list's counters. Returns 0, or -1 on ENOMEM. */
int metrics_render(const cmd_server *srv, buf *out);

/* Frees the buffers scrapes keep for the next one (at exit). */
void metrics_shutdown(void);

#endif
