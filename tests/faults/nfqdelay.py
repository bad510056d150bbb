#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""nfqdelay.py - delay and loss for kernels without tc netem: the packets an iptables
NFQUEUE rule queues are given their verdict DELAY ms later (plus or minus JITTER ms), or
dropped with probability LOSS percent. Python's standard library only: the nfnetlink
queue protocol spoken over a raw netlink socket. Run inside the namespace whose packets
it delays (netns.py starts it with `ip netns exec`); prints "bound" once it listens.

Usage: nfqdelay.py QUEUE DELAY_MS JITTER_MS LOSS_PERCENT

The rule is added with --queue-bypass: with no delayer bound, packets pass untouched,
so a delayer that dies lifts the delay instead of cutting the link."""
import heapq
import random
import signal
import socket
import struct
import sys
import threading
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS = 1, 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NF_DROP, NF_ACCEPT = 0, 1


def attr(kind, data):
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)


def message(kind, queue, attrs, flags=NLM_F_REQUEST):
    body = struct.pack("BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + b"".join(attrs)
    return struct.pack("IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, 0, 0) + body


def main():
    queue, delay, jitter, loss = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((0, 0))
    ack = NLM_F_REQUEST | NLM_F_ACK
    s.send(message(NFQNL_MSG_CONFIG, queue,
                   [attr(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, socket.AF_INET))], ack))
    s.send(message(NFQNL_MSG_CONFIG, queue,
                   [attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META))], ack))
    for _ in range(2):
        data = s.recv(65536)
        kind = struct.unpack_from("H", data, 4)[0]
        err = struct.unpack_from("i", data, 16)[0] if kind == NLMSG_ERROR else 0
        if err:
            print("error %d binding queue %d" % (err, queue), flush=True)
            return 1
    print("bound", flush=True)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))

    pending, cv = [], threading.Condition()
    rnd = random.Random()

    def sender():
        while True:
            with cv:
                while not pending or pending[0][0] > time.monotonic():
                    cv.wait(max(0.0, pending[0][0] - time.monotonic()) if pending else None)
                _, pid, verdict = heapq.heappop(pending)
            s.send(message(NFQNL_MSG_VERDICT, queue,
                           [attr(NFQA_VERDICT_HDR, struct.pack("!II", verdict, pid))]))

    threading.Thread(target=sender, daemon=True).start()
    while True:
        data = s.recv(1 << 16)
        off = 0
        while off + 16 <= len(data):
            n, kind = struct.unpack_from("IH", data, off)
            if n < 16:
                break
            if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                a = off + 20
                while a + 4 <= off + n:
                    alen, akind = struct.unpack_from("HH", data, a)
                    if alen < 4:
                        break
                    if akind & 0x7FFF == NFQA_PACKET_HDR:
                        pid = struct.unpack_from("!I", data, a + 4)[0]
                        if rnd.random() * 100 < loss:
                            at, verdict = time.monotonic(), NF_DROP
                        else:
                            d = max(0.0, delay + rnd.uniform(-jitter, jitter))
                            at, verdict = time.monotonic() + d / 1000.0, NF_ACCEPT
                        with cv:
                            heapq.heappush(pending, (at, pid, verdict))
                            cv.notify()
                    a += (alen + 3) & ~3
            off += (n + 3) & ~3


if __name__ == "__main__":
    sys.exit(main() or 0)
