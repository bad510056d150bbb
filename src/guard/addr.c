/* SPDX-License-Identifier: Apache-2.0 */
/* addr.c - client addresses as 16-byte keys, IPv4 in its IPv4-mapped form. */
#include "guard/addr.h"

#include <netinet/in.h>
#include <string.h>

static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int addr_key(const struct sockaddr *addr, socklen_t len, unsigned char key[ADDR_KEY_SIZE])
{
    if (addr && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        memcpy(key, v4mapped, sizeof v4mapped);
        memcpy(key + 12, &((const struct sockaddr_in *)addr)->sin_addr, 4);
        return 0;
    }
    if (addr && addr->sa_family == AF_INET6 &&
        len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        memcpy(key, &((const struct sockaddr_in6 *)addr)->sin6_addr, ADDR_KEY_SIZE);
        return 0;
    }
    return -1;
}

int addr_key_is_v4(const unsigned char key[ADDR_KEY_SIZE])
{
    return memcmp(key, v4mapped, sizeof v4mapped) == 0;
}
