# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``dell_os6`` platform: Dell EMC Networking N-Series / PowerConnect
(OS6) switches, whose "general" ports are untagged members of several
VLANs with their own PVID, as switch-tagged routing needs (switch-tagged
VLAN paper §3.1-§3.2).

Commands rendered (Dell EMC Networking N-Series CLI reference, "VLAN
commands": ``switchport mode general``, ``switchport general pvid``,
``switchport general allowed vlan add|remove VLAN-LIST [tagged|untagged]``,
VLAN lists as ``2-5,8``; "Spanning tree": ``no spanning-tree`` turns STP
off globally; "Address table": ``mac address-table static MAC vlan V
interface IF``, MAC as H.H.H; "Ethernet configuration": ``speed``,
``shutdown``/``no shutdown``, ``[no] flowcontrol`` (IEEE 802.3x, global
configuration mode: one setting for every port); VLANs created in ``vlan
database``)::

    no spanning-tree
    flowcontrol
    vlan database
    vlan 100-102
    exit
    interface Gi1/0/1
    switchport mode general
    switchport general allowed vlan add 100-102 untagged
    switchport general pvid 100
    switchport general allowed vlan remove 1
    speed 1000
    no shutdown
    exit
    mac address-table static 0200.0000.0001 vlan 100 interface Gi1/0/1

A general port starts as an untagged member of VLAN 1, which
switch-tagged routing never uses (vlans.ALWAYS_RESERVED), hence the
``remove 1``. :func:`render` writes the text from ``templates/dell_os6.j2``;
:func:`parse` reads it (or a ``show running-config``) back into the
canonical intent form of :mod:`.common`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .capabilities import require_mac_aging
from .common import (PlatformError, canonical_switch, device_number, empty_port, expand_ranges, finish_parsed,
                     interface_namer, mac_address, mac_dotted, port_reader, render_template,
                     set_members, vlan_ranges)

PLATFORM = "dell_os6"
INTERFACE_PATTERN = "Gi1/0/{port}"
TEMPLATE = "dell_os6.j2"
CONFIG_EXTENSION = "cfg"


def vlan_list(vlans: Iterable[int]) -> str:
    """VLAN IDs as the Dell CLI writes a list: ``100-102,105``."""
    return ",".join(str(low) if low == high else "%d-%d" % (low, high)
                    for low, high in vlan_ranges(vlans))


def render(config: Any, switch: str = "switch", interface_names: Mapping[Any, str] | None = None) -> str:
    """The OS6 configuration (global configuration mode commands) of
    switch ``switch`` for its intent entry ``config``; ``interface_names``
    maps topology ports to interface names (default ``Gi1/0/<port>``)."""
    intent = canonical_switch(config, switch)
    if intent["stp"]:
        raise PlatformError("switch %s: stp: true is not rendered for dell_os6 (switch-tagged "
                            "routing runs with STP off)" % switch)
    flow_control = _switch_flow_control(intent, switch)
    name_of = interface_namer(INTERFACE_PATTERN, interface_names, switch, PLATFORM)
    ports = [{"interface": name_of(port), "pvid": entry["pvid"],
              "untagged": vlan_list(entry["untagged"]), "tagged": vlan_list(entry["tagged"]),
              "admin": entry["admin"], "speed_mbps": entry["speed_mbps"]}
             for port, entry in intent["ports"].items()]
    statics = [{"mac": mac_dotted(entry["mac"]), "vlan": entry["vlan"],
                "interface": name_of(entry["port"])} for entry in intent["static_macs"]]
    aging = require_mac_aging(PLATFORM, intent.get("mac_aging_s"), switch)
    return render_template(TEMPLATE, switch=switch, vlans=vlan_list(intent["vlans"]), ports=ports,
                           static_macs=statics, flow_control=flow_control, mac_aging_s=aging)


def _switch_flow_control(intent: dict[str, Any], switch: str) -> bool:
    """OS6 sets 802.3x for the whole switch (``[no] flowcontrol`` in global
    configuration mode): the ports must agree; a switch with no ports
    keeps it on."""
    wanted = {port: entry["flow_control"] for port, entry in intent["ports"].items()}
    if len(set(wanted.values())) > 1:
        off = [port for port, on in wanted.items() if not on]
        raise PlatformError("switch %s: dell_os6 sets 802.3x flow control for the whole switch "
                            "(flowcontrol), but port%s %s want%s it off and the others on: set "
                            "flow_control: false on the switch, or leave every port on"
                            % (switch, "s" if len(off) > 1 else "", ", ".join(off),
                               "" if len(off) > 1 else "s"))
    return all(wanted.values())


_INTERFACE = re.compile(r"^interface\s+(.+)$", re.I)
_VLAN_DB_ENTRY = re.compile(r"^vlan\s+([0-9,\-\s]+)$", re.I)
_ALLOWED = re.compile(r"^switchport\s+general\s+allowed\s+vlan\s+(add|remove)\s+([0-9,\-]+)"
                      r"(?:\s+(tagged|untagged))?$", re.I)
