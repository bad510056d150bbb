/* SPDX-License-Identifier: Apache-2.0 */
/* test_dataset.c - name rules, line splitting, load/save on a real temp directory, charsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset/dataset.h"
#include "list/list.h"
#include "base/log.h"

/* ---- helpers ---- */

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define WRITE_LIT(dir, name, lit) write_file(dir, name, lit, sizeof(lit) - 1)

typedef struct fixture {
    char root[PATH_MAX]; /* holds dir/ and files meant to be outside it */
    char dir[PATH_MAX];  /* the dataset directory */
    dataset *d;          /* opened on dir, UTF-8 both ways */
} fixture;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void path_in(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < PATH_MAX);
}

static void write_file(const char *dir, const char *name, const char *data, size_t len)
{
    char p[PATH_MAX];
    path_in(p, dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The file's bytes (malloc'd, NUL-terminated for convenience) and their count. */
static char *read_file(const char *dir, const char *name, size_t *len)
{
    char p[PATH_MAX];
    path_in(p, dir, name);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    size_t cap = 4096, n = 0;
    char *data = malloc(cap);
    assert_non_null(data);
    for (;;) {
        if (cap - n < 2) {
            cap *= 2;
            data = realloc(data, cap);
            assert_non_null(data);
        }
        size_t r = fread(data + n, 1, cap - n - 1, f);
        if (r == 0)
            break;
        n += r;
    }
    assert_int_equal(ferror(f), 0);
    fclose(f);
    data[n] = '\0';
    *len = n;
    return data;
}

static int exists(const char *dir, const char *name)
{
    char p[PATH_MAX];
    struct stat st;
    path_in(p, dir, name);
    return lstat(p, &st) == 0;
}

/* Entries of dir whose names start with '.', other than "." and "..": leftover temp files. */
static int dot_files(const char *dir)
{
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL)
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(dd);
    return n;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    const char *tmp = getenv("TMPDIR");
    snprintf(f->root, sizeof f->root, "%s/test_dataset.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(f->root));
    path_in(f->dir, f->root, "sets");
    assert_int_equal(mkdir(f->dir, 0755), 0);
    buf err = BUF_INIT;
    f->d = dataset_open(f->dir, "UTF-8", "UTF-8", &err);
    assert_non_null(f->d);
    buf_free(&err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dataset_close(f->d);
    nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* Lines of a list copied out through list_foreach, so the tests rely on the list's
 * public API only. */
typedef struct lines {
    size_t n;
    char *s[64];
    size_t len[64];
    size_t total; /* lines seen, even beyond the 64 kept */
} lines;

static int collect(const char *s, size_t len, void *ctx)
{
    lines *ls = ctx;
    if (ls->n < 64) {
        ls->s[ls->n] = malloc(len + 1);
        assert_non_null(ls->s[ls->n]);
        memcpy(ls->s[ls->n], s, len);
        ls->s[ls->n][len] = '\0';
        ls->len[ls->n] = len;
        ls->n++;
    }
    ls->total++;
    return 0;
}

static void lines_of(const list *l, lines *ls)
{
    memset(ls, 0, sizeof *ls);
    assert_int_equal(list_foreach(l, collect, ls), 0);
    assert_int_equal(ls->total, list_length(l));
}

static void lines_free(lines *ls)
{
    for (size_t i = 0; i < ls->n; i++)
        free(ls->s[i]);
    ls->n = 0;
}

/* Asserts that l holds exactly the NUL-terminated strings in want[0..n). */
static void assert_lines(const list *l, const char *const *want, size_t n)
{
    lines ls;
    lines_of(l, &ls);
    assert_int_equal(ls.total, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(ls.len[i], strlen(want[i]));
        assert_memory_equal(ls.s[i], want[i], ls.len[i]);
    }
    lines_free(&ls);
}

static list *list_of(const char *const *items, size_t n)
{
    list *l = list_create();
    assert_non_null(l);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(list_push_back(l, items[i], strlen(items[i])), 0);
    return l;
}

static list *parse(const char *text, size_t len)
{
    list *l = list_create();
    assert_non_null(l);
    assert_int_equal(dataset_parse_lines(text, len, l), 0);
    return l;
}


/* ---- name rules ---- */

static void test_name_valid(void **state)
{
    char max[DATASET_NAME_MAX];
    memset(max, 'x', sizeof max);
    const char *ok[] = {"logins.csv", "a", "...", ".hidden", "donn\xc3\xa9" "es.csv",
                        "a b~!@#$%^&()=+.csv", "20240520T16h33m27s.logins.csv"};
    for (size_t i = 0; i < N(ok); i++)
        assert_int_equal(dataset_check_name(ok[i], strlen(ok[i])), DATASET_OK);
    assert_int_equal(dataset_check_name(max, sizeof max), DATASET_OK);
    /* Only len bytes count: what follows is not part of the name. */
    assert_int_equal(dataset_check_name("ab/", 2), DATASET_OK);
}

static void test_name_illegal_chars(void **state)
{
    const char bad[] = {'/', '\\', ':'};
    for (size_t i = 0; i < N(bad); i++) {
        char s[4] = "abc";
        for (size_t at = 0; at < 3; at++) {
            memcpy(s, "abc", 3);
            s[at] = bad[i];
            assert_int_equal(dataset_check_name(s, 3), DATASET_ILLEGAL);
        }
        assert_int_equal(dataset_check_name(&bad[i], 1), DATASET_ILLEGAL);
    }
    assert_int_equal(dataset_check_name("../etc/passwd", 13), DATASET_ILLEGAL);
    assert_int_equal(dataset_check_name("C:data.csv", 10), DATASET_ILLEGAL);
}

static void test_name_dots(void **state)
{
    assert_int_equal(dataset_check_name(".", 1), DATASET_ILLEGAL);
    assert_int_equal(dataset_check_name("..", 2), DATASET_ILLEGAL);
    assert_int_equal(dataset_check_name("..a", 3), DATASET_OK);
    assert_int_equal(dataset_check_name("a..", 3), DATASET_OK);
}

static void test_name_length_and_order(void **state)
{
    char s[200];
    memset(s, 'n', sizeof s);
    assert_int_equal(dataset_check_name(s, 128), DATASET_OK);
    assert_int_equal(dataset_check_name(s, 129), DATASET_TOO_LONG);
    assert_int_equal(dataset_check_name(s, 200), DATASET_TOO_LONG);
    /* The reference's character check comes before its length check. */
    s[150] = '/';
    assert_int_equal(dataset_check_name(s, 200), DATASET_ILLEGAL);
    s[150] = 'n';
    s[100] = ':';
    assert_int_equal(dataset_check_name(s, 129), DATASET_ILLEGAL);
    s[100] = 'n';
    /* Our own rules come after the reference's: a long name with a control character is
     * reported as too long, as the reference would. */
    s[150] = '\t';
    assert_int_equal(dataset_check_name(s, 200), DATASET_TOO_LONG);
    s[150] = 'n';
    s[5] = '\n';
    assert_int_equal(dataset_check_name(s, 128), DATASET_ILLEGAL);
}

static void test_name_ours(void **state)
{
    assert_int_equal(dataset_check_name("", 0), DATASET_ILLEGAL);
    for (int c = 0; c < 0x20; c++) {
        char s[3] = {'a', (char)c, 'b'};
        assert_int_equal(dataset_check_name(s, 3), DATASET_ILLEGAL);
        assert_int_equal(dataset_check_name(s + 1, 1), DATASET_ILLEGAL);
    }
    assert_int_equal(dataset_check_name("a\x7f" "b", 3), DATASET_ILLEGAL);
    /* %00 in a URL decodes to NUL: the name is "a", NUL, "b.csv", not "a". */
    assert_int_equal(dataset_check_name("a\0b.csv", 7), DATASET_ILLEGAL);
    assert_int_equal(dataset_check_name("a.csv\0", 6), DATASET_ILLEGAL);
    /* Bytes >= 0x80 are UTF-8 pieces, not control characters. */
    assert_int_equal(dataset_check_name("\x80\xff", 2), DATASET_OK);
}

/* ---- line splitting ---- */

static void test_parse_examples(void **state)
{
    const char text[] = "a1\r\nb2\r\n\r\nc3\rd4";
    const char *want[] = {"a1", "b2", "", "c3", "d4"};
    list *l = parse(text, sizeof text - 1);
    assert_lines(l, want, N(want));
    list_free(l);

    const char *x[] = {"x"};
    l = parse("x\n", 2);
    assert_lines(l, x, 1);
    list_free(l);

    l = parse("", 0);
    assert_int_equal(list_length(l), 0);
    list_free(l);
}

static void test_parse_endings(void **state)
{
    static const struct {
        const char *text;
        const char *want[4];
        size_t n;
    } cases[] = {
        {"a\nb\n", {"a", "b"}, 2},
        {"a\r\nb\r\n", {"a", "b"}, 2},
        {"a\rb\r", {"a", "b"}, 2},
        {"a\nb", {"a", "b"}, 2},          /* last line without an end */
        {"a\r\nb", {"a", "b"}, 2},
        {"a\rb", {"a", "b"}, 2},
        {"\n", {""}, 1},
        {"\r\n", {""}, 1},
        {"\r", {""}, 1},
        {"\n\n", {"", ""}, 2},
        {"\r\r", {"", ""}, 2},
        {"\n\r", {"", ""}, 2},            /* LF then a lone CR: two ends, not one */
        {"\r\r\n", {"", ""}, 2},
        {"a\n\nb", {"a", "", "b"}, 3},
        {"a\r\n\rb\n", {"a", "", "b"}, 3},
        {"no end", {"no end"}, 1},
        {"a\n\r\nb\r\r\n", {"a", "", "b", ""}, 4},
    };
    for (size_t i = 0; i < N(cases); i++) {
        list *l = parse(cases[i].text, strlen(cases[i].text));
        assert_lines(l, cases[i].want, cases[i].n);
        list_free(l);
    }
}

static void test_parse_nul_bytes(void **state)
{
    const char text[] = "a\0b\n\0\r\n\0\0";
    list *l = parse(text, sizeof text - 1);
    lines ls;
    lines_of(l, &ls);
    assert_int_equal(ls.total, 3);
    assert_int_equal(ls.len[0], 3);
    assert_memory_equal(ls.s[0], "a\0b", 3);
    assert_int_equal(ls.len[1], 1);
    assert_int_equal(ls.s[1][0], '\0');
    assert_int_equal(ls.len[2], 2);
    assert_memory_equal(ls.s[2], "\0\0", 2);
    lines_free(&ls);
    list_free(l);
}

/* A byte-at-a-time splitter, obviously right, to check the fast one against. */
static size_t naive_split(const char *t, size_t len, size_t *starts, size_t *lens)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] != '\n' && t[i] != '\r')
            continue;
        starts[n] = start;
        lens[n++] = i - start;
        if (t[i] == '\r' && i + 1 < len && t[i + 1] == '\n')
            i++;
        start = i + 1;
    }
    if (start < len) {
        starts[n] = start;
        lens[n++] = len - start;
    }
    return n;
}

