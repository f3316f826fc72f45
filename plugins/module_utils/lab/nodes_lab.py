# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host-routed lab: the fabric of a host-routed plan (the node network
contract's ``nodes`` and ``switches``, docs/nodes.md) built on this machine.

* every switch ``S`` of lab ``L`` is a plain learning L2 switch: a Linux
  bridge ``br0`` (STP off, no VLAN filtering) in its own namespace
  ``ec-L-S``, its ports the veths ``p1``, ``p2``, ... in the order of
  ``attached``;
* every node ``N`` is a namespace ``ec-L-N`` holding one veth per NIC the
  plan names, cabled to its switch port; the NICs are created down, with no
  address: the role ``node_network`` configures them (delegated to the lab
  machine, ``ip netns exec``);
* every port and NIC sends through a ``tc tbf`` at the lab's speed (the
  switch lab's link emulation), so throughput figures mean the same;
* IPv6 is off in every namespace before any veth exists; the nodes do not
  rate-limit ICMP errors (the verification counts hops by time-exceeded
  answers, many to the same peer at once).

Pure layout and plan functions plus :func:`nodes_lab_up`,
:func:`nodes_lab_down` (idempotent, a record written before anything is
created, like the switch lab) and the on-the-wire checks of
:func:`verify`. Standard library only: the ``lab`` and
``nodes_lab_verify`` modules carry this file to the target.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..nodes.linux_network import NodeNetworkError, address_owners, planned_paths
from ..platforms.ovs import tbf_parameters
from .plan import Command, KillNetnsProcesses, LabError, MakeDirs, Phase, RemoveTree, WriteFile, _lines
from .runner import netns_exists, rebuild_reasons, run_phases

NODES_LAB_SCHEMA = "ethercluster.routing/lab-nodes/v1"
RECORD_FILE = "lab.json"
INVENTORY_FILE = "inventory.yml"
BRIDGE = "br0"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")


