/* SPDX-License-Identifier: Apache-2.0 */
/* auth.c - tokens and roles, disabled commands, failure counting and the 429 penalty. */
#include "guard/auth.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/digest.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/strlist.h"
#include "guard/addr.h"

#define AUTH_FILE_MAX 65536
#define AUTH_SLOTS 4096           /* addresses with recent failures, at most */
#define AUTH_PROBES 8

typedef struct token_set {
    char *text;                   /* every token, NUL-separated; owned */
    const char **tok;
    size_t *len;
    size_t n;
    char (*names)[AUTH_NAME_SIZE];  /* each token's name (auth_name_of), for the audit log */
} token_set;

/* One address with recent failures. */
typedef struct fail_slot {
    unsigned char key[ADDR_KEY_SIZE];   /* guard/addr's: IPv4 as ::ffff:a.b.c.d */
    int used;
    int64_t window_start;         /* ms, monotonic */
    unsigned count;
    int64_t blocked_until;
} fail_slot;

struct auth {
    token_set data, admin;
    token_set disabled;           /* command names */
    pthread_mutex_t lock;         /* guards slots */
    atomic_int live;              /* slots in use: 0 lets requests skip the lock */
    int64_t last_sweep;
    fail_slot slots[AUTH_SLOTS];
};

static atomic_ullong failures_total;

/* Comparing every byte of expected, whatever happens on the way, and folding the result
 * only at the end: no branch depends on the secret's bytes. */
__attribute__((noinline)) int auth_equal(const char *expected, size_t expected_len,
                                         const char *given, size_t n)
{
    volatile unsigned char diff = (unsigned char)(n != expected_len);
    for (size_t i = 0; i < expected_len; i++) {
        unsigned char g = i < n ? (unsigned char)given[i] : 0;
        diff |= (unsigned char)((unsigned char)expected[i] ^ g);
    }
    return diff == 0;
}

/* Adds the comma (or line) separated items of text to s. Items must be printable ASCII
 * without blanks. Returns 0, or -1 with a message naming what (never the item). */
static int set_add(token_set *s, const char *text, const char *what, buf *err)
{
    size_t old = 0;
    if (s->text)
        for (size_t i = 0; i < s->n; i++)
            old += s->len[i] + 1;
    size_t tlen = strlen(text), max = s->n + tlen / 2 + 1;
    char *nt = malloc(old + tlen + 1);
    const char **ntok = malloc(max * sizeof *ntok);
    size_t *nlen = malloc(max * sizeof *nlen);
    if (!nt || !ntok || !nlen) {
        free(nt);
        free(ntok);
        free(nlen);
        buf_printf(err, "%s: out of memory", what);
        return -1;
    }
    size_t w = 0, n = 0;
    for (size_t i = 0; i < s->n; i++) {
        memcpy(nt + w, s->tok[i], s->len[i] + 1);
        ntok[n] = nt + w;
        nlen[n++] = s->len[i];
        w += s->len[i] + 1;
    }
    size_t len;
    for (const char *c = text, *b; strlist_next_word(&c, &b, &len);) {
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)b[i] < 0x21 || (unsigned char)b[i] > 0x7e) {
                buf_printf(err, "%s: a token holds a byte that is not printable ASCII", what);
                free(nt);
                free(ntok);
                free(nlen);
                return -1;
            }
        memcpy(nt + w, b, len);
        nt[w + len] = '\0';
        ntok[n] = nt + w;
        nlen[n++] = len;
        w += len + 1;
    }
    free(s->text);
    free(s->tok);
    free(s->len);
    s->text = nt;
    s->tok = ntok;
    s->len = nlen;
    s->n = n;
    return 0;
}

static void set_free(token_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        explicit_bzero((char *)s->tok[i], s->len[i]);
    free(s->text);
    free(s->tok);
    free(s->len);
    free(s->names);
    memset(s, 0, sizeof *s);
}

int auth_name_of(const char *role, const char *token, size_t len, char name[AUTH_NAME_SIZE])
{
    char hex[DIGEST_SHA256_HEX];
    if (digest_sha256_hex(token, len, hex) != 0)
        return -1;
    snprintf(name, AUTH_NAME_SIZE, "%s:%.8s", role, hex);
    explicit_bzero(hex, sizeof hex);
    return 0;
}

