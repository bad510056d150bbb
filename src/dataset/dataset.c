/* SPDX-License-Identifier: Apache-2.0 */
/* dataset.c - the dataset directory: name rules, charsets, INITFILE loading, listing. */
#include "dataset/dataset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset_core.h"
#include "base/log.h"

/* Reads of this size keep the buffer in cache while it is split into lines. */
#define LOAD_CHUNK (1u << 20)


static _Thread_local int last_errno;

dataset_rc dataset_check_name(const char *name, size_t len)
{
    /* The reference's checks come first and in its order, so a long name with '/' is
     * reported as illegal, as the reference does. */
    if (memchr(name, '/', len) || memchr(name, '\\', len) || memchr(name, ':', len))
        return DATASET_ILLEGAL;
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return DATASET_ILLEGAL;
    if (len > DATASET_NAME_MAX)
        return DATASET_TOO_LONG;
    if (len == 0)
        return DATASET_ILLEGAL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f)
            return DATASET_ILLEGAL;
    }
    return DATASET_OK;
}

int dataset_errno(void)
{
    return last_errno;
}

void dataset_set_errno(int err)
{
    last_errno = err;
}

static int is_utf8(const char *cs)
{
    return cs == NULL || *cs == '\0' || strcasecmp(cs, "UTF-8") == 0 ||
           strcasecmp(cs, "UTF8") == 0;
}

/* 1 if iconv converts s[0..n) from charset from to charset to unchanged. */
static int converts_to_itself(const char *to, const char *from, const char *s, size_t n)
{
    char out[256];
    char *inp = (char *)s, *outp = out;
    size_t inleft = n, outleft = sizeof out;
    iconv_t cd = iconv_open(to, from);
    if (cd == (iconv_t)-1)
        return 0;
    int same = iconv(cd, &inp, &inleft, &outp, &outleft) != (size_t)-1 &&
               iconv(cd, NULL, NULL, &outp, &outleft) != (size_t)-1 &&
               (size_t)(outp - out) == n && memcmp(s, out, n) == 0;
    iconv_close(cd);
    return same;
}

/* 1 if ASCII text in charset cs is the same bytes in UTF-8 both ways, with no shift
 * state that ASCII bytes could switch (true of ISO-8859-*, windows-125*, EUC-*, Shift_JIS;
 * not of UTF-16, UTF-7, HZ or ISO-2022-*, whose shift sequences are all ASCII bytes).
 * Pure ASCII text is then copied, several times faster than glibc's iconv. */
static int keeps_ascii(const char *cs)
{
    static const char *const shifts[] = {"\x1b$B$\"\x1b(B", "\x0e!!\x0f", "~{!!~}", "+AGE-"};
    char all[128];
    for (size_t i = 0; i < sizeof all; i++)
        all[i] = (char)i;
    if (!converts_to_itself("UTF-8", cs, all, sizeof all) ||
        !converts_to_itself(cs, "UTF-8", all, sizeof all))
        return 0;
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++)
        if (!converts_to_itself("UTF-8", cs, shifts[i], strlen(shifts[i])))
            return 0;
    return 1;
}

/* Checks that iconv knows the pair now, so a typo fails at start-up and not at the first
 * INITFILE. Returns 0 or -1. */
static int charset_usable(const char *to, const char *from)
{
    iconv_t cd = iconv_open(to, from);
    if (cd == (iconv_t)-1)
        return -1;
    iconv_close(cd);
    return 0;
}

/* 1 if p[0..n) has no byte >= 0x80; a word at a time, as this runs over whole files. */
int dataset_ascii_only(const char *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ull)
            return 0;
    }
    for (; i < n; i++)
        if ((unsigned char)p[i] & 0x80)
            return 0;
    return 1;
}

/* Stores a strdup of cs in *out, or NULL when cs means UTF-8. Returns 0 or -1 (ENOMEM). */
static int keep_charset(const char *cs, char **out)
{
    *out = NULL;
    if (is_utf8(cs))
        return 0;
    *out = strdup(cs);
    return *out ? 0 : -1;
}