typedef struct cmp_ctx {
    const char *text;
    const size_t *starts, *lens;
    size_t i, n;
} cmp_ctx;

static int compare_line(const char *s, size_t len, void *ctx)
{
    cmp_ctx *c = ctx;
    assert_true(c->i < c->n);
    assert_int_equal(len, c->lens[c->i]);
    assert_memory_equal(s, c->text + c->starts[c->i], len);
    c->i++;
    return 0;
}

static void test_parse_random(void **state)
{
    static const char alphabet[] = {'a', 'b', '\r', '\n', '\0', '\r', '\n'};
    char text[300];
    size_t starts[301], lens[301];
    srand(12345);
    for (int round = 0; round < 3000; round++) {
        size_t len = (size_t)rand() % sizeof text;
        for (size_t i = 0; i < len; i++)
            text[i] = alphabet[rand() % (int)sizeof alphabet];
        size_t n = naive_split(text, len, starts, lens);
        list *l = parse(text, len);
        assert_int_equal(list_length(l), n);
        cmp_ctx c = {text, starts, lens, 0, n};
        assert_int_equal(list_foreach(l, compare_line, &c), 0);
        assert_int_equal(c.i, n);
        list_free(l);
    }
}

/* ---- open ---- */

static void test_open_errors(void **state)
{
    fixture *f = *state;
    buf err = BUF_INIT;
    char p[PATH_MAX];

    path_in(p, f->root, "missing");
    assert_null(dataset_open(p, "UTF-8", "UTF-8", &err));
    assert_true(err.len > 0);
    assert_non_null(strstr(err.data, "missing"));
    buf_clear(&err);

    write_file(f->root, "plain", "x", 1);
    path_in(p, f->root, "plain");
    assert_null(dataset_open(p, "UTF-8", "UTF-8", &err));
    assert_non_null(strstr(err.data, "directory"));
    buf_clear(&err);

    assert_null(dataset_open(f->dir, "NO-SUCH-CHARSET", "UTF-8", &err));
    assert_non_null(strstr(err.data, "NO-SUCH-CHARSET"));
    buf_clear(&err);
    assert_null(dataset_open(f->dir, "UTF-8", "NO-SUCH-CHARSET", &err));
    assert_non_null(strstr(err.data, "NO-SUCH-CHARSET"));
    buf_free(&err);
}

