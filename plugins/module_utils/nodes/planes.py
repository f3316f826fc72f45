# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Multi-port planes (PMCME): the design kind ``planes`` and its plan.

N nodes each have P Ethernet ports; port X of every node is cabled to
switch X (plane X); the switches are not linked to each other (PMCME §1,
Fig. 1 (b)): port X of a sender always reaches port X of a receiver,
because the sender writes the receiver's port-X MAC address into the frame
(§4, Table 2). Every plane is one IPv4 subnet cut from the design's base
prefix, so the same plan also serves the stock-kernel modes (one subnet per
plane, multipath routes hashed on L4) and the one-port baseline (§5, 1Port).

``plan_planes(design)`` checks a design (every problem at once, each naming
its field) and returns plain data: the node network contract's ``nodes``
and ``switches`` blocks, the ``planes``, per node its ports, primary
address and peers (``node_planes``), and the MAC table in Table 2's form
(``mac_table``). docs/planes.md describes the design and the plan.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ..errors import TopologyError
from ..fabric.input_limits import load_yaml_text, read_text

SCHEMA = "ethercluster.routing/planes-plan/v1"
DESIGN_KIND = "planes"
MODES = ("pmcme", "l4_multipath", "single")
# The paper's constants (§3.2: 7,000 unacknowledged bytes; §3.2/§4: 100
# streams per Eport in Port_Info/Reg_Info); the design may change them.
THRESHOLD_BYTES = 7000
STREAMS_PER_PORT = 100
# Sizes a plan stays tractable at (and a MAC address can number): the
# plane's number is one byte of its nodes' MAC addresses.
MAX_NODES = 4096
MAX_PORTS = 64
MAX_SWITCH_PORTS = 65536
IFNAME_MAX = 15  # Linux IFNAMSIZ - 1
NAME_MAX = 32  # node and switch names (the node network contract)
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
FIELDS = ("kind", "name", "nodes", "node_prefix", "ports", "interface_prefix", "switch_prefix",
          "switch_ports", "speeds_mbps", "base_prefix", "plane_prefix_len", "host_offset",
          "mode", "threshold_bytes", "streams_per_port")
DEFAULTS: dict[str, Any] = {
    "name": "planes", "node_prefix": "n", "interface_prefix": "e", "switch_prefix": "plane",
    "switch_ports": 48, "speeds_mbps": 1000, "base_prefix": "10.97.0.0/16", "plane_prefix_len": 24,
    "host_offset": 1, "mode": "pmcme", "threshold_bytes": THRESHOLD_BYTES,
    "streams_per_port": STREAMS_PER_PORT,
}


def load_design(path: str) -> dict:
    """Read a planes design file (YAML) with the collection's input
    limits (size, nesting, aliases, duplicate keys: fabric/input_limits)
    and return its design mapping (the file's top-level ``design:`` when
    there is one, else the whole file). Raises TopologyError naming the file."""
    data = load_yaml_text(read_text(path), source=path)
    if isinstance(data, dict) and "design" in data:
        data = data["design"]
    if not isinstance(data, dict):
        raise TopologyError("the design must be a mapping (kind: planes, nodes, ports, ...), not %s"
                            % type(data).__name__, path)
    return data


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_field(design: dict, field: str, low: int, high: int, problems: list[str]) -> int | None:
    value = design.get(field, DEFAULTS.get(field))
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        problems.append("%s: must be an integer from %d to %d, not %r" % (field, low, high, value))
        return None
    return value


def _name_field(design: dict, field: str, longest: int, problems: list[str]) -> str | None:
    value = design.get(field, DEFAULTS.get(field))
    if not isinstance(value, str) or not NAME_RE.match(value) or len(value) > longest:
        problems.append("%s: must be a name of letters, digits, '-' and '_' starting with a letter, at "
                        "most %d characters, not %r" % (field, longest, value))
        return None
    return value


