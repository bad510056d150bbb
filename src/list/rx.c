/* SPDX-License-Identifier: Apache-2.0 */
/* rx.c - FIND's regular expressions: pcre2 with JIT and match limits, compiled once per
 * distinct pattern and shared by every thread. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "list/rx.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

/* Bounds the work one line may cost: a catastrophic pattern gives up within
 * milliseconds instead of holding a worker thread. */
#define RX_MATCH_LIMIT 200000
#define RX_DEPTH_LIMIT 10000
/* Compiled patterns kept; a load test uses a handful of distinct ones. */
#define RX_CACHE_SLOTS 256
/* Longest pattern worth caching; longer ones are compiled for the one request. */
#define RX_CACHE_MAX_PATTERN 4096

struct rx {
    pcre2_code *code;
    int jit;                /* JIT compiled: use the fast pcre2_jit_match path */
    int whole;
    unsigned refs;          /* cache's own reference + one per user; under cache_lock */
    uint64_t hash;
    size_t len;
    char pattern[];
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static rx *cache[RX_CACHE_SLOTS];
static pcre2_match_context *match_ctx;
static pthread_once_t match_ctx_once = PTHREAD_ONCE_INIT;
/* Per-thread match data, freed by the key's destructor when a worker thread ends. */
static pthread_key_t match_data_key;

static uint64_t rx_hash(const char *p, size_t len, int whole)
{
    return hash_fnv1a_more(HASH_FNV1A_INIT ^ (uint64_t)whole, p, len);
}

static void rx_free_match_data(void *md)
{
    pcre2_match_data_free(md);
}

static void rx_init_match_ctx(void)
{
    pthread_key_create(&match_data_key, rx_free_match_data);
    match_ctx = pcre2_match_context_create(NULL);
    if (match_ctx) {
        pcre2_set_match_limit(match_ctx, RX_MATCH_LIMIT);
        pcre2_set_depth_limit(match_ctx, RX_DEPTH_LIMIT);
    }
}

static void rx_destroy(rx *r)
{
    pcre2_code_free(r->code);
    free(r);
}

/* Pattern p (len bytes) compiled as every match here wants it: UTF-8, and anchored at
 * both ends when whole. NULL with pcre2's error code and offset when it does not
 * compile. */
static pcre2_code *compile_pattern(const char *p, size_t len, int whole, int *errcode,
                                   PCRE2_SIZE *erroff)
{
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    if (whole)
        opts |= PCRE2_ANCHORED | PCRE2_ENDANCHORED;
    return pcre2_compile((PCRE2_SPTR)p, len, opts, errcode, erroff, NULL);
}

static rx *rx_compile(const char *p, size_t len, int whole, uint64_t hash)
{
    int errcode;
    PCRE2_SIZE erroff;
    pcre2_code *code = compile_pattern(p, len, whole, &errcode, &erroff);
    if (!code)
        return NULL;
    rx *r = malloc(sizeof *r + len + 1);
    if (!r) {
        pcre2_code_free(code);
        return NULL;
    }
    r->code = code;
    r->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    r->whole = whole;
    r->refs = 1;
    r->hash = hash;
    r->len = len;
    memcpy(r->pattern, p, len);
    r->pattern[len] = '\0';
    return r;
}

rx *rx_get(const char *p, size_t len, int whole)
{
    pthread_once(&match_ctx_once, rx_init_match_ctx);
    uint64_t h = rx_hash(p, len, whole);
    size_t slot = h % RX_CACHE_SLOTS;

    pthread_mutex_lock(&cache_lock);
    rx *hit = cache[slot];
    if (hit && hit->hash == h && hit->whole == whole && hit->len == len &&
        memcmp(hit->pattern, p, len) == 0) {
        hit->refs++;
        pthread_mutex_unlock(&cache_lock);
        return hit;
    }
    pthread_mutex_unlock(&cache_lock);

    /* Compile outside the lock: a slow compile must not block other FINDs. */
    rx *r = rx_compile(p, len, whole, h);
    if (!r || len > RX_CACHE_MAX_PATTERN)
        return r;

    pthread_mutex_lock(&cache_lock);
    rx *old = cache[slot];
    cache[slot] = r;
    r->refs++;
    if (old) {
        if (--old->refs == 0)
            rx_destroy(old);
    }
    pthread_mutex_unlock(&cache_lock);
    return r;
}

void rx_release(rx *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&cache_lock);
    int last = --r->refs == 0;
    pthread_mutex_unlock(&cache_lock);
    if (last)
        rx_destroy(r);
}

int rx_match(const char *s, size_t len, void *arg)
{
    rx *r = arg;
    pcre2_match_data *md = pthread_getspecific(match_data_key);
    if (!md) {
        /* One pair is enough: we only ask whether it matches, not where. */
        md = pcre2_match_data_create(1, NULL);
        if (!md || pthread_setspecific(match_data_key, md) != 0) {
            pcre2_match_data_free(md);
            return RX_LIMIT;
        }
    }
    int rc = r->jit ? pcre2_jit_match(r->code, (PCRE2_SPTR)s, len, 0, 0, md,
                                      match_ctx)
                    : pcre2_match(r->code, (PCRE2_SPTR)s, len, 0, 0, md,
                                  match_ctx);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    return RX_LIMIT;
}

void rx_shutdown(void)
{
    pthread_mutex_lock(&cache_lock);
    for (size_t i = 0; i < RX_CACHE_SLOTS; i++) {
        rx *r = cache[i];
        cache[i] = NULL;
        if (r) {
            if (--r->refs == 0)
                rx_destroy(r);
        }
    }
    pthread_mutex_unlock(&cache_lock);
    pcre2_match_context_free(match_ctx);
    match_ctx = NULL;
}

int rx_explain(const char *p, size_t len, int whole, char *msg, size_t size, size_t *offset)
{
    int errcode;
    PCRE2_SIZE erroff;
    /* Compiled again, off the hot path: only a KO's text needs the reason. */
    pcre2_code *code = compile_pattern(p, len, whole, &errcode, &erroff);
    if (code) {
        pcre2_code_free(code);
        return -1;
    }
    if (pcre2_get_error_message(errcode, (PCRE2_UCHAR *)msg, size) < 0 && size)
        snprintf(msg, size, "error %d", errcode);
    *offset = erroff;
    return 0;
}