def nodes_layout(design: Any, name: str, state_root: str = "/run/ethercluster-lab",
                 speed_mbps: int = 1000) -> dict[str, Any]:
    """The layout (plain data) of the lab that builds ``design`` (a plan
    with ``nodes`` and ``switches``). LabError naming the switch, node or
    NIC at fault: a NIC cabled twice or never, a node or switch unknown,
    names that clash."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise LabError("name: a lab name is 1-32 letters, digits, '_' or '-', got %r" % (name,))
    if not isinstance(design, dict) or not isinstance(design.get("nodes"), dict) \
            or not isinstance(design.get("switches"), dict):
        raise LabError("design: needs the plan's nodes and switches mappings (docs/nodes.md)")
    if isinstance(speed_mbps, bool) or not isinstance(speed_mbps, int) or speed_mbps <= 0:
        raise LabError("speed_mbps: a whole number of Mbit/s > 0, got %r" % (speed_mbps,))
    lab_dir = "%s/%s" % (state_root.rstrip("/"), name)
    clash = sorted(set(design["nodes"]) & set(design["switches"]))
    if clash:
        raise LabError("design: %s names both a node and a switch" % ", ".join(clash))
    nics = _node_nics(design["nodes"])
    switches: dict[str, Any] = {}
    for sw_name, switch in sorted(design["switches"].items()):
        _check_name(sw_name, "switch")
        switches[sw_name] = {"netns": "ec-%s-%s" % (name, sw_name), "ports": {}}
        for index, pair in enumerate(switch.get("attached") or [], start=1):
            node, nic = _attached(sw_name, pair, nics)
            if nics[node][nic] is not None:
                raise LabError("switch %s: %s %s is already cabled to switch %s" % (sw_name, node, nic, nics[node][nic]))
            nics[node][nic] = sw_name
            switches[sw_name]["ports"]["p%d" % index] = {"node": node, "nic": nic}
    nodes = {}
    for node, found in sorted(nics.items()):
        loose = [nic for nic, sw_name in found.items() if sw_name is None]
        if loose:
            raise LabError("node %s: NIC %s is in no switch's attached list" % (node, ", ".join(loose)))
        nodes[node] = {"netns": "ec-%s-%s" % (name, node), "dir": "%s/%s" % (lab_dir, node),
                       "nics": [{"name": nic, "switch": sw_name} for nic, sw_name in found.items()]}
    return {"schema": NODES_LAB_SCHEMA, "lab": name, "state_root": state_root.rstrip("/"), "dir": lab_dir,
            "speed_mbps": speed_mbps, "switches": switches, "nodes": nodes}


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise LabError("design: %s name %r: 1-32 letters, digits, '_' or '-'" % (what, name))


def _node_nics(nodes: dict[str, Any]) -> dict[str, dict[str, str | None]]:
    """Per node, its NICs (in the plan's order) -> the switch found so far."""
    nics: dict[str, dict[str, str | None]] = {}
    for node, entry in nodes.items():
        _check_name(node, "node")
        interfaces = entry.get("interfaces") if isinstance(entry, dict) else None
        if not isinstance(interfaces, list) or not interfaces:
            raise LabError("node %s: needs a list of interfaces" % node)
        nics[node] = {}
        for item in interfaces:
            nic = item.get("name") if isinstance(item, dict) else None
            if not isinstance(nic, str) or not _IFNAME_RE.match(nic) or nic in nics[node] or nic == "lo":
                raise LabError("node %s: interface name %r is not usable (1-15 characters, unique, not lo)" % (node, nic))
            nics[node][nic] = None
    return nics


def _attached(sw_name: str, pair: Any, nics: dict[str, dict[str, str | None]]) -> tuple[str, str]:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise LabError("switch %s: attached entries are [node, nic] pairs, got %r" % (sw_name, pair))
    node, nic = pair
    if node not in nics or nic not in nics[node]:
        raise LabError("switch %s: attached %s %s is not a NIC of a node of the plan" % (sw_name, node, nic))
    return node, nic


def all_netns(layout: dict[str, Any]) -> list[str]:
    """Every namespace of the lab: switches, then nodes."""
    return [sw["netns"] for sw in layout["switches"].values()] + [node["netns"] for node in layout["nodes"].values()]


def up_phases(layout: dict[str, Any]) -> list[Phase]:
    """The phases that build the lab of ``layout`` from nothing."""
    tbf = " ".join(tbf_parameters(layout["speed_mbps"]))
    node_ns = {node["netns"] for node in layout["nodes"].values()}
    cables = []
    for sw in layout["switches"].values():
        for dev, port in sw["ports"].items():
            cables.append("link add name %s netns %s type veth peer name %s netns %s"
                          % (dev, sw["netns"], port["nic"], layout["nodes"][port["node"]]["netns"]))
    switch_jobs = []
    for sw in layout["switches"].values():
        lines = ["link set lo up", "link add %s type bridge stp_state 0 mcast_snooping 0" % BRIDGE]
        lines += ["link set %s master %s" % (dev, BRIDGE) for dev in sw["ports"]]
        lines += ["link set %s up" % dev for dev in list(sw["ports"]) + [BRIDGE]]
        switch_jobs.append([Command(("ip", "-n", sw["netns"], "-batch", "-"), input=_lines(lines)),
                            Command(("tc", "-n", sw["netns"], "-batch", "-"), input=_lines(
                                "qdisc replace dev %s root tbf %s" % (dev, tbf) for dev in sw["ports"]))])
    node_jobs = [[Command(("ip", "-n", node["netns"], "link", "set", "lo", "up")),
                  Command(("tc", "-n", node["netns"], "-batch", "-"), input=_lines(
                      "qdisc replace dev %s root tbf %s" % (nic["name"], tbf) for nic in node["nics"]))]
                 for node in layout["nodes"].values()]
    return [
        Phase("files", [[MakeDirs(layout["state_root"], 0o755), MakeDirs(layout["dir"], 0o700)]
                        + [MakeDirs(node["dir"], 0o700) for node in layout["nodes"].values()]
                        + [WriteFile("%s/%s" % (layout["dir"], INVENTORY_FILE), inventory_yaml(layout), 0o600)]]),
        Phase("namespaces", [[Command(("ip", "-batch", "-"), input=_lines("netns add %s" % ns for ns in all_netns(layout)))]]),
        # IPv6 off before any veth exists; on the nodes, ICMP errors are not rate limited (the per-peer
        # limit would swallow the time-exceeded answers the verification counts hops with)
        Phase("ipv6-off", [[Command(("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                                     "net.ipv6.conf.default.disable_ipv6=1")
                                    + (("net.ipv4.icmp_ratelimit=0",) if ns in node_ns else ()), netns=ns)]
                           for ns in all_netns(layout)]),
        Phase("cables", [[Command(("ip", "-batch", "-"), input=_lines(cables))]]),
        Phase("interfaces", switch_jobs + node_jobs),
    ]


def down_phases(layout: dict[str, Any]) -> list[Phase]:
    """The phases that remove whatever :func:`up_phases` created."""
    netns = tuple(all_netns(layout))
    return [
        Phase("stop-processes", [[KillNetnsProcesses(netns)]]),
        Phase("namespaces", [[Command(("ip", "-force", "-batch", "-"), check=False,
                                      input=_lines("netns delete %s" % ns for ns in netns))]]),
        Phase("files", [[RemoveTree(layout["dir"])]]),
    ]


def inventory_yaml(layout: dict[str, Any]) -> str:
    """The lab's inventory: group ``nodes``, each with its namespace and
    directory (the role ``node_network`` runs them from the lab machine)."""
    lines = ["# Ansible inventory of the ethercluster.routing host-routed lab %r, written by lab_up." % layout["lab"],
             "---", "all:", "  vars:", "    ethercluster_lab: %s" % json.dumps(layout["lab"]),
             "    ethercluster_lab_dir: %s" % json.dumps(layout["dir"]), "  children:", "    nodes:", "      hosts:"]
    for name, node in layout["nodes"].items():
        lines += ["        %s:" % name, "          ethercluster_lab_netns: %s" % json.dumps(node["netns"]),
                  "          ethercluster_lab_node_dir: %s" % json.dumps(node["dir"])]
    return "\n".join(lines) + "\n"


def layout_hash(layout: dict[str, Any]) -> str:
    """Fingerprint of the layout and of every step that builds it."""
    text = json.dumps(layout, sort_keys=True) + repr(up_phases(layout))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_record(state_root: str, name: str) -> dict[str, Any] | None:
    """The record of host-routed lab ``name``; None when there is no lab of
    that name or it is a switch lab (not this module's)."""
    try:
        with open(os.path.join(state_root, name, RECORD_FILE), "r", encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("schema") != NODES_LAB_SCHEMA:
        return None
    return record


def _write_record(layout: dict[str, Any], state: str, extra: dict[str, Any] | None = None) -> None:
    record = {"schema": NODES_LAB_SCHEMA, "state": state, "layout_hash": layout_hash(layout), "layout": layout}
    record.update(extra or {})
    path = os.path.join(layout["dir"], RECORD_FILE)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def health(layout: dict[str, Any]) -> list[str]:
    """What is missing from the lab of ``layout`` ([] when it is whole)."""
    return ["namespace %s is missing" % ns for ns in all_netns(layout) if not netns_exists(ns)]


def summary(layout: dict[str, Any]) -> dict[str, Any]:
    """What the lab is made of, for a task's result."""
    return {"lab": layout["lab"], "dir": layout["dir"], "inventory": "%s/%s" % (layout["dir"], INVENTORY_FILE),
            "switches": {name: {"netns": sw["netns"], "ports": len(sw["ports"])} for name, sw in layout["switches"].items()},
            "hosts": {name: {"netns": node["netns"], "nics": [nic["name"] for nic in node["nics"]]}
                      for name, node in layout["nodes"].items()},
            "links": sum(len(sw["ports"]) for sw in layout["switches"].values())}


def nodes_lab_up(layout: dict[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """Make the host-routed lab of ``layout`` exist: nothing is done when it
    is up with the same layout; another layout or a broken lab is rebuilt."""
    record = read_record(layout["state_root"], layout["lab"])
    exists = record is not None or os.path.exists(os.path.join(layout["dir"], RECORD_FILE))
    reasons: list[str] = []
    if record is None and exists:
        raise LabError("lab %s exists and is a switch lab: remove it first (lab_down.yml -e lab_name=%s)"
                       % (layout["lab"], layout["lab"]))
    if record is not None:
        reasons = rebuild_reasons(record, layout_hash(layout), health, "the plan")
        if not reasons:
            return {"changed": False, "outcome": "unchanged", "reasons": [], "timings": {}, "summary": summary(layout)}
    outcome = "rebuilt" if record is not None else "created"
    if check_mode:
        return {"changed": True, "outcome": outcome, "reasons": reasons, "timings": {}, "summary": summary(layout)}
    timings: dict[str, float] = {}
    started = time.monotonic()
    if record is not None:
        run_phases(down_phases(record["layout"]))
    taken = [ns for ns in all_netns(layout) if netns_exists(ns)]
    if taken:
        raise LabError("network namespace %s already exists and is not part of lab %s" % (taken[0], layout["lab"]))
    os.makedirs(layout["dir"], mode=0o700, exist_ok=True)
    _write_record(layout, "building")
    try:
        run_phases(up_phases(layout), timings)
    except (LabError, OSError) as exc:
        run_phases(down_phases(layout))
        raise LabError("%s (the half-built lab was removed)" % exc)
    timings["total"] = round(time.monotonic() - started, 3)
    _write_record(layout, "ready", {"timings": timings})
    return {"changed": True, "outcome": outcome, "reasons": reasons, "timings": timings, "summary": summary(layout)}


def nodes_lab_down(record: dict[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """Remove the host-routed lab its ``record`` names."""
    if check_mode:
        return {"changed": True, "outcome": "removed", "timings": {}}
    layout = record["layout"]
    timings: dict[str, float] = {}
    run_phases(down_phases(layout)[:-1], timings)
    left = [ns for ns in all_netns(layout) if netns_exists(ns)]
    if left:
        raise LabError("lab %s: could not remove %s" % (layout["lab"], ", ".join(left[:10])))
    shutil.rmtree(layout["dir"], ignore_errors=True)
    return {"changed": True, "outcome": "removed", "timings": timings}


# ------------------------------------------------------------- verification
_REPLY_RE = re.compile(r"bytes from [0-9.]+: icmp_seq=\d+ ttl=(\d+)")
_EXCEEDED_RE = re.compile(r"From ([0-9.]+)(?: icmp_seq=\d+)? Time to live exceeded")


def _source_addresses(entry: dict[str, Any], dst: str) -> list[str]:
    """The addresses ``entry``'s node may send from towards ``dst``: those of
    the NICs its connected subnet or route leaves by (several with a
    multipath route: the kernel picks the source with the next hop)."""
    target = ipaddress.IPv4Address(dst)
    best: tuple[int, list[str]] | None = None
    by_name = {item["name"]: item for item in entry["interfaces"]}
    for item in entry["interfaces"]:
        net = ipaddress.IPv4Interface(item["address"]).network
        if target in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, [item["name"]])
    for route in entry.get("routes", []):
        net = ipaddress.IPv4Network(route["to"])
        if target in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, [hop["dev"] for hop in route.get("nexthops") or [route]])
    if best is None:
        raise NodeNetworkError("no route to %s" % dst)
    return sorted({str(ipaddress.IPv4Interface(by_name[dev]["address"]).ip) for dev in best[1]})


def probes(nodes: dict[str, Any]) -> list[dict[str, Any]]:
    """Every check of :func:`verify`: per node and address of another node,
    a ping whose TTL allows exactly the planned forwards (and the reply's
    TTL tells the forwards of the way back), and per planned forward a ping
    that must die at that forwarding node (time exceeded)."""
    owners = address_owners(nodes)
    found = []
    cache: dict[str, Any] = {}
    for src in sorted(nodes):
        for dst, owner in sorted(owners.items()):
            if owner == src:
                continue
            paths = planned_paths(nodes, src, dst, cache=cache)
            back = [path for source in _source_addresses(nodes[src], dst)
                    for path in planned_paths(nodes, owner, source, cache=cache)]
            # multipath: any of the paths may be taken, so the longest bounds the TTL and the
            # hops are checked where every path still forwards
            found.append({"src": src, "dst": dst, "owner": owner, "ttl": max(len(path) for path in paths) + 1,
                          "expect": "reply", "back": sorted({len(path) for path in back}),
                          "forwarders": sorted({node for path in paths for node in path})})
            for hop in range(1, min(len(path) for path in paths) + 1):
                found.append({"src": src, "dst": dst, "owner": owner, "ttl": hop, "expect": "exceeded",
                              "at": sorted({path[hop - 1] for path in paths})})
    return found


def _probe(layout: dict[str, Any], owners: dict[str, str], probe: dict[str, Any]) -> str | None:
    """Run one probe; None when it behaved as planned, else what went wrong."""
    argv = ["ip", "netns", "exec", layout["nodes"][probe["src"]]["netns"], "ping", "-n", "-c", "1", "-W", "2",
            "-t", str(probe["ttl"]), probe["dst"]]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=15, check=False)
    text = result.stdout + result.stderr
    where = "%s -> %s (%s, ttl %d)" % (probe["src"], probe["dst"], probe["owner"], probe["ttl"])
    if probe["expect"] == "reply":
        match = _REPLY_RE.search(text)
        if match is None:
            return "%s: no reply within the planned %d forwards: %s" % (where, probe["ttl"] - 1, " ".join(text.split())[-160:])
        back = 64 - int(match.group(1))
        if back not in probe["back"]:
            return "%s: the reply was forwarded %d times, planned %s" % (where, back, probe["back"])
        return None
    match = _EXCEEDED_RE.search(text)
    if match is None:
        return "%s: no time-exceeded answer from hop %d (planned %s): %s" % (
            where, probe["ttl"], "/".join(probe["at"]), " ".join(text.split())[-160:])
    node = owners.get(match.group(1))
    if node not in probe["at"]:
        return "%s: hop %d is %s (%s), planned %s" % (where, probe["ttl"], match.group(1), node, "/".join(probe["at"]))
    return None


def verify(layout: dict[str, Any], nodes: dict[str, Any], iperf_seconds: float = 3.0,
           workers: int = 16) -> dict[str, Any]:
    """Check the configured lab against the plan ``nodes``: every node
    reaches every other node's every address with at most the planned
    forwards (there and back), each forward happens at the planned node;
    then (``iperf_seconds`` > 0) every node sends to the node half the list
    away at once with iperf3 and the throughput is recorded."""
    owners = address_owners(nodes)
    unknown = sorted(set(nodes) - set(layout["nodes"]))
    if unknown:
        raise LabError("nodes %s of the plan are not in lab %s" % (", ".join(unknown), layout["lab"]))
    try:
        checks = probes(nodes)
    except NodeNetworkError as exc:
        raise LabError("the plan's routes: %s" % exc)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(lambda probe: _probe(layout, owners, probe), checks))
    failures = [outcome for outcome in outcomes if outcome is not None]
    pings = [probe for probe in checks if probe["expect"] == "reply"]
    forwards = [probe["ttl"] - 1 for probe in pings]
    result: dict[str, Any] = {
        "pairs": len({(probe["src"], probe["owner"]) for probe in pings}), "pings": len(pings),
        "hop_checks": len(checks) - len(pings), "max_forwards": max(forwards, default=0),
        "forward_histogram": {str(n): forwards.count(n) for n in sorted(set(forwards))},
        "failures": failures, "probe_seconds": round(time.monotonic() - started, 2)}
    iperf: dict[str, Any] = {}
    if iperf_seconds > 0:
        iperf = result["iperf3"] = many_to_many(layout, nodes, iperf_seconds)
    result["passed"] = not failures and not iperf.get("errors")
    return result


def many_to_many(layout: dict[str, Any], nodes: dict[str, Any], seconds: float) -> dict[str, Any]:
    """iperf3 from every node to the node half the (sorted) list away, all at
    once, for ``seconds``: per pair and in total (Mbit/s received), the
    planned forwards of each pair. Figures, not pass/fail (the lab shares
    the machine's cores)."""
    names = sorted(nodes)
    pairs = [(src, names[(index + len(names) // 2) % len(names)]) for index, src in enumerate(names)]
    pairs = [(src, dst) for src, dst in pairs if src != dst]
    servers = [subprocess.Popen(["ip", "netns", "exec", layout["nodes"][dst]["netns"], "iperf3", "-s", "-1", "-p", "5201"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _src, dst in pairs]
    time.sleep(0.5)
    clients = []
    for src, dst in pairs:
        address = str(ipaddress.IPv4Interface(nodes[dst]["interfaces"][0]["address"]).ip)
        clients.append((src, dst, address, subprocess.Popen(
            ["ip", "netns", "exec", layout["nodes"][src]["netns"], "iperf3", "-c", address, "-p", "5201",
             "-t", "%g" % seconds, "-J"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    per_pair, errors = [], []
    for src, dst, address, client in clients:
        out, err = client.communicate(timeout=seconds + 30)
        try:
            mbps = json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e6
        except (ValueError, KeyError, TypeError):
            errors.append("%s -> %s (%s): %s" % (src, dst, address, " ".join((err or out).split())[-200:]))
            continue
        per_pair.append({"src": src, "dst": dst, "mbps": round(mbps, 1),
                         "forwards": len(planned_paths(nodes, src, address)[0])})
    for server in servers:
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    rates = [pair["mbps"] for pair in per_pair]
    return {"seconds": seconds, "pairs": per_pair, "errors": errors, "total_mbps": round(sum(rates), 1),
            "min_mbps": min(rates, default=0.0), "max_mbps": max(rates, default=0.0)}
