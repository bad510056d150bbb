/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_request.c - libFuzzer harness for the request-to-command path: arbitrary bytes
 * become a request (method, target, content type, body) that goes through parameter
 * decoding, the command table and the page formatter, on a real store and dataset
 * directory. Input layout: byte 0 picks the method; then target '\n' content-type '\n'
 * body. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/command.h"
#include "config/config.h"
#include "dataset/dataset.h"
#include "cmd/params.h"
#include "http/reply.h"
#include "meet/barrier.h"
#include "meet/keys.h"
#include "store/store.h"

static config conf;
static cmd_server srv;
static char dir[64];
static unsigned long runs;

static void setup(void)
{
    buf err = BUF_INIT;
    snprintf(dir, sizeof dir, "/tmp/stsd-fuzz-XXXXXX");
    if (!mkdtemp(dir) || config_defaults(&conf) != 0)
        abort();
    char path[128];
    snprintf(path, sizeof path, "%s/logins.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        abort();
    fputs("login1;pw1\nlogin2;pw2\r\nlogin3;pw3\rlast", f);
    fclose(f);
    srv.ds = dataset_open(dir, "UTF-8", "UTF-8", &err);
    srv.conf = &conf;
    if (!srv.ds || reply_set_charset("UTF-8") != 0)
        abort();
    buf_free(&err);
}

/* Lines from the fuzzer pile up in the store and SAVE leaves files: start afresh now
 * and then so that a long run measures the code, not a growing heap or directory. */
static void refresh(void)
{
    if (srv.st && runs % 2048 != 0)
        return;
    store_free(srv.st);
    store_limits limits = {1000, 64 << 20, 1000};
    srv.st = store_create(&limits);
    if (!srv.st || keys_attach(srv.st) != 0)
        abort();
    if (!srv.barriers && !(srv.barriers = barrier_table_create(1000)))
        abort();
    if (runs) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "find %s -type f ! -name logins.csv -delete", dir);
        if (system(cmd) != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!srv.ds)
        setup();
    refresh();
    runs++;
    if (size < 1)
        return 0;
    cmd_method m = data[0] % 3 == 0 ? CMD_GET : data[0] % 3 == 1 ? CMD_POST : CMD_OTHER;
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *target_end = nl ? nl : end;
    char ctype[256] = "";
    const char *body = end;
    if (nl) {
        const char *nl2 = memchr(nl + 1, '\n', (size_t)(end - nl - 1));
        size_t clen = (size_t)((nl2 ? nl2 : end) - nl - 1);
        if (clen >= sizeof ctype)
            clen = sizeof ctype - 1;
        memcpy(ctype, nl + 1, clen);
        ctype[clen] = '\0';
        body = nl2 ? nl2 + 1 : end;
    }
    /* The same steps as the HTTP layer: path, query, body, command, page. */
    params prm = {0};
    buf path = BUF_INIT, page = BUF_INIT;
    cmd_result r = {0};
    const char *qm = memchr(p, '?', (size_t)(target_end - p));
    size_t path_len = (size_t)((qm ? qm : target_end) - p);
    params_rc rc = params_decode(p, path_len, &path);
    if (rc == PARAMS_OK && qm)
        rc = params_parse_urlencoded(&prm, qm + 1, (size_t)(target_end - qm - 1));
    if (rc == PARAMS_OK && body < end)
        rc = params_parse_body(&prm, ctype, body, (size_t)(end - body));
    if (rc == PARAMS_OK) {
        cmd_request q = {.path = path.data ? path.data : "", .path_len = path.len,
                         .method = m, .prm = &prm};
        command_run(&srv, &q, &r);
        if (reply_render(&r, &page) != 0)
            abort();
        if (page.len < 10 || memcmp(page.data, "<html>", 6) != 0)
            abort();
    }
    params_free(&prm);
    buf_free(&path);
    buf_free(&page);
    buf_free(&r.text);
    buf_free(&r.headers);        /* a command's extra headers (SAVE's X-STS-File, ...) */
    return 0;
}
