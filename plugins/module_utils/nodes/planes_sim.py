# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A simulator of the distribution policies of a multi-port node.

It compares, on the PMCME paper's traffic shapes, how each policy spreads
frames over a node's P Ethernet ports and how often it delivers a stream's
packets out of order:

* ``pmcme``: the paper's policy (§3.2, §4): a packet whose stream has more
  than ``threshold_bytes`` unacknowledged bytes (write_seq - snd_una) is a
  high-bandwidth packet; its stream gets a port from a round robin over the
  ports the first time it is seen (Port_Info, keyed on the TCP source port)
  and keeps it; each port registers at most ``streams_per_port`` streams
  (Reg_Info), the oldest registration being overwritten and its Port_Info
  entry removed (ageing; the stream is registered again if it is still
  sending). Other packets (ACKs, small messages) go round robin over the
  ports packet by packet. Port X of the sender reaches port X of the
  receiver (the MAC rewrite of Table 2).
* ``layer2``, ``layer2+3``, ``layer3+4``: IEEE 802.3ad (LACP) as Linux
  bonding's xmit_hash_policy computes it (§3.1); every port of a node
  shares one MAC and one IP address. The switch is assumed to hash the
  frames towards the receiver's bundle with the same fields and function,
  as the paper configured nodes and switches alike (§5).
* ``round_robin``: Linux balance-rr (§3.1): every frame a node sends goes to
  the next port. All ports share one MAC address; a switch delivers a frame
  for a receiver on the port where it last learned the receiver's MAC (the
  receiver's last frame on that switch, data or ACK; Fig. 3).
