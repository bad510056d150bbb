/* SPDX-License-Identifier: Apache-2.0 */
/* ceiling.c - the benchmark's yardstick: a libmicrohttpd server that answers every
 * request with one constant STS page, configured as stsd is (a thread per core, each
 * with its own daemon and event loop, server/http_loop.h; the answer queued on the
 * access handler's second call). stsd is measured against it.
 * Usage: ceiling PORT [THREADS] */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http/http.h"
#include "http/http_loop.h"

static const char page[] = "<html><title>OK</title>\n<body>login0000001;password</body>\n</html>";
static struct MHD_Response *response;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **req_cls)
{
    static int first_call_marker;
    if (*req_cls != &first_call_marker) {
        *req_cls = &first_call_marker;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(c, MHD_HTTP_OK, response);
}

static int listen_fd;

static struct MHD_Daemon *start_daemon(void *ctx, unsigned i)
{
    unsigned threads = *(unsigned *)ctx;
    return MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, answer,
                            NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                            MHD_OPTION_CONNECTION_LIMIT, 10000u / threads, MHD_OPTION_END);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [THREADS]\n", argv[0]);
        return 2;
    }
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    response = MHD_create_response_from_buffer(sizeof page - 1, (void *)page,
                                               MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(response, "Content-Type", "text/html; charset=UTF-8");
    MHD_add_response_header(response, "Cache-Control", "no-cache, no-store, must-revalidate");
    MHD_add_response_header(response, "Pragma", "no-cache");
    MHD_add_response_header(response, "Expires", "0");
    buf err = BUF_INIT;
    int port;
    if ((listen_fd = http_listen("0.0.0.0", atoi(argv[1]), &port, &err)) < 0) {
        fprintf(stderr, "ceiling: %s\n", err.data);
        return 1;
    }
    http_loops *loops = http_loops_start(threads, start_daemon, &threads, &err);
    if (!loops) {
        fprintf(stderr, "ceiling: %s\n", err.data);
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    http_loops_quiesce(loops);
    http_loops_stop(loops);
    close(listen_fd);
    MHD_destroy_response(response);
    return 0;
}
