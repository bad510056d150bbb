/* SPDX-License-Identifier: Apache-2.0 */
/* testlib.c - a real stsd in a temp directory, and a minimal HTTP client for tests. */
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int td_mkdirs(daemon_proc *d)
{
    memset(d, 0, sizeof *d);
    d->pid = -1;
    snprintf(d->dir, sizeof d->dir, "/tmp/stsd-test-XXXXXX");
    if (!mkdtemp(d->dir))
        return -1;
    snprintf(d->data, sizeof d->data, "%s/data", d->dir);
    return mkdir(d->data, 0755);
}

int td_write_file(const daemon_proc *d, const char *name, const char *content, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", d->data, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(content, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

const char *td_log(const daemon_proc *d)
{
    static char text[65536];
    char path[1024];
    snprintf(path, sizeof path, "%s/stsd.log", d->dir);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    return text;
}

void td_sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

struct sockaddr_in td_sockaddr4(const char *text)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = inet_pton(AF_INET, text, &a.sin_addr) == 1 ? AF_INET : AF_UNSPEC;
    return a;
}

struct sockaddr_in6 td_sockaddr6(const char *text)
{
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof a);
    a.sin6_family = inet_pton(AF_INET6, text, &a.sin6_addr) == 1 ? AF_INET6 : AF_UNSPEC;
    return a;
}

char *td_read_file(const daemon_proc *d, const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", d->data, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            } else {
                b = nb;
            }
        }
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        if (len)
            *len = n;
    }
    return b;
}

int td_start_as(daemon_proc *d, const char *bind, const char *const *extra, int *status)
{
    const char *bin = getenv("STSD");
    if (!bin)
        bin = "build/stsd";
    char portfile[512], dsopt[512], pfopt[600], bindopt[128];
    snprintf(portfile, sizeof portfile, "%s/port", d->dir);
    unlink(portfile);
    snprintf(dsopt, sizeof dsopt, "-DjmeterPlugin.sts.datasetDirectory=%s", d->data);
    snprintf(pfopt, sizeof pfopt, "--port-file=%s", portfile);
    const char *argv[64] = {bin, "-DjmeterPlugin.sts.port=0", dsopt,
                            "-DjmeterPlugin.sts.daemon=true", pfopt};
    int argc = 5;
    if (bind) {
        snprintf(bindopt, sizeof bindopt, "--bind=%s", bind);
        argv[argc++] = bindopt;
    }
    if (status)
        *status = -1;
    for (int i = 0; extra && extra[i] && argc < 62; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    char logpath[512];
    snprintf(logpath, sizeof logpath, "%s/stsd.log", d->dir);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* A test that fails part way never leaves a daemon behind. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    d->pid = pid;
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            int ok = fscanf(f, "%d", &d->port) == 1;
            fclose(f);
            if (ok)
                return 0;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            d->pid = -1;
            if (status)
                *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            return -1;
        }
        sleep_ms(10);
    }
    return -1;
}

int td_start(daemon_proc *d, const char *const *extra)
{
    return td_start_as(d, "127.0.0.1", extra, NULL);
}

static int exit_code(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int td_wait(daemon_proc *d, int ms)
{
    for (int waited = 0; d->pid > 0 && waited <= ms; waited += 10) {
        int st;
        if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
            d->pid = -1;
            return exit_code(st);
        }
        sleep_ms(10);
    }
    return -1;
}

int td_stop(daemon_proc *d, int kill9)
{
    if (d->pid <= 0)
        return -1;
    kill(d->pid, kill9 ? SIGKILL : SIGTERM);
    int st;
    if (waitpid(d->pid, &st, 0) != d->pid)
        return -1;
    d->pid = -1;
    return exit_code(st);
}

void td_cleanup(daemon_proc *d)
{
    if (d->pid > 0)
        td_stop(d, 1);
    if (d->dir[0] && strncmp(d->dir, "/tmp/stsd-test-", 15) == 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
        int rc = system(cmd);
        (void)rc;
    }
}

int td_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