static void test_open_canonical(void **state)
{
    fixture *f = *state;
    buf err = BUF_INIT;
    char p[PATH_MAX], real[PATH_MAX];
    assert_true(snprintf(p, sizeof p, "%s/./sets/../sets/", f->root) < (int)sizeof p);
    assert_non_null(realpath(f->dir, real));
    const char *names[] = {"utf8", "Utf-8", "utf-8", "UTF8"};
    for (size_t i = 0; i < N(names); i++) {
        dataset *d = dataset_open(p, names[i], names[i], &err);
        assert_non_null(d);
        assert_string_equal(dataset_path(d), real);
        dataset_close(d);
    }
    assert_int_equal(err.len, 0);
    buf_free(&err);
}

/* ---- load ---- */

static void test_load_basic(void **state)
{
    fixture *f = *state;
    const char text[] = "login1;pw1\nlogin2;pw2\r\n\nlogin3;pw3"; /* no final end */
    write_file(f->dir, "logins.csv", text, sizeof text - 1);
    list *l = NULL;
    assert_int_equal(dataset_load(f->d, "logins.csv", &l), DATASET_OK);
    const char *want[] = {"login1;pw1", "login2;pw2", "", "login3;pw3"};
    assert_lines(l, want, N(want));
    list_free(l);

    write_file(f->dir, "empty.csv", "", 0);
    assert_int_equal(dataset_load(f->d, "empty.csv", &l), DATASET_OK);
    assert_int_equal(list_length(l), 0);
    list_free(l);
}

