/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_net.h - raft's libuv TCP transport, taking host names as well as IPv4 addresses. */
#ifndef STSD_CLUSTER_NET_H
#define STSD_CLUSTER_NET_H

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

/* Sets up t as raft's TCP transport on loop (raft_uv_tcp_init's), through which a raft
 * address may also name its host: raft 0.15 itself takes only dotted IPv4 addresses
 * (uv_ip4_addr), while containers, compose files and Kubernetes name their nodes.
 * A host name is resolved (IPv4) on a thread of its own, again every second, never on the
 * loop; a connection goes to the address last found, or fails at once while there is none
 * (raft retries after its connect retry delay, a second). A connection to a named node
 * that has not completed within connect_ms, or whose host's address changed meanwhile (a
 * container started again elsewhere), is reported failed to raft, which tries again.
 * Such a connection also fails once data it sent stays unacknowledged for 2 * connect_ms
 * (TCP_USER_TIMEOUT): raft reads nothing on it, and a vanished peer never resets it.
 * Addresses written as IPv4 go to raft's transport unchanged.
 * A node whose own raft address names its host listens on 0.0.0.0 at its port.
 * Returns 0 or a raft error code. */
int cluster_net_init(struct raft_uv_transport *t, uv_loop_t *loop, unsigned connect_ms);

/* Starts resolving the host of a raft address now, before raft first connects to it (a
 * node's first election would otherwise wait for a retry). Nothing for an IPv4 address. */
void cluster_net_resolve(struct raft_uv_transport *t, const char *address);

/* Frees t once raft has closed it (raft_uv_tcp_close's place). */
void cluster_net_free(struct raft_uv_transport *t);

#endif
