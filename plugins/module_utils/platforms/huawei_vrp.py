# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``huawei_vrp`` platform: Huawei VRP switches (S series), whose
"hybrid" ports are untagged members of several VLANs with their own PVID,
as switch-tagged routing needs (switch-tagged VLAN paper §3.1-§3.2).

Commands rendered (Huawei S series command reference: ``port link-type
hybrid``; ``port hybrid pvid vlan vlan-id`` (1-4094); ``port hybrid
{untagged|tagged} vlan {vlan-id1 [to vlan-id2]}&<1-10>``, at most ten
items per command; ``vlan batch`` with the same list syntax; ``stp
disable`` in the system view; ``mac-address static H-H-H interface-type
interface-number vlan vlan-id``; ``undo negotiation auto`` before
``speed``; ``flow-control``/``undo flow-control`` in the interface view,
IEEE 802.3x, off by default; ``shutdown``/``undo shutdown``)::

    stp disable
    vlan batch 100 to 102
    #
    interface GigabitEthernet0/0/1
     port link-type hybrid
     undo port hybrid vlan 1
     port hybrid pvid vlan 100
     port hybrid untagged vlan 100 to 102
     undo negotiation auto
     speed 1000
     flow-control
     undo shutdown
    #
    mac-address static 0200-0000-0001 GigabitEthernet0/0/1 vlan 100
    return

A hybrid port starts as an untagged member of VLAN 1, which
switch-tagged routing never uses (vlans.ALWAYS_RESERVED), hence ``undo
port hybrid vlan 1``. :func:`render` writes the text from
``templates/huawei_vrp.j2``; :func:`parse` reads it (or a ``display
current-configuration``) back into the canonical intent form of
:mod:`.common`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .capabilities import require_mac_aging
from .common import (PlatformError, canonical_switch, device_number, empty_port, expand_ranges, finish_parsed,
                     interface_namer, mac_address, mac_dashed, port_reader, render_template,
                     set_members, vlan_ranges)

PLATFORM = "huawei_vrp"
INTERFACE_PATTERN = "GigabitEthernet0/0/{port}"
TEMPLATE = "huawei_vrp.j2"
CONFIG_EXTENSION = "cfg"
ITEMS_PER_COMMAND = 10  # "&<1-10>": a VLAN list command takes at most ten items


def vlan_batches(vlans: Iterable[int]) -> list[str]:
    """VLAN IDs as Huawei VLAN lists (``100 to 102 105``), at most
    :data:`ITEMS_PER_COMMAND` items (single IDs or ranges) each."""
    items = [str(low) if low == high else "%d to %d" % (low, high) for low, high in vlan_ranges(vlans)]
    return [" ".join(items[i:i + ITEMS_PER_COMMAND]) for i in range(0, len(items), ITEMS_PER_COMMAND)]


def render(config: Any, switch: str = "switch", interface_names: Mapping[Any, str] | None = None) -> str:
    """The VRP configuration (system view commands) of switch ``switch``
    for its intent entry ``config``; ``interface_names`` maps topology
    ports to interface names (default ``GigabitEthernet0/0/<port>``)."""
    intent = canonical_switch(config, switch)
    if intent["stp"]:
        raise PlatformError("switch %s: stp: true is not rendered for huawei_vrp (switch-tagged "
                            "routing runs with STP off)" % switch)
    name_of = interface_namer(INTERFACE_PATTERN, interface_names, switch, PLATFORM)
    ports = [{"interface": name_of(port), "pvid": entry["pvid"],
              "untagged": vlan_batches(entry["untagged"]), "tagged": vlan_batches(entry["tagged"]),
              "admin": entry["admin"], "speed_mbps": entry["speed_mbps"],
              "flow_control": entry["flow_control"]}
             for port, entry in intent["ports"].items()]
    statics = [{"mac": mac_dashed(entry["mac"]), "vlan": entry["vlan"],
                "interface": name_of(entry["port"])} for entry in intent["static_macs"]]
    aging = require_mac_aging(PLATFORM, intent.get("mac_aging_s"), switch)
    return render_template(TEMPLATE, switch=switch, vlan_batches=vlan_batches(intent["vlans"]),
                           ports=ports, static_macs=statics, mac_aging_s=aging)