def _node_entries(design: dict, problems: list[str]) -> list[tuple[str, Any]]:
    """The nodes as ``(name, interfaces or None)``: ``nodes`` is a count
    (names node_prefix + index) or a list whose entries are a name or a
    mapping ``{name: ..., interfaces: {<NIC>: <plane index or switch name>}}``
    (a node cabled with its own NIC names)."""
    nodes = design.get("nodes")
    if isinstance(nodes, int) and not isinstance(nodes, bool):
        if not 2 <= nodes <= MAX_NODES:
            problems.append("nodes: must be from 2 to %d nodes, not %d" % (MAX_NODES, nodes))
            return []
        prefix = _name_field(design, "node_prefix", NAME_MAX - 4, problems)
        return [("%s%d" % (prefix, index), None) for index in range(nodes)] if prefix else []
    if not isinstance(nodes, list) or not 2 <= len(nodes) <= MAX_NODES:
        problems.append("nodes: must be a node count or a list of 2 to %d nodes, not %r"
                        % (MAX_NODES, nodes if not isinstance(nodes, list) else "%d entries" % len(nodes)))
        return []
    entries, seen = [], set()
    for index, entry in enumerate(nodes):
        name, interfaces = (entry.get("name"), entry.get("interfaces")) if isinstance(entry, dict) else (entry, None)
        if isinstance(entry, dict) and set(entry) - {"name", "interfaces"}:
            problems.append("nodes[%d]: unknown fields %s (name, interfaces)" % (index, sorted(map(str, set(entry) - {"name", "interfaces"}))))
        if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > NAME_MAX:
            problems.append("nodes[%d].name: a node name of letters, digits, '-' and '_' starting with a letter, "
                            "at most 32 characters, not %r" % (index, name))
        elif name in seen:
            problems.append("nodes[%d].name: node %r is listed twice" % (index, name))
        else:
            seen.add(name)
            entries.append((name, interfaces))
    return entries


def _per_plane(design: dict, field: str, ports: int, low: int, high: int, problems: list[str]) -> list[int]:
    """``field`` as one integer per plane: one value for all, or a list of P."""
    value = design.get(field, DEFAULTS.get(field))
    values = [value] * ports if not isinstance(value, list) else value
    if len(values) != ports:
        problems.append("%s: lists %d values for %d ports (one per port, or one value for all)"
                        % (field, len(values), ports))
        return []
    good = [item for item in values if isinstance(item, int) and not isinstance(item, bool) and low <= item <= high]
    bad = [(index, item) for index, item in enumerate(values) if item not in good or isinstance(item, bool)]
    for index, item in bad:
        where = "%s[%d]" % (field, index) if isinstance(value, list) else field
        problems.append("%s: must be an integer from %d to %d, not %r" % (where, low, high, item))
    return [] if bad else good


def _plane_subnets(design: dict, ports: int, hosts: int, problems: list[str]) -> list[Any]:
    """One subnet per plane: plane X is the X-th subnet of length
    ``plane_prefix_len`` in ``base_prefix``; every subnet must hold the
    nodes from ``host_offset`` on."""
    base_text = design.get("base_prefix", DEFAULTS["base_prefix"])
    try:
        base = ipaddress.IPv4Network(base_text, strict=True)
    except (ValueError, TypeError) as exc:
        problems.append("base_prefix: not an IPv4 prefix such as 10.97.0.0/16 (%r: %s)" % (base_text, exc))
        return []
    length = _int_field(design, "plane_prefix_len", base.prefixlen, 30, problems)
    offset = _int_field(design, "host_offset", 1, 1 << 24, problems)
    if length is None or offset is None:
        return []
    room = 1 << (length - base.prefixlen)
    if room < ports:
        problems.append("base_prefix: %s holds %d subnets of /%d (plane_prefix_len), fewer than the %d planes"
                        % (base, room, length, ports))
        return []
    usable = (1 << (32 - length)) - 2
    if offset + hosts - 1 > usable:
        problems.append("plane_prefix_len: a /%d holds host numbers 1 to %d, but %d nodes from host_offset %d "
                        "need up to %d (a longer base_prefix or a shorter plane_prefix_len)"
                        % (length, usable, hosts, offset, offset + hosts - 1))
        return []
    size = 1 << (32 - length)
    return [ipaddress.IPv4Network((int(base.network_address) + plane * size, length)) for plane in range(ports)]


