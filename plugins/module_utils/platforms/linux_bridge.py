# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``linux_bridge`` platform: a Linux bridge with ``vlan_filtering 1``
(Cumulus-style and white-box Linux switches), whose ports hold per-VLAN
``pvid``/``untagged`` flags, so a port can be an untagged member of
several VLANs with its own PVID, as switch-tagged routing needs
(switch-tagged VLAN paper §3.1-§3.2).

Two renderings of one intent:

* an iproute2 shell script (:func:`render`, ``templates/linux_bridge.sh.j2``;
  ip-link(8) ``type bridge vlan_filtering 1 vlan_default_pvid 0 stp_state
  0`` -- ``vlan_default_pvid 0`` keeps ports out of VLAN 1; bridge(8)
  ``bridge vlan add dev DEV vid VID [pvid] [untagged]``, ``bridge fdb add
  MAC dev DEV vlan VID master static``; ethtool(8) ``-s DEV speed N duplex
  full autoneg off`` and ``-A DEV rx on|off tx on|off``, IEEE 802.3x
  PAUSE)::

      ip link add name br0 type bridge vlan_filtering 1 vlan_default_pvid 0 stp_state 0
      ip link set dev swp1 master br0
      bridge vlan add dev swp1 vid 100 pvid untagged
      bridge vlan add dev swp1 vid 101 untagged
      ethtool -s swp1 speed 1000 duplex full autoneg off
      ethtool -A swp1 rx on tx on
      ip link set dev swp1 up
      bridge fdb add 02:00:00:00:00:01 dev swp1 vlan 100 master static

* the equivalent ifupdown2 ``/etc/network/interfaces``
  (:func:`render_interfaces`; ifupdown2 / interfaces-bridge(5):
  ``bridge-vlan-aware yes``, ``bridge-stp off``, ``bridge-ports``, per port
  ``bridge-pvid`` (PVID, egress untagged) and ``bridge-vids`` (tagged),
  ``link-speed``/``link-duplex``/``link-autoneg``, ``link-down yes``).
  ifupdown2 has no keyword for a second untagged VLAN nor for a tagged
  PVID, so those are ``post-up bridge vlan add ...`` lines (re-adding a
  VLAN to a port replaces its flags), and a port without a PVID drops
  the default VLAN 1 with ``post-up bridge vlan del ... vid 1``; 802.3x
  is a ``post-up ethtool -A ...`` line too.

Linux keeps the PVID as a flag of one membership entry, so a port's PVID
must be one of its VLANs (tagged or untagged). The plan does make ports
whose PVID is not one of their VLANs (e.g. a link port left idle by the
routing); such a port is rendered without a PVID and parses back with
``pvid: None`` (:func:`effective_intent`). Forwarding is the same as on a
Huawei hybrid port (an untagged frame whose PVID the port does not allow
is discarded, VRP ``port hybrid pvid vlan``) and under 802.1Q ingress
filtering: untagged frames entering that port are dropped. (The ``ovs``
pipeline classifies them into the PVID instead.)

A Linux bridge has no VLAN table apart from its ports' memberships, so a
VLAN no port is a member of (the plan lists one on a switch that no path
crosses) is not rendered and does not parse back; it carries nothing
either way. The
bridge stanza of the ifupdown2 file has no ``bridge-vids``: ports without
their own would inherit it. :func:`parse` and :func:`parse_interfaces`
read either text back into the canonical intent form of :mod:`.common`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .capabilities import require_mac_aging
from .common import (PlatformError, canonical_switch, empty_port, expand_ranges, finish_parsed,
                     interface_namer, mac_address, port_reader, render_template, vlan_ranges)

PLATFORM = "linux_bridge"
INTERFACE_PATTERN = "swp{port}"
DEFAULT_BRIDGE = "br0"
SCRIPT_TEMPLATE = "linux_bridge.sh.j2"
INTERFACES_TEMPLATE = "linux_bridge.interfaces.j2"
CONFIG_EXTENSION = "sh"
INTERFACES_EXTENSION = "interfaces"
_BRIDGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,14}\Z")


