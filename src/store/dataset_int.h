/* dataset_int.h - what dataset.c and dataset_save.c share: the directory's state and a
 * few helpers. Private to the dataset module. */
#ifndef STSD_DATASET_INT_H
#define STSD_DATASET_INT_H

#include <stddef.h>

#include "store/dataset.h"

struct dataset {
    int dirfd;       /* kept open so every name is resolved against this very directory */
    char *path;      /* canonical, for the "does this symlink stay inside" test */
    size_t path_len;
    char *read_cs;   /* NULL when files are read as UTF-8 (no conversion) */
    char *write_cs;  /* NULL when files are written as UTF-8 */
    int read_ascii;  /* read_cs/write_cs encode ASCII as itself: ASCII text skips iconv */
    int write_ascii;
};

/* Sets the errno dataset_errno reports to this thread. */
void dataset_set_errno(int err);
/* 1 if p[0..n) has no byte >= 0x80. */
int dataset_ascii_only(const char *p, size_t n);
/* 1 if name must not reach the filesystem (illegal characters; length is not checked,
 * since a timestamped SAVE name may pass 128 bytes). */
int dataset_name_unsafe(const char *name);

#endif
