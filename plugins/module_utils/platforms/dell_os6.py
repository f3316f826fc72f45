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
``shutdown``/``no shutdown``; VLANs created in ``vlan database``)::

    no spanning-tree
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

from .common import (PlatformError, canonical_switch, empty_port, expand_ranges, finish_parsed,
                     interface_namer, mac_address, mac_dotted, port_reader, render_template,
                     vlan_ranges)

PLATFORM = "dell_os6"
INTERFACE_PATTERN = "Gi1/0/{port}"
TEMPLATE = "dell_os6.j2"
CONFIG_EXTENSION = "cfg"


def vlan_list(vlans):
    """VLAN IDs as the Dell CLI writes a list: ``100-102,105``."""
    return ",".join(str(low) if low == high else "%d-%d" % (low, high)
                    for low, high in vlan_ranges(vlans))


def render(config, switch="switch", interface_names=None):
    """The OS6 configuration (global configuration mode commands) of
    switch ``switch`` for its intent entry ``config``; ``interface_names``
    maps topology ports to interface names (default ``Gi1/0/<port>``)."""
    intent = canonical_switch(config, switch)
    if intent["stp"]:
        raise PlatformError("switch %s: stp: true is not rendered for dell_os6 (switch-tagged "
                            "routing runs with STP off)" % switch)
    name_of = interface_namer(INTERFACE_PATTERN, interface_names, switch, PLATFORM)
    ports = [{"interface": name_of(port), "pvid": entry["pvid"],
              "untagged": vlan_list(entry["untagged"]), "tagged": vlan_list(entry["tagged"]),
              "admin": entry["admin"], "speed_mbps": entry["speed_mbps"]}
             for port, entry in intent["ports"].items()]
    statics = [{"mac": mac_dotted(entry["mac"]), "vlan": entry["vlan"],
                "interface": name_of(entry["port"])} for entry in intent["static_macs"]]
    return render_template(TEMPLATE, switch=switch, vlans=vlan_list(intent["vlans"]), ports=ports,
                           static_macs=statics)


_INTERFACE = re.compile(r"^interface\s+(.+)$", re.I)
_VLAN_DB_ENTRY = re.compile(r"^vlan\s+([0-9,\-\s]+)$", re.I)
_ALLOWED = re.compile(r"^switchport\s+general\s+allowed\s+vlan\s+(add|remove)\s+([0-9,\-]+)"
                      r"(?:\s+(tagged|untagged))?$", re.I)
_PVID = re.compile(r"^switchport\s+general\s+pvid\s+(\d+)$", re.I)
_SPEED = re.compile(r"^speed\s+(\d+)(?:\s+\S+)*$", re.I)
_STATIC = re.compile(r"^mac\s+address-table\s+static\s+(\S+)\s+vlan\s+(\d+)\s+interface\s+(.+)$", re.I)


def _interface_key(name):
    # "gigabitethernet 1/0/3" and "Gi1/0/3" name the same interface
    return re.sub(r"^(gi)(gabitethernet)?\s*", "Gi", name.strip(), flags=re.I)


def parse(text, interface_names=None, switch="switch", strict=True):
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
    stp = True  # OS6 runs spanning tree unless told not to
    vlans, ports, statics = [], {}, []
    current = None
    in_vlan_database = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = "switch %s: line %d" % (switch, number)
        if not line or line.startswith("!"):
            continue
        lower = line.lower()
        if in_vlan_database:
            found = _VLAN_DB_ENTRY.match(line)
            if found:
                vlans.extend(expand_ranges(found.group(1), where))
                continue
            in_vlan_database = False
            if lower == "exit":
                continue
        if lower == "vlan database":
            in_vlan_database = True
            continue
        if lower == "no spanning-tree":
            stp = False
            continue
        if lower == "spanning-tree":
            stp = True
            continue
        found = _INTERFACE.match(line)
        if found:
            port = port_of(_interface_key(found.group(1)))
            current = None
            if port is not None:
                current = ports.setdefault(port, empty_port())
                current["_general"] = False
            continue
        if lower == "exit":
            current = None
            continue
        found = _STATIC.match(line)
        if found:
            port = port_of(_interface_key(found.group(3)))
            if port is not None:
                statics.append((int(found.group(2)), mac_address(found.group(1), where), port))
            continue
        if current is None:
            continue
        _interface_line(current, line, lower, where)
    for port, entry in list(ports.items()):
        if not entry.pop("_general"):
            if not strict:
                del ports[port]
                continue
            raise PlatformError("switch %s: interface of port %s is not in switchport mode general"
                                % (switch, port))
    return finish_parsed(stp, vlans, ports, statics)


def _interface_line(current, line, lower, where):
    if lower == "switchport mode general":
        current["_general"] = True
    elif lower == "shutdown":
        current["admin"] = "down"
    elif lower == "no shutdown":
        current["admin"] = "up"
    elif _PVID.match(line):
        current["pvid"] = int(_PVID.match(line).group(1))
    elif _SPEED.match(line):
        current["speed_mbps"] = int(_SPEED.match(line).group(1))
    elif _ALLOWED.match(line):
        action, listed, kind = _ALLOWED.match(line).groups()
        listed = expand_ranges(listed, where)
        for key in ("untagged", "tagged"):
            current[key] = [vlan for vlan in current[key] if vlan not in listed]
        if action.lower() == "add":
            # render() always names tagged/untagged; a bare "add" is read as tagged
            current[(kind or "tagged").lower()].extend(listed)