dataset *dataset_open(const char *dir, const char *read_charset, const char *write_charset,
                      buf *err)
{
    dataset *d = calloc(1, sizeof *d);
    if (!d) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    d->dirfd = -1;
    d->path = realpath(dir, NULL);
    if (!d->path) {
        buf_printf(err, "dataset directory %s: %s", dir, strerror(errno));
        goto fail;
    }
    d->path_len = strlen(d->path);
    d->dirfd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->dirfd < 0) {
        buf_printf(err, "dataset directory %s: %s", d->path, strerror(errno));
        goto fail;
    }
    if (keep_charset(read_charset, &d->read_cs) != 0 ||
        keep_charset(write_charset, &d->write_cs) != 0) {
        buf_puts(err, "out of memory");
        goto fail;
    }
    if (d->read_cs && charset_usable("UTF-8", d->read_cs) != 0) {
        buf_printf(err, "charset for reading files %s: not supported by iconv", d->read_cs);
        goto fail;
    }
    if (d->write_cs && charset_usable(d->write_cs, "UTF-8") != 0) {
        buf_printf(err, "charset for writing files %s: not supported by iconv", d->write_cs);
        goto fail;
    }
    d->read_ascii = d->read_cs && keeps_ascii(d->read_cs);
    d->write_ascii = d->write_cs && keeps_ascii(d->write_cs);
    return d;
fail:
    dataset_close(d);
    return NULL;
}

void dataset_close(dataset *d)
{
    if (!d)
        return;
    if (d->dirfd >= 0)
        close(d->dirfd);
    free(d->path);
    free(d->read_cs);
    free(d->write_cs);
    free(d);
}

const char *dataset_path(const dataset *d)
{
    return d->path;
}

void dataset_set_stop(dataset *d, const atomic_int *stop)
{
    d->stop = stop;
}

/* Whether the server's stop has been asked for. Relaxed: the flag carries no data. */
static int stop_asked(const atomic_int *stop)
{
    return stop && atomic_load_explicit(stop, memory_order_relaxed) != 0;
}

/* Appends the lines of text[0..len) to l and sets *used to the bytes consumed. Unless final,
 * the text is a chunk of a longer stream: the piece after the last line end is left
 * unconsumed, and so is a '\r' ending the chunk, whose '\n' may open the next one.
 * Returns 0, -1 on ENOMEM, or 1 once *stop is set (looked at every DATASET_STOP_LINES
 * lines; stop may be NULL). */
static int parse_some(const char *text, size_t len, int final, list *l, size_t *used,
                      const atomic_int *stop)
{
    size_t lines = 0;
    const char *p = text, *end = text + len;
    /* The next '\n' and '\r' at or after p, each found by one memchr over the rest and
     * searched again only once p has passed it: linear even for a file of lone '\r'. */
    const char *nl = len ? memchr(p, '\n', len) : NULL;
    const char *cr = len ? memchr(p, '\r', len) : NULL;
    int rc = 0;
    while (p < end) {
        if (nl && nl < p)
            nl = memchr(p, '\n', (size_t)(end - p));
        if (cr && cr < p)
            cr = memchr(p, '\r', (size_t)(end - p));
        const char *eol = end;
        if (nl)
            eol = nl;
        if (cr && cr < eol)
            eol = cr;
        if (!final && (eol == end || (eol == end - 1 && *eol == '\r')))
            break;
        if (list_push_back(l, p, (size_t)(eol - p)) != 0) {
            rc = -1;
            break;
        }
        if (++lines % DATASET_STOP_LINES == 0 && stop_asked(stop)) {
            rc = 1;
            break;
        }
        if (eol == end) {
            p = end;
            break;
        }
        p = eol + 1;
        if (*eol == '\r' && p < end && *p == '\n')
            p++;
    }
    *used = (size_t)(p - text);
    return rc;
}

