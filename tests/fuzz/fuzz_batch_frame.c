/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_batch_frame.c - a batch's bytes (src/http/batch_frame) read as requests and as
 * answers, whatever a client posing as a follower or a leader sends: no crash, no read
 * past the end, every item found within the bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "http/batch_frame.h"

static void walk(const char *p, size_t len, int request)
{
    size_t count, off;
    frame_item it;
    if (frame_head(p, len, &count, &off) != 0)
        return;
    for (size_t i = 0; i < count && frame_next(p, len, &off, request, &it) == 0; i++)
        if (off > len || it.body + it.body_len > p + len ||
            it.headers + it.headers_len > p + len)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    walk((const char *)data, size, 1);
    walk((const char *)data, size, 0);
    return 0;
}