def _prepare(config: Any, switch: str, interface_names: Mapping[Any, str] | None,
             bridge: str) -> tuple[dict[str, Any], Callable[[Any], str]]:
    """The canonical intent as a Linux bridge holds it, and the interface namer."""
    intent = canonical_switch(config, switch)
    if not _BRIDGE_RE.match(bridge):
        raise PlatformError("switch %s: bridge name %r is not a Linux interface name" % (switch, bridge))
    name_of = interface_namer(INTERFACE_PATTERN, interface_names, switch, PLATFORM)
    for entry in intent["ports"].values():
        pvid = entry["pvid"]
        if pvid is not None and pvid not in entry["untagged"] and pvid not in entry["tagged"]:
            # no membership to carry the flag: render "no PVID" (see module doc)
            entry["pvid"] = None
    used: set[int] = set()
    for entry in intent["ports"].values():
        used.update(entry["untagged"], entry["tagged"])
    intent["vlans"] = [vlan for vlan in intent["vlans"] if vlan in used]
    return intent, name_of


def _vlan_flags(entry: dict[str, Any]) -> dict[int, list[str]]:
    """Per VLAN of a port: its ``bridge vlan add`` flags (``pvid``, ``untagged``)."""
    flags: dict[int, list[str]] = {}
    for vlan in entry["untagged"]:
        flags[vlan] = ["untagged"]
    for vlan in entry["tagged"]:
        flags[vlan] = []
    if entry["pvid"] is not None:
        flags[entry["pvid"]] = ["pvid"] + flags[entry["pvid"]]
    return {vlan: flags[vlan] for vlan in sorted(flags)}


def effective_intent(config: Any, switch: str = "switch") -> dict[str, Any]:
    """The canonical form of ``config`` as a Linux bridge holds it: a PVID
    that is not one of the port's VLANs becomes ``None`` (module doc)."""
    return _prepare(config, switch, None, DEFAULT_BRIDGE)[0]


def render(config: Any, switch: str = "switch", interface_names: Mapping[Any, str] | None = None,
           bridge: str = DEFAULT_BRIDGE) -> str:
    """The iproute2 script that builds switch ``switch``'s bridge
    ``bridge`` for its intent entry ``config``; ``interface_names`` maps
    topology ports to interface names (default ``swp<port>``)."""
    intent, name_of = _prepare(config, switch, interface_names, bridge)
    ports = []
    for port, entry in intent["ports"].items():
        commands = [" ".join(["vid", str(vlan)] + flags) for vlan, flags in _vlan_flags(entry).items()]
        ports.append({"port": port, "interface": name_of(port), "vlan_commands": commands,
                      "admin": entry["admin"], "speed_mbps": entry["speed_mbps"],
                      "pause": "on" if entry["flow_control"] else "off"})
    statics = [{"mac": entry["mac"], "vlan": entry["vlan"], "interface": name_of(entry["port"])}
               for entry in intent["static_macs"]]
    return render_template(SCRIPT_TEMPLATE, switch=switch, bridge=bridge, stp=intent["stp"],
                           ports=ports, static_macs=statics,
                           mac_aging_s=require_mac_aging(PLATFORM, intent.get("mac_aging_s"), switch))


def _vids(vlans: Iterable[int]) -> str:
    """VLAN IDs as ifupdown2's ``bridge-vids`` (``100-102 105``)."""
    return " ".join(str(low) if low == high else "%d-%d" % (low, high) for low, high in vlan_ranges(vlans))