/* Names every token of s once all sources are in: requests then only copy a name. */
static int set_name(token_set *s, const char *role, buf *err)
{
    if (!s->n)
        return 0;
    s->names = calloc(s->n, sizeof *s->names);
    if (!s->names) {
        buf_puts(err, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < s->n; i++)
        if (auth_name_of(role, s->tok[i], s->len[i], s->names[i]) != 0) {
            buf_puts(err, "cannot name the tokens: SHA-256 failed (GnuTLS)");
            return -1;
        }
    return 0;
}

/* Reads a token file (a systemd credential, say) into s, warning when others may read it. */
static int set_add_file(token_set *s, const char *path, const char *key, buf *err)
{
    char text[AUTH_FILE_MAX + 1];
    size_t n = 0;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        buf_printf(err, "%s: %s: %s", key, path, strerror(errno));
        return -1;
    }
    for (;;) {
        ssize_t r = read(fd, text + n, sizeof text - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            buf_printf(err, "%s: %s: %s", key, path, strerror(errno));
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == sizeof text - 1) {
            buf_printf(err, "%s: %s: larger than %d bytes", key, path, AUTH_FILE_MAX);
            close(fd);
            return -1;
        }
    }
    if (fstat(fd, &st) == 0 && (st.st_mode & 077))
        log_warn("%s: %s is readable by group or others (mode %03o): chmod 600 it", key,
                 path, (unsigned)(st.st_mode & 0777));
    close(fd);
    text[n] = '\0';
    size_t before = s->n;
    int rc = set_add(s, text, key, err);
    explicit_bzero(text, sizeof text);
    if (rc == 0 && s->n == before) {
        buf_printf(err, "%s: %s holds no token", key, path);
        return -1;
    }
    return rc;
}

/* Fills s from a key's value, an environment variable and a file, in that order. */
static int set_fill(token_set *s, const char *value, const char *key, const char *env,
                    const char *file, const char *file_key, buf *err)
{
    const char *e = getenv(env);
    if (value && *value && set_add(s, value, key, err) != 0)
        return -1;
    if (e && *e && set_add(s, e, env, err) != 0)
        return -1;
    if (file && *file && set_add_file(s, file, file_key, err) != 0)
        return -1;
    return 0;
}

/* Command names are upper case in the table and matched exactly there: the setting may
 * spell them in any case. */
static int disabled_fill(token_set *s, const char *value,
                         int (*is_command)(const char *name, size_t len), buf *err)
{
    if (!value || !*value)
        return 0;
    if (set_add(s, value, "stsd.disabledCommands", err) != 0)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        for (char *c = (char *)s->tok[i]; *c; c++)
            *c = (char)toupper((unsigned char)*c);
        if (!is_command(s->tok[i], s->len[i])) {
            buf_printf(err, "stsd.disabledCommands: \"%s\" is not a command", s->tok[i]);
            return -1;
        }
    }
    return 0;
}

auth *auth_create(const config *conf, int (*is_command)(const char *name, size_t len),
                  buf *err)
{
    auth *a = calloc(1, sizeof *a);
    if (!a) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&a->lock, NULL);
    atomic_init(&a->live, 0);
    if (set_fill(&a->data, conf->token, "stsd.token", "STSD_TOKEN", conf->token_file,
                 "stsd.tokenFile", err) != 0 ||
        set_fill(&a->admin, conf->admin_token, "stsd.adminToken", "STSD_ADMIN_TOKEN",
                 conf->admin_token_file, "stsd.adminTokenFile", err) != 0 ||
        disabled_fill(&a->disabled, conf->disabled_commands, is_command, err) != 0 ||
        set_name(&a->data, "data", err) != 0 || set_name(&a->admin, "admin", err) != 0) {
        auth_free(a);
        return NULL;
    }
    return a;
}

