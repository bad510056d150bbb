/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_save.c - SAVE's file on the nodes that did not write it: each committed piece
 * written into the node's own dataset directory under a temporary name, renamed once
 * whole, so that whichever host survives has the test's results (the leader's side, the
 * pieces proposed, is cluster_replicate_save in cluster.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_save.h"
#include "base/log.h"

#define PART_SUFFIX ".stsd-part"

int cluster_save_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > 255 || name[0] == '.')
        return 0;
    for (size_t i = 0; i < len; i++)
        if (name[i] == '/' || name[i] == '\0')
            return 0;
    return 1;
}

void cluster_save_piece(cluster *c, uint64_t off, int last, const uint8_t *data, size_t len)
{
    char name[256], part[4096], path[4096];
    if (len < 2)
        return;
    size_t nl = (size_t)data[0] | (size_t)data[1] << 8;
    if (nl > len - 2 || nl >= sizeof name || !cluster_save_name_ok((const char *)data + 2, nl)) {
        log_error("cluster: a SAVE piece names no file SAVE could write; ignored");
        return;
    }
    if (!c->dataset_dir)
        return;
    memcpy(name, data + 2, nl);
    name[nl] = '\0';
    if (snprintf(path, sizeof path, "%s/%s", c->dataset_dir, name) >= (int)sizeof path ||
        snprintf(part, sizeof part, "%s%s", path, PART_SUFFIX) >= (int)sizeof part)
        return;
    int fd = open(part, O_WRONLY | O_CREAT | O_CLOEXEC | (off == 0 ? O_TRUNC : 0), 0644);
    const uint8_t *p = data + 2 + nl;
    size_t n = len - 2 - nl;
    ssize_t w = fd >= 0 ? pwrite(fd, p, n, (off_t)off) : -1;
    if (fd < 0 || w != (ssize_t)n || (last && (fsync(fd) != 0 || rename(part, path) != 0))) {
        log_error("cluster: cannot write the saved file %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    close(fd);
    if (last)
        log_info("SAVE %s: written here as the leader wrote it", name);
}
