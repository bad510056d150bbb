/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_save.h - what cluster_save.c offers the cluster's other files. */
#ifndef STSD_CLUSTER_SAVE_H
#define STSD_CLUSTER_SAVE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_int.h"

/* A committed piece of a SAVE's file (data: name's length (2 bytes), name, bytes at off)
 * written into this node's dataset directory; last: renamed into place. Logs failures. */
/* A name SAVE could have made: no directory part, no hidden file, nothing odd. */
int cluster_save_name_ok(const char *name, size_t len);

void cluster_save_piece(cluster *c, uint64_t off, int last, const uint8_t *data, size_t len);

#endif