void auth_free(auth *a)
{
    if (!a)
        return;
    set_free(&a->data);
    set_free(&a->admin);
    set_free(&a->disabled);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

int auth_active(const auth *a)
{
    return a && (a->data.n || a->admin.n || a->disabled.n);
}

int auth_has_data_token(const auth *a)
{
    return a && a->data.n > 0;
}

void auth_counts(const auth *a, size_t *data, size_t *admin)
{
    *data = a ? a->data.n : 0;
    *admin = a ? a->admin.n : 0;
}

/* Tries every token of s (no early exit) against the given one; *which is the index of
 * the one that matched, chosen without a branch on the comparisons. */
static int set_has(const token_set *s, const char *given, size_t n, size_t *which)
{
    int found = 0;
    size_t at = 0;
    for (size_t i = 0; i < s->n; i++) {
        int eq = auth_equal(s->tok[i], s->len[i], given, n);
        size_t mask = (size_t)0 - (size_t)eq;
        at = (at & ~mask) | (i & mask);
        found |= eq;
    }
    *which = at;
    return found;
}

static size_t key_hash(const unsigned char key[ADDR_KEY_SIZE])
{
    return (size_t)(hash_fnv1a(key, ADDR_KEY_SIZE) % AUTH_SLOTS);
}

static int slot_stale(const fail_slot *s, int64_t now)
{
    return now - s->window_start >= AUTH_WINDOW_MS && now >= s->blocked_until;
}

static void slot_clear(auth *a, fail_slot *s)
{
    memset(s, 0, sizeof *s);
    atomic_fetch_sub(&a->live, 1);
}

/* Drops stale slots, at most once a second, so that live falls back to 0. Locked. */
static void sweep(auth *a, int64_t now)
{
    if (now - a->last_sweep < 1000)
        return;
    a->last_sweep = now;
    for (size_t i = 0; i < AUTH_SLOTS; i++)
        if (a->slots[i].used && slot_stale(&a->slots[i], now))
            slot_clear(a, &a->slots[i]);
}

/* The slot of key, or NULL; with create, a free (or the oldest) slot is taken. Locked. */
static fail_slot *slot_find(auth *a, const unsigned char key[ADDR_KEY_SIZE], int64_t now,
                            int create)
{
    size_t h = key_hash(key);
    fail_slot *spare = NULL;
    for (size_t i = 0; i < AUTH_PROBES; i++) {
        fail_slot *s = &a->slots[(h + i) % AUTH_SLOTS];
        if (s->used && memcmp(s->key, key, ADDR_KEY_SIZE) == 0)
            return s;
        if (!s->used || slot_stale(s, now)) {
            if (!spare || spare->used)
                spare = s;
        } else if (!spare || (spare->used && s->window_start < spare->window_start)) {
            spare = s;
        }
    }
    if (!create)
        return NULL;
    if (spare->used)
        slot_clear(a, spare);
    memcpy(spare->key, key, ADDR_KEY_SIZE);
    spare->used = 1;
    spare->window_start = now;
    atomic_fetch_add(&a->live, 1);
    return spare;
}

static int penalized(auth *a, const unsigned char key[ADDR_KEY_SIZE], int64_t now)
{
    if (atomic_load_explicit(&a->live, memory_order_relaxed) == 0)
        return 0;
    pthread_mutex_lock(&a->lock);
    sweep(a, now);
    fail_slot *s = slot_find(a, key, now, 0);
    int blocked = s && now < s->blocked_until;
    pthread_mutex_unlock(&a->lock);
    return blocked;
}

static void record_failure(auth *a, const unsigned char key[ADDR_KEY_SIZE], int64_t now)
{
    atomic_fetch_add_explicit(&failures_total, 1, memory_order_relaxed);
    pthread_mutex_lock(&a->lock);
    fail_slot *s = slot_find(a, key, now, 1);
    if (now - s->window_start >= AUTH_WINDOW_MS) {
        s->window_start = now;
        s->count = 0;
    }
    if (++s->count > AUTH_MAX_FAILURES) {
        s->blocked_until = now + AUTH_PENALTY_MS;
        s->window_start = now;
        s->count = 0;
        log_warn("auth: more than %d failed attempts in %d s from one address: "
                 "429 for %d s", AUTH_MAX_FAILURES, AUTH_WINDOW_MS / 1000,
                 AUTH_PENALTY_MS / 1000);
    }
    pthread_mutex_unlock(&a->lock);
}

/* The token of an "Authorization: Bearer <token>" header, or NULL. */
static const char *bearer(const char *h, size_t *len)
{
    if (!h)
        return NULL;
    while (*h == ' ' || *h == '\t')
        h++;
    if (strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t'))
        return NULL;
    h += 6;
    while (*h == ' ' || *h == '\t')
        h++;
    size_t n = strlen(h);
    while (n && (h[n - 1] == ' ' || h[n - 1] == '\t'))
        n--;
    *len = n;
    return h;
}

auth_verdict auth_check(auth *a, const struct sockaddr *addr, socklen_t addr_len,
                        const char *command, int admin_only, const char *authorization,
                        const char *token,
                        size_t token_len)
{
    return auth_check_named(a, addr, addr_len, command, admin_only, authorization, token,
                            token_len, NULL);
}

auth_verdict auth_check_named(auth *a, const struct sockaddr *addr, socklen_t addr_len,
                              const char *command, int admin_only, const char *authorization,
                              const char *token, size_t token_len,
                              char name[AUTH_NAME_SIZE])
{
    if (name)
        name[0] = '\0';
    int64_t now = clock_now_ms();
    unsigned char key[ADDR_KEY_SIZE];
    int have_key = addr_key(addr, addr_len, key) == 0;

    if (a->data.n || a->admin.n) {
        if (have_key && penalized(a, key, now))
            return AUTH_TOO_MANY;
        size_t n = 0;
        const char *given = bearer(authorization, &n);
        if (!given) {
            given = token;
            n = token_len;
        }
        size_t ai = 0, di = 0;
        int is_admin = given && set_has(&a->admin, given, n, &ai);
        int is_data = given && set_has(&a->data, given, n, &di);
        int needs_admin = a->admin.n && admin_only;
        auth_verdict v = AUTH_OK;
        if (given && !is_admin && !is_data)
            v = AUTH_WRONG;
        else if (!given && (a->data.n || needs_admin))
            v = AUTH_MISSING;
        else if (needs_admin && !is_admin)
            v = AUTH_NEED_ADMIN;
        if (v == AUTH_WRONG || v == AUTH_MISSING) {
            if (have_key)
                record_failure(a, key, now);
            else
                atomic_fetch_add_explicit(&failures_total, 1, memory_order_relaxed);
            return v;
        }
        if (v != AUTH_OK)
            return v;
        /* The admin token's name wins when one token is in both sets. */
        if (name && is_admin)
            memcpy(name, a->admin.names[ai], AUTH_NAME_SIZE);
        else if (name && is_data)
            memcpy(name, a->data.names[di], AUTH_NAME_SIZE);
    }
    for (size_t i = 0; command && i < a->disabled.n; i++)
        if (strcmp(a->disabled.tok[i], command) == 0)
            return AUTH_DISABLED;
    return AUTH_OK;
}

unsigned auth_status(auth_verdict v)
{
    switch (v) {
    case AUTH_OK: return 200;
    case AUTH_MISSING: case AUTH_WRONG: return 401;
    case AUTH_NEED_ADMIN: case AUTH_DISABLED: return 403;
    case AUTH_TOO_MANY: return 429;
    }
    return 500;
}

const char *auth_message(auth_verdict v)
{
    switch (v) {
    case AUTH_OK: return "";
    case AUTH_MISSING:
        return "Token required: send the header Authorization: Bearer <token>, "
               "or a TOKEN parameter !";
    case AUTH_WRONG: return "Token not accepted !";
    case AUTH_NEED_ADMIN: return "This command needs the admin token !";
    case AUTH_DISABLED: return "This command is disabled on this server !";
    case AUTH_TOO_MANY: return "Too many failed attempts from this address, retry later !";
    }
    return "";
}

unsigned long long auth_failures_total(void)
{
    return atomic_load_explicit(&failures_total, memory_order_relaxed);
}
