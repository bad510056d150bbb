/* ceiling.c - the benchmark's yardstick: a libmicrohttpd server that answers every
 * request with one constant STS page, configured as stsd is (epoll, a thread per core,
 * the answer queued on the access handler's second call). stsd is measured against it.
 * Usage: ceiling PORT [THREADS] */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)atoi(argv[1]), NULL, NULL,
        answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, 10000u, MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u,
        MHD_OPTION_END);
    if (!d) {
        perror("MHD_start_daemon");
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    MHD_destroy_response(response);
    return 0;
}
