# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pmcme mode's eBPF side: build, load, fill and attach the PMCME
program (roles/node_planes/files/pmcme.bpf.c) and take it away again.

Pure functions, standard library only. The program is built with clang,
loaded with ``bpftool prog loadall`` (both classifiers share one set of
maps, pinned under :func:`pin_dir`), attached with ``tc filter replace ...
bpf da object-pinned`` (egress of port 0, ingress of every port, tc
preference :data:`TC_PREF`) on a ``clsact`` qdisc. The configuration maps
are written with ``bpftool map update``; the live maps are read with
``bpftool -j map dump`` and only differing entries are written, so a
second run changes nothing. The tables of the paper stay readable:
``bpftool map dump pinned <pin dir>/maps/pmc_port_info`` (Table 1),
``.../pmc_reg_info`` (Reg_Info), ``.../pmc_mac_table`` (Table 2),
``.../pmc_stats`` (frames and bytes per port, streams registered).
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any

from .linux_network import change
from .planes_node import MAX_PORTS, PER_PORT, PlanesNodeError

PIN_ROOT = "/sys/fs/bpf/ethercluster_planes"
BPF_MOUNT = "/sys/fs/bpf"
TC_PREF = "49"
EGRESS = "pmcme_egress"
INGRESS = "pmcme_ingress"
CONFIG_MAPS = ("pmc_config", "pmc_ports", "pmc_mac_table")
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def pin_dir(node: str) -> str:
    """Where the node's programs (``prog/``) and maps (``maps/``) are pinned
    (``node``: the node's name, or its namespace in a lab, unique on the machine)."""
    if not NAME_RE.match(node):
        raise PlanesNodeError("node %r: the pin directory needs a name of letters, digits, '_', '.', '-'" % node)
    return "%s/%s" % (PIN_ROOT, node)


def _hex(data: bytes) -> str:
    """Bytes as bpftool's ``hex`` arguments (``02 00 ...``)."""
    return " ".join("%02x" % byte for byte in data)


def _mac(text: str) -> bytes:
    return bytes(int(part, 16) for part in text.split(":"))


def map_entries(view: dict[str, Any], links: dict[str, dict[str, Any]], threshold: int,
                per_port: int) -> dict[str, dict[str, str]]:
    """The configuration maps' entries (key hex -> value hex): pmc_config
    (ports, threshold, streams per port), pmc_ports (ifindex and MAC of each
    port), pmc_mac_table (Table 2: each peer's port 0 MAC and port X -> the
    peer's port X MAC)."""
    if not 1 <= per_port <= PER_PORT:
        raise PlanesNodeError("per_port %d: between 1 and %d (the program's Reg_Info size)" % (per_port, PER_PORT))
    if threshold < 0:
        raise PlanesNodeError("threshold %d: not negative" % threshold)
    ports = view["ports"]
    config = {_hex(struct.pack("<I", 0)): _hex(struct.pack("<IIII", len(ports), threshold, per_port, 0))}
    own = {}
    for index, port in enumerate(ports):
        mac = port["mac"] or links[port["name"]]["mac"]
        own[_hex(struct.pack("<I", index))] = _hex(struct.pack("<I6sH", links[port["name"]]["ifindex"], _mac(mac), 0))
    table = {}
    for peer in view["peers"]:
        macs = [port["mac"] for port in peer["ports"]]
        if None in macs:
            missing = peer["ports"][macs.index(None)]["name"]
            raise PlanesNodeError("plan: nodes.%s interface %s has no mac: pmcme needs every port's MAC (the MAC table)"
                                  % (peer["name"], missing))
        for index in range(1, len(macs)):
            key = _hex(struct.pack("<6sH", _mac(macs[0]), index))
            table[key] = _hex(struct.pack("<6sH", _mac(macs[index]), 0))
    return {"pmc_config": config, "pmc_ports": own, "pmc_mac_table": table}


def parse_map_dump(text: str) -> dict[str, str]:
    """``bpftool -j map dump`` of a (non per-CPU) map -> key hex -> value hex."""
    try:
        items = json.loads(text or "[]")
    except ValueError as exc:
        raise PlanesNodeError("bpftool map dump: unreadable output (%s)" % exc)
    found = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and "key" in item and "value" in item:
            key = " ".join("%02x" % int(byte, 16) for byte in item["key"])
            found[key] = " ".join("%02x" % int(byte, 16) for byte in item["value"])
    return found


def parse_filter(text: str) -> int | None:
    """The program id of our tc filter (preference TC_PREF) in ``tc -j filter show``."""
    try:
        items = json.loads(text or "[]")
    except ValueError as exc:
        raise PlanesNodeError("tc filter show: unreadable output (%s)" % exc)
    for item in items if isinstance(items, list) else []:
        prog = (item.get("options") or {}).get("prog") if isinstance(item, dict) else None
        if str(item.get("pref")) == TC_PREF and isinstance(prog, dict):
            return int(prog.get("id", 0)) or None
    return None


