# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Many-to-many iperf3 on a planes lab (lab_up.yml -e design=PLAN) and what it did to
the ports and to TCP's reordering counters.

    python3 planes_traffic.py PLAN_JSON NETNS_PREFIX SECONDS STREAMS_PER_PEER

(node N runs in namespace NETNS_PREFIX + N: ``ec-<lab>-`` in the lab.)

Every node runs one iperf3 client towards every other node's primary
address (STREAMS_PER_PEER parallel streams each, from its own primary
address) and one iperf3 server per peer.

The counters are read over a window of SECONDS that opens once every
client's streams are connected and closes while they all still run (the
clients run MARGIN_S longer). Under load the clients start up to a second
apart; a window from the first start to the last end would count a late
client's ports short and call that imbalance. Each node's ports are read in
one ``ip -s -j link`` call, so they share one instant.

Prints one JSON object: per node and port the bytes sent and received in
the window, per node the imbalance of its ports (largest deviation from the
ports' mean over the mean, sent and received), the TcpExt/Tcp counters of
nstat that count reordering and retransmission (deltas summed over the
nodes), the goodput iperf3 reports (receiver side, summed over each
client's whole run), the window's length and how long the clients took to
connect.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

COUNTERS = ("TcpExtTCPOFOQueue", "TcpExtTCPSACKReorder", "TcpExtTCPTSReorder", "TcpExtTCPRenoReorder",
            "TcpExtTCPDSACKRecv", "TcpExtTCPFastRetrans", "TcpRetransSegs")
BASE_PORT = 5300
MARGIN_S = 4  # the clients run this much longer than the window (their start spread plus two snapshots)
CONNECT_TIMEOUT_S = 30


def _ns(prefix: str, node: str) -> list[str]:
    return ["ip", "netns", "exec", prefix + node]


def primary(plan: dict[str, Any], node: str) -> str:
    """The node's primary address (the planes plan's node_planes block)."""
    return str(plan["node_planes"][node]["primary"]["address"])


def _json(argv: list[str]) -> Any:
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def port_counters(links: list[dict[str, Any]], names: list[str]) -> dict[str, dict[str, int]]:
    """Bytes sent and received of the named ports, from one ``ip -s -j link show``."""
    by_name = {link["ifname"]: link for link in links}
    missing = [name for name in names if name not in by_name]
    if missing:
        raise SystemExit("planes_traffic: no port %s in the node's namespace" % ", ".join(missing))
    return {name: {"tx": by_name[name]["stats64"]["tx"]["bytes"], "rx": by_name[name]["stats64"]["rx"]["bytes"]}
            for name in names}


def snapshot(plan: dict[str, Any], lab: str) -> dict[str, Any]:
    """Per node: the ports' byte counters (one read) and the nstat counters."""
    found = {}
    for node, entry in plan["nodes"].items():
        links = _json(_ns(lab, node) + ["ip", "-s", "-j", "link", "show"])
        kernel = _json(_ns(lab, node) + ["nstat", "-asz", "-j"])["kernel"]
        found[node] = {"ports": port_counters(links, [port["name"] for port in entry["interfaces"]]),
                       "nstat": {name: kernel.get(name, 0) for name in COUNTERS}}
    return found


def connected_streams(ss_output: str, ports: set[int]) -> int:
    """Established TCP connections (``ss -tnH state established``) whose peer
    port is one of ``ports``: on a client, its control and data streams."""
    count = 0
    for line in ss_output.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        peer_port = fields[3].rpartition(":")[2]
        if peer_port.isdigit() and int(peer_port) in ports:
            count += 1
    return count


def _imbalance(values: list[int]) -> float:
    mean = sum(values) / len(values)
    return max(abs(value - mean) for value in values) / mean if mean else 0.0


def _wait_listening(lab: str, names: list[str]) -> None:
    for _attempt in range(100):
        ready = 0
        for node in names:
            out = subprocess.run(_ns(lab, node) + ["ss", "-ltnH"], capture_output=True, text=True, check=True).stdout
            ready += sum(1 for peer in names if peer != node and ":%d " % (BASE_PORT + names.index(peer)) in out)
        if ready == len(names) * (len(names) - 1):
            return
        time.sleep(0.1)
    raise SystemExit("planes_traffic: the iperf3 servers did not start")


def _short_of_streams(lab: str, names: list[str], streams: int) -> list[str]:
    """The nodes whose clients do not all have their streams connected."""
    ports = {BASE_PORT + index for index in range(len(names))}
    wanted = (len(names) - 1) * (streams + 1)  # per client: a control connection and its streams
    short = []
    for node in names:
        out = subprocess.run(_ns(lab, node) + ["ss", "-tnH", "state", "established"],
                             capture_output=True, text=True, check=True).stdout
        found = connected_streams(out, ports)
        if found < wanted:
            short.append("%s (%d of %d)" % (node, found, wanted))
    return short


def _ended_early(clients: list[subprocess.Popen]) -> None:
    for client in clients:
        if client.poll() is not None:
            out, err = client.communicate()
            raise SystemExit("planes_traffic: an iperf3 client ended before the window closed (exit %s): %s %s"
                             % (client.returncode, out[-500:], err[-500:]))


def _wait_connected(lab: str, names: list[str], streams: int, clients: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    while True:
        _ended_early(clients)
        short = _short_of_streams(lab, names, streams)
        if not short:
            return
        if time.monotonic() > deadline:
            raise SystemExit("planes_traffic: streams not connected after %d s: %s" % (CONNECT_TIMEOUT_S, ", ".join(short)))
        time.sleep(0.05)


def traffic(plan: dict[str, Any], lab: str, seconds: int, streams: int) -> dict[str, Any]:
    """Run the many-to-many test; returns the goodput (bit/s, receivers' sum), the
    snapshots opening and closing the window, the window's and the connecting's seconds."""
    names = sorted(plan["nodes"])
    primary_of = {node: primary(plan, node) for node in names}
    servers = [subprocess.Popen(_ns(lab, node) + ["iperf3", "-s", "-1", "-B", primary_of[node], "-p", str(BASE_PORT + names.index(peer))],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for node in names for peer in names if peer != node]
    _wait_listening(lab, names)
    started = time.monotonic()
    clients = [subprocess.Popen(_ns(lab, node) + ["iperf3", "-c", primary_of[peer], "-B", primary_of[node], "-p",
                                                  str(BASE_PORT + names.index(node)), "-P", str(streams),
                                                  "-t", str(seconds + MARGIN_S), "-J"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for node in names for peer in names if peer != node]
    _wait_connected(lab, names, streams, clients)
    opened = time.monotonic()
    before = snapshot(plan, lab)
    time.sleep(max(0.0, seconds - (time.monotonic() - opened)))
    after = snapshot(plan, lab)
    closed = time.monotonic()
    _ended_early(clients)  # a client gone before the last read: the window was not all running
    goodput = 0.0
    for client in clients:
        out, err = client.communicate(timeout=seconds + MARGIN_S + 60)
        if client.returncode != 0:
            raise SystemExit("planes_traffic: iperf3 client failed: %s %s" % (out[-500:], err[-500:]))
        goodput += json.loads(out)["end"]["sum_received"]["bits_per_second"]
    for server in servers:
        server.wait(timeout=30)
    return {"goodput": goodput, "before": before, "after": after,
            "window_s": round(closed - opened, 2), "connect_s": round(opened - started, 2)}


def report(plan: dict[str, Any], before: dict[str, Any], after: dict[str, Any], goodput: float, seconds: int) -> dict[str, Any]:
    """Deltas, imbalance per node, summed counters."""
    nodes = {}
    totals = {name: 0 for name in COUNTERS}
    for node in sorted(plan["nodes"]):
        ports = {port: {way: after[node]["ports"][port][way] - before[node]["ports"][port][way] for way in ("tx", "rx")}
                 for port in before[node]["ports"]}
        nodes[node] = {"ports": ports,
                       "tx_imbalance": round(_imbalance([item["tx"] for item in ports.values()]), 4),
                       "rx_imbalance": round(_imbalance([item["rx"] for item in ports.values()]), 4)}
        for name in COUNTERS:
            totals[name] += after[node]["nstat"][name] - before[node]["nstat"][name]
    return {"nodes": nodes, "counters": totals, "goodput_mbit_s": round(goodput / 1e6, 1), "seconds": seconds,
            "max_tx_imbalance": max(item["tx_imbalance"] for item in nodes.values()),
            "max_rx_imbalance": max(item["rx_imbalance"] for item in nodes.values())}


def main(argv: list[str]) -> None:
    """The command line (see the module docstring)."""
    if len(argv) != 4:
        raise SystemExit(__doc__)
    with open(argv[0]) as handle:
        plan = json.load(handle)
    lab, seconds, streams = argv[1], int(argv[2]), int(argv[3])
    run = traffic(plan, lab, seconds, streams)
    result = report(plan, run["before"], run["after"], run["goodput"], seconds)
    result["streams_per_node"] = streams * (len(plan["nodes"]) - 1)
    result["window_s"] = run["window_s"]
    result["connect_s"] = run["connect_s"]
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