static void test_load_not_found(void **state)
{
    fixture *f = *state;
    list *l = (list *)&l; /* must be reset to NULL on failure */
    char p[PATH_MAX];
    assert_int_equal(dataset_load(f->d, "missing.csv", &l), DATASET_NOT_FOUND);
    assert_null(l);
    path_in(p, f->dir, "subdir");
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(dataset_load(f->d, "subdir", &l), DATASET_NOT_FOUND);
    /* A FIFO is not a regular file, and opening it must not block. */
    path_in(p, f->dir, "fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(dataset_load(f->d, "fifo", &l), DATASET_NOT_FOUND);
    /* The last gate refuses a path even if a caller forgot to check the name. */
    assert_int_equal(dataset_load(f->d, "../sets/x", &l), DATASET_ILLEGAL);
    assert_null(l);
}

static void test_load_symlinks(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], other[PATH_MAX], deep[PATH_MAX];
    list *l = NULL;
    write_file(f->dir, "real.csv", "a\nb\n", 4);
    path_in(p, f->dir, "link.csv");
    assert_int_equal(symlink("real.csv", p), 0);
    assert_int_equal(dataset_load(f->d, "link.csv", &l), DATASET_OK);
    const char *want[] = {"a", "b"};
    assert_lines(l, want, 2);
    list_free(l);

    /* Absolute, through a subdirectory, still inside. */
    path_in(other, f->dir, "sub");
    assert_int_equal(mkdir(other, 0755), 0);
    write_file(other, "deep.csv", "d", 1);
    path_in(p, f->dir, "deep.csv");
    path_in(deep, other, "deep.csv");
    assert_int_equal(symlink(deep, p), 0);
    assert_int_equal(dataset_load(f->d, "deep.csv", &l), DATASET_OK);
    assert_int_equal(list_length(l), 1);
    list_free(l);

    path_in(p, f->dir, "passwd");
    assert_int_equal(symlink("/etc/passwd", p), 0);
    l = NULL;
    assert_int_equal(dataset_load(f->d, "passwd", &l), DATASET_OUTSIDE);
    assert_null(l);

    /* "sets2" starts with "sets" but is outside. */
    assert_true(snprintf(other, sizeof other, "%s2", f->dir) < (int)sizeof other);
    assert_int_equal(mkdir(other, 0755), 0);
    write_file(other, "x.csv", "secret", 6);
    path_in(p, f->dir, "sibling.csv");
    assert_int_equal(symlink("../sets2/x.csv", p), 0);
    assert_int_equal(dataset_load(f->d, "sibling.csv", &l), DATASET_OUTSIDE);

    path_in(p, f->dir, "dangling.csv");
    assert_int_equal(symlink("nowhere.csv", p), 0);
    assert_int_equal(dataset_load(f->d, "dangling.csv", &l), DATASET_NOT_FOUND);

    path_in(p, f->dir, "dirlink");
    assert_int_equal(symlink("sub", p), 0);
    assert_int_equal(dataset_load(f->d, "dirlink", &l), DATASET_NOT_FOUND);

    path_in(p, f->dir, "self");
    assert_int_equal(symlink(".", p), 0);
    assert_int_equal(dataset_load(f->d, "self", &l), DATASET_NOT_FOUND);

    path_in(p, f->dir, "loop1");
    assert_int_equal(symlink("loop2", p), 0);
    path_in(p, f->dir, "loop2");
    assert_int_equal(symlink("loop1", p), 0);
    assert_int_equal(dataset_load(f->d, "loop1", &l), DATASET_NOT_FOUND);
    assert_null(l);
}

/* The loader reads 1 MiB at a time; these put line ends and long lines across that edge. */
#define CHUNK (1u << 20)

static void load_and_compare(const fixture *f, const char *name, const char *text, size_t len)
{
    size_t n_max = len + 1;
    size_t *starts = malloc(n_max * sizeof *starts), *lens = malloc(n_max * sizeof *lens);
    assert_non_null(starts);
    assert_non_null(lens);
    size_t n = naive_split(text, len, starts, lens);
    write_file(f->dir, name, text, len);
    list *l = NULL;
    assert_int_equal(dataset_load(f->d, name, &l), DATASET_OK);
    assert_int_equal(list_length(l), n);
    cmp_ctx c = {text, starts, lens, 0, n};
    assert_int_equal(list_foreach(l, compare_line, &c), 0);
    assert_int_equal(c.i, n);
    list_free(l);
    free(starts);
    free(lens);
}

static void test_load_chunk_edges(void **state)
{
    fixture *f = *state;
    size_t len = 3 * CHUNK + 100;
    char *t = malloc(len);
    assert_non_null(t);

    /* "\r\n" cut in two by the edge: one line end, not two. */
    memset(t, 'x', len);
    t[CHUNK - 1] = '\r';
    t[CHUNK] = '\n';
    t[2 * CHUNK - 1] = '\r'; /* a lone '\r' at the next edge */
    load_and_compare(f, "crlf.csv", t, len);
    list *l = NULL;
    assert_int_equal(dataset_load(f->d, "crlf.csv", &l), DATASET_OK);
    assert_int_equal(list_length(l), 3);
    list_free(l);

    /* A file ending in '\r' exactly at the edge. */
    load_and_compare(f, "cr-end.csv", t, CHUNK);

    /* Lines longer than a chunk, with an empty line between them. */
    memset(t, 'y', len);
    t[CHUNK + CHUNK / 2] = '\n';
    t[CHUNK + CHUNK / 2 + 1] = '\n';
    load_and_compare(f, "long.csv", t, len);

    /* Random short lines in every ending style over several chunks. */
    static const char alphabet[] = {'a', 'b', 'c', 'd', 'e', '\r', '\n', '\0'};
    srand(777);
    for (size_t i = 0; i < len; i++)
        t[i] = alphabet[rand() % (int)sizeof alphabet];
    load_and_compare(f, "random.csv", t, len);
    free(t);
}

/* ---- save ---- */

