/* SPDX-License-Identifier: Apache-2.0 */
/* journal_map.c - the log mapped into memory (fsync=everysec and no): a record is copied
 * into a shared mapping of the log file rather than written, which puts it in the page
 * cache (as safe from a crash of stsd as a write) without a system call. The file is
 * grown a chunk ahead with its blocks allocated (journal_writer.c), so that a full disk
 * refuses a change before it is applied and never meets a page fault. With fsync=always
 * the log is written, a batch at a time: there an fdatasync would write-protect the
 * mapped pages again each time, and the next copy would fault. Where the file system
 * cannot allocate ahead, or mapping fails, the log is written too. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "journal_map.h"
#include "base/log.h"
#include "wal.h"

/* Virtual size of the first mapping; doubled as the log outgrows it. */
#define MAP_FIRST (64ull << 20)

/* Cuts the log back to its records: the space reserved after them goes. */
static void cut_reserved(journal *j)
{
    if (ftruncate(j->fd, (off_t)j->size) != 0)
        log_warn("journal: cannot cut the space reserved after journal.%010u.log's last "
                 "record: %s (recovery ignores it)", j->gen, strerror(errno));
}

void journal_map_open_locked(journal *j)
{
    j->map = NULL;
    j->maplen = 0;
    if (!j->prealloc || j->policy == CONF_FSYNC_ALWAYS)
        return;
    size_t len = MAP_FIRST;
    while (len < j->size * 2)
        len *= 2;
    void *m = wal_sys.map(j->fd, len);
    if (m == MAP_FAILED) {
        log_info("journal: cannot map journal.%010u.log (%s); it is written instead",
                 j->gen, strerror(errno));
        return;
    }
    j->map = m;
    j->maplen = len;
    j->map_released = 0;
}

int journal_map_grow_locked(journal *j, uint64_t end)
{
    if (end <= j->maplen)
        return 0;
    size_t len = j->maplen;
    while (len < end)
        len *= 2;
    void *m = mremap(j->map, j->maplen, len, MREMAP_MAYMOVE);
    if (m != MAP_FAILED) {
        j->map = m;
        j->maplen = len;
        return 0;
    }
    log_warn("journal: cannot grow the mapping of journal.%010u.log to %zu bytes (%s); "
             "it is written instead", j->gen, len, strerror(errno));
    journal_map_close_locked(j);
    return -1;
}

void journal_map_release_locked(journal *j, uint64_t chunk)
{
    uint64_t upto = j->size / chunk * chunk;
    if (!j->map || upto <= j->map_released)
        return;
    /* On a shared mapping this only unmaps: the data stays in the file's pages. */
    if (madvise(j->map + j->map_released, upto - j->map_released, MADV_DONTNEED) != 0)
        log_warn("journal: madvise: %s", strerror(errno));
    j->map_released = upto;
}

void journal_map_copy_locked(journal *j, const uint8_t *rec, size_t len)
{
    uint8_t *to = j->map + j->size;
    /* Until its length is there, a record reads as the zeros of reserved space, which
     * recovery cuts: a kill in the middle of the copy leaves no damage. */
    memcpy(to + 4, rec + 4, len - 4);
    atomic_signal_fence(memory_order_release);
    memcpy(to, rec, 4);
}

void journal_map_close_locked(journal *j)
{
    if (j->map && munmap(j->map, j->maplen) != 0)
        log_warn("journal: munmap: %s", strerror(errno));
    j->map = NULL;
    j->maplen = 0;
    if (j->alloc > j->size && j->dead_gen != j->gen)
        cut_reserved(j);
    j->alloc = j->size;
}