size_t dataset_bom_len(const char *text, size_t len)
{
    return len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

int dataset_parse_lines(const char *text, size_t len, list *l)
{
    size_t used;
    return parse_some(text, len, 1, l, &used, NULL);
}

dataset_rc dataset_parse_until_stop(const dataset *d, const char *text, size_t len, list *l)
{
    size_t used;
    int rc = parse_some(text, len, 1, l, &used, d->stop);
    return rc == 0 ? DATASET_OK : rc > 0 ? DATASET_STOPPING : DATASET_NOMEM;
}

/* Maps an errno from opening or resolving a dataset file to a result; keeps it for
 * dataset_errno when it is an I/O error. */
static dataset_rc rc_from_errno(int err)
{
    if (err == ENOENT || err == ENOTDIR || err == ELOOP)
        return DATASET_NOT_FOUND;
    if (err == ENOMEM)
        return DATASET_NOMEM;
    last_errno = err;
    return DATASET_IO;
}

/* A symlink is followed only to a target inside the directory, compared on canonical
 * paths: a target "/data/sets2/x" must not pass for inside "/data/sets". */
static int path_inside(const dataset *d, const char *p)
{
    if (d->path_len == 1) /* the directory is "/" itself */
        return 1;
    return strncmp(p, d->path, d->path_len) == 0 && p[d->path_len] == '/';
}

/* Resolves the symlink name to a path relative to the directory, in *rel (the caller
 * frees *rel_base). Returns DATASET_OK, _NOT_FOUND (dangling, or the directory itself),
 * _OUTSIDE, _NOMEM or _IO. */
static dataset_rc resolve_inside(const dataset *d, const char *name, char **rel_base,
                                 const char **rel)
{
    buf path = BUF_INIT;
    char *real = NULL;
    dataset_rc rc;
    *rel_base = NULL;
    if (buf_printf(&path, "%s/%s", d->path, name) != 0) {
        rc = DATASET_NOMEM;
        goto cleanup;
    }
    real = realpath(path.data, NULL);
    if (!real) {
        rc = rc_from_errno(errno);
        goto cleanup;
    }
    if (strcmp(real, d->path) == 0) {
        rc = DATASET_NOT_FOUND;
        goto cleanup;
    }
    if (!path_inside(d, real)) {
        rc = DATASET_OUTSIDE;
        goto cleanup;
    }
    *rel = real + (d->path_len == 1 ? 1 : d->path_len + 1);
    *rel_base = real;
    real = NULL;
    rc = DATASET_OK;
cleanup:
    free(real);
    buf_free(&path);
    return rc;
}

/* Reads a file in LOAD_CHUNK pieces and hands over its UTF-8 text a chunk at a time.
 * Streaming, rather than one buffer of the file's size, keeps the data in cache: faulting
 * in a fresh 290 MB buffer alone cost 0.8 s where the whole chunked load takes 0.1 s. */
typedef struct loader {
    int fd;
    iconv_t cd;      /* (iconv_t)-1 when the file is UTF-8 already */
    char *text;      /* UTF-8: an unfinished line carried over, then the new bytes */
    size_t cap, len;
    char *raw;       /* with a converter: bytes read, not yet converted */
    size_t raw_len;
    int ascii;       /* the charset keeps ASCII as is */
    int eof;
} loader;

/* Makes room for more text after ld->len, growing the buffer only when a single line
 * (nearly) fills it: iconv needs room for a whole character to make progress.
 * Returns 0, or -1 on ENOMEM. */
static int loader_room(loader *ld)
{
    if (ld->cap - ld->len >= 64)
        return 0;
    char *bigger = ld->cap > SIZE_MAX / 2 ? NULL : realloc(ld->text, ld->cap * 2);
    if (!bigger)
        return -1;
    ld->text = bigger;
    ld->cap *= 2;
    return 0;
}

static ssize_t read_some(int fd, char *p, size_t n)
{
    ssize_t r;
    do
        r = read(fd, p, n);
    while (r < 0 && errno == EINTR);
    return r;
}

/* Appends the next piece of the file to ld->text; sets *final once all of it is there. */
static dataset_rc loader_fill(loader *ld, int *final)
{
    if (loader_room(ld) != 0)
        return DATASET_NOMEM;
    if (ld->cd == (iconv_t)-1) {
        ssize_t r = read_some(ld->fd, ld->text + ld->len, ld->cap - ld->len);
        if (r < 0)
            return rc_from_errno(errno);
        ld->len += (size_t)r;
        *final = r == 0;
        return DATASET_OK;
    }
    if (!ld->eof && ld->raw_len < LOAD_CHUNK) {
        ssize_t r = read_some(ld->fd, ld->raw + ld->raw_len, LOAD_CHUNK - ld->raw_len);
        if (r < 0)
            return rc_from_errno(errno);
        ld->raw_len += (size_t)r;
        ld->eof = r == 0;
    }
    char *in = ld->raw, *out = ld->text + ld->len;
    size_t inleft = ld->raw_len, outleft = ld->cap - ld->len;
    if (ld->ascii && dataset_ascii_only(in, inleft)) {
        size_t n = inleft < outleft ? inleft : outleft;
        memcpy(out, in, n);
        in += n;
        inleft -= n;
        out += n;
    } else if (iconv(ld->cd, &in, &inleft, &out, &outleft) == (size_t)-1 && errno != E2BIG &&
               (errno != EINVAL || ld->eof)) {
        /* E2BIG (text full) and EINVAL (a character cut by the chunk's end) both leave
         * input for the next round. No final flush: UTF-8 has no shift state to close. */
        return errno == EILSEQ || errno == EINVAL ? DATASET_CHARSET : rc_from_errno(errno);
    }
    memmove(ld->raw, in, inleft);
    ld->raw_len = inleft;
    ld->len = (size_t)(out - ld->text);
    *final = ld->eof && inleft == 0;
    return DATASET_OK;
}

/* Fills l with the lines of the open file fd, converted from charset (NULL: UTF-8), or
 * gives up with DATASET_STOPPING once *stop is set (NULL: never). */
static dataset_rc load_lines(int fd, const char *charset, int ascii, list *l,
                             const atomic_int *stop)
{
    loader ld = {.fd = fd, .cd = (iconv_t)-1, .cap = LOAD_CHUNK, .ascii = ascii};
    dataset_rc rc = DATASET_OK;
    int final = 0, bom_seen = 0;
    /* One iconv_t per load: iconv_t holds state and is not thread-safe, and opening one
     * costs little next to reading a file. */
    if (charset) {
        ld.cd = iconv_open("UTF-8", charset);
        if (ld.cd == (iconv_t)-1) {
            rc = rc_from_errno(errno);
            goto cleanup;
        }
        ld.raw = malloc(LOAD_CHUNK);
        if (!ld.raw) {
            rc = DATASET_NOMEM;
            goto cleanup;
        }
    }
    ld.text = malloc(ld.cap);
    if (!ld.text) {
        rc = DATASET_NOMEM;
        goto cleanup;
    }
    while (!final) {
        size_t used;
        if (stop_asked(stop)) {
            rc = DATASET_STOPPING;
            goto cleanup;
        }
        rc = loader_fill(&ld, &final);
        if (rc != DATASET_OK)
            goto cleanup;
        /* The mark is looked for in the UTF-8 text, converted from any charset; a read
         * too short to tell waits for the next one. */
        if (!bom_seen) {
            if (ld.len < 3 && !final)
                continue;
            size_t bom = dataset_bom_len(ld.text, ld.len);
            memmove(ld.text, ld.text + bom, ld.len - bom);
            ld.len -= bom;
            bom_seen = 1;
        }
        int prc = parse_some(ld.text, ld.len, final, l, &used, stop);
        if (prc != 0) {
            rc = prc > 0 ? DATASET_STOPPING : DATASET_NOMEM;
            goto cleanup;
        }
        memmove(ld.text, ld.text + used, ld.len - used);
        ld.len -= used;
    }
cleanup:
    if (ld.cd != (iconv_t)-1)
        iconv_close(ld.cd);
    free(ld.raw);
    free(ld.text);
    return rc;
}

/* Checked again here though callers check first: this is the last gate before a path
 * reaches the filesystem. A timestamped SAVE name may exceed 128 bytes, so only
 * illegal characters are refused. */
int dataset_name_unsafe(const char *name)
{
    return dataset_check_name(name, strlen(name)) == DATASET_ILLEGAL;
}

dataset_rc dataset_load(dataset *d, const char *name, list **out)
{
    const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK; /* a FIFO must not block */
    int fd = -1;
    char *resolved = NULL;
    struct stat st;
    list *l = NULL;
    dataset_rc rc;
    *out = NULL;
    if (dataset_name_unsafe(name))
        return DATASET_ILLEGAL;
    fd = openat(d->dirfd, name, flags);
    if (fd < 0 && errno == ELOOP) {
        const char *rel = NULL;
        rc = resolve_inside(d, name, &resolved, &rel);
        if (rc == DATASET_OUTSIDE)
            log_warn("dataset: %s is a symlink leading outside %s: refused", name, d->path);
        if (rc != DATASET_OK)
            goto cleanup;
        fd = openat(d->dirfd, rel, flags);
    }
    if (fd < 0) {
        rc = rc_from_errno(errno);
        goto cleanup;
    }
    if (fstat(fd, &st) != 0) {
        rc = rc_from_errno(errno);
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = DATASET_NOT_FOUND;
        goto cleanup;
    }
    l = list_create();
    if (!l) {
        rc = DATASET_NOMEM;
        goto cleanup;
    }
    rc = load_lines(fd, d->read_cs, d->read_ascii, l, d->stop);
    if (rc != DATASET_OK)
        goto cleanup;
    *out = l;
    l = NULL;
cleanup:
    if (fd >= 0)
        close(fd);
    list_free(l);
    free(resolved);
    return rc;
}

/* A name offered by dataset_list_files: a regular file, or a symlink to one inside. */
static int listable(const dataset *d, const char *name)
{
    struct stat st;
    if (fstatat(d->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 0;
    if (S_ISREG(st.st_mode))
        return 1;
    if (!S_ISLNK(st.st_mode))
        return 0;
    char *real = NULL;
    const char *rel;
    if (resolve_inside(d, name, &real, &rel) != DATASET_OK)
        return 0;
    int ok = fstatat(d->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    free(real);
    return ok;
}

int dataset_file_stat(dataset *d, const char *name, uint64_t *size, int64_t *mtime)
{
    struct stat st;
    if (fstatat(d->dirfd, name, &st, 0) != 0) {
        last_errno = errno;
        return -1;
    }
    *size = (uint64_t)st.st_size;
    *mtime = (int64_t)st.st_mtime;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Also: fn returns 0 to go on; a nonzero value stops the walk and is returned. */
int dataset_list_files(dataset *d, int (*fn)(const char *name, void *ctx), void *ctx)
{
    char **names = NULL;
    size_t count = 0, cap = 0;
    int rc = -1;
    /* A fresh open of ".", not a dup: a dup would share the read offset with dirfd and
     * with concurrent walks. */
    int fd = openat(d->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        last_errno = errno;
        goto cleanup;
    }
    DIR *dir = fdopendir(fd);
    if (!dir) {
        last_errno = errno;
        close(fd);
        goto cleanup;
    }
    struct dirent *e;
    for (;;) {
        errno = 0;
        e = readdir(dir);
        if (!e)
            break;
        if (e->d_name[0] == '.' || !listable(d, e->d_name))
            continue;
        if (array_grow(&names, &cap, count, sizeof *names) != 0)
            break;
        names[count] = strdup(e->d_name);
        if (!names[count])
            break;
        count++;
    }
    int failed = e != NULL || errno != 0; /* stopped early by ENOMEM, or readdir failed */
    if (failed)
        last_errno = errno ? errno : ENOMEM;
    closedir(dir);
    if (failed)
        goto cleanup;
    if (count > 1) /* qsort wants a non-NULL array even for no names */
        qsort(names, count, sizeof *names, cmp_names);
    rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++)
        rc = fn(names[i], ctx);
cleanup:
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    return rc;
}
