/* SPDX-License-Identifier: Apache-2.0 */
/* ui_assets.h - the dashboard's files as scripts/ui-embed.sh compiles them into the
 * binary (build/gen/ui_assets.c). Private to the ui module. */
#ifndef STSD_UI_ASSETS_H
#define STSD_UI_ASSETS_H

#include <stddef.h>

typedef struct ui_asset {
    const char *name;            /* served as /ui/<name>: "index.html", "app.<tag>.js" */
    const char *type;            /* Content-Type */
    const unsigned char *raw;
    size_t raw_len;
    const unsigned char *gz;     /* the same bytes, gzip -9 */
    size_t gz_len;
    const char *etag;            /* quoted, as sent */
    int immutable;               /* a content-hashed name: cached for a year */
} ui_asset;

extern const ui_asset ui_assets[];
extern const unsigned ui_asset_count;

#endif
