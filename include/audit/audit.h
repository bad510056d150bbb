/* SPDX-License-Identifier: Apache-2.0 */
/* audit.h - the audit log's file: lines handed over by request threads into a bounded
 * buffer, written by a thread of its own, rotated by size, reopened on SIGHUP. */
#ifndef STSD_AUDIT_H
#define STSD_AUDIT_H

#include <stddef.h>

#include "base/buf.h"

typedef struct audit audit;

/* Files kept in all: PATH, PATH.1 and PATH.2. */
#define AUDIT_FILES 3
/* Bytes of lines waiting for the writer at most; past it lines are dropped (counted). */
#define AUDIT_BUFFER_BYTES (8u << 20)

typedef struct audit_settings {
    const char *path;       /* the file (created 0600, appended to) */
    size_t max_bytes;       /* a file is rotated before it would grow past this */
    int hash;               /* lines as their SHA-256 (audit_record.h): kept for callers */
    size_t buffer_bytes;    /* 0: AUDIT_BUFFER_BYTES */
} audit_settings;

/* Opens s->path now (so that a bad path stops the start with a message naming
 * stsd.auditLog) and starts the writer thread (stsd-audit). Returns the log (close it
 * with audit_close), or NULL with the reason in err. */
audit *audit_open(const audit_settings *s, buf *err);

/* Writes what is buffered, stops the thread, closes the file and frees a. NULL: no-op. */
void audit_close(audit *a);

/* Hands one whole line (with its '\n') to the writer, never blocking on the disk: a
 * memcpy under a lock. Returns 0, or -1 when the buffer is full (the line is dropped and
 * counted in audit_dropped_total; a warning is logged at most once a second). */
int audit_append(audit *a, const char *line, size_t len);

/* Counts one line lost before it reached audit_append (it could not be formatted). */
void audit_drop(audit *a);

/* Asks the writer to close and reopen the file at its path before its next write
 * (logrotate's "move, then SIGHUP"). Returns at once. */
void audit_reopen(audit *a);

/* 1 if lines are to be written as hashes (stsd.auditLog.lines=hash). */
int audit_hashes(const audit *a);

/* stsd_audit_lines_total: lines written to the file; stsd_audit_dropped_total: lines
 * lost (buffer full, or a write that failed). Readable from any thread; 0 for NULL. */
unsigned long long audit_lines_total(const audit *a);
unsigned long long audit_dropped_total(const audit *a);

#endif
