/* SPDX-License-Identifier: Apache-2.0 */
/* tls.c - HTTPS credentials: PEM chain and key loading, checks, and swapping on reload. */
#include "http/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

#define TLS_MAX_CHAIN 16
#define TLS_FILE_MAX (1024 * 1024)

/* One certificate chain with its key. A pair is never freed while the server runs: a
 * handshake may still be using it after a reload (they are a few KiB, reloads rare). */
typedef struct tls_pair {
    struct tls_pair *older;
    gnutls_pcert_st certs[TLS_MAX_CHAIN];
    unsigned n_certs;
    gnutls_privkey_t key;
} tls_pair;

struct tls_ctx {
    char *cert_path, *key_path;
    const char *priorities;
    char *priorities_own;
    tls_pair *pairs;              /* newest first; the current one is also in current */
};

/* The handshake callback has no user pointer of its own: the current pair lives here. */
static _Atomic(tls_pair *) current;
static atomic_int ctx_exists;

int tls_wanted(const config *conf)
{
    return (conf->tls_cert && *conf->tls_cert) || (conf->tls_key && *conf->tls_key);
}

static int read_file(const char *path, const char *key, gnutls_datum_t *out, int secret,
                     buf *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        buf_printf(err, "%s: %s: %s", key, path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        st.st_size > TLS_FILE_MAX) {
        buf_printf(err, "%s: %s is not a PEM file of 1 byte to 1 MiB", key, path);
        close(fd);
        return -1;
    }
    if (secret && (st.st_mode & 077))
        log_warn("%s: %s is readable by group or others (mode %03o): chmod 600 it", key, path,
                 (unsigned)(st.st_mode & 0777));
    out->data = gnutls_malloc((size_t)st.st_size + 1);
    out->size = 0;
    if (!out->data) {
        buf_printf(err, "%s: out of memory", key);
        close(fd);
        return -1;
    }
    while (out->size < (unsigned)st.st_size) {
        ssize_t r = read(fd, out->data + out->size, (size_t)st.st_size - out->size);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            buf_printf(err, "%s: %s: %s", key, path, r < 0 ? strerror(errno) : "short read");
            close(fd);
            gnutls_free(out->data);
            out->data = NULL;
            return -1;
        }
        out->size += (unsigned)r;
    }
    out->data[out->size] = '\0';
    close(fd);
    return 0;
}

static void pair_free(tls_pair *p)
{
    for (unsigned i = 0; i < p->n_certs; i++)
        gnutls_pcert_deinit(&p->certs[i]);
    if (p->key)
        gnutls_privkey_deinit(p->key);
    free(p);
}

/* 0 if the key is the private half of the first certificate's public key. */
static int pair_matches(tls_pair *p)
{
    unsigned char a[64], b[64];
    size_t na = sizeof a, nb = sizeof b;
    gnutls_pubkey_t pub;
    if (gnutls_pubkey_init(&pub) < 0)
        return -1;
    int rc = gnutls_pubkey_import_privkey(pub, p->key, 0, 0) >= 0 &&
             gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, a, &na) >= 0 &&
             gnutls_pubkey_get_key_id(p->certs[0].pubkey, GNUTLS_KEYID_USE_SHA256, b, &nb) >= 0 &&
             na == nb && memcmp(a, b, na) == 0 ? 0 : -1;
    gnutls_pubkey_deinit(pub);
    return rc;
}

