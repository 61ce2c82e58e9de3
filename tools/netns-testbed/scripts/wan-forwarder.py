"""The testbed's WAN: a learning switch between the ports of one namespace that delays, drops and
rate-limits IP frames per (source label, destination label), in user space (this kernel has no
netem). One process, one thread: every port is an AF_PACKET socket in one epoll set; a frame that
must wait sits in one heap ordered by its delivery time.

Usage (run by tools/netns-testbed/src/wan.ts inside the WAN namespace, with Debian's python3):
  wan-forwarder.py offloads IFNAME...   turn off checksum and segmentation offloads of veths (so
                                        frames carry real checksums and are at most one MTU)
  wan-forwarder.py run CONFIG_JSON      forward; CONFIG_JSON = {"seed", "ports": [{"ifname",
                                        "label"}], "default": PROFILE|null, "links": [{"from", "to",
                                        "profile"}]}; PROFILE = {"delayMs", "jitterMs", "lossPct",
                                        "rateBps", "queuePackets", "reorder"} (validated by wan.ts)
Control: one JSON object per stdin line, answered by one JSON line on stdout with its "id":
  {"id", "op": "set", "from", "to", "profile"}  a direction's profile, for frames arriving from now
  {"id", "op": "counters"}                       per direction: forwarded, bytes, lossDropped,
                                                 queueDropped; plus unimpaired and sendErrors
Prints "ready" once every port is open. Exits when stdin closes (the test process is gone).

Model of one direction: a frame is dropped with probability lossPct (seeded PRNG); with a rate, it
joins a queue of at most queuePackets frames serialised at rateBps (IP bytes), else is dropped
(queueDropped); then it travels delayMs +- jitterMs (uniform, seeded). Without `reorder` a frame
never overtakes an earlier one of its direction (its delivery is at least the previous one's).
Broadcast and multicast frames (ARP, IPv6 neighbour discovery) and non-IP frames cross at once,
unimpaired and uncounted: they stand in for the link layer of each router's real uplink.
"""
import array
import collections
import errno
import fcntl
import heapq
import json
import os
import random
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
SOL_PACKET = 263  # not exported by Python's socket module
PACKET_IGNORE_OUTGOING = 23
SIOCETHTOOL = 0x8946
# struct ethtool_value set commands: tx checksum, scatter-gather, TSO, GSO, GRO.
ETHTOOL_OFFLOADS_OFF = (0x17, 0x19, 0x1F, 0x24, 0x2C)
ETH_HEADER = 14
IP_ETHERTYPES = (b"\x08\x00", b"\x86\xdd")
RECV_BATCH = 64


def offloads_off(ifnames):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for ifname in ifnames:
        for cmd in ETHTOOL_OFFLOADS_OFF:
            value = array.array("I", [cmd, 0])
            ifreq = struct.pack("16sP", ifname.encode(), value.buffer_info()[0]).ljust(40, b"\0")
            fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
    sock.close()


class Profile:
    __slots__ = ("delay", "jitter", "loss", "rate", "queue", "reorder")

    def __init__(self, spec):
        spec = spec or {}
        self.delay = spec.get("delayMs", 0) / 1000
        self.jitter = spec.get("jitterMs", 0) / 1000
        self.loss = spec.get("lossPct", 0) / 100
        self.rate = spec.get("rateBps")
        self.queue = spec.get("queuePackets", 1000)
        self.reorder = spec.get("reorder", False)


class Direction:
    """One direction of one label pair: its profile, PRNGs, rate queue and counters."""

    __slots__ = (
        "src", "dst", "profile", "loss_rng", "jitter_rng", "busy_until", "backlog", "last_delivery",
        "forwarded", "bytes", "loss_dropped", "queue_dropped",
    )

    def __init__(self, seed, src, dst, profile):
        self.src, self.dst, self.profile = src, dst, profile
        # String seeds are hashed with SHA-512 by random.Random: the same on every run and machine,
        # and independent per direction, so one direction's traffic never shifts another's draws.
        self.loss_rng = random.Random(f"{seed}/loss/{src}/{dst}")
        self.jitter_rng = random.Random(f"{seed}/jitter/{src}/{dst}")
        self.busy_until = 0.0
        self.backlog = collections.deque()  # serialisation end times of the frames queued
        self.last_delivery = 0.0
        self.forwarded = self.bytes = self.loss_dropped = self.queue_dropped = 0

    def schedule(self, now, size):
        """The frame's delivery time, or None when it is dropped."""
        p = self.profile
        if p.loss > 0 and self.loss_rng.random() < p.loss:
            self.loss_dropped += 1
            return None
        t = now
        if p.rate:
            backlog = self.backlog
            while backlog and backlog[0] <= now:
                backlog.popleft()
            if len(backlog) >= p.queue:
                self.queue_dropped += 1
                return None
            t = max(now, self.busy_until) + (size - ETH_HEADER) * 8 / p.rate
            self.busy_until = t
            backlog.append(t)
        delay = p.delay
        if p.jitter > 0:
            delay += self.jitter_rng.uniform(-p.jitter, p.jitter)
        t += max(delay, 0.0)
        if not p.reorder:
            t = max(t, self.last_delivery)
            self.last_delivery = t
        return t

    def counters(self):
        return {
            "from": self.src, "to": self.dst, "forwarded": self.forwarded, "bytes": self.bytes,
            "lossDropped": self.loss_dropped, "queueDropped": self.queue_dropped,
        }