def render_interfaces(config: Any, switch: str = "switch", interface_names: Mapping[Any, str] | None = None,
                      bridge: str = DEFAULT_BRIDGE) -> str:
    """The ifupdown2 ``/etc/network/interfaces`` equivalent of :func:`render`."""
    intent, name_of = _prepare(config, switch, interface_names, bridge)
    statics_of: dict[str, list[dict[str, Any]]] = {}
    for entry in intent["static_macs"]:
        statics_of.setdefault(entry["port"], []).append(entry)
    ports = []
    for port, entry in intent["ports"].items():
        interface = name_of(port)
        pvid = entry["pvid"]
        post_up = []
        if pvid is None:
            post_up.append("bridge vlan del dev %s vid 1" % interface)
        elif pvid in entry["tagged"]:
            # bridge-pvid makes the PVID egress-untagged; re-add it tagged
            post_up.append("bridge vlan add dev %s vid %d pvid" % (interface, pvid))
        post_up.extend("bridge vlan add dev %s vid %d untagged" % (interface, vlan)
                       for vlan in entry["untagged"] if vlan != pvid)
        post_up.extend("bridge fdb add %s dev %s vlan %d master static" % (static["mac"], interface, static["vlan"])
                       for static in statics_of.get(port, []))
        pause = "on" if entry["flow_control"] else "off"
        post_up.append("ethtool -A %s rx %s tx %s" % (interface, pause, pause))
        ports.append({"port": port, "interface": interface, "bridge_pvid": pvid,
                      "bridge_vids": _vids(vlan for vlan in entry["tagged"] if vlan != pvid),
                      "post_up": post_up, "admin": entry["admin"], "speed_mbps": entry["speed_mbps"]})
    return render_template(INTERFACES_TEMPLATE, switch=switch, bridge=bridge, stp=intent["stp"],
                           ports=ports,
                           mac_aging_s=require_mac_aging(PLATFORM, intent.get("mac_aging_s"), switch))


class _Reader:
    """The bridge state a sequence of iproute2 commands builds."""

    def __init__(self, interface_names: Mapping[Any, str] | None, switch: str) -> None:
        self.port_of = port_reader(INTERFACE_PATTERN, interface_names)
        self.switch = switch
        self.stp = False  # a new Linux bridge has STP off (stp_state 0)
        self.vlans: set[int] = set()
        self.memberships: dict[str, dict[int, set[str]]] = {}  # port -> {vlan: set(flags)}
        self.ports: dict[str, dict[str, Any]] = {}
        self.statics: list[tuple[int, str, str]] = []
        self.mac_aging_s: int | None = None  # not set: the kernel's 300 s

    def port(self, interface: str) -> str | None:
        """The topology port of ``interface`` (None: not one), noted as seen."""
        port = self.port_of(interface)
        if port is not None:
            self.ports.setdefault(port, empty_port())
            self.memberships.setdefault(port, {})
        return port

    def command(self, words: list[str], where: str) -> None:
        """Apply one iproute2/ethtool command (split into words)."""
        if words[:3] == ["ip", "link", "add"] and "bridge" in words:
            if "stp_state" in words:
                self.stp = words[words.index("stp_state") + 1] != "0"
            if "ageing_time" in words:
                # iproute2 passes ageing_time to the kernel as clock_t: hundredths of a second
                self.mac_aging_s = int(_value(words, "ageing_time", where)) // 100
        elif words[:3] == ["ip", "link", "set"]:
            args = [word for word in words[3:] if word != "dev"]
            port = self.port(args[0]) if args else None
            if port is not None and args[1:2] in (["up"], ["down"]):
                self.ports[port]["admin"] = args[1]
        elif words[:3] == ["bridge", "vlan", "add"] or words[:3] == ["bridge", "vlan", "del"]:
            self._vlan(words, where)
        elif words[:3] == ["bridge", "fdb", "add"] and "static" in words:
            port = self.port(_value(words, "dev", where))
            if port is not None:
                self.statics.append((int(_value(words, "vlan", where)), mac_address(words[3], where), port))
        elif words[:2] == ["ethtool", "-A"]:
            # 802.3x PAUSE: on only when both directions are (render() sets both)
            port = self.port(words[2]) if len(words) > 2 else None
            if port is not None:
                self.ports[port]["flow_control"] = all(
                    _value(words, key, where) == "on" for key in ("rx", "tx"))
        elif words[:2] == ["ethtool", "-s"]:
            port = self.port(words[2])
            if port is not None and "speed" in words:
                self.ports[port]["speed_mbps"] = int(_value(words, "speed", where))

    def _vlan(self, words: list[str], where: str) -> None:
        """A ``bridge vlan add|del`` command."""
        port = self.port(_value(words, "dev", where))
        if port is None:
            return
        vlans = expand_ranges(_value(words, "vid", where), where)
        table = self.memberships[port]
        for vlan in vlans:
            if words[2] == "del":
                table.pop(vlan, None)
            else:
                # re-adding a VLAN replaces its flags (bridge(8))
                table[vlan] = {flag for flag in ("pvid", "untagged") if flag in words}

    def result(self) -> dict[str, Any]:
        """What was read, in the canonical intent form."""
        for port, table in self.memberships.items():
            entry = self.ports[port]
            entry["untagged"] = [vlan for vlan, flags in table.items() if "untagged" in flags]
            entry["tagged"] = [vlan for vlan, flags in table.items() if "untagged" not in flags]
            pvids = [vlan for vlan, flags in table.items() if "pvid" in flags]
            entry["pvid"] = pvids[-1] if pvids else None
            self.vlans.update(table)
        return finish_parsed(self.stp, self.vlans, self.ports, self.statics, self.mac_aging_s)


