/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_journal.c - libFuzzer harness for the journal's readers: arbitrary bytes become
 * log files, snapshot files or record bodies, and go through recovery (scan, replay,
 * journal_open's cut and tidy). Byte 0 picks the mode:
 *   0  the rest is journal.0000000001.log, raw
 *   1  the rest is a snapshot file, parsed from memory
 *   2  the rest is split in two logs (generations 1 and 2) at the point bytes 1-2 give
 *   3  the rest is a snapshot file that a valid log's REPLACE record references
 *   4  the rest is record bodies (u16 length + bytes each), framed with valid checksums
 *      into one log, so that replay itself gets exercised
 *   5  as 4, through journal_open and journal_close (fsync stubbed out)
 * Nothing may crash, leak or hang; every outcome (recovered or refused) is fine. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/journal.h"
#include "base/log.h"
#include "meet/keys.h"
#include "store/store.h"
#include "journal/recover.h"
#include "journal/snapshot.h"
#include "journal/wal.h"

static char dir[64];
static int dirfd_ = -1;

static int no_fsync(int fd)
{
    return 0;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/stsd-fuzzj-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
    if (dirfd_ < 0)
        abort();
    wal_sys.fsync = no_fsync;
    wal_sys.fdatasync = no_fsync;
    log_set_level((log_level)(LOG_ERROR + 1));
}

static int remove_one(const char *name, int kind, uint64_t num, void *ctx)
{
    if (name[0] != '.')
        unlinkat(dirfd_, name, 0);
    return 0;
}

static void put(const char *name, const uint8_t *p, size_t n)
{
    int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n))
        abort();
    close(fd);
}

static void recover_once(void)
{
    recover_state rs;
    buf err = BUF_INIT;
    recover_run(dirfd_, &rs, NULL, &err);
    recover_free(&rs);
    buf_free(&err);
}

/* A log: header of generation gen, then the framed bodies in b (u16 length + bytes). */
static void framed_log(uint32_t gen, const uint8_t *p, size_t n, buf *out)
{
    uint8_t h[WAL_HEADER_SIZE];
    wal_header_make(h, WAL_MAGIC_LOG, gen);
    buf_append(out, h, sizeof h);
    while (n >= 2) {
        size_t len = (size_t)p[0] | (size_t)p[1] << 8;
        p += 2;
        n -= 2;
        if (len > n)
            len = n;
        if (len)
            wal_frame(out, p, len);
        p += len;
        n -= len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[64];
    buf b = BUF_INIT, body = BUF_INIT;
    if (dirfd_ < 0)
        setup();
    if (size < 1)
        return 0;
    wal_list(dirfd_, remove_one, NULL);
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 6) {
    case 0:
        put("journal.0000000001.log", p, n);
        recover_once();
        break;
    case 1: {
        list *l;
        size_t off;
        const char *why;
        if (snap_parse(p, n, 1ull << 32 | 1, &l, &off, &why) == 0)
            list_free(l);
        break;
    }
    case 2: {
        size_t cut = n >= 2 ? ((size_t)p[0] | (size_t)p[1] << 8) : 0;
        p += n >= 2 ? 2 : n;
        n -= n >= 2 ? 2 : n;
        if (cut > n)
            cut = n;
        put("journal.0000000001.log", p, cut);
        put("journal.0000000002.log", p + cut, n - cut);
        recover_once();
        break;
    }
    case 3: {
        uint8_t h[WAL_HEADER_SIZE];
        wal_header_make(h, WAL_MAGIC_LOG, 1);
        buf_append(&b, h, sizeof h);
        wal_enc_done(&body, 1, 0);
        wal_frame(&b, body.data, body.len);
        buf_clear(&body);
        wal_enc_ref(&body, WAL_REPLACE, "list", 1ull << 32 | 1);
        wal_frame(&b, body.data, body.len);
        put("journal.0000000001.log", (const uint8_t *)b.data, b.len);
        wal_snap_name(name, sizeof name, 1ull << 32 | 1);
        put(name, p, n);
        recover_once();
        break;
    }
    default: {
        framed_log(1, p, n, &b);
        put("journal.0000000001.log", (const uint8_t *)b.data, b.len);
        if (data[0] % 6 == 4) {
            recover_once();
            break;
        }
        buf err = BUF_INIT;
        store *st = store_create(NULL);
        if (st && keys_attach(st) != 0) {
            store_free(st);
            st = NULL;
        }
        journal *j = st ? journal_open(dir, CONF_FSYNC_NO, st, 0, &err) : NULL;
        journal_close(j);
        store_free(st);
        buf_free(&err);
        break;
    }
    }
    buf_free(&b);
    buf_free(&body);
    return 0;
}
