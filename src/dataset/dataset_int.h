/* SPDX-License-Identifier: Apache-2.0 */
/* dataset_int.h - what dataset.c and dataset_save.c share: the directory's state and a
 * few helpers. Private to the dataset module. */
#ifndef STSD_DATASET_INT_H
#define STSD_DATASET_INT_H

#include <stdatomic.h>
#include <stddef.h>

#include "dataset/dataset.h"

struct dataset {
    int dirfd;       /* kept open so every name is resolved against this very directory */
    char *path;      /* canonical, for the "does this symlink stay inside" test */
    size_t path_len;
    char *read_cs;   /* NULL when files are read as UTF-8 (no conversion) */
    char *write_cs;  /* NULL when files are written as UTF-8 */
    int read_ascii;  /* read_cs/write_cs encode ASCII as itself: ASCII text skips iconv */
    int write_ascii;
    const atomic_int *stop;   /* dataset_set_stop's flag, or NULL */
};

#endif
