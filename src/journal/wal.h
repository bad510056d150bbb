/* SPDX-License-Identifier: Apache-2.0 */
/* wal.h - the journal's on-disk vocabulary: CRC-32C, file headers, framed records, record
 * bodies, file names, and the file I/O seam tests replace to inject faults. Private to
 * journal.c, snapshot.c and recover.c (and their tests and fuzzer). */
#ifndef STSD_WAL_H
#define STSD_WAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/hist.h"
#include "list/list.h"

/* ---- checksums --------------------------------------------------------------------- */

/* CRC-32C (Castagnoli) of p[0..n), continuing from crc (start with 0). */
uint32_t wal_crc32c(uint32_t crc, const void *p, size_t n);

/* ---- the I/O seam ---------------------------------------------------------------------- */

/* Every write, fsync and space reservation of journal files goes through these pointers;
 * tests point them at failing versions (beanstalkd's falloc) and put the defaults back
 * with wal_io_reset. */
typedef struct wal_io {
    ssize_t (*write)(int fd, const void *p, size_t n);             /* files written once */
    ssize_t (*pwrite)(int fd, const void *p, size_t n, off_t off);  /* the log */
    int (*fsync)(int fd);          /* files and directories written once */
    int (*fdatasync)(int fd);      /* the log, after each batch of records */
    int (*reserve)(int fd, off_t off, off_t len);   /* fallocate, the size growing */
    void *(*map)(int fd, size_t len);               /* mmap shared, read-write */
} wal_io;
extern wal_io wal_sys;

/* Puts the system calls back into wal_sys. */
void wal_io_reset(void);

/* Writes all n bytes (looping over short writes). Returns 0, or -1 with errno set. */
int wal_write_all(int fd, const void *p, size_t n);
/* The same at offset off of the file. */
int wal_pwrite_all(int fd, const void *p, size_t n, uint64_t off);
/* fsync through the seam. Returns 0, or -1 with errno set. */
int wal_fsync(int fd);
/* The times of every wal_fsync and wal_datasync so far, and in *last_ns the last one's
 * (UINT64_MAX if none yet). */
const hist *wal_fsync_hist(uint64_t *last_ns);
/* fdatasync through the seam (the log's data and size). Returns 0, or -1 with errno set. */
int wal_datasync(int fd);
/* Writes all n bytes at off and makes them durable as wal_datasync would, in one system
 * call where the kernel can (pwritev2 with RWF_DSYNC: a range of the file synced, so
 * only when every byte before off already is). Timed as a sync. Returns 0, or -1 with
 * errno set: then what got in, and whether any of it is durable, is unknown. */
int wal_pwrite_dsync(int fd, const void *p, size_t n, uint64_t off);
/* Reserves disk blocks for fd's bytes [off, off + len), so that writing them later cannot
 * meet a full disk; the file's size grows to cover them (they read as zeros). Returns 0,
 * or -1 with errno set (EOPNOTSUPP where the file system cannot). */
int wal_reserve(int fd, uint64_t off, uint64_t len);

/* ---- files ------------------------------------------------------------------------------- */

#define WAL_VERSION 1
#define WAL_HEADER_SIZE 24         /* magic[8] version:u32 id:u64 crc:u32 */
#define WAL_MAGIC_LOG  "STSD-LOG"
#define WAL_MAGIC_SNAP "STSDSNAP"

/* Fills h with a header: magic (8 bytes), version, id (a log's generation, a snapshot's
 * id), and the CRC of the 20 bytes before it. */
void wal_header_make(uint8_t h[WAL_HEADER_SIZE], const char *magic, uint64_t id);
/* Checks a header. Returns 0 and sets *id; -1 with the reason in why (static text). */
int wal_header_check(const uint8_t *p, size_t len, const char *magic, uint64_t *id,
                     const char **why);

/* File names: journal.<gen>.log and snap-<gen>-<n>.dat, numbers zero-padded so that a
 * listing sorts by age. A snapshot id is gen << 32 | n. */
void wal_log_name(char *out, size_t outlen, uint32_t gen);
void wal_snap_name(char *out, size_t outlen, uint64_t id);
/* Parses a file name: 1 = a log (sets *num to its generation), 2 = a snapshot (*num =
 * its id), 3 = a leftover temp file (*.tmp), 0 = anything else. */
int wal_parse_name(const char *name, uint64_t *num);

/* Reads a whole file relative to dirfd into memory (mmap). Returns 0 with *p and *len set
 * (*p NULL when empty), or -1 with errno set. Release with wal_unmap. */
int wal_map(int dirfd, const char *name, const uint8_t **p, size_t *len);
void wal_unmap(const uint8_t *p, size_t len);

/* Calls fn for every entry of directory dirfd with its kind and number as
 * wal_parse_name gives them; stops at fn's first nonzero value and returns it. Returns
 * 0, or -1 with errno set if the directory cannot be read. */
int wal_list(int dirfd, int (*fn)(const char *name, int kind, uint64_t num, void *ctx),
             void *ctx);