def _cabling(name: str, index: int, interfaces: Any, switches: list[str], prefix: str,
             problems: list[str]) -> list[str]:
    """The node's NIC per plane (index = plane): its own ``interfaces``
    mapping (NIC -> plane index or switch name), each plane exactly once,
    or ``interface_prefix`` + plane."""
    ports = len(switches)
    if interfaces is None:
        return ["%s%d" % (prefix, plane) for plane in range(ports)]
    where = "nodes[%d].interfaces" % index
    if not isinstance(interfaces, dict):
        problems.append("%s: must map each NIC of %s to its plane (index or switch name), not %r" % (where, name, interfaces))
        return []
    by_plane: dict[int, list[str]] = {}
    for nic, plane in interfaces.items():
        if not isinstance(nic, str) or not re.match(r"^[A-Za-z0-9_.-]+$", nic) or len(nic) > IFNAME_MAX:
            problems.append("%s: %r is not a Linux interface name (letters, digits, '_', '-', '.', at most %d "
                            "characters)" % (where, nic, IFNAME_MAX))
            continue
        if isinstance(plane, str) and plane in switches:
            plane = switches.index(plane)
        if not _is_int(plane) or not 0 <= plane < ports:
            problems.append("%s.%s: plane must be 0 to %d or a switch name (%s), not %r"
                            % (where, nic, ports - 1, ", ".join(switches), plane))
            continue
        by_plane.setdefault(plane, []).append(nic)
    for plane in range(ports):
        nics = by_plane.get(plane, [])
        if len(nics) != 1:
            problems.append("%s: node %s needs one port per plane: plane %d (switch %s) has %s"
                            % (where, name, plane, switches[plane], "none" if not nics else ", ".join(nics)))
    return [by_plane[plane][0] for plane in range(ports)] if len(by_plane) == ports and \
        all(len(nics) == 1 for nics in by_plane.values()) else []


def node_mac(plane: int, address: Any) -> str:
    """The MAC address the plan fixes for a node's port on ``plane``:
    locally administered (02), then the plane's number, then the four
    bytes of the port's IPv4 address, so it is unique in the fabric and
    readable (02:01:0a:61:01:03 is 10.97.1.3 on plane 1)."""
    return ":".join("%02x" % byte for byte in [2, plane] + list(ipaddress.IPv4Address(address).packed))


def _check_design(design: Any) -> tuple[dict, list[str]]:
    """The design's settings, checked; every problem found, each naming its field."""
    problems: list[str] = []
    if not isinstance(design, dict):
        return {}, ["the design must be a mapping (kind: planes, nodes, ports, ...), not %s" % type(design).__name__]
    unknown = sorted(str(field) for field in design if field not in FIELDS)
    if unknown:
        problems.append("unknown fields %s (a planes design has %s)" % (", ".join(unknown), ", ".join(FIELDS)))
    if design.get("kind") != DESIGN_KIND:
        problems.append("kind: must be %r for a multi-port planes design, not %r" % (DESIGN_KIND, design.get("kind")))
    settings: dict[str, Any] = {"kind": DESIGN_KIND}
    settings["name"] = _name_field(design, "name", 63, problems)
    settings["ports"] = _int_field(design, "ports", 1, MAX_PORTS, problems)
    for field in ("interface_prefix", "switch_prefix"):
        settings[field] = _name_field(design, field, IFNAME_MAX - len(str(MAX_PORTS - 1)), problems)
    mode = design.get("mode", DEFAULTS["mode"])
    if mode not in MODES:
        problems.append("mode: must be one of %s, not %r" % (", ".join(MODES), mode))
    settings["mode"] = mode
    settings["threshold_bytes"] = _int_field(design, "threshold_bytes", 1, 1 << 30, problems)
    settings["streams_per_port"] = _int_field(design, "streams_per_port", 1, 1 << 16, problems)
    entries = _node_entries(design, problems)
    settings["nodes"] = entries
    ports = settings["ports"]
    if ports is not None:
        settings["switch_ports"] = _per_plane(design, "switch_ports", ports, 1, MAX_SWITCH_PORTS, problems)
        settings["speeds_mbps"] = _per_plane(design, "speeds_mbps", ports, 1, 10 ** 7, problems)
        settings["subnets"] = _plane_subnets(design, ports, len(entries), problems) if entries else []
        short = [plane for plane, capacity in enumerate(settings["switch_ports"]) if entries and len(entries) > capacity]
        if short and not isinstance(design.get("switch_ports"), list):
            problems.append("switch_ports: the plane switches have %d ports, fewer than the %d nodes each cabled "
                            "to every one (one port per node per plane; no inter-switch links)"
                            % (settings["switch_ports"][0], len(entries)))
        elif short:
            problems.extend("switch_ports[%d]: switch %s%d has %d ports, fewer than the %d nodes cabled to it "
                            "(one port per node per plane; no inter-switch links)"
                            % (plane, settings["switch_prefix"] or "plane", plane, settings["switch_ports"][plane],
                               len(entries)) for plane in short)
    return settings, problems


