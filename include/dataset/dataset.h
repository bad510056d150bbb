/* SPDX-License-Identifier: Apache-2.0 */
/* dataset.h - files in the dataset directory: name rules, INITFILE loading, SAVE writing,
 * and charset conversion on the way in and out. */
#ifndef STSD_DATASET_H
#define STSD_DATASET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "list/list.h"

typedef enum dataset_rc {
    DATASET_OK = 0,
    DATASET_ILLEGAL,      /* '/', '\\', ':', ".", "..", empty, or a control character */
    DATASET_TOO_LONG,     /* more than 128 bytes */
    DATASET_NOT_FOUND,    /* no such regular file */
    DATASET_OUTSIDE,      /* a symlink that leads out of the dataset directory */
    DATASET_IO,           /* read/write/fsync/rename failed (errno kept in dataset_errno) */
    DATASET_CHARSET,      /* bytes not valid in the configured charset */
    DATASET_NOMEM,
    DATASET_STOPPING,     /* the server is stopping: reading cut short, nothing made */
} dataset_rc;

#define DATASET_NAME_MAX 128

/* The reference's FILENAME rules plus ours (no control characters, no empty name).
 * name is len bytes and may hold NUL (which is illegal). */
dataset_rc dataset_check_name(const char *name, size_t len);

typedef struct dataset dataset;

/* Opens the dataset directory dir (made canonical) with the charsets of files read and
 * written ("UTF-8" means no conversion). Returns NULL with a message in err. */
dataset *dataset_open(const char *dir, const char *read_charset, const char *write_charset,
                      buf *err);
void dataset_close(dataset *d);
/* The canonical absolute path of the directory. */
const char *dataset_path(const dataset *d);
/* Points d at a flag the server's stop sets (kept, not copied; NULL: none): INITFILE and
 * LOAD look at it every chunk and every DATASET_STOP_LINES lines, and give up with
 * DATASET_STOPPING once it is non-zero, so that a stop never waits for a big file. */
void dataset_set_stop(dataset *d, const atomic_int *stop);
#define DATASET_STOP_LINES 65536

/* Splits text into lines (ends: \n, \r\n, \r; a last line without an end counts; empty
 * lines in between count) and appends each to l. Returns 0, or -1 on ENOMEM. */
int dataset_parse_lines(const char *text, size_t len, list *l);

/* INITFILE: reads file name (already checked) into a new list, *out. Large reads, no
 * per-line syscall, built without any store lock held. */
dataset_rc dataset_load(dataset *d, const char *name, list **out);

/* HEADER=TRUE: takes l's first line off as the names of its columns, cut by sep (RFC
 * 4180), after checking that every other line has at least as many fields. Returns 0,
 * -1 with the reason in why (the number of the first bad line, as the file counts them;
 * l then unchanged), or -2 on ENOMEM. */
int dataset_take_header(list *l, char sep, buf *why);
/* Appends l's column names as a header line (each quoted where it must be) to out.
 * Returns 0, or -1 on ENOMEM. */
int dataset_header_line(const list *l, buf *out);

/* LOAD: the lines of text[0..len), a file sent in a request, read as INITFILE reads a
 * file (converted from the read charset, same line ends) into a new list, *out. */
dataset_rc dataset_load_text(dataset *d, const char *text, size_t len, list **out);

/* SAVE: writes every line of l followed by '\n' to name (after its header line when l has
 * columns), atomically (temp file in the same directory, fsync, rename, fsync of the
 * directory). */
dataset_rc dataset_save(dataset *d, const char *name, const list *l);

/* SAVE with a timestamp: as dataset_save, to "<stamp>.<name>", or when a file has that
 * name already (two SAVEs in one second), to "<stamp>-2.<name>", "-3"...: a snapshot is
 * never replaced. The name written goes into out (size bytes, NAME_MAX + 1 is enough).
 * DATASET_IO with EEXIST when 999 names are taken. */
dataset_rc dataset_save_new(dataset *d, const char *stamp, const char *name, const list *l,
                            char *out, size_t size);

/* The file names of the directory (regular files and symlinks that stay inside), sorted,
 * for initFileAtStartup with a regex. Calls fn per name; returns 0 or -1 on error. */
int dataset_list_files(dataset *d, int (*fn)(const char *name, void *ctx), void *ctx);

/* Size in bytes and modification time (seconds since the epoch) of file name of the
 * directory (a name dataset_list_files gave). Returns 0, or -1 (errno kept). */
int dataset_file_stat(dataset *d, const char *name, uint64_t *size, int64_t *mtime);

/* errno of the last DATASET_IO in this thread. */
int dataset_errno(void);

#endif