/* fsyncs a directory. Returns 0 or -1 with errno set. */
int wal_fsync_dir(int dirfd);

/* ---- framed records ------------------------------------------------------------------- */

/* A record: len:u32 body_crc:u32 head_crc:u32 (CRC of the 8 bytes before), then len body
 * bytes, the first of which is the record type. */
#define WAL_FRAME_SIZE 12
#define WAL_MAX_BODY (1u << 31)

/* Appends a framed record holding body[0..len) to out. Returns 0 or -1 on ENOMEM. */
int wal_frame(buf *out, const void *body, size_t len);
/* Fills the 12-byte frame for body[0..len) (for writers that place the body themselves). */
void wal_frame_header(uint8_t f[WAL_FRAME_SIZE], const void *body, size_t len);

typedef enum wal_scan {
    WAL_OK,     /* a record: *body, *len set, *next is the offset after it */
    WAL_END,    /* off is the end of the data */
    WAL_TORN,   /* what is left from off looks like an interrupted write: a partial frame,
                 * a body running past the end, the very last record failing its check, or
                 * nothing but zeros */
    WAL_BAD,    /* damage that is not at the tail (reason in *why) */
} wal_scan;

/* The why of a log's tail that is nothing but zeros: the space a mapped log reserves
 * ahead (journal_map.c), never written. */
extern const char wal_why_reserved[];
/* How far before the reserved zeros at the end of a log an unfinished record may start. */
#define WAL_TORN_SPAN (1u << 20)
/* Whether the record at off, which failed its checks, is the unfinished last copy into a
 * mapped log: only zeros follow it to the end of the file and either its length field is
 * still zero (a record's length is copied last) or its header is whole and its body runs
 * into those zeros. Then it is a torn tail, not damage. */
int wal_unfinished(const uint8_t *data, size_t size, size_t off);

/* Reads the framed record at data[off..). */
wal_scan wal_next(const uint8_t *data, size_t size, size_t off, const uint8_t **body,
                  size_t *len, size_t *next, const char **why);

/* ---- record bodies ---------------------------------------------------------------------- */

enum {
    /* log records */
    WAL_PUSH = 1,         /* name, at_tail:u8, line (the rest) */
    WAL_TAKE = 2,         /* name, keep:u8, n, n positions (varints) */
    WAL_RESET = 3,        /* name */
    WAL_REPLACE = 4,      /* name, snapshot id (0: empty list)           INITFILE */
    WAL_SNAPSHOT = 5,     /* name, snapshot id; id 0: count, then lines   compaction */
    WAL_COMPACT_DONE = 6, /* generation, number of lists */
    WAL_LEASE = 7,        /* name, lease id, deadline (wall-clock ms), line (the rest) */
    WAL_SETTLE = 8,       /* name, release:u8, lease id, line (the rest)  ACK/RELEASE */
    /* keys: each record carries the key's whole state after the change (version, value),
     * so that replaying them in log order, snapshots of a compaction included, is enough */
    WAL_KEY_SET = 9,      /* name, set:u8 (1: SET, drops the key's counter leases; 0: INCR),
                           * version, value (the rest) */
    WAL_KEY_DEL = 10,     /* name                                           DEL */
    WAL_KEY_LEASE = 11,   /* name, lease id, deadline (wall-clock ms), by (zigzag), version,
                           * value (the rest)                               INCR LEASE= */
    WAL_KEY_SETTLE = 12,  /* name, undo:u8, lease id, version, value (the rest): RELEASE or
                           * expiry (undo 1), ACK (0) of a counter lease */
    WAL_OWN = 13,         /* name, lease id, deadline, owner (varint length + bytes), line
                           * (the rest): a LEASE lent to an owner (READ OWNER=) */
    WAL_RENEW = 14,       /* name, lease id, deadline: an owner's READ with LEASE= */
    WAL_KEY_RUN = 15,     /* name, lease id (0: none), deadline[, ttl ms for its DONE]:
                           * ONCE's run of the key; any other record of the key ends it */
    /* snapshot file records */
    WAL_LINES = 16,       /* lines, each varint length + bytes, to the end of the body */
    WAL_END_LINES = 17,   /* line count, total bytes */
    /* log records again */
    WAL_PUSH_MANY = 18,   /* name, at_tail:u8, n, n lines (varint length + bytes)  ADDMULTI */
    WAL_DROP = 19,        /* name: the list is gone, lines, leases and all         DROP */
    WAL_KEY_EXPIRE = 20,  /* name, deadline (wall-clock ms): the key goes then    EXPIRE */
    WAL_COLUMNS = 21,     /* name, separator:u8, names (each varint length + bytes) to the
                           * end: the named columns of a list, right after its REPLACE or
                           * SNAPSHOT (wal_rec.c); logs without it recover as before */
    WAL_NOOP = 22,        /* nothing: a replica's read waits for it to be committed, the
                           * proof that its node still leads (journal_fence) */
#define WAL_TYPE_MAX WAL_NOOP
#define WAL_IS_SNAP_ONLY(t) ((t) == WAL_LINES || (t) == WAL_END_LINES)
#define WAL_IS_LOG(t) ((t) >= WAL_PUSH && (t) <= WAL_TYPE_MAX && !WAL_IS_SNAP_ONLY(t))
#define WAL_IS_KEY(t) (((t) >= WAL_KEY_SET && (t) <= WAL_KEY_SETTLE) || (t) == WAL_KEY_RUN || \
                       (t) == WAL_KEY_EXPIRE)
};