def has_clsact(text: str) -> bool:
    """Whether ``tc -j qdisc show dev X`` lists a clsact qdisc."""
    try:
        items = json.loads(text or "[]")
    except ValueError as exc:
        raise PlanesNodeError("tc qdisc show: unreadable output (%s)" % exc)
    return any(isinstance(item, dict) and item.get("kind") == "clsact" for item in items)


def attachments(view: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(device, direction, program) of every attachment: port 0's egress,
    every port's ingress."""
    found = [(view["ports"][0]["name"], "egress", EGRESS)]
    found += [(port["name"], "ingress", INGRESS) for port in view["ports"]]
    return found


def load_changes(live: dict[str, Any], pins: str, obj: str, compile_argv: list[str]) -> tuple[list[dict[str, Any]], bool]:
    """Mount, build and load when needed: (changes, whether the program is new)."""
    found = []
    if not live["mounted"]:
        found.append(change("bpf", "bpffs", "", BPF_MOUNT, ["mount", "-t", "bpf", "bpf", BPF_MOUNT]))
    fresh = live["source_changed"] or None in live["prog_ids"].values()
    if fresh:
        found.append(change("bpf", "object", live["built_sha"] or "", live["source_sha"], compile_argv))
        if live["pinned"]:
            found.append(change("bpf", "pins", pins, "", ["rm", "-rf", pins]))
        found.append(change("bpf", "pins", "", pins, ["mkdir", "-p", pins]))
        found.append(change("bpf", "programs", "", "%s/prog" % pins,
                            ["bpftool", "prog", "loadall", obj, "%s/prog" % pins, "type", "classifier",
                             "pinmaps", "%s/maps" % pins]))
    return found, fresh


def present_changes(view: dict[str, Any], live: dict[str, Any], entries: dict[str, dict[str, str]],
                    obj: str, compile_argv: list[str]) -> list[dict[str, Any]]:
    """Everything pmcme needs, given the live state (see :func:`absent_changes`
    for ``live``'s keys)."""
    pins = pin_dir(view["instance"])
    found, fresh = load_changes(live, pins, obj, compile_argv)
    for name in CONFIG_MAPS:
        have = {} if fresh else live["maps"].get(name, {})
        path = "%s/maps/%s" % (pins, name)
        for key, value in sorted(entries[name].items()):
            if have.get(key) != value:
                argv = ["bpftool", "map", "update", "pinned", path, "key", "hex"] + key.split() + ["value", "hex"] + value.split()
                found.append(change("bpf", "%s[%s]" % (name, key), have.get(key, ""), value, argv))
        for key in sorted(set(have) - set(entries[name])) if name == "pmc_mac_table" else []:
            argv = ["bpftool", "map", "delete", "pinned", path, "key", "hex"] + key.split()
            found.append(change("bpf", "%s[%s]" % (name, key), have[key], "", argv))
    for dev in [port["name"] for port in view["ports"]]:
        if dev not in live["clsact"]:
            found.append(change("bpf", dev + " clsact", "", "clsact", ["tc", "qdisc", "add", "dev", dev, "clsact"]))
    for dev, way, prog in attachments(view):
        attached = live["attached"].get("%s %s" % (dev, way))
        if fresh or attached is None or attached != live["prog_ids"].get(prog):
            argv = ["tc", "filter", "replace", "dev", dev, way, "pref", TC_PREF, "handle", "1", "bpf", "da",
                    "object-pinned", "%s/prog/%s" % (pins, prog)]
            found.append(change("bpf", "%s %s" % (dev, way), str(attached or ""), prog, argv))
    return found


def absent_changes(view: dict[str, Any], live: dict[str, Any], created_clsact: list[str]) -> list[dict[str, Any]]:
    """Detach, remove the clsact qdiscs the role added and the pins.

    ``live``: mounted, pinned (pin directory exists), prog_ids (program ->
    pinned id or None), attached ("dev way" -> program id or None), clsact
    (devices with one), maps (name -> entries), source_sha, built_sha,
    source_changed."""
    found = []
    for dev, way, prog in attachments(view):
        attached = live["attached"].get("%s %s" % (dev, way))
        if attached is not None:
            found.append(change("bpf", "%s %s" % (dev, way), str(attached), "",
                                ["tc", "filter", "del", "dev", dev, way, "pref", TC_PREF]))
    for dev in sorted(set(created_clsact) & set(live["clsact"])):
        found.append(change("bpf", dev + " clsact", "clsact", "", ["tc", "qdisc", "del", "dev", dev, "clsact"]))
    if live["pinned"]:
        pins = pin_dir(view["instance"])
        found.append(change("bpf", "pins", pins, "", ["rm", "-rf", pins]))
    return found


def check_ports(view: dict[str, Any]) -> None:
    """pmcme needs at least two ports and at most MAX_PORTS (the program's arrays)."""
    count = len(view["ports"])
    if not 2 <= count <= MAX_PORTS:
        raise PlanesNodeError("node %s: pmcme needs 2 to %d ports, the plan gives %d" % (view["node"], MAX_PORTS, count))
