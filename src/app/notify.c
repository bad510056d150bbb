/* SPDX-License-Identifier: Apache-2.0 */
/* notify.c - systemd's readiness protocol (sd_notify(3)) written out, so stsd needs no libsystemd. */
#include "app/notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The protocol is one datagram of text to an AF_UNIX socket whose path is in
 * $NOTIFY_SOCKET; a leading '@' names a socket in the abstract namespace. systemd
 * documents it as stable for reimplementation. */
int notify_send(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    size_t plen, slen = strlen(state);
    if (!path || !*path)
        return 0;
    plen = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || plen >= sizeof sa.sun_path) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, plen);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';
    /* An abstract address is exactly its bytes; a path one carries its NUL. */
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen +
                                 (path[0] == '@' ? 0 : 1));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t n;
    do
        n = sendto(fd, state, slen, MSG_NOSIGNAL, (struct sockaddr *)&sa, alen);
    while (n < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    if (n != (ssize_t)slen) {
        errno = n < 0 ? saved : EMSGSIZE;
        return -1;
    }
    return 1;
}