int td_send_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Parses one response from buf[0..*have), reading more from fd as needed. */
static int read_response(int fd, char *buf, size_t cap, size_t *have, http_reply *r)
{
    memset(r, 0, sizeof *r);
    char *end;
    for (;;) {
        buf[*have] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (end)
            break;
        if (*have + 1 >= cap)
            return -1;
        ssize_t n = recv(fd, buf + *have, cap - *have - 1, 0);
        if (n <= 0)
            return -1;
        *have += (size_t)n;
    }
    size_t hlen = (size_t)(end - buf) + 4;
    if (sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1)
        return -1;
    size_t copy = hlen < sizeof r->headers ? hlen : sizeof r->headers - 1;
    memcpy(r->headers, buf, copy);
    r->headers[copy] = '\0';
    char cl[32];
    long clen = http_header(r, "Content-Length", cl, sizeof cl) == 0 ? atol(cl) : -1;
    if (clen < 0)
        return -1;
    r->body = malloc((size_t)clen + 1);
    if (!r->body)
        return -1;
    size_t got = *have - hlen < (size_t)clen ? *have - hlen : (size_t)clen;
    memcpy(r->body, buf + hlen, got);
    memmove(buf, buf + hlen + got, *have - hlen - got);
    *have -= hlen + got;
    while (got < (size_t)clen) {
        ssize_t n = recv(fd, r->body + got, (size_t)clen - got, 0);
        if (n <= 0) {
            free(r->body);
            r->body = NULL;
            return -1;
        }
        got += (size_t)n;
    }
    r->body[clen] = '\0';
    r->body_len = (size_t)clen;
    return 0;
}

int http_raw(int port, const char *req, size_t len, http_reply *r)
{
    int fd = td_connect(port);
    if (fd < 0)
        return -1;
    static __thread char buf[65536];
    size_t have = 0;
    int rc = td_send_all(fd, req, len) == 0 ? read_response(fd, buf, sizeof buf, &have, r) : -1;
    close(fd);
    return rc;
}

int http_get_as(int port, const char *target, const char *authz, const char *extra,
                http_reply *r)
{
    char req[2048];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n%s%s%s%s"
                     "Connection: close\r\n\r\n", target,
                     authz ? "Authorization: Bearer " : "", authz ? authz : "",
                     authz ? "\r\n" : "", extra ? extra : "");
    if (n < 0 || (size_t)n >= sizeof req)
        return -1;
    return http_raw(port, req, (size_t)n, r);
}

int http_get(int port, const char *target, http_reply *r)
{
    size_t cap = strlen(target) + 128;
    char *req = malloc(cap);
    if (!req)
        return -1;
    int n = snprintf(req, cap, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                     target);
    int rc = http_raw(port, req, (size_t)n, r);
    free(req);
    return rc;
}

int http_post(int port, const char *path, const char *body, http_reply *r)
{
    size_t cap = strlen(path) + strlen(body) + 256;
    char *req = malloc(cap);
    if (!req)
        return -1;
    int n = snprintf(req, cap,
                     "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     "Content-Type: application/x-www-form-urlencoded\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     path, strlen(body), body);
    int rc = http_raw(port, req, (size_t)n, r);
    free(req);
    return rc;
}