class Forwarder:
    def __init__(self, config):
        self.seed = config["seed"]
        self.default = Profile(config.get("default"))
        self.directions = {}
        for link in config.get("links", []):
            self.direction(link["from"], link["to"]).profile = Profile(link["profile"])
        self.ports = []  # (socket, ifname, label)
        self.by_fd = {}
        self.macs = {}  # source MAC -> port index
        self.heap = []  # (delivery time, sequence, port index, frame, direction)
        self.sequence = 0
        self.unimpaired = 0
        self.send_errors = 0
        for port in config["ports"]:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            sock.bind((port["ifname"], 0))
            sock.setblocking(False)
            self.by_fd[sock.fileno()] = len(self.ports)
            self.ports.append((sock, port["ifname"], port["label"]))

    def direction(self, src, dst):
        d = self.directions.get((src, dst))
        if d is None:
            d = self.directions[(src, dst)] = Direction(self.seed, src, dst, self.default)
        return d

    def send(self, index, frame):
        try:
            self.ports[index][0].send(frame)
            return True
        except OSError:
            # A full socket buffer or a frame over the MTU: lost, as on a real link; counted.
            self.send_errors += 1
            return False

    def receive(self, index):
        sock, _, label = self.ports[index]
        for _ in range(RECV_BATCH):
            try:
                frame = sock.recv(65536)
            except BlockingIOError:
                return
            # Read the clock per frame: one taken before the batch would be early for a frame that
            # arrived while this process was descheduled mid-batch, and the frame would leave early.
            now = time.monotonic()
            if len(frame) < ETH_HEADER:
                continue
            self.macs[frame[6:12]] = index
            targets = None if frame[0] & 1 else self.macs.get(frame[0:6])
            if frame[12:14] not in IP_ETHERTYPES or frame[0] & 1:
                self.flood_now(index, frame)
                continue
            if targets is None:
                outs = [i for i in range(len(self.ports)) if i != index]
            elif targets == index:
                continue
            else:
                outs = [targets]
            for out in outs:
                self.route(label, out, frame, now)

    def flood_now(self, index, frame):
        self.unimpaired += 1
        for out in range(len(self.ports)):
            if out != index:
                self.send(out, frame)

    def route(self, label, out, frame, now):
        dst = self.ports[out][2]
        if dst == label:
            self.unimpaired += 1
            self.send(out, frame)
            return
        d = self.direction(label, dst)
        at = d.schedule(now, len(frame))
        if at is None:
            return
        if at <= now:
            self.deliver(out, frame, d)
        else:
            self.sequence += 1
            heapq.heappush(self.heap, (at, self.sequence, out, frame, d))

    def deliver(self, out, frame, d):
        if self.send(out, frame):
            d.forwarded += 1
            d.bytes += len(frame) - ETH_HEADER

    def control(self, line):
        request = json.loads(line)
        op = request.get("op")
        if op == "set":
            self.direction(request["from"], request["to"]).profile = Profile(request["profile"])
            answer = {"ok": True}
        elif op == "counters":
            answer = {
                "directions": [d.counters() for d in self.directions.values()],
                "unimpaired": self.unimpaired,
                "sendErrors": self.send_errors,
            }
        else:
            answer = {"error": f"unknown op {op!r}"}
        print(json.dumps({"id": request.get("id"), **answer}), flush=True)

    def run(self):
        poll = select.epoll()
        stdin = sys.stdin.fileno()
        os.set_blocking(stdin, False)
        poll.register(stdin, select.EPOLLIN)
        for fd in self.by_fd:
            poll.register(fd, select.EPOLLIN)
        print("ready", flush=True)
        pending = b""
        heap = self.heap
        while True:
            timeout = max(heap[0][0] - time.monotonic(), 0) if heap else -1
            for fd, _ in poll.poll(timeout):
                if fd == stdin:
                    chunk = os.read(stdin, 65536)
                    if not chunk:
                        return
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        if line.strip():
                            self.control(line)
                else:
                    self.receive(self.by_fd[fd])
            now = time.monotonic()
            while heap and heap[0][0] <= now:
                _, _, out, frame, d = heapq.heappop(heap)
                self.deliver(out, frame, d)


def main(argv):
    if len(argv) >= 2 and argv[0] == "offloads":
        offloads_off(argv[1:])
    elif len(argv) == 2 and argv[0] == "run":
        Forwarder(json.loads(argv[1])).run()
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except OSError as error:
        if error.errno == errno.EPIPE:
            sys.exit(0)
        raise