_PVID = re.compile(r"^switchport\s+general\s+pvid\s+(\d+)$", re.I)
_SPEED = re.compile(r"^speed\s+(\d+)(?:\s+\S+)*$", re.I)
_AGING = re.compile(r"^mac\s+address-table\s+aging-time\s+(\d+)$", re.I)
_STATIC = re.compile(r"^mac\s+address-table\s+static\s+(\S+)\s+vlan\s+(\d+)\s+interface\s+(.+)$", re.I)


def _interface_key(name: str) -> str:
    # "gigabitethernet 1/0/3" and "Gi1/0/3" name the same interface
    return re.sub(r"^(gi)(gabitethernet)?\s*", "Gi", name.strip(), flags=re.I)


def parse(text: str, interface_names: Mapping[Any, str] | None = None, switch: str = "switch",
          strict: bool = True) -> dict[str, Any]:
    """Read OS6 configuration text (as :func:`render` writes it, or the
    ``show running-config`` of such a switch) into the canonical intent
    form. Interfaces that are not topology ports (per ``interface_names``
    or the default ``Gi1/0/<port>``) are skipped; a line this parser does
    not know is ignored only outside interface blocks it reads.

    A topology port that is not in general mode is an error; with
    ``strict=False`` it is left out instead (a running configuration read
    before the push: such a port is configured from scratch)."""
    port_of = port_reader(INTERFACE_PATTERN, {port: _interface_key(name) for port, name in
                                              (interface_names or {}).items()})
    reader = _Reader(port_of)
    for number, raw in enumerate(text.splitlines(), 1):
        reader.read(raw.strip(), "switch %s: line %d" % (switch, number))
    ports = reader.ports
    for port, entry in list(ports.items()):
        if not entry.pop("_general"):
            if not strict:
                del ports[port]
                continue
            raise PlatformError("switch %s: interface of port %s is not in switchport mode general"
                                % (switch, port))
    for entry in ports.values():
        entry["flow_control"] = reader.flow_control
    return finish_parsed(reader.stp, reader.vlans, ports, reader.statics, reader.mac_aging_s)


class _Reader:
    """What :func:`parse` has read so far, line by line."""

    def __init__(self, port_of: Callable[[str], str | None]) -> None:
        self.port_of = port_of
        self.stp = True  # OS6 runs spanning tree unless told not to
        self.flow_control = False  # a configuration without "flowcontrol": off
        self.mac_aging_s: int | None = None  # not set: the switch's default
        self.vlans: list[int] = []
        self.ports: dict[str, dict[str, Any]] = {}
        self.statics: list[tuple[int, str, str]] = []
        self.current: dict[str, Any] | None = None   # the topology port's interface block
        self.in_vlan_database = False

    def read(self, line: str, where: str) -> None:
        """Take one stripped line (``where`` names it in errors)."""
        if not line or line.startswith("!"):
            return
        lower = line.lower()
        if self.in_vlan_database:
            found = _VLAN_DB_ENTRY.match(line)
            if found:
                self.vlans.extend(expand_ranges(found.group(1), where))
                return
            self.in_vlan_database = False
            if lower == "exit":
                return
        if self._global_line(line, lower, where):
            return
        if self.current is not None:
            _interface_line(self.current, line, lower, where)

    def _global_line(self, line: str, lower: str, where: str) -> bool:
        """Read a line that is no interface setting; False if it is one."""
        if lower == "vlan database":
            self.in_vlan_database = True
            return True
        if lower in ("no spanning-tree", "spanning-tree"):
            self.stp = lower == "spanning-tree"
            return True
        if lower in ("flowcontrol", "no flowcontrol"):
            self.flow_control = lower == "flowcontrol"
            return True
        if lower == "no mac address-table aging-time":
            self.mac_aging_s = None
            return True
        if found := _AGING.match(line):
            self.mac_aging_s = device_number(found.group(1), where)
            return True
        found = _INTERFACE.match(line)
        if found:
            port = self.port_of(_interface_key(found.group(1)))
            self.current = None
            if port is not None:
                self.current = self.ports.setdefault(port, empty_port())
                self.current["_general"] = False
            return True
        if lower == "exit":
            self.current = None
            return True
        found = _STATIC.match(line)
        if found:
            port = self.port_of(_interface_key(found.group(3)))
            if port is not None:
                self.statics.append((device_number(found.group(2), where), mac_address(found.group(1), where), port))
            return True
        return False


def _interface_line(current: dict[str, Any], line: str, lower: str, where: str) -> None:
    """Apply one line of an interface block to the port ``current``."""
    if lower == "switchport mode general":
        current["_general"] = True
    elif lower == "shutdown":
        current["admin"] = "down"
    elif lower == "no shutdown":
        current["admin"] = "up"
    elif pvid := _PVID.match(line):
        current["pvid"] = device_number(pvid.group(1), where)
    elif speed := _SPEED.match(line):
        current["speed_mbps"] = device_number(speed.group(1), where)
    elif allowed := _ALLOWED.match(line):
        action, listed_text, kind = allowed.groups()
        # render() always names tagged/untagged; a bare "add" is read as tagged
        set_members(current, expand_ranges(listed_text, where),
                    (kind or "tagged").lower() if action.lower() == "add" else None)