int http_header(const http_reply *r, const char *name, char *out, size_t outlen)
{
    size_t nlen = strlen(name);
    for (const char *p = strstr(r->headers, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *h = p + 2;
        if (strncasecmp(h, name, nlen) == 0 && h[nlen] == ':') {
            h += nlen + 1;
            while (*h == ' ')
                h++;
            const char *e = strstr(h, "\r\n");
            size_t len = e ? (size_t)(e - h) : strlen(h);
            if (len >= outlen)
                len = outlen - 1;
            memcpy(out, h, len);
            out[len] = '\0';
            return 0;
        }
    }
    return -1;
}

void http_reply_free(http_reply *r)
{
    free(r->body);
    r->body = NULL;
}

void url_encode(const char *s, size_t len, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < len && o + 4 < outlen; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}

void page_ok(char *out, size_t outlen, const char *p)
{
    snprintf(out, outlen, "<html><title>OK</title>\n<body>%s</body>\n</html>", p);
}

void page_ko(char *out, size_t outlen, const char *m)
{
    snprintf(out, outlen, "<html><title>KO</title>\n<body>Error : %s</body>\n</html>", m);
}

int http_conn_open(http_conn *c, int port)
{
    c->port = port;
    c->have = 0;
    c->fd = td_connect(port);
    return c->fd < 0 ? -1 : 0;
}

int http_conn_get(http_conn *c, const char *target, http_reply *r)
{
    char req[8192];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", target);
    if (n < 0 || (size_t)n >= sizeof req)
        return -1;
    if (c->fd < 0 && http_conn_open(c, c->port) != 0)
        return -1;
    /* No retry: a request that may have run must not run twice (READ KEEP=FALSE). */
    if (td_send_all(c->fd, req, (size_t)n) == 0 &&
        read_response(c->fd, c->buf, sizeof c->buf, &c->have, r) == 0)
        return 0;
    http_conn_close(c);
    return -1;
}

int http_conn_send(http_conn *c, const char *target)
{
    char req[8192];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", target);
    if (n < 0 || (size_t)n >= sizeof req || c->fd < 0)
        return -1;
    return td_send_all(c->fd, req, (size_t)n);
}

int http_conn_ready(http_conn *c, int ms)
{
    if (c->have)
        return 1;
    struct pollfd p = {c->fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

int http_conn_recv(http_conn *c, http_reply *r)
{
    return read_response(c->fd, c->buf, sizeof c->buf, &c->have, r);
}

void http_conn_close(http_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->have = 0;
}

unsigned char *td_saved_id_counts(const daemon_proc *d, const char *name, int max,
                                  int *exists)
{
    char target[512];
    http_reply r;
    snprintf(target, sizeof target, "/sts/SAVE?FILENAME=%s&ADD_TIMESTAMP=false", name);
    if (http_get(d->port, target, &r) != 0)
        return NULL;
    *exists = strstr(r.body, "<title>OK</title>") != NULL;
    http_reply_free(&r);
    unsigned char *count = calloc((size_t)max, 1);
    if (!count || !*exists)
        return count;
    char *text = td_read_file(d, name, NULL), *save = NULL;
    if (!text) {
        free(count);
        return NULL;
    }
    for (char *s = strtok_r(text, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
        int id;
        if (sscanf(s, "id%d", &id) != 1 || id < 0 || id >= max) {
            free(count);
            count = NULL;
            break;
        }
        if (count[id] < 255)
            count[id]++;
    }
    free(text);
    return count;
}

int td_start_fresh(daemon_proc *d, const char *file, const char *content)
{
    if (td_mkdirs(d) != 0)
        return -1;
    if (file && td_write_file(d, file, content, strlen(content)) != 0)
        return -1;
    return td_start(d, NULL);
}

int td_teardown_state(void **state)
{
    td_cleanup(*state);
    return 0;
}

int td_start_preload(daemon_proc *d, const char *lib, const char *const *extra)
{
    const char *bin = getenv("STSD") ? getenv("STSD") : "build/stsd";
    char path[600], asan[600];
    const char *slash = strrchr(bin, '/');
    snprintf(path, sizeof path, "%.*s/tests/%s", slash ? (int)(slash - bin) : 1,
             slash ? bin : ".", lib);
    if (access(path, R_OK) != 0)
        return -1;
    /* An ASan build wants its runtime first among the preloaded libraries. */
    const char *was = getenv("ASAN_OPTIONS");
    char *saved = was ? strdup(was) : NULL;
    snprintf(asan, sizeof asan, "%s%sverify_asan_link_order=0", was ? was : "", was ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    setenv("LD_PRELOAD", path, 1);
    int rc = td_start(d, extra);
    unsetenv("LD_PRELOAD");
    if (saved) {
        setenv("ASAN_OPTIONS", saved, 1);
        free(saved);
    } else {
        unsetenv("ASAN_OPTIONS");
    }
    return rc;
}

int td_start_failsync(daemon_proc *d, const char *flag, const char *const *extra)
{
    setenv("STSD_FAILSYNC", flag, 1);
    int rc = td_start_preload(d, "libfailsync.so", extra);
    unsetenv("STSD_FAILSYNC");
    return rc;
}

int64_t td_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

double td_mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int td_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void td_proc_usage(pid_t pid, double *cpu_s, long *rss_kb)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    unsigned long ut = 0, st = 0;
    if (f && fgets(buf, sizeof buf, f)) {
        char *p = strrchr(buf, ')');
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    }
    if (f)
        fclose(f);
    *cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    *rss_kb = 0;
    while (f && fgets(buf, sizeof buf, f))
        if (sscanf(buf, "VmRSS: %ld", rss_kb) == 1)
            break;
    if (f)
        fclose(f);
}