* ``single``: one port (the paper's 1Port).

The model (docs/planes.md, "Simulator"): streams are TCP connections
carrying one message each; a stream's rate is a fair share of its two
nodes' capacity (at ``load`` of it), its packets are evenly spaced; the
receiver acknowledges every ``ack_every`` packets one polling period later.
Each port is a FIFO at its speed on the sender's side (NIC) and on the
switch's side (the switch port towards the receiver). The receiver handles
its ports in polling periods of ``poll_us``, port after port (interrupt
moderation, Fig. 4). A data packet is out of order when it is delivered
after a later-sent packet of its stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

SHAPES = ("all_to_all", "neighbours", "butterfly", "one_to_many", "many_to_one", "one_to_one")
POLICIES = ("pmcme", "layer2", "layer2+3", "layer3+4", "round_robin", "single")
LACP = ("layer2", "layer2+3", "layer3+4")
HEADER_BYTES = 66  # Ethernet 14 + IPv4 20 + TCP 20 with timestamps 12
ETH_P_IP = 0x0800
EPHEMERAL = (32768, 60999)  # Linux net.ipv4.ip_local_port_range


@dataclass(frozen=True)
class SimConfig:
    """What is simulated. The defaults are the paper's cluster (§5: 8 nodes
    of 8 cores with 8 Gigabit ports, frames of 1,518 bytes) with 8
    processes per node."""

    nodes: int = 8
    ports: int = 8
    procs: int = 8
    message_bytes: int = 64 * 1024
    mss: int = 1452  # a 1,518-byte frame: 1,452 + 66
    port_mbps: tuple = (1000,)
    switches: int = 0  # switches the ports are spread over; 0: one per port (planes)
    load: float = 0.9
    poll_us: float = 125.0
    ack_every: int = 2
    burst: int = 10  # packets a stream sends back to back (TCP's initial window)
    inflight: int = 10  # packets sent and not yet acknowledged (the initial window)
    threshold_bytes: int = 7000
    streams_per_port: int = 100
    macs: str = "random"  # or "sequential"
    trunk_links: int = 8
    seed: int = 0

    def speeds(self) -> np.ndarray:
        """Bytes per microsecond of each port."""
        values = list(self.port_mbps) * (self.ports if len(self.port_mbps) == 1 else 1)
        if len(values) != self.ports:
            raise ValueError("port_mbps: %d speeds for %d ports" % (len(values), self.ports))
        return np.asarray(values, dtype=float) / 8.0


def _pairs(shape: str, nodes: int, procs: int) -> list[tuple[int, int, int]]:
    """(source rank, destination rank, phase) of every stream between
    processes on different nodes; rank r runs on node r // procs."""
    ranks = nodes * procs
    if shape == "all_to_all":  # FT, IS: total exchange (§5.3)
        return [(a, b, 0) for a in range(ranks) for b in range(ranks) if a // procs != b // procs]
    if shape == "neighbours":  # LU: a 2-D grid of processes, the four neighbours
        cols = 2 ** math.ceil(math.log2(ranks) / 2)
        cols = cols if ranks % cols == 0 else ranks
        found = []
        for a in range(ranks):
            col = a % cols
            for b in (a - cols, a + cols, a - 1 if col else -1, a + 1 if col + 1 < cols else -1):
                if 0 <= b < ranks and a // procs != b // procs:
                    found.append((a, b, 0))
        return found
    if shape == "butterfly":  # CG: all-reduce by butterfly, one stage after the other
        stages = max(1, math.ceil(math.log2(ranks)))
        return [(a, a ^ (1 << k), k) for k in range(stages) for a in range(ranks)
                if (a ^ (1 << k)) < ranks and a // procs != (a ^ (1 << k)) // procs]
    if shape == "one_to_many":  # node 0's processes each send to every other node (§5.1)
        return [(local, node * procs + local, 0) for local in range(procs) for node in range(1, nodes)]
    if shape == "many_to_one":
        return [(node * procs + local, local, 0) for local in range(procs) for node in range(1, nodes)]
    if shape == "one_to_one":
        return [(local, procs + local, 0) for local in range(procs)]
    raise ValueError("shape: one of %s, not %r" % (", ".join(SHAPES), shape))


def _addresses(cfg: SimConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per node the IPv4 address (10.97.0.<n+1>, as a 32-bit number) and the
    last byte of the MAC address its bond or master uses: ``sequential``
    (the planes plan's MACs end in the host number) or ``random`` (NICs of
    one vendor, serial numbers scattered)."""
    ips = np.array([(10 << 24) | (97 << 16) | (node + 1) for node in range(cfg.nodes)], dtype=np.int64)
    if cfg.macs == "sequential":
        last = (np.arange(cfg.nodes) + 1) & 0xFF
    elif cfg.macs == "random":
        last = rng.integers(0, 256, cfg.nodes)
    else:
        raise ValueError("macs: sequential or random, not %r" % cfg.macs)
    return ips, last.astype(np.int64)


def _streams(cfg: SimConfig, shape: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The streams of ``shape``: nodes, ports, phase, packets, rate (bytes
    per microsecond, a fair share of both nodes' capacity at ``load``) and
    start time. A stream is one TCP connection opened by its sender: an
    ephemeral source port, the receiving process's listening port."""
    pairs = np.array(_pairs(shape, cfg.nodes, cfg.procs), dtype=np.int64).reshape(-1, 3)
    src, dst, phase = pairs[:, 0] // cfg.procs, pairs[:, 1] // cfg.procs, pairs[:, 2]
    sport = np.zeros(len(pairs), dtype=np.int64)
    for node in range(cfg.nodes):
        mine = np.flatnonzero(src == node)
        sport[mine] = rng.choice(np.arange(EPHEMERAL[0], EPHEMERAL[1] + 1), size=len(mine), replace=False)
    dport = 10000 + pairs[:, 1] % cfg.procs
    capacity = cfg.speeds().sum()
    frame = cfg.mss + HEADER_BYTES
    packets = np.full(len(pairs), -(-cfg.message_bytes // cfg.mss), dtype=np.int64)
    rate = np.zeros(len(pairs))
    start = np.zeros(len(pairs))
    begin = 0.0
    for stage in np.unique(phase):
        now = phase == stage
        out = np.bincount(src[now], minlength=cfg.nodes)
        into = np.bincount(dst[now], minlength=cfg.nodes)
        rate[now] = cfg.load * np.minimum(capacity / out[src[now]], capacity / into[dst[now]])
        gap = frame / rate[now]
        start[now] = begin + rng.uniform(0, 1, now.sum()) * gap
        begin += float(np.max(packets[now] * gap + gap))
    return {"src": src, "dst": dst, "phase": phase, "sport": sport, "dport": dport,
            "packets": packets, "rate": rate, "start": start}


def _frames(cfg: SimConfig, streams: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every frame: data packets of each stream and the receivers' ACKs.
    ``high``: a data packet the pmcme policy counts as high bandwidth
    (§3.2: write_seq - snd_una over the threshold; the message is written
    at once, and the packets in flight are not yet acknowledged)."""
    count = streams["packets"]
    stream = np.repeat(np.arange(len(count)), count)
    seq = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    # a stream sends bursts of ``burst`` packets back to back (at the node's
    # total port speed), one burst per burst * gap on average (its rate);
    # each burst starts anywhere in its slot's slack (the host's scheduling)
    frame = cfg.mss + HEADER_BYTES
    gap = frame / streams["rate"][stream]
    spacing = frame / cfg.speeds().sum()
    burst, within = seq // cfg.burst, seq % cfg.burst
    slack = cfg.burst * (gap - spacing)
    shift = rng.uniform(0, 1, len(count))[stream] if cfg.burst == 1 else rng.uniform(0, 1, len(seq))
    start_of_burst = burst * cfg.burst * gap + np.where(within == 0, shift, 0) * slack
    first = seq - within  # index of the burst's first packet in its stream
    begin = np.empty(len(seq))
    begin[within == 0] = start_of_burst[within == 0]
    base = np.repeat(np.cumsum(count) - count, count)
    time = streams["start"][stream] + begin[base + first] + within * spacing
    payload = np.minimum(cfg.mss, cfg.message_bytes - seq * cfg.mss)
    unacked = cfg.message_bytes - np.maximum(0, seq - cfg.inflight) * cfg.mss
    acked = (seq % cfg.ack_every == cfg.ack_every - 1) | (seq == count[stream] - 1)
    ack_time = (np.floor(time[acked] / cfg.poll_us) + 1) * cfg.poll_us
    n_acks = int(acked.sum())
    return {
        "stream": np.concatenate([stream, stream[acked]]),
        "seq": np.concatenate([seq, np.full(n_acks, -1)]),
        "node": np.concatenate([streams["src"][stream], streams["dst"][stream[acked]]]),
        "peer": np.concatenate([streams["dst"][stream], streams["src"][stream[acked]]]),
        "time": np.concatenate([time, ack_time]),
        "bytes": np.concatenate([payload + HEADER_BYTES, np.full(n_acks, HEADER_BYTES)]).astype(float),
        "high": np.concatenate([unacked > cfg.threshold_bytes, np.zeros(n_acks, dtype=bool)]),
        "sport": np.concatenate([streams["sport"][stream], streams["dport"][stream[acked]]]),
        "dport": np.concatenate([streams["dport"][stream], streams["sport"][stream[acked]]]),
    }


def _u32_le(values: np.ndarray) -> np.ndarray:
    """A big-endian 32-bit header field read as a little-endian u32, as the
    kernel's hash reads it on x86."""
    values = values.astype(np.int64)
    return ((values & 0xFF) << 24) | ((values >> 8 & 0xFF) << 16) | ((values >> 16 & 0xFF) << 8) | (values >> 24 & 0xFF)


def lacp_hash(policy: str, src_mac: np.ndarray, dst_mac: np.ndarray, src_ip: np.ndarray, dst_ip: np.ndarray,
              sport: np.ndarray, dport: np.ndarray) -> np.ndarray:
    """Linux bonding's bond_xmit_hash() for IPv4 TCP (the last bytes of the
    MACs; addresses and ports as numbers): layer2 = dst_mac[5] ^ src_mac[5]
    ^ ethertype; layer2+3 = that ^ src IP ^ dst IP, folded (>> 16, >> 8);
    layer3+4 = the ports' 32 bits ^ src IP ^ dst IP, folded, >> 1. The
    port is the hash modulo the number of ports."""
    eth = (dst_mac ^ src_mac ^ ETH_P_IP).astype(np.int64)
    if policy == "layer2":
        return eth
    if policy == "layer2+3":
        value = eth
    elif policy == "layer3+4":
        ports = (sport.astype(np.int64) << 16) | dport.astype(np.int64)
        value = _u32_le(ports)
    else:
        raise ValueError("policy: one of %s, not %r" % (", ".join(LACP), policy))
    value = value ^ _u32_le(src_ip) ^ _u32_le(dst_ip)
    value = value ^ (value >> 16)
    value = value ^ (value >> 8)
    return value >> 1 if policy == "layer3+4" else value


class PortInfo:
    """One node's PMCME tables (§4, Fig. 8, Table 1): Port_Info maps a
    stream's key (its TCP source port) to (PortNO, NOperPort); Reg_Info,
    indexed by port and NOperPort, holds the key registered there, so the
    registration ``streams_per_port`` streams later on the same port
    overwrites it and removes its Port_Info entry (ageing)."""

    def __init__(self, ports: int, streams_per_port: int, start: int = 0) -> None:
        self.ports = ports
        self.streams_per_port = streams_per_port
        self.port_info: dict[int, tuple[int, int]] = {}
        self.reg_info: list[list[int | None]] = [[None] * streams_per_port for dummy in range(ports)]
        self.next_port = start % ports  # the round robin over ports, in units of streams
        self.next_slot = [0] * ports  # NOperPort of the next registration, per port
        self.next_packet = start % ports  # the round robin in units of packets (not high bandwidth)
        self.evicted = 0

    def stream_port(self, key: int) -> int:
        """The port of a high-bandwidth packet of stream ``key``: its
        registered port, or the next port of the round robin, registered."""
        entry = self.port_info.get(key)
        if entry is not None:
            return entry[0]
        port = self.next_port
        self.next_port = (port + 1) % self.ports
        slot = self.next_slot[port]
        self.next_slot[port] = (slot + 1) % self.streams_per_port
        old = self.reg_info[port][slot]
        if old is not None and self.port_info.get(old) == (port, slot):
            del self.port_info[old]
            self.evicted += 1
        self.reg_info[port][slot] = key
        self.port_info[key] = (port, slot)
        return port

    def packet_port(self) -> int:
        """The port of a packet that is not high bandwidth: the next one."""
        port = self.next_packet
        self.next_packet = (port + 1) % self.ports
        return port


def _order(frames: dict[str, np.ndarray]) -> np.ndarray:
    """Frames by sending node, then time."""
    return np.lexsort((frames["time"], frames["node"]))


def _pmcme_ports(cfg: SimConfig, frames: dict[str, np.ndarray]) -> tuple[np.ndarray, int]:
    """The pmcme port of every frame (sender's and receiver's: port X
    reaches port X) and the number of Port_Info entries aged out."""
    # a node that has been running has its round robins wherever earlier
    # streams left them: each starts at a random port
    starts = np.random.default_rng(cfg.seed + 1).integers(0, cfg.ports, cfg.nodes)
    tables = [PortInfo(cfg.ports, cfg.streams_per_port, int(start)) for start in starts]
    port = np.zeros(len(frames["time"]), dtype=np.int64)
    order = _order(frames)
    nodes, high, keys = frames["node"][order].tolist(), frames["high"][order].tolist(), frames["sport"][order].tolist()
    chosen = [tables[node].stream_port(key) if is_high else tables[node].packet_port()
              for node, is_high, key in zip(nodes, high, keys)]
    port[order] = chosen
    return port, sum(table.evicted for table in tables)


def _rank_in_group(group: np.ndarray) -> np.ndarray:
    """For sorted ``group`` labels, each element's index within its group."""
    starts = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
    sizes = np.diff(np.r_[starts, len(group)])
    return np.arange(len(group)) - np.repeat(starts, sizes)


def _round_robin_tx(cfg: SimConfig, frames: dict[str, np.ndarray]) -> np.ndarray:
    """balance-rr: each node's frames, in sending order, on the next port
    (P-1 is followed by 0), from a random port (as pmcme's round robins)."""
    order = _order(frames)
    port = np.zeros(len(order), dtype=np.int64)
    starts = np.random.default_rng(cfg.seed + 1).integers(0, cfg.ports, cfg.nodes)
    port[order] = (_rank_in_group(frames["node"][order]) + starts[frames["node"][order]]) % cfg.ports
    return port


def _queue(group: np.ndarray, arrival: np.ndarray, service: np.ndarray) -> np.ndarray:
    """Departure times of FIFO queues (one per ``group`` label): departure =
    max(arrival, previous departure) + service, computed for all queues at
    once as cumulative service + running maximum of (arrival - service
    before it), the running maximum kept within each queue."""
    order = np.lexsort((arrival, group))
    grp, arr, srv = group[order], arrival[order], service[order]
    total = np.cumsum(srv)
    before = total - srv
    value = arr - before
    label = np.r_[0, np.cumsum(np.diff(grp) != 0)]
    span = float(value.max() - value.min()) + 1.0 if len(value) else 1.0
    running = np.maximum.accumulate(value + label * span) - label * span
    departure = np.empty(len(order))
    departure[order] = total + running
    return departure


def _switch_of(cfg: SimConfig, port: np.ndarray) -> np.ndarray:
    """The switch a port is cabled to: ports spread evenly, in order, over
    ``switches`` switches (the planes design: one per port)."""
    switches = cfg.switches or cfg.ports
    return port * switches // cfg.ports


def _learned_rx(cfg: SimConfig, frames: dict[str, np.ndarray], tx: np.ndarray, at_switch: np.ndarray) -> np.ndarray:
    """balance-rr's receiving port: a frame for node R reaching switch S at
    time t leaves on the port of R where S last learned R's (shared) MAC,
    the port of R's last frame into S before t (§3.1, Fig. 3). Before R
    has sent anything into S, S floods: the frame is counted on R's
    lowest port on S."""
    rx = np.zeros(len(tx), dtype=np.int64)
    switch_in = _switch_of(cfg, tx)
    lowest = np.array([int(np.flatnonzero(_switch_of(cfg, np.arange(cfg.ports)) == s)[0])
                       for s in range(cfg.switches or cfg.ports)])
    for node in range(cfg.nodes):
        sent = frames["node"] == node
        into = frames["peer"] == node
        for switch in np.unique(switch_in[into]):
            mine = np.flatnonzero(sent & (switch_in == switch))
            order = mine[np.argsort(at_switch[mine], kind="stable")]
            targets = np.flatnonzero(into & (switch_in == switch))
            last = np.searchsorted(at_switch[order], at_switch[targets], side="left") - 1
            rx[targets] = np.where(last >= 0, tx[order][np.maximum(last, 0)], lowest[switch])
    return rx


def _lacp_ports(cfg: SimConfig, frames: dict[str, np.ndarray], policy: str, ips: np.ndarray,
                macs: np.ndarray) -> np.ndarray:
    """The LACP port of every frame; the receiving port is the same (the
    switch hashes the same fields with the same function onto the
    receiver's bundle of as many ports)."""
    node, peer = frames["node"], frames["peer"]
    value = lacp_hash(policy, macs[node], macs[peer], ips[node], ips[peer], frames["sport"], frames["dport"])
    return value % cfg.ports


def _ports(cfg: SimConfig, policy: str, frames: dict[str, np.ndarray], ips: np.ndarray,
           macs: np.ndarray) -> tuple[np.ndarray, Any, int]:
    """(sending port of every frame, receiving port or None when it
    depends on timing (round_robin's MAC learning), Port_Info entries aged out)."""
    if policy == "pmcme":
        port, evicted = _pmcme_ports(cfg, frames)
        return port, port, evicted
    if policy in LACP:
        port = _lacp_ports(cfg, frames, policy, ips, macs)
        return port, port, 0
    if policy == "round_robin":
        return _round_robin_tx(cfg, frames), None, 0
    if policy == "single":
        port = np.zeros(len(frames["time"]), dtype=np.int64)
        return port, port, 0
    raise ValueError("policy: one of %s, not %r" % (", ".join(POLICIES), policy))


def _out_of_order(cfg: SimConfig, frames: dict[str, np.ndarray], rx: np.ndarray, arrival: np.ndarray) -> int:
    """Data packets delivered after a later-sent packet of their stream.
    The receiver handles its ports in polling periods of ``poll_us``, port
    after port, each port's packets in arrival order (Fig. 4)."""
    data = frames["seq"] >= 0
    stream, seq = frames["stream"][data], frames["seq"][data]
    period = np.floor(arrival[data] / cfg.poll_us)
    order = np.lexsort((arrival[data], rx[data], period, stream))
    stream, seq = stream[order], seq[order]
    starts = np.r_[True, stream[1:] != stream[:-1]]
    label = np.cumsum(starts) - 1
    span = float(seq.max()) + 1.0 if len(seq) else 1.0
    running = np.maximum.accumulate(seq + label * span) - label * span
    before = np.r_[-1.0, running[:-1]]
    before[starts] = -1.0
    return int(np.count_nonzero(seq < before))


def _balance(per_port: np.ndarray) -> tuple[float, list[float]]:
    """max/mean bytes per port of the worst busy node (one that carries at
    least half the busiest node's bytes on this side) and its ports' shares."""
    totals = per_port.sum(axis=1)
    busy = np.flatnonzero(totals >= totals.max() / 2) if totals.max() > 0 else np.arange(len(totals))
    ratios = [float(per_port[node].max() / per_port[node].mean()) if totals[node] else 1.0 for node in busy]
    worst = int(busy[int(np.argmax(ratios))])
    shares = per_port[worst] / totals[worst] if totals[worst] else per_port[worst]
    return max(ratios), [round(float(share), 4) for share in shares]


def _ideal_time(cfg: SimConfig, streams: dict[str, np.ndarray]) -> float:
    """The shortest time the shape can take: per phase, the busiest node's
    bytes (sent or received) over its total port speed, phases one after
    the other."""
    frame_bytes = streams["packets"] * HEADER_BYTES + cfg.message_bytes
    capacity = cfg.speeds().sum()
    total = 0.0
    for stage in np.unique(streams["phase"]):
        now = streams["phase"] == stage
        sent = np.bincount(streams["src"][now], weights=frame_bytes[now], minlength=cfg.nodes)
        got = np.bincount(streams["dst"][now], weights=frame_bytes[now], minlength=cfg.nodes)
        total += float(max(sent.max(), got.max())) / capacity
    return total


def _trunk(cfg: SimConfig, policy: str, frames: dict[str, np.ndarray], ips: np.ndarray, macs: np.ndarray) -> dict:
    """LACP's fabric of the paper (Fig. 9 (b)): half the nodes on each of
    two switches joined by ``trunk_links`` links, the switch hashing the
    frames between the halves onto them with the policy's function (Fig. 19)."""
    half = frames["node"] * 2 // cfg.nodes != frames["peer"] * 2 // cfg.nodes
    node, peer = frames["node"][half], frames["peer"][half]
    value = lacp_hash(policy, macs[node], macs[peer], ips[node], ips[peer], frames["sport"][half], frames["dport"][half])
    load = np.bincount(value % cfg.trunk_links, weights=frames["bytes"][half], minlength=cfg.trunk_links)
    return {"links_used": int(np.count_nonzero(load)), "links": cfg.trunk_links,
            "max_over_mean": round(float(load.max() / load.mean()), 3) if load.sum() else 1.0}


def simulate(cfg: SimConfig, shape: str, policy: str) -> dict:
    """Simulate ``policy`` on ``shape`` (module docstring; docs/planes.md,
    "Simulator"). The traffic depends only on the configuration and its
    seed, so every policy sees the same streams, ports and times.

    Returns ``tx_balance`` and ``rx_balance`` (max/mean bytes per port of
    the worst busy node, sending and receiving; 1.0 is perfect),
    ``tx_shares``/``rx_shares`` (that node's share of bytes per port),
    ``out_of_order`` (data packets delivered after a later-sent packet of
    their stream) and ``out_of_order_pct``, ``time_over_ideal`` (when the
    last packet is delivered, over the shape's shortest time at the nodes'
    total port speed), ``streams``, ``packets``, ``aged_out`` (pmcme:
    Port_Info entries overwritten while their stream still sent) and, for
    the LACP policies, ``trunk`` (Fig. 19)."""
    if shape not in SHAPES:
        raise ValueError("shape: one of %s, not %r" % (", ".join(SHAPES), shape))
    if policy not in POLICIES:
        raise ValueError("policy: one of %s, not %r" % (", ".join(POLICIES), policy))
    rng = np.random.default_rng(cfg.seed)
    ips, macs = _addresses(cfg, rng)
    streams = _streams(cfg, shape, rng)
    frames = _frames(cfg, streams, rng)
    tx, rx, aged = _ports(cfg, policy, frames, ips, macs)
    speeds = cfg.speeds()
    at_switch = _queue(frames["node"] * cfg.ports + tx, frames["time"], frames["bytes"] / speeds[tx])
    if rx is None:
        rx = _learned_rx(cfg, frames, tx, at_switch)
    arrival = _queue(frames["peer"] * cfg.ports + rx, at_switch, frames["bytes"] / speeds[rx])
    shape_of = (cfg.nodes, cfg.ports)
    sent = np.bincount(frames["node"] * cfg.ports + tx, weights=frames["bytes"], minlength=cfg.nodes * cfg.ports)
    got = np.bincount(frames["peer"] * cfg.ports + rx, weights=frames["bytes"], minlength=cfg.nodes * cfg.ports)
    tx_balance, tx_shares = _balance(sent.reshape(shape_of))
    rx_balance, rx_shares = _balance(got.reshape(shape_of))
    data = frames["seq"] >= 0
    late = _out_of_order(cfg, frames, rx, arrival)
    result = {"shape": shape, "policy": policy, "streams": int(len(streams["src"])), "packets": int(data.sum()),
              "tx_balance": round(tx_balance, 3), "rx_balance": round(rx_balance, 3),
              "tx_shares": tx_shares, "rx_shares": rx_shares, "out_of_order": late,
              "out_of_order_pct": round(100.0 * late / max(1, int(data.sum())), 3),
              "time_over_ideal": round(float(arrival[data].max() - frames["time"].min()) / _ideal_time(cfg, streams), 3),
              "aged_out": aged}
    if policy in LACP:
        result["trunk"] = _trunk(cfg, policy, frames, ips, macs)
    return result


def configure(**fields: Any) -> SimConfig:
    """A SimConfig with ``fields`` changed (port_mbps may be one number)."""
    if "port_mbps" in fields and not isinstance(fields["port_mbps"], (list, tuple)):
        fields["port_mbps"] = (fields["port_mbps"],)
    elif "port_mbps" in fields:
        fields["port_mbps"] = tuple(fields["port_mbps"])
    return replace(SimConfig(), **fields)