def _value(words: list[str], key: str, where: str) -> str:
    """The word after ``key`` in a command."""
    if key not in words or words.index(key) + 1 >= len(words):
        raise PlatformError("%s: %r needs %s VALUE" % (where, " ".join(words), key))
    return words[words.index(key) + 1]


def parse(text: str, interface_names: Mapping[Any, str] | None = None, switch: str = "switch") -> dict[str, Any]:
    """Read an iproute2 script (as :func:`render` writes it) into the
    canonical intent form. The bridge's VLANs are those its ports are
    members of. Interfaces that are not topology ports are skipped."""
    reader = _Reader(interface_names, switch)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            reader.command(shlex.split(line), "switch %s: line %d" % (switch, number))
    return reader.result()


def parse_interfaces(text: str, interface_names: Mapping[Any, str] | None = None,
                     switch: str = "switch") -> dict[str, Any]:
    """Read an ifupdown2 ``/etc/network/interfaces`` (as
    :func:`render_interfaces` writes it) into the canonical intent form."""
    reader = _Reader(interface_names, switch)
    reader.stp = True  # ifupdown2's bridge-stp default is on
    current = None
    is_bridge = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        where = "switch %s: line %d" % (switch, number)
        if not line:
            continue
        words = shlex.split(line)
        if words[0] == "auto":
            continue
        if words[0] == "iface":
            is_bridge = False
            current = reader.port(words[1]) if len(words) > 1 else None
            if current is not None:
                # ifupdown2: a vlan-aware bridge port starts in the default VLAN 1 (PVID, untagged)
                reader.memberships[current][1] = {"pvid", "untagged"}
            else:
                is_bridge = True
            continue
        key, values = words[0], words[1:]
        if is_bridge:
            if key == "bridge-stp":
                reader.stp = values[:1] in (["on"], ["yes"])
            elif key == "bridge-ageing" and values:
                reader.mac_aging_s = int(values[0])  # ifupdown2: seconds
            continue
        if current is None:
            continue
        table = reader.memberships[current]
        if key == "bridge-pvid":
            pvid = int(values[0])
            for vlan in [vlan for vlan, flags in table.items() if "pvid" in flags]:
                del table[vlan]  # the default VLAN 1 (pvid untagged) gives way
            table[pvid] = {"pvid", "untagged"}
        elif key == "bridge-vids":
            for vlan in expand_ranges(" ".join(values), where):
                table.setdefault(vlan, set())
        elif key == "post-up":
            reader.command(values, where)
        elif key == "link-speed":
            reader.ports[current]["speed_mbps"] = int(values[0])
        elif key == "link-down":
            reader.ports[current]["admin"] = "down" if values[:1] == ["yes"] else "up"
    return reader.result()