/* Loads and checks a pair from the two files. Returns it, or NULL with err. */
static tls_pair *pair_load(const char *cert_path, const char *key_path, buf *err)
{
    gnutls_datum_t cert = {NULL, 0}, key = {NULL, 0};
    tls_pair *p = calloc(1, sizeof *p);
    int r;
    if (!p) {
        buf_puts(err, "stsd.tls: out of memory");
        return NULL;
    }
    if (read_file(cert_path, "stsd.tls.cert", &cert, 0, err) != 0 ||
        read_file(key_path, "stsd.tls.key", &key, 1, err) != 0)
        goto fail;
    p->n_certs = TLS_MAX_CHAIN;
    r = gnutls_pcert_list_import_x509_raw(p->certs, &p->n_certs, &cert, GNUTLS_X509_FMT_PEM,
                                          GNUTLS_X509_CRT_LIST_FAIL_IF_UNSORTED);
    if (r < 0) {
        p->n_certs = 0;
        buf_printf(err, "stsd.tls.cert: %s: not a PEM certificate chain (leaf first, at most "
                   "%d): %s", cert_path, TLS_MAX_CHAIN, gnutls_strerror(r));
        goto fail;
    }
    if ((r = gnutls_privkey_init(&p->key)) < 0 ||
        (r = gnutls_privkey_import_x509_raw(p->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        buf_printf(err, "stsd.tls.key: %s: not an unencrypted PEM private key: %s", key_path,
                   gnutls_strerror(r));
        goto fail;
    }
    if (pair_matches(p) != 0) {
        buf_printf(err, "stsd.tls.key: %s is not the key of the certificate in %s", key_path,
                   cert_path);
        goto fail;
    }
    gnutls_free(cert.data);
    if (key.data)
        explicit_bzero(key.data, key.size);
    gnutls_free(key.data);
    return p;
fail:
    gnutls_free(cert.data);
    if (key.data)
        explicit_bzero(key.data, key.size);
    gnutls_free(key.data);
    pair_free(p);
    return NULL;
}

/* gnutls_certificate_retrieve_function2: every handshake takes the pair current then. */
static int on_retrieve(gnutls_session_t s, const gnutls_datum_t *req_ca, int nreqs,
                       const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **certs,
                       unsigned int *n_certs, gnutls_privkey_t *key)
{
    tls_pair *p = atomic_load(&current);
    if (!p)
        return -1;
    *certs = p->certs;
    *n_certs = p->n_certs;
    *key = p->key;
    return 0;
}

tls_fn tls_cert_callback(void)
{
    gnutls_certificate_retrieve_function2 *fn = on_retrieve;
    return (tls_fn)fn;
}

tls_ctx *tls_create(const config *conf, buf *err)
{
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
        MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES) {
        buf_puts(err, "stsd.tls.cert: this libmicrohttpd was built without TLS (GnuTLS) "
                 "support; install Debian's libmicrohttpd12 or rebuild it with GnuTLS");
        return NULL;
    }
    if (!conf->tls_cert || !*conf->tls_cert || !conf->tls_key || !*conf->tls_key) {
        buf_puts(err, "stsd.tls.cert and stsd.tls.key go together: set both");
        return NULL;
    }
    if (atomic_exchange(&ctx_exists, 1)) {
        buf_puts(err, "stsd.tls: one TLS context at a time");
        return NULL;
    }
    tls_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        atomic_store(&ctx_exists, 0);
        buf_puts(err, "out of memory");
        return NULL;
    }
    c->cert_path = strdup(conf->tls_cert);
    c->key_path = strdup(conf->tls_key);
    c->priorities = TLS_DEFAULT_PRIORITIES;
    if (conf->tls_priorities && *conf->tls_priorities)
        c->priorities = c->priorities_own = strdup(conf->tls_priorities);
    if (!c->cert_path || !c->key_path || !c->priorities) {
        buf_puts(err, "out of memory");
        goto fail;
    }
    gnutls_priority_t prio;
    const char *where = NULL;
    int r = gnutls_priority_init(&prio, c->priorities, &where);
    if (r < 0) {
        buf_printf(err, "stsd.tls.priorities: \"%s\" is not a GnuTLS priority string (%s, at "
                   "\"%s\")", c->priorities, gnutls_strerror(r), where ? where : "");
        goto fail;
    }
    gnutls_priority_deinit(prio);
    c->pairs = pair_load(c->cert_path, c->key_path, err);
    if (!c->pairs)
        goto fail;
    atomic_store(&current, c->pairs);
    return c;
fail:
    free(c->cert_path);
    free(c->key_path);
    free(c->priorities_own);
    free(c);
    atomic_store(&ctx_exists, 0);
    return NULL;
}

const char *tls_priorities(const tls_ctx *ctx)
{
    return ctx->priorities;
}

int tls_reload(tls_ctx *ctx, buf *err)
{
    tls_pair *p = pair_load(ctx->cert_path, ctx->key_path, err);
    if (!p)
        return -1;
    p->older = ctx->pairs;
    ctx->pairs = p;
    atomic_store(&current, p);
    return 0;
}

void tls_free(tls_ctx *ctx)
{
    if (!ctx)
        return;
    atomic_store(&current, NULL);
    for (tls_pair *p = ctx->pairs; p;) {
        tls_pair *older = p->older;
        pair_free(p);
        p = older;
    }
    free(ctx->cert_path);
    free(ctx->key_path);
    free(ctx->priorities_own);
    free(ctx);
    atomic_store(&ctx_exists, 0);
}