/* KEY_SET's flag byte: bit 0 set (SET) or not (INCR); bit 1: a deadline follows it (the
 * key's TTL from this change, wall-clock ms). */
#define WAL_KEY_SET_TTL 2

/* A decoded record; pointers go into the body it was decoded from. */
typedef struct wal_rec {
    int type;
    const char *name;
    size_t name_len;
    int flag;                 /* PUSH: at_tail; TAKE: keep; SETTLE: release; KEY_SET: set;
                               * KEY_SETTLE: undo; COLUMNS: the separator */
    const uint8_t *data;      /* PUSH, LEASE, SETTLE: the line; TAKE: positions; SNAPSHOT
                               * id 0: lines; COLUMNS: the names */
    size_t data_len;
    uint64_t n;               /* TAKE: positions; SNAPSHOT id 0: lines; COMPACT_DONE: lists;
                               * LEASE, OWN, RENEW, KEY_RUN, KEY_EXPIRE: the deadline;
                               * PUSH_MANY: lines */
    int64_t expires;          /* KEY_SET: the deadline it gives the key (0: none) */
    uint64_t id;              /* REPLACE/SNAPSHOT: snapshot id; COMPACT_DONE: generation;
                               * LEASE/SETTLE/OWN/RENEW: the lease id; KEY_LEASE/KEY_SETTLE/KEY_RUN too */
    uint64_t version;         /* KEY_SET, KEY_LEASE, KEY_SETTLE: the key's version after */
    int64_t by;               /* KEY_LEASE: the increment lent; KEY_RUN: its DONE's ttl ms */
    const char *owner;        /* OWN: the owner (owner_len bytes, no NUL) */
    size_t owner_len;
} wal_rec;

/* Decodes a log record body. Returns 0, or -1 with the reason in *why. Checks structure
 * only (names without NUL, counts consistent), not whether it applies. */
int wal_decode(const uint8_t *body, size_t len, wal_rec *r, const char **why);

/* Encoders: append a record body to out (not framed). Return 0 or -1 on ENOMEM. */
int wal_enc_push(buf *out, const char *name, int at_tail, const char *line, size_t len);
int wal_enc_take(buf *out, const char *name, int keep, const size_t *pos, size_t n);
int wal_enc_name(buf *out, int type, const char *name);  /* RESET */
int wal_enc_ref(buf *out, int type, const char *name, uint64_t id);  /* REPLACE, SNAPSHOT */
int wal_enc_done(buf *out, uint64_t gen, uint64_t lists);
int wal_enc_noop(buf *out);
int wal_enc_lease(buf *out, const char *name, uint64_t id, int64_t until, const char *line,
                  size_t len);
int wal_enc_own(buf *out, const char *name, uint64_t id, int64_t until, const char *owner,
                size_t olen, const char *line, size_t len);
int wal_enc_renew(buf *out, const char *name, uint64_t id, int64_t until);
int wal_enc_settle(buf *out, const char *name, uint64_t id, int release, const char *line,
                   size_t len);
/* PUSH_MANY: its head for n lines, then each line by wal_enc_line. */
int wal_enc_push_many(buf *out, const char *name, int at_tail, size_t n);
int wal_enc_line(buf *out, const char *line, size_t len);

/* A key record (type WAL_KEY_*): the fields its type carries (see above), the others
 * ignored; value is the key's value after the change. KEY_SET: until nonzero is the
 * deadline it gives the key; KEY_RUN: by nonzero the ttl ms its DONE gives the key;
 * KEY_EXPIRE: until is the deadline. */
int wal_enc_key(buf *out, int type, const char *name, int flag, uint64_t id, int64_t until,
                int64_t by, uint64_t version, const char *value, size_t len);

/* COLUMNS (wal_rec.c): the record of list name's columns (l's names and separator),
 * and a decoded one given to l (its names checked: 1 to LIST_COLUMNS_MAX, none empty or
 * holding NUL). Return 0, or -1 on ENOMEM / with the reason in *why. */
int wal_enc_columns(buf *out, const char *name, const list *l);
int wal_columns_apply(const wal_rec *r, list *l, const char **why);

/* Varints (LEB128): wal_put_varint appends; wal_get_varint reads from *p (below end),
 * advancing it; returns 0 or -1 if truncated or longer than 64 bits. */
int wal_put_varint(buf *out, uint64_t v);
int wal_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* Iterates lines encoded as varint length + bytes in [*p, end): returns 1 with *s and *len
 * set, 0 at the end, -1 if malformed. */
int wal_next_line(const uint8_t **p, const uint8_t *end, const char **s, size_t *len);

#endif
