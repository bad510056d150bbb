/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ctl_json.c - stsctl's JSON reader (src/ctl/ctl_json) and its printing of answers
 * (ctl_out) on any bytes a server, or something posing as one, may send: no crash, no
 * leak, no read past the end, bounded depth. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/ctl_json.h"
#include "ctl/ctl_out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cj *v = cj_parse((const char *)data, size);
    if (v) {
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            ctl_print(null, v, size & 1);
            fclose(null);
        }
        cj_get(v, "ok");
        cj_free(v);
    }
    return 0;
}