def _ports_of(settings: dict) -> tuple[list[str], dict[str, list[dict]]]:
    """The switch names and, per node, its ports in plane order (the
    ``node_planes.<node>.ports`` entries)."""
    ports, offset = settings["ports"], settings["host_offset"]
    switches = ["%s%d" % (settings["switch_prefix"], plane) for plane in range(ports)]
    by_node = {}
    for host, (name, nics) in enumerate(settings["nodes"]):
        entries = []
        for plane, subnet in enumerate(settings["subnets"]):
            address = subnet.network_address + offset + host
            entries.append({"port": plane, "interface": nics[plane], "switch": switches[plane],
                            "address": str(address), "prefix": "%s/%d" % (address, subnet.prefixlen),
                            "mac": node_mac(plane, address), "speed_mbps": settings["speeds_mbps"][plane]})
        by_node[name] = entries
    return switches, by_node


def _routes(mode: str, name: str, by_node: dict[str, list[dict]]) -> list[dict]:
    """The node's static routes in ``mode``: none in pmcme and single (every
    peer's primary address is in plane 0's connected subnet); in
    l4_multipath one /32 route per peer primary with a next hop through
    every plane (the peer's port-X address on the node's port X)."""
    own = by_node[name]
    if mode != "l4_multipath" or len(own) < 2:
        return []
    return [{"to": "%s/32" % peer[0]["address"],
             "nexthops": [{"via": port["address"], "dev": own[plane]["interface"]} for plane, port in enumerate(peer)]}
            for other, peer in by_node.items() if other != name]


def _sysctls(mode: str) -> dict[str, int]:
    """Sysctls every node of the plan needs: ARP answered and sourced per
    port (each port is on its own plane); in l4_multipath the multipath
    hash on L4 (the LACP layer3+4 policy, §3.1, done by routing)."""
    values = {"net.ipv4.conf.all.arp_ignore": 1, "net.ipv4.conf.all.arp_announce": 2}
    if mode == "l4_multipath":
        values["net.ipv4.fib_multipath_hash_policy"] = 1
    return values


def _contract_nodes(settings: dict, by_node: dict[str, list[dict]]) -> dict[str, dict]:
    """The node network contract's ``nodes`` block. rp_filter is loose:
    a frame of a peer's primary address arrives on any port (pmcme's port
    X, l4_multipath's next hop), which strict reverse-path filtering drops."""
    mode = settings["mode"]
    return {name: {"interfaces": [{"name": port["interface"], "switch": port["switch"],
                                   "address": port["prefix"], "mac": port["mac"]} for port in ports],
                   "routes": _routes(mode, name, by_node), "forwarding": False, "rp_filter": 2,
                   "sysctls": _sysctls(mode)}
            for name, ports in by_node.items()}


def mac_table(by_node: dict[str, list[dict]]) -> list[dict]:
    """The MAC table in the form of PMCME's Table 2 (§4): per destination
    node and destination Eport X, search-key1 (the MAC address of the
    destination's master: its port 0, whose MAC the destination's primary
    address resolves to), search-key2 (X) and the new destination MAC (the
    destination's port-X MAC). One table serves every sender, because port X
    of a sender always reaches port X of the receiver; a sender skips its
    own rows, and frames it sends from port 0 keep their destination (§4)."""
    rows = []
    for name, ports in by_node.items():
        for port in ports:
            rows.append({"destination_node": ports[0]["mac"], "destination_port": port["port"],
                         "new_mac": port["mac"], "node": name, "address": ports[0]["address"]})
    return rows


