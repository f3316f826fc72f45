# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A minimal plane-fabric lab for the planes4x4 scenario and the node_planes
lab tests: N nodes x P planes on this machine (root).

    python3 planes_lab.py up LAB NODES PLANES [RATE_MBIT]   build (an existing lab is rebuilt); prints
                                                            {"plan": ..., "inventory": ...} (JSON)
    python3 planes_lab.py down LAB                          remove every namespace of LAB
    python3 planes_lab.py plan LAB NODES PLANES             print the lab's plan (JSON)

Each node is a network namespace ``<LAB>-n<i>`` with ports ``e0``..``e<P-1>``;
each plane is a namespace ``<LAB>-s<p>`` holding one plain learning Linux
bridge ``br0``; port ``e<p>`` of every node is cabled (veth) to plane p's
bridge and nothing links the planes. IPv6 is off everywhere (no router
solicitations). With RATE_MBIT every node port is shaped (tc tbf, egress).

The plan (node network contract form): port p of node i has
10.97.<p>.<i+1>/24 and MAC 02:97:00:00:<i>:<p>; the node's primary address
is 10.97.255.<i+1>. This stands in for the planes plan until the lab is
built from it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def _run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise SystemExit("planes_lab: %s: %s" % (" ".join(argv), result.stderr.strip()))
    return result


def plan(lab: str, nodes: int, planes: int) -> dict[str, Any]:
    """The lab's plan: nodes (interfaces, primary) and switches."""
    entries = {}
    for i in range(nodes):
        interfaces = [{"name": "e%d" % p, "switch": "s%d" % p, "address": "10.97.%d.%d/24" % (p, i + 1),
                       "mac": "02:97:00:00:%02x:%02x" % (i, p)} for p in range(planes)]
        entries["n%d" % i] = {"interfaces": interfaces, "routes": [], "forwarding": False, "rp_filter": 2,
                              "primary": "10.97.255.%d" % (i + 1)}
    switches = {"s%d" % p: {"ports": max(nodes, 2), "attached": [["n%d" % i, "e%d" % p] for i in range(nodes)]}
                for p in range(planes)}
    return {"name": lab, "nodes": entries, "switches": switches}


def namespaces(lab: str) -> list[str]:
    """The lab's namespaces that exist now."""
    out = _run(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.split() and line.split()[0].startswith(lab + "-")]


def down(lab: str) -> None:
    """Remove the lab (its processes first)."""
    for name in namespaces(lab):
        pids = _run(["ip", "netns", "pids", name], check=False).stdout.split()
        for pid in pids:
            _run(["kill", "-9", pid], check=False)
        _run(["ip", "netns", "del", name])


def _namespace(name: str) -> None:
    _run(["ip", "netns", "add", name])
    for key in ("net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"):
        _run(["ip", "netns", "exec", name, "sysctl", "-q", "-w", key])
    _run(["ip", "-n", name, "link", "set", "lo", "up"])


def up(lab: str, nodes: int, planes: int, rate: int | None) -> dict[str, Any]:
    """Build the lab from scratch; returns its plan."""
    if not lab.startswith("plx") or len(lab) > 10:
        raise SystemExit("planes_lab: lab names start with plx and have at most 10 characters")
    down(lab)
    layout = plan(lab, nodes, planes)
    for p in range(planes):
        switch = "%s-s%d" % (lab, p)
        _namespace(switch)
        _run(["ip", "-n", switch, "link", "add", "br0", "type", "bridge"])
        _run(["ip", "-n", switch, "link", "set", "br0", "up"])
    for i in range(nodes):
        node = "%s-n%d" % (lab, i)
        _namespace(node)
        for port in layout["nodes"]["n%d" % i]["interfaces"]:
            p = int(port["name"][1:])
            switch = "%s-s%d" % (lab, p)
            _run(["ip", "link", "add", port["name"], "netns", node, "address", port["mac"], "type", "veth",
                  "peer", "name", "n%d" % i, "netns", switch])
            _run(["ip", "-n", switch, "link", "set", "n%d" % i, "master", "br0", "up"])
            _run(["ip", "-n", node, "link", "set", port["name"], "up"])
            if rate:
                _run(["ip", "netns", "exec", node, "tc", "qdisc", "replace", "dev", port["name"], "root", "tbf",
                      "rate", "%dmbit" % rate, "burst", "256kb", "latency", "50ms"])
    return layout


def inventory(lab: str, layout: dict[str, Any]) -> dict[str, Any]:
    """An Ansible inventory of the lab's nodes (group planes_nodes, each
    with its namespace as ethercluster_lab_netns, the plan as planes_plan)."""
    hosts = {node: {"ethercluster_lab_netns": "%s-%s" % (lab, node)} for node in layout["nodes"]}
    return {"planes_nodes": {"hosts": hosts, "vars": {"planes_plan": layout}}}


def main(argv: list[str]) -> None:
    """The command line (see the module docstring)."""
    if len(argv) >= 2 and argv[0] == "down":
        down(argv[1])
    elif len(argv) in (4, 5) and argv[0] == "up":
        layout = up(argv[1], int(argv[2]), int(argv[3]), int(argv[4]) if len(argv) == 5 else None)
        print(json.dumps({"plan": layout, "inventory": inventory(argv[1], layout)}))
    elif len(argv) == 4 and argv[0] == "plan":
        print(json.dumps(plan(argv[1], int(argv[2]), int(argv[3]))))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