_INTERFACE = re.compile(r"^interface\s+(\S+)$", re.I)
_VLAN_BATCH = re.compile(r"^vlan\s+batch\s+([0-9to\s]+)$", re.I)
_VLAN_ONE = re.compile(r"^vlan\s+(\d+)$", re.I)
_MEMBER = re.compile(r"^(undo\s+)?port\s+hybrid\s+(?:(untagged|tagged)\s+)?vlan\s+([0-9to\s]+)$", re.I)
_PVID = re.compile(r"^port\s+hybrid\s+pvid\s+vlan\s+(\d+)$", re.I)
_SPEED = re.compile(r"^speed\s+(\d+)$", re.I)
_AGING = re.compile(r"^mac-address\s+aging-time\s+(\d+)$", re.I)
_STATIC = re.compile(r"^mac-address\s+static\s+(\S+)\s+(\S+)\s+vlan\s+(\d+)$", re.I)


def parse(text: str, interface_names: Mapping[Any, str] | None = None, switch: str = "switch",
          strict: bool = True) -> dict[str, Any]:
    """Read VRP configuration text (as :func:`render` writes it, or the
    ``display current-configuration`` of such a switch) into the canonical
    intent form. Interfaces that are not topology ports are skipped. A
    topology port that is not a hybrid port is an error; with
    ``strict=False`` it is left out instead (configured from scratch)."""
    port_of = port_reader(INTERFACE_PATTERN, interface_names)
    stp = True  # VRP runs spanning tree unless told not to
    vlans: list[int] = []
    ports: dict[str, dict[str, Any]] = {}
    statics: list[tuple[int, str, str]] = []
    aging: int | None = None  # not set: the switch's default
    current: dict[str, Any] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        indented = raw[:1] == " "
        line = raw.strip()
        where = "switch %s: line %d" % (switch, number)
        if not line:
            continue
        if line.startswith("#") or line.lower() == "return":
            current = None
            continue
        if not indented:
            current = None
        lower = line.lower()
        found = _INTERFACE.match(line)
        if found and not indented:
            port = port_of(found.group(1))
            if port is not None:
                current = ports.setdefault(port, empty_port())
                current["_hybrid"] = False
            continue
        if current is not None:
            _interface_line(current, line, lower, where)
            continue
        if lower == "stp disable":
            stp = False
        elif lower == "stp enable":
            stp = True
        elif batch := _VLAN_BATCH.match(line):
            vlans.extend(expand_ranges(batch.group(1), where))
        elif found := _AGING.match(line):
            aging = device_number(found.group(1), where)
        elif one := _VLAN_ONE.match(line):
            vlans.append(device_number(one.group(1), where))
        elif static := _STATIC.match(line):
            mac, interface, vlan = static.groups()
            port = port_of(interface)
            if port is not None:
                statics.append((device_number(vlan, where), mac_address(mac, where), port))
    for port, entry in list(ports.items()):
        if not entry.pop("_hybrid"):
            if not strict:
                del ports[port]
                continue
            raise PlatformError("switch %s: interface of port %s is not a hybrid port (port "
                                "link-type hybrid)" % (switch, port))
    return finish_parsed(stp, vlans, ports, statics, aging)


def _interface_line(current: dict[str, Any], line: str, lower: str, where: str) -> None:
    """Apply one line of an interface block to the port ``current``."""
    if lower == "port link-type hybrid":
        current["_hybrid"] = True
    elif lower == "shutdown":
        current["admin"] = "down"
    elif lower == "undo shutdown":
        current["admin"] = "up"
    elif lower in ("flow-control", "undo flow-control"):
        current["flow_control"] = lower == "flow-control"
    elif pvid := _PVID.match(line):
        current["pvid"] = device_number(pvid.group(1), where)
    elif speed := _SPEED.match(line):
        current["speed_mbps"] = device_number(speed.group(1), where)
    elif member := _MEMBER.match(line):
        undo, kind, listed_text = member.groups()
        # render() never writes a bare "port hybrid vlan LIST"; it is read as tagged
        set_members(current, expand_ranges(listed_text, where), None if undo else (kind or "tagged").lower())