def _normal_design(settings: dict, given: Any) -> dict:
    """The design as checked, every default filled in (planning it again
    gives the same plan); a node given with its own NICs keeps them."""
    fields = ("name", "ports", "interface_prefix", "switch_prefix", "switch_ports", "speeds_mbps",
              "plane_prefix_len", "host_offset", "mode", "threshold_bytes", "streams_per_port")
    own = [isinstance(entry, dict) for entry in given] if isinstance(given, list) else [False] * len(settings["nodes"])
    nodes = [{"name": name, "interfaces": {nic: plane for plane, nic in enumerate(nics)}} if mine else name
             for mine, (name, nics) in zip(own, settings["nodes"])]
    design = {"kind": DESIGN_KIND, "nodes": nodes}
    design.update({field: settings[field] for field in fields})
    design["base_prefix"] = settings["base_prefix"]
    return design


def plan_planes(design: dict, source: str = "design") -> dict:
    """Plan a multi-port planes design (docs/planes.md, "Design" and "Plan").

    ``design`` is the mapping of a design file (``kind: planes``, ``nodes``,
    ``ports``, ...; see :data:`FIELDS` and :data:`DEFAULTS`). Returns plain
    data: ``schema``, ``design`` (normalised), ``summary``, ``planes``,
    ``nodes`` and ``switches`` (the node network contract), ``node_planes``
    (per node its primary address and its ports: NIC, switch, address,
    MAC, speed), ``mac_table`` (PMCME's Table 2) and ``pmcme`` (the
    threshold and the streams per port). Raises TopologyError listing every
    problem, each naming its field, with ``source`` as the heading."""
    settings, problems = _check_design(design)
    if settings.get("ports") is not None and settings.get("switch_prefix"):
        switches = ["%s%d" % (settings["switch_prefix"], plane) for plane in range(settings["ports"])]
        cabled = [(name, _cabling(name, index, nics, switches, settings["interface_prefix"] or "e", problems))
                  for index, (name, nics) in enumerate(settings["nodes"])]
        settings["nodes"] = cabled
        for index, (name, nics) in enumerate(cabled):
            if nics and len(set(nics)) != len(nics):
                problems.append("nodes[%d].interfaces: node %s uses a NIC twice (%s)" % (index, name, ", ".join(nics)))
    if problems:
        raise TopologyError(problems, source)
    settings["base_prefix"] = str(ipaddress.IPv4Network(design.get("base_prefix", DEFAULTS["base_prefix"])))
    settings["host_offset"] = design.get("host_offset", DEFAULTS["host_offset"])
    settings["plane_prefix_len"] = settings["subnets"][0].prefixlen
    switches, by_node = _ports_of(settings)
    planes = [{"plane": plane, "switch": switch, "subnet": str(settings["subnets"][plane]),
               "ports": settings["switch_ports"][plane], "speed_mbps": settings["speeds_mbps"][plane]}
              for plane, switch in enumerate(switches)]
    names = list(by_node)
    return {
        "schema": SCHEMA,
        "design": _normal_design(settings, design.get("nodes")),
        "summary": {"name": settings["name"], "nodes": len(names), "ports": settings["ports"],
                    "switches": len(switches), "mode": settings["mode"],
                    "node_mbps": sum(settings["speeds_mbps"])},
        "planes": planes,
        "nodes": _contract_nodes(settings, by_node),
        "switches": {switch: {"ports": settings["switch_ports"][plane],
                              "attached": [[name, by_node[name][plane]["interface"]] for name in names]}
                     for plane, switch in enumerate(switches)},
        "node_planes": {name: {"primary": {"address": ports[0]["address"], "prefix": ports[0]["prefix"],
                                           "interface": ports[0]["interface"], "mac": ports[0]["mac"]},
                               "ports": ports}
                        for name, ports in by_node.items()},
        "mac_table": mac_table(by_node),
        "pmcme": {"threshold_bytes": settings["threshold_bytes"], "streams_per_port": settings["streams_per_port"]},
    }


def plan_file(path: str) -> dict:
    """Plan the design file at ``path`` (load_design, then plan_planes),
    errors naming the file."""
    return plan_planes(load_design(path), source=path)
