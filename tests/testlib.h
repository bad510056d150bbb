/* SPDX-License-Identifier: Apache-2.0 */
/* testlib.h - what protocol tests share: a real stsd on a free port in a fresh temp
 * directory, and a small HTTP/1.1 client. */
#ifndef STSD_TESTLIB_H
#define STSD_TESTLIB_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct daemon_proc {
    pid_t pid;
    int port;
    char dir[256];        /* temp directory: dataset files live in dir/data */
    char data[300];
} daemon_proc;

/* Makes a fresh temp directory (dir, dir/data). Returns 0 or -1. */
int td_mkdirs(daemon_proc *d);
/* Writes a file of the dataset directory. Returns 0 or -1. */
int td_write_file(const daemon_proc *d, const char *name, const char *content, size_t len);
/* Reads a file of the dataset directory into a malloc'd NUL-terminated buffer. */
char *td_read_file(const daemon_proc *d, const char *name, size_t *len);
/* The daemon's log so far (its first 64 KiB), in a static buffer: "" if none. */
const char *td_log(const daemon_proc *d);
/* Sleeps ms milliseconds. */
void td_sleep_ms(int ms);

/* The socket address of IPv4 (td_sockaddr4) or IPv6 (td_sockaddr6) address text, port
 * 0; its family is AF_UNSPEC if text is not such an address. */
struct sockaddr_in td_sockaddr4(const char *text);
struct sockaddr_in6 td_sockaddr6(const char *text);

/* Starts $STSD (default build/stsd) on port 0 with the dataset dir d->data, daemon=true
 * and extra arguments (NULL-terminated), waits for its port. Returns 0 or -1. */
int td_start(daemon_proc *d, const char *const *extra);
/* td_start on --bind=bind (NULL: no --bind, the default address under test). Returns 0,
 * or -1 with *status (if not NULL) the exit status when stsd ended, else -1. */
int td_start_as(daemon_proc *d, const char *bind, const char *const *extra, int *status);
/* A loopback TCP connection to port (TCP_NODELAY, 10 s receive timeout), or -1. */
int td_connect(int port);
/* Sends all len bytes of p on fd: 0, or -1. */
int td_send_all(int fd, const char *p, size_t len);
/* SIGTERM (or SIGKILL with kill9) then waits; returns the exit status (or 128+signal). */
int td_stop(daemon_proc *d, int kill9);
/* Waits for the process to exit by itself (after STOP) up to ms; exit status or -1. */
int td_wait(daemon_proc *d, int ms);
/* Removes the temp directory. */
void td_cleanup(daemon_proc *d);
/* A fresh daemon: td_mkdirs, the dataset file `file` holding content (if file is not
 * NULL), then td_start(d, NULL). Returns 0 or -1. */
int td_start_fresh(daemon_proc *d, const char *file, const char *content);
/* cmocka group teardown for a group setup that set *state to its daemon_proc. */
int td_teardown_state(void **state);
/* td_start with $STSD's dir's tests/<lib> preloaded (ASan's link order check off);
 * the shim reads its settings from the environment the caller set. Returns 0, or -1 (no
 * such shim, or no start). */
int td_start_preload(daemon_proc *d, const char *lib, const char *const *extra);
/* td_start with $STSD's dir's tests/libfailsync.so preloaded, failing syncs while the file
 * flag exists (environment restored after). Returns 0, or -1 (no shim, or no start). */
int td_start_failsync(daemon_proc *d, const char *flag, const char *const *extra);

/* CLOCK_MONOTONIC in milliseconds: whole (td_now_ms) or with its fraction (td_mono_ms). */
int64_t td_now_ms(void);
double td_mono_ms(void);
/* qsort comparison of doubles, ascending. */
int td_cmp_double(const void *a, const void *b);
/* Process pid's CPU seconds (user + system) and RSS in KiB from /proc; 0 if unreadable. */
void td_proc_usage(pid_t pid, double *cpu_s, long *rss_kb);

typedef struct http_reply {
    int status;
    char headers[4096];
    char *body;           /* malloc'd, NUL-terminated */
    size_t body_len;
} http_reply;

/* Sends raw request bytes to port, reads one response (Content-Length framed). Returns 0,
 * or -1 on a socket error / timeout. */
int http_raw(int port, const char *req, size_t len, http_reply *r);
/* GET target (path and query, already encoded). */
int http_get(int port, const char *target, http_reply *r);
/* GET target with a bearer token (authz; NULL: none) and extra header lines (each ending
 * in "\r\n"; NULL: none). */
int http_get_as(int port, const char *target, const char *authz, const char *extra,
                http_reply *r);
/* POST an urlencoded body to path. */
int http_post(int port, const char *path, const char *body, http_reply *r);
/* The value of header name (case-insensitive) in r, copied into out; 0 or -1. */
int http_header(const http_reply *r, const char *name, char *out, size_t outlen);
void http_reply_free(http_reply *r);

/* How many times each line "id<N>" (0 <= N < max) is in list `name` now, SAVEd to the
 * dataset directory (no timestamp): a calloc'd array of max counts, each capped at 255,
 * which the caller frees. *exists says whether the list was there (if not, every count
 * is 0). NULL if the save or the read failed, or a line is not such an id. */
unsigned char *td_saved_id_counts(const daemon_proc *d, const char *name, int max,
                                  int *exists);

/* Percent-encodes s (every byte but unreserved ones) into out. */
void url_encode(const char *s, size_t len, char *out, size_t outlen);

/* The OK page with payload p, and the KO page with message m, as stsd must send them. */
void page_ok(char *out, size_t outlen, const char *p);
void page_ko(char *out, size_t outlen, const char *m);

/* A persistent keep-alive connection for load tests. */
typedef struct http_conn {
    int fd;
    int port;
    char buf[65536];
    size_t have;
} http_conn;

int http_conn_open(http_conn *c, int port);
/* GET on c (reopened if an earlier call failed); never retried. Returns 0 or -1. */
int http_conn_get(http_conn *c, const char *target, http_reply *r);
void http_conn_close(http_conn *c);
/* Split GETs, for requests that wait: send target on open c; 0 or -1. */
int http_conn_send(http_conn *c, const char *target);
/* 1 if an answer (or a close) is readable on c within ms, else 0. */
int http_conn_ready(http_conn *c, int ms);
/* Reads one answer on c; 0 or -1. */
int http_conn_recv(http_conn *c, http_reply *r);

#endif
