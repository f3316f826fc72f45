# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Many-to-many iperf3 on a planes lab (lab_up.yml -e design=PLAN) and what it did to
the ports and to TCP's reordering counters.

    python3 planes_traffic.py PLAN_JSON NETNS_PREFIX SECONDS STREAMS_PER_PEER

(node N runs in namespace NETNS_PREFIX + N: ``ec-<lab>-`` in the lab.)

Every node runs one iperf3 client towards every other node's primary
address (STREAMS_PER_PEER parallel streams each, from its own primary
address) and one iperf3 server per peer. Prints one JSON object: per node
and port the bytes sent and received (``ip -s -j link``), per node the
imbalance of its ports (largest deviation from the ports' mean over the
mean, sent and received), the TcpExt/Tcp counters of nstat that count
reordering and retransmission (deltas summed over the nodes), and the
goodput iperf3 reports (receiver side, summed).
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


def _ns(prefix: str, node: str) -> list[str]:
    return ["ip", "netns", "exec", prefix + node]


def primary(plan: dict[str, Any], node: str) -> str:
    """The node's primary address (the planes plan's node_planes block)."""
    return str(plan["node_planes"][node]["primary"]["address"])


def _json(argv: list[str]) -> Any:
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def snapshot(plan: dict[str, Any], lab: str) -> dict[str, Any]:
    """Per node: the ports' byte counters and the nstat counters."""
    found = {}
    for node, entry in plan["nodes"].items():
        ports = {}
        for port in entry["interfaces"]:
            stats = _json(_ns(lab, node) + ["ip", "-s", "-j", "link", "show", port["name"]])[0]["stats64"]
            ports[port["name"]] = {"tx": stats["tx"]["bytes"], "rx": stats["rx"]["bytes"]}
        kernel = _json(_ns(lab, node) + ["nstat", "-asz", "-j"])["kernel"]
        found[node] = {"ports": ports, "nstat": {name: kernel.get(name, 0) for name in COUNTERS}}
    return found


def _imbalance(values: list[int]) -> float:
    mean = sum(values) / len(values)
    return max(abs(value - mean) for value in values) / mean if mean else 0.0


def _wait_listening(plan: dict[str, Any], lab: str, names: list[str]) -> None:
    for _attempt in range(100):
        ready = 0
        for node in names:
            out = subprocess.run(_ns(lab, node) + ["ss", "-ltnH"], capture_output=True, text=True, check=True).stdout
            ready += sum(1 for peer in names if peer != node and ":%d " % (BASE_PORT + names.index(peer)) in out)
        if ready == len(names) * (len(names) - 1):
            return
        time.sleep(0.1)
    raise SystemExit("planes_traffic: the iperf3 servers did not start")


def traffic(plan: dict[str, Any], lab: str, seconds: int, streams: int) -> float:
    """Run the many-to-many test; returns the goodput (bit/s, receivers' sum)."""
    names = sorted(plan["nodes"])
    primary_of = {node: primary(plan, node) for node in names}
    servers = [subprocess.Popen(_ns(lab, node) + ["iperf3", "-s", "-1", "-B", primary_of[node], "-p", str(BASE_PORT + names.index(peer))],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for node in names for peer in names if peer != node]
    _wait_listening(plan, lab, names)
    clients = [subprocess.Popen(_ns(lab, node) + ["iperf3", "-c", primary_of[peer], "-B", primary_of[node], "-p",
                                                  str(BASE_PORT + names.index(node)), "-P", str(streams), "-t", str(seconds), "-J"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for node in names for peer in names if peer != node]
    goodput = 0.0
    for client in clients:
        out, err = client.communicate(timeout=seconds + 60)
        if client.returncode != 0:
            raise SystemExit("planes_traffic: iperf3 client failed: %s %s" % (out[-500:], err[-500:]))
        goodput += json.loads(out)["end"]["sum_received"]["bits_per_second"]
    for server in servers:
        server.wait(timeout=30)
    return goodput


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
    before = snapshot(plan, lab)
    goodput = traffic(plan, lab, seconds, streams)
    result = report(plan, before, snapshot(plan, lab), goodput, seconds)
    result["streams_per_node"] = streams * (len(plan["nodes"]) - 1)
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
