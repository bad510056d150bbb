/* SPDX-License-Identifier: Apache-2.0 */
/* wal.c - the journal's on-disk vocabulary: CRC-32C, headers, framing, record bodies. */
#include "wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/clock.h"

/* ---- CRC-32C, slicing by 8 ------------------------------------------------------------ */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t wal_crc32c(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = data;
    crc = ~crc;
    while (n && ((uintptr_t)p & 7)) {
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
        n--;
    }
    while (n >= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
              crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

/* ---- I/O seam ------------------------------------------------------------------------- */

static int sys_reserve(int fd, off_t off, off_t len)
{
    return fallocate(fd, 0, off, len);
}

static void *sys_map(int fd, size_t len)
{
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

wal_io wal_sys = {write, pwrite, fsync, fdatasync, sys_reserve, sys_map};

void wal_io_reset(void)
{
    wal_sys = (wal_io){write, pwrite, fsync, fdatasync, sys_reserve, sys_map};
}

/* Writes all n bytes at off (at the file's position if off is negative), looping over
 * short writes. Returns 0, or -1 with errno set. */
static int write_fully(int fd, const char *p, size_t n, int64_t off)
{
    while (n) {
        ssize_t w = off < 0 ? wal_sys.write(fd, p, n) : wal_sys.pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        p += w;
        n -= (size_t)w;
        if (off >= 0)
            off += w;
    }
    return 0;
}

int wal_write_all(int fd, const void *data, size_t n)
{
    return write_fully(fd, data, n, -1);
}

int wal_pwrite_all(int fd, const void *data, size_t n, uint64_t off)
{
    return write_fully(fd, data, n, (int64_t)off);
}

/* Every fsync of a file of the journal, timed for stsd_journal_fsync_seconds. */
static hist fsync_hist;
static _Atomic uint64_t fsync_last_ns;

/* Runs sync on fd, timing it; errno is sync's. */
static int timed_sync(int (*sync)(int), int fd)
{
    uint64_t t0 = clock_now_ns();
    int rc = sync(fd), e = errno;
    uint64_t ns = clock_now_ns() - t0;
    hist_observe(&fsync_hist, ns);
    atomic_store_explicit(&fsync_last_ns, ns + 1, memory_order_relaxed);
    errno = e;
    return rc;
}

int wal_fsync(int fd)
{
    return timed_sync(wal_sys.fsync, fd);
}

const hist *wal_fsync_hist(uint64_t *last_ns)
{
    uint64_t v = atomic_load_explicit(&fsync_last_ns, memory_order_relaxed);
    *last_ns = v ? v - 1 : UINT64_MAX;
    return &fsync_hist;
}

int wal_datasync(int fd)
{
    return timed_sync(wal_sys.fdatasync, fd);
}

/* pwritev2 with RWF_DSYNC has been refused (a kernel before 4.7): two calls from now on. */
static atomic_int no_rwf_dsync;

int wal_pwrite_dsync(int fd, const void *p, size_t n, uint64_t off)
{
    /* A test's seam stays in the path: its pwrite and fdatasync are called as before. */
    if (wal_sys.pwrite != pwrite || wal_sys.fdatasync != fdatasync ||
        atomic_load_explicit(&no_rwf_dsync, memory_order_relaxed))
        return wal_pwrite_all(fd, p, n, off) != 0 ? -1 : wal_datasync(fd);
    uint64_t t0 = clock_now_ns();
    struct iovec v = {(void *)p, n};
    ssize_t w;
    do
        w = pwritev2(fd, &v, 1, (off_t)off, RWF_DSYNC);
    while (w < 0 && errno == EINTR);
    if (w < 0 && (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)) {
        atomic_store_explicit(&no_rwf_dsync, 1, memory_order_relaxed);
        return wal_pwrite_all(fd, p, n, off) != 0 ? -1 : wal_datasync(fd);
    }
    if (w < 0)
        return -1;
    if ((size_t)w < n) {
        /* Short (a disk nearly full, a signal): the rest, then a sync of it all. */
        if (wal_pwrite_all(fd, (const char *)p + w, n - (size_t)w, off + (uint64_t)w) != 0)
            return -1;
        return wal_datasync(fd);
    }
    uint64_t ns = clock_now_ns() - t0;
    hist_observe(&fsync_hist, ns);
    atomic_store_explicit(&fsync_last_ns, ns + 1, memory_order_relaxed);
    return 0;
}

int wal_reserve(int fd, uint64_t off, uint64_t len)
{
    int rc;
    do
        rc = wal_sys.reserve(fd, (off_t)off, (off_t)len);
    while (rc != 0 && errno == EINTR);
    return rc;
}

int wal_fsync_dir(int dirfd)
{
    return wal_sys.fsync(dirfd);
}

/* ---- little-endian fields --------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- headers and names ------------------------------------------------------------------ */

void wal_header_make(uint8_t h[WAL_HEADER_SIZE], const char *magic, uint64_t id)
{
    memcpy(h, magic, 8);
    put32(h + 8, WAL_VERSION);
    put64(h + 12, id);
    put32(h + 20, wal_crc32c(0, h, 20));
}

int wal_header_check(const uint8_t *p, size_t len, const char *magic, uint64_t *id,
                     const char **why)
{
    if (len < WAL_HEADER_SIZE) {
        *why = "file shorter than its header";
        return -1;
    }
    if (memcmp(p, magic, 8) != 0) {
        *why = "bad magic bytes (not a stsd journal file)";
        return -1;
    }
    if (get32(p + 20) != wal_crc32c(0, p, 20)) {
        *why = "header checksum mismatch";
        return -1;
    }
    if (get32(p + 8) != WAL_VERSION) {
        *why = "unsupported version";
        return -1;
    }
    *id = get64(p + 12);
    return 0;
}

void wal_log_name(char *out, size_t outlen, uint32_t gen)
{
    snprintf(out, outlen, "journal.%010u.log", gen);
}

void wal_snap_name(char *out, size_t outlen, uint64_t id)
{
    snprintf(out, outlen, "snap-%010u-%010u.dat", (unsigned)(id >> 32), (unsigned)id);
}

/* Parses exactly `digits` decimal digits at s into *v; returns s past them or NULL. */
static const char *digits(const char *s, int n, uint64_t *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, s++) {
        if (*s < '0' || *s > '9')
            return NULL;
        *v = *v * 10 + (uint64_t)(*s - '0');
    }
    return *v <= UINT32_MAX ? s : NULL;
}

int wal_parse_name(const char *name, uint64_t *num)
{
    size_t len = strlen(name);
    uint64_t a, b;
    const char *s;
    if (len > 4 && strcmp(name + len - 4, ".tmp") == 0 &&
        (strncmp(name, "snap-", 5) == 0 || strncmp(name, "journal.", 8) == 0))
        return 3;
    if (len == 22 && strncmp(name, "journal.", 8) == 0 && (s = digits(name + 8, 10, &a)) &&
        strcmp(s, ".log") == 0) {
        *num = a;
        return 1;
    }
    if (len == 30 && strncmp(name, "snap-", 5) == 0 && (s = digits(name + 5, 10, &a)) &&
        *s == '-' && (s = digits(s + 1, 10, &b)) && strcmp(s, ".dat") == 0) {
        *num = a << 32 | b;
        return 2;
    }
    return 0;
}

int wal_map(int dirfd, const char *name, const uint8_t **p, size_t *len)
{
    int rc = -1;
    struct stat sb;
    *p = NULL;
    *len = 0;
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0)
        goto cleanup;
    if (sb.st_size > 0) {
        void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            goto cleanup;
        madvise(m, (size_t)sb.st_size, MADV_SEQUENTIAL);
        *p = m;
        *len = (size_t)sb.st_size;
    }
    rc = 0;
cleanup:
    close(fd);
    return rc;
}

int wal_list(int dirfd, int (*fn)(const char *name, int kind, uint64_t num, void *ctx),
             void *ctx)
{
    /* A fresh open of ".": its own read position, whatever else reads the directory. */
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (rc == 0 && (e = readdir(d))) {
        uint64_t num = 0;
        int kind = wal_parse_name(e->d_name, &num);
        rc = fn(e->d_name, kind, num, ctx);
        errno = 0;
    }
    if (rc == 0 && errno != 0)
        rc = -1;
    int saved = errno;
    closedir(d);
    errno = saved;
    return rc;
}

void wal_unmap(const uint8_t *p, size_t len)
{
    if (p)
        munmap((void *)p, len);
}

/* ---- framing -------------------------------------------------------------------------- */

void wal_frame_header(uint8_t f[WAL_FRAME_SIZE], const void *body, size_t len)
{
    put32(f, (uint32_t)len);
    put32(f + 4, wal_crc32c(0, body, len));
    put32(f + 8, wal_crc32c(0, f, 8));
}

int wal_frame(buf *out, const void *body, size_t len)
{
    uint8_t f[WAL_FRAME_SIZE];
    if (len == 0 || len > WAL_MAX_BODY)
        return -1;
    wal_frame_header(f, body, len);
    if (buf_reserve(out, WAL_FRAME_SIZE + len) != 0)
        return -1;
    buf_append(out, f, sizeof f);
    buf_append(out, body, len);
    return 0;
}

const char wal_why_reserved[] = "space reserved for the log after its last record";

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

wal_scan wal_next(const uint8_t *data, size_t size, size_t off, const uint8_t **body,
                  size_t *len, size_t *next, const char **why)
{
    if (off >= size)
        return WAL_END;
    size_t left = size - off;
    const uint8_t *f = data + off;
    *why = NULL;
    /* A crash while appending leaves a short file or, on some file systems, a tail of
     * zeros; both are the unfinished last write, never damage before it. */
    if (all_zero(f, left)) {
        *why = wal_why_reserved;
        return WAL_TORN;
    }
    if (left < WAL_FRAME_SIZE) {
        *why = "partial record header";
        return WAL_TORN;
    }
    if (get32(f + 8) != wal_crc32c(0, f, 8)) {
        *why = "record header checksum mismatch";
        return WAL_BAD;
    }
    uint32_t n = get32(f);
    if (n == 0 || n > WAL_MAX_BODY) {
        *why = "impossible record length";
        return WAL_BAD;
    }
    if (n > left - WAL_FRAME_SIZE) {
        *why = "record cut short by the end of the file";
        return WAL_TORN;
    }
    if (get32(f + 4) != wal_crc32c(0, f + WAL_FRAME_SIZE, n)) {
        *why = "record checksum mismatch";
        /* The last record of the file may be half-written (its length reached the disk,
         * not all of its bytes): a tail. Anything followed by more data is damage. */
        return n == left - WAL_FRAME_SIZE ? WAL_TORN : WAL_BAD;
    }
    *body = f + WAL_FRAME_SIZE;
    *len = n;
    *next = off + WAL_FRAME_SIZE + n;
    return WAL_OK;
}

int wal_unfinished(const uint8_t *data, size_t size, size_t off)
{
    size_t z = size;
    while (z > off && data[z - 1] == 0)
        z--;
    if (z == size || size - off < WAL_FRAME_SIZE)
        return 0;                 /* no reserved space after it: not a mapped log's tail */
    const uint8_t *f = data + off;
    if (get32(f) == 0)            /* its length, copied last, never landed */
        return z - off <= WAL_TORN_SPAN;
    /* A whole header whose body runs into the zeros: the rest of the body never landed. */
    return get32(f + 8) == wal_crc32c(0, f, 8) && off + WAL_FRAME_SIZE + get32(f) >= z;
}

/* ---- varints and bodies ------------------------------------------------------------------ */

int wal_put_varint(buf *out, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return buf_append(out, b, n);
}

int wal_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return -1;
        uint8_t c = *p++;
        if (shift == 63 && c > 1)
            return -1;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

int wal_next_line(const uint8_t **p, const uint8_t *end, const char **s, size_t *len)
{
    uint64_t n;
    if (*p == end)
        return 0;
    if (wal_get_varint(p, end, &n) != 0 || n > (uint64_t)(end - *p))
        return -1;
    *s = (const char *)*p;
    *len = (size_t)n;
    *p += n;
    return 1;
}