static void test_save_roundtrip(void **state)
{
    fixture *f = *state;
    list *l = list_create();
    assert_non_null(l);
    assert_int_equal(list_push_back(l, "login1;pw1", 10), 0);
    assert_int_equal(list_push_back(l, "", 0), 0);
    assert_int_equal(list_push_back(l, "a\0b", 3), 0);
    assert_int_equal(list_push_back(l, "Zo\xc3\xab \xe2\x82\xac", 8), 0);
    assert_int_equal(dataset_save(f->d, "out.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "out.csv", &len);
    const char want[] = "login1;pw1\n\na\0b\nZo\xc3\xab \xe2\x82\xac\n";
    assert_int_equal(len, sizeof want - 1);
    assert_memory_equal(got, want, len);
    free(got);

    list *back = NULL;
    assert_int_equal(dataset_load(f->d, "out.csv", &back), DATASET_OK);
    assert_int_equal(list_length(back), 4);
    lines a, b;
    lines_of(l, &a);
    lines_of(back, &b);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(a.len[i], b.len[i]);
        assert_memory_equal(a.s[i], b.s[i], a.len[i]);
    }
    lines_free(&a);
    lines_free(&b);
    list_free(back);
    list_free(l);

    /* An empty list makes an empty file. */
    l = list_create();
    assert_non_null(l);
    assert_int_equal(dataset_save(f->d, "none.csv", l), DATASET_OK);
    got = read_file(f->dir, "none.csv", &len);
    assert_int_equal(len, 0);
    free(got);
    list_free(l);
    assert_int_equal(dot_files(f->dir), 0);
}

static void test_save_replaces(void **state)
{
    fixture *f = *state;
    WRITE_LIT(f->dir, "q.csv", "old1\nold2\nold3 is longer than the new content\n");
    const char *items[] = {"new"};
    list *l = list_of(items, 1);
    assert_int_equal(dataset_save(f->d, "q.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "q.csv", &len);
    assert_int_equal(len, 4);
    assert_memory_equal(got, "new\n", 4);
    free(got);
    list_free(l);
    assert_int_equal(dot_files(f->dir), 0);
}

static void test_save_over_symlink(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], target[PATH_MAX];
    struct stat st;
    write_file(f->root, "target.csv", "keep me\n", 8);
    path_in(target, f->root, "target.csv");
    path_in(p, f->dir, "link.csv");
    assert_int_equal(symlink(target, p), 0);
    const char *items[] = {"written"};
    list *l = list_of(items, 1);
    assert_int_equal(dataset_save(f->d, "link.csv", l), DATASET_OK);
    list_free(l);

    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode)); /* the link itself was replaced */
    size_t len;
    char *got = read_file(f->dir, "link.csv", &len);
    assert_int_equal(len, 8);
    assert_memory_equal(got, "written\n", 8);
    free(got);
    got = read_file(f->root, "target.csv", &len);
    assert_int_equal(len, 8);
    assert_memory_equal(got, "keep me\n", 8);
    free(got);
}

static void test_save_mode_follows_umask(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    struct stat st;
    list *l = list_create();
    assert_non_null(l);
    mode_t old = umask(022);
    assert_int_equal(dataset_save(f->d, "m1.csv", l), DATASET_OK);
    umask(077);
    assert_int_equal(dataset_save(f->d, "m2.csv", l), DATASET_OK);
    umask(old);
    path_in(p, f->dir, "m1.csv");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    path_in(p, f->dir, "m2.csv");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    list_free(l);
}

static void test_save_failure_cleans_up(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    /* rename cannot replace a non-empty directory: a failure after the temp file exists. */
    path_in(p, f->dir, "taken");
    assert_int_equal(mkdir(p, 0755), 0);
    write_file(p, "inner", "x", 1);
    const char *items[] = {"a", "b"};
    list *l = list_of(items, 2);
    assert_int_equal(dataset_save(f->d, "taken", l), DATASET_IO);
    assert_true(dataset_errno() == EISDIR || dataset_errno() == ENOTEMPTY);
    assert_int_equal(dot_files(f->dir), 0);
    assert_int_equal(dataset_save(f->d, "a/b", l), DATASET_ILLEGAL);
    list_free(l);
}

static void test_save_large(void **state)
{
    fixture *f = *state;
    /* Lines crossing the 1 MiB buffer many times, and one line larger than the buffer. */
    list *l = list_create();
    assert_non_null(l);
    size_t big_len = (5u << 20) / 2;
    char *big = malloc(big_len);
    assert_non_null(big);
    memset(big, 'B', big_len);
    buf want = BUF_INIT;
    char line[64];
    for (int i = 0; i < 200000; i++) {
        int n = snprintf(line, sizeof line, "order-%08d;item-%d", i, i % 977);
        assert_int_equal(list_push_back(l, line, (size_t)n), 0);
        assert_int_equal(buf_append(&want, line, (size_t)n), 0);
        assert_int_equal(buf_append(&want, "\n", 1), 0);
        if (i == 100000) {
            assert_int_equal(list_push_back(l, big, big_len), 0);
            assert_int_equal(buf_append(&want, big, big_len), 0);
            assert_int_equal(buf_append(&want, "\n", 1), 0);
        }
    }
    assert_int_equal(dataset_save(f->d, "big.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "big.csv", &len);
    assert_int_equal(len, want.len);
    assert_memory_equal(got, want.data, len);
    free(got);

    list *back = NULL;
    assert_int_equal(dataset_load(f->d, "big.csv", &back), DATASET_OK);
    assert_int_equal(list_length(back), 200001);
    list_free(back);
    buf_free(&want);
    free(big);
    list_free(l);
}

/* ---- charsets ---- */

static dataset *open_cs(const fixture *f, const char *rd, const char *wr)
{
    buf err = BUF_INIT;
    dataset *d = dataset_open(f->dir, rd, wr, &err);
    if (!d)
        fail_msg("dataset_open(%s, %s): %s", rd, wr, err.data);
    buf_free(&err);
    return d;
}

static void test_charset_windows1252(void **state)
{
    fixture *f = *state;
    dataset *d = open_cs(f, "windows-1252", "windows-1252");
    WRITE_LIT(f->dir, "in.csv", "Zo\xeb \x80\r\nplain\n");
    list *l = NULL;
    assert_int_equal(dataset_load(d, "in.csv", &l), DATASET_OK);
    const char *want[] = {"Zo\xc3\xab \xe2\x82\xac", "plain"};
    assert_lines(l, want, 2);
    assert_int_equal(dataset_save(d, "out.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "out.csv", &len);
    const char out[] = "Zo\xeb \x80\nplain\n";
    assert_int_equal(len, sizeof out - 1);
    assert_memory_equal(got, out, len);
    free(got);
    list_free(l);

    /* 0x81 has no character in windows-1252. */
    write_file(f->dir, "bad.csv", "ok\n\x81\n", 5);
    l = NULL;
    assert_int_equal(dataset_load(d, "bad.csv", &l), DATASET_CHARSET);
    assert_null(l);
    dataset_close(d);
}

static void test_charset_latin1(void **state)
{
    fixture *f = *state;
    dataset *d = open_cs(f, "ISO-8859-1", "iso-8859-1");
    write_file(f->dir, "in.csv", "Zo\xeb\n\xa4\n", 6);
    list *l = NULL;
    assert_int_equal(dataset_load(d, "in.csv", &l), DATASET_OK);
    const char *want[] = {"Zo\xc3\xab", "\xc2\xa4"}; /* 0xa4 is the currency sign here */
    assert_lines(l, want, 2);
    list_free(l);

    /* No euro sign in ISO-8859-1: refused, not written as garbage. */
    const char *items[] = {"first", "Zo\xc3\xab \xe2\x82\xac"};
    l = list_of(items, 2);
    assert_int_equal(dataset_save(d, "euro.csv", l), DATASET_CHARSET);
    assert_false(exists(f->dir, "euro.csv"));
    assert_int_equal(dot_files(f->dir), 0);
    list_free(l);

    /* Nor are bytes that are not UTF-8 at all. */
    const char *broken[] = {"ok", "\xc3("};
    l = list_of(broken, 2);
    assert_int_equal(dataset_save(d, "broken.csv", l), DATASET_CHARSET);
    assert_false(exists(f->dir, "broken.csv"));
    list_free(l);
    dataset_close(d);

    /* ISO-8859-15 has the euro, at 0xa4. */
    d = open_cs(f, "UTF-8", "ISO-8859-15");
    l = list_of(items + 1, 1);
    assert_int_equal(dataset_save(d, "euro.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "euro.csv", &len);
    assert_int_equal(len, 6);
    assert_memory_equal(got, "Zo\xeb \xa4\n", 6);
    free(got);
    list_free(l);
    dataset_close(d);
}

static void test_charset_large_and_utf16(void **state)
{
    fixture *f = *state;
    /* Enough converted text to grow the load buffer and refill the save buffer. */
    dataset *d = open_cs(f, "windows-1252", "windows-1252");
    buf text = BUF_INIT;
    for (int i = 0; i < 300000; i++)
        assert_int_equal(buf_append(&text, "\x80\x80\x80\x80\xe9\n", 6), 0);
    write_file(f->dir, "euros.csv", text.data, text.len);
    list *l = NULL;
    assert_int_equal(dataset_load(d, "euros.csv", &l), DATASET_OK);
    assert_int_equal(list_length(l), 300000);
    const char *want[] = {"\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xc3\xa9"};
    lines ls;
    lines_of(l, &ls);
    assert_int_equal(ls.len[63], strlen(want[0]));
    assert_memory_equal(ls.s[63], want[0], ls.len[63]);
    lines_free(&ls);
    assert_int_equal(dataset_save(d, "euros2.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "euros2.csv", &len);
    assert_int_equal(len, text.len);
    assert_memory_equal(got, text.data, len);
    free(got);
    list_free(l);
    buf_free(&text);
    dataset_close(d);

    /* In UTF-16 the line end itself is converted (two bytes), and the BOM is written once. */
    d = open_cs(f, "UTF-16", "UTF-16");
    const char *items[] = {"Zo\xc3\xab", "", "\xe2\x82\xac"};
    l = list_of(items, 3);
    assert_int_equal(dataset_save(d, "u16.csv", l), DATASET_OK);
    got = read_file(f->dir, "u16.csv", &len);
    assert_int_equal(len, 2 + 2 * (3 + 1) + 2 * 1 + 2 * (1 + 1));
    free(got);
    list *back = NULL;
    assert_int_equal(dataset_load(d, "u16.csv", &back), DATASET_OK);
    assert_lines(back, items, 3);
    list_free(back);
    list_free(l);
    dataset_close(d);
}

static void test_charset_chunk_edges(void **state)
{
    fixture *f = *state;
    size_t len0;
    /* EUC-JP has two-byte characters: put one across the 1 MiB edge. */
    dataset *d = open_cs(f, "EUC-JP", "EUC-JP");
    buf text = BUF_INIT, want = BUF_INIT;
    assert_int_equal(buf_append(&text, "a", 1), 0);
    assert_int_equal(buf_append(&want, "a", 1), 0);
    while (text.len < CHUNK + 10) {
        assert_int_equal(buf_append(&text, "\xa4\xa2", 2), 0);
        assert_int_equal(buf_append(&want, "\xe3\x81\x82", 3), 0);
    }
    assert_int_equal(buf_append(&text, "\r\nz", 3), 0);
    write_file(f->dir, "jp.csv", text.data, text.len);
    list *l = NULL;
    assert_int_equal(dataset_load(d, "jp.csv", &l), DATASET_OK);
    assert_int_equal(list_length(l), 2);
    lines ls;
    lines_of(l, &ls);
    assert_int_equal(ls.len[0], want.len);
    assert_memory_equal(ls.s[0], want.data, want.len);
    assert_string_equal(ls.s[1], "z");
    lines_free(&ls);
    list_free(l);
    /* A cut character at the very end of the file is an error, not a dropped byte. */
    assert_int_equal(buf_append(&text, "\xa4", 1), 0);
    write_file(f->dir, "cut.csv", text.data, text.len);
    assert_int_equal(dataset_load(d, "cut.csv", &l), DATASET_CHARSET);
    dataset_close(d);
    buf_clear(&text);
    buf_clear(&want);

    /* In UTF-16 ASCII shrinks by half, so the read piece runs out before the text buffer
     * fills: a surrogate pair cut by the edge must wait for its second half. */
    d = open_cs(f, "UTF-16LE", "UTF-16LE");
    while (text.len < CHUNK - 2) {
        assert_int_equal(buf_append(&text, "a\0", 2), 0);
        assert_int_equal(buf_append(&want, "a", 1), 0);
    }
    assert_int_equal(buf_append(&text, "\x3d\xd8\x00\xde\r\0\n\0z\0", 10), 0);
    assert_int_equal(buf_append(&want, "\xf0\x9f\x98\x80", 4), 0); /* U+1F600 */
    write_file(f->dir, "u16.csv", text.data, text.len);
    assert_int_equal(dataset_load(d, "u16.csv", &l), DATASET_OK);
    lines_of(l, &ls);
    assert_int_equal(ls.total, 2);
    assert_int_equal(ls.len[0], want.len);
    assert_memory_equal(ls.s[0], want.data, want.len);
    assert_string_equal(ls.s[1], "z");
    lines_free(&ls);
    list_free(l);
    dataset_close(d);
    buf_clear(&text);
    buf_clear(&want);

    /* Pure ASCII pieces are copied and the others converted: a file that changes from one
     * to the other after the first piece. */
    d = open_cs(f, "windows-1252", "windows-1252");
    while (text.len < CHUNK + CHUNK / 2)
        assert_int_equal(buf_append(&text, "login;pw\n", 9), 0);
    assert_int_equal(buf_append(&text, "\x80\nlast", 6), 0);
    write_file(f->dir, "mixed.csv", text.data, text.len);
    assert_int_equal(dataset_load(d, "mixed.csv", &l), DATASET_OK);
    lines_of(l, &ls);
    assert_int_equal(ls.total, (text.len - 6) / 9 + 2);
    assert_string_equal(ls.s[0], "login;pw");
    lines_free(&ls);
    assert_int_equal(dataset_save(d, "mixed2.csv", l), DATASET_OK);
    char *back = read_file(f->dir, "mixed2.csv", &len0);
    assert_int_equal(len0, text.len + 1);
    assert_memory_equal(back, text.data, text.len);
    free(back);
    list_free(l);
    buf_clear(&text);

    /* One byte becomes three: a 1.5 MiB line of euro signs is 4.5 MiB of UTF-8. */
    for (size_t i = 0; i < CHUNK + CHUNK / 2; i++) {
        assert_int_equal(buf_append(&text, "\x80", 1), 0);
        assert_int_equal(buf_append(&want, "\xe2\x82\xac", 3), 0);
    }
    assert_int_equal(buf_append(&text, "\r\nend", 5), 0);
    write_file(f->dir, "euro.csv", text.data, text.len);
    assert_int_equal(dataset_load(d, "euro.csv", &l), DATASET_OK);
    lines_of(l, &ls);
    assert_int_equal(ls.total, 2);
    assert_int_equal(ls.len[0], want.len);
    assert_memory_equal(ls.s[0], want.data, want.len);
    assert_string_equal(ls.s[1], "end");
    lines_free(&ls);
    /* And back: the long line goes through the save buffer in several pieces. */
    assert_int_equal(dataset_save(d, "euro2.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "euro2.csv", &len);
    assert_int_equal(len, text.len); /* "\r\n" comes back as "\n", and a final "\n" is added */
    assert_memory_equal(got, text.data, CHUNK + CHUNK / 2);
    assert_memory_equal(got + CHUNK + CHUNK / 2, "\nend\n", 5);
    free(got);
    list_free(l);
    buf_free(&text);
    buf_free(&want);
    dataset_close(d);
}

/* ISO-2022-JP is all 7-bit: its shift sequences must reach iconv, not be copied as ASCII. */
static void test_charset_stateful(void **state)
{
    fixture *f = *state;
    dataset *d = open_cs(f, "ISO-2022-JP", "ISO-2022-JP");
    WRITE_LIT(f->dir, "jis.csv", "\x1b$B$\"\x1b(B\nabc\n");
    list *l = NULL;
    assert_int_equal(dataset_load(d, "jis.csv", &l), DATASET_OK);
    const char *want[] = {"\xe3\x81\x82", "abc"};
    assert_lines(l, want, 2);
    assert_int_equal(dataset_save(d, "jis2.csv", l), DATASET_OK);
    size_t len;
    char *got = read_file(f->dir, "jis2.csv", &len);
    list_free(l);
    l = NULL;
    assert_int_equal(dataset_load(d, "jis2.csv", &l), DATASET_OK);
    assert_lines(l, want, 2);
    /* The ASCII line after the kana is written in ASCII mode, not as two JIS characters. */
    assert_non_null(memmem(got, len, "\x1b(B", 3));
    free(got);
    list_free(l);
    dataset_close(d);
}

typedef struct worker {
    dataset *d;
    int id;
    int failures;
} worker;

static void *load_save_many(void *arg)
{
    worker *w = arg;
    char name[32];
    snprintf(name, sizeof name, "w%d.csv", w->id);
    for (int i = 0; i < 40; i++) {
        list *l = NULL;
        if (dataset_load(w->d, "shared.csv", &l) != DATASET_OK || list_length(l) != 2000) {
            w->failures++;
            list_free(l);
            continue;
        }
        if (dataset_save(w->d, name, l) != DATASET_OK)
            w->failures++;
        list_free(l);
    }
    return NULL;
}

/* INITFILE and SAVE run on several threads at once; converters must not be shared. */
static void test_concurrent_conversion(void **state)
{
    fixture *f = *state;
    dataset *d = open_cs(f, "windows-1252", "windows-1252");
    buf text = BUF_INIT;
    for (int i = 0; i < 2000; i++)
        assert_int_equal(buf_printf(&text, "Zo\xeb-%d \x80\n", i), 0);
    write_file(f->dir, "shared.csv", text.data, text.len);
    pthread_t t[6];
    worker w[6];
    for (int i = 0; i < 6; i++) {
        w[i] = (worker){d, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, load_save_many, &w[i]), 0);
    }
    for (int i = 0; i < 6; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(w[i].failures, 0);
        char name[32];
        size_t len;
        snprintf(name, sizeof name, "w%d.csv", i);
        char *got = read_file(f->dir, name, &len);
        assert_int_equal(len, text.len);
        assert_memory_equal(got, text.data, len);
        free(got);
    }
    assert_int_equal(dot_files(f->dir), 0);
    buf_free(&text);
    dataset_close(d);
}

/* ---- list_files ---- */

typedef struct names {
    char got[16][64];
    int n;
    int stop_after; /* 0: never stop */
} names;

static int collect_name(const char *name, void *ctx)
{
    names *ns = ctx;
    assert_true(ns->n < 16);
    snprintf(ns->got[ns->n++], sizeof ns->got[0], "%s", name);
    return ns->stop_after && ns->n == ns->stop_after ? 42 : 0;
}

static void test_list_files(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    write_file(f->dir, "status.csv", "RUN\n", 4);
    write_file(f->dir, "B.csv", "", 0);
    write_file(f->dir, "queue.csv", "", 0);
    write_file(f->dir, "logins.csv", "", 0);
    write_file(f->dir, ".hidden.csv", "", 0);
    write_file(f->dir, ".status.csv.tmp.1.2", "", 0);
    write_file(f->root, "outside.csv", "", 0);
    path_in(p, f->dir, "adir");
    assert_int_equal(mkdir(p, 0755), 0);
    path_in(p, f->dir, "in-link.csv");
    assert_int_equal(symlink("queue.csv", p), 0);
    path_in(p, f->dir, "out-link.csv");
    assert_int_equal(symlink("../outside.csv", p), 0);
    path_in(p, f->dir, "passwd");
    assert_int_equal(symlink("/etc/passwd", p), 0);
    path_in(p, f->dir, "dangling.csv");
    assert_int_equal(symlink("nothing.csv", p), 0);
    path_in(p, f->dir, "dir-link");
    assert_int_equal(symlink("adir", p), 0);

    names ns = {.n = 0, .stop_after = 0};
    assert_int_equal(dataset_list_files(f->d, collect_name, &ns), 0);
    const char *want[] = {"B.csv", "in-link.csv", "logins.csv", "queue.csv", "status.csv"};
    assert_int_equal(ns.n, (int)N(want));
    for (size_t i = 0; i < N(want); i++)
        assert_string_equal(ns.got[i], want[i]);

    ns = (names){.n = 0, .stop_after = 2};
    assert_int_equal(dataset_list_files(f->d, collect_name, &ns), 42);
    assert_int_equal(ns.n, 2);
}

static void test_list_files_empty(void **state)
{
    fixture *f = *state;
    names ns = {.n = 0, .stop_after = 0};
    assert_int_equal(dataset_list_files(f->d, collect_name, &ns), 0);
    assert_int_equal(ns.n, 0);
}

int main(void)
{
    log_set_level(LOG_ERROR); /* the refused-symlink warnings are expected here */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_valid),
        cmocka_unit_test(test_name_illegal_chars),
        cmocka_unit_test(test_name_dots),
        cmocka_unit_test(test_name_length_and_order),
        cmocka_unit_test(test_name_ours),
        cmocka_unit_test(test_parse_examples),
        cmocka_unit_test(test_parse_endings),
        cmocka_unit_test(test_parse_nul_bytes),
        cmocka_unit_test(test_parse_random),
        cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_canonical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_chunk_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_replaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_over_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_mode_follows_umask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_failure_cleans_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_charset_windows1252, setup, teardown),
        cmocka_unit_test_setup_teardown(test_charset_latin1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_charset_large_and_utf16, setup, teardown),
        cmocka_unit_test_setup_teardown(test_charset_chunk_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_charset_stateful, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_conversion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_files_empty, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
