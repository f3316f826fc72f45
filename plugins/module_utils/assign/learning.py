# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node side of ``mac_learning: self`` (switch-tagged VLAN paper §3.3):
make every switch learn, in every VLAN, the port towards each host.

Two methods (``ethercluster.routing.node_learning``, docs/vlans.md):

* ``vlan_interfaces`` (the paper's): one 802.1Q VLAN interface per VLAN on
  the host's NIC, with the host's learning address in that VLAN's subnet,
  and a broadcast ping from each (``ping -b``). :func:`interface_changes`
  computes the iproute2 commands from what the host holds (read with
  ``ip -j -d address show``, :func:`parse_ip_json`), so a second run sends
  none; ``state: absent`` removes the interfaces.
* ``tagged_frames``: no host configuration at all; one broadcast frame per
  VLAN, 802.1Q-tagged with the VLAN, sent from the NIC with a raw socket:
  a gratuitous ARP request whose sender is the host's MAC and learning
  address in that VLAN (:func:`tagged_garp`). A switch learns the source
  MAC in the frame's VLAN on the port it came in by, exactly as from the
  tagged ``ping -b`` of a VLAN interface (whose ARP request is the same
  frame).

Standard library only: the module runs on the nodes.
"""

from __future__ import annotations

import ipaddress
import json
import re
import struct
from typing import Any

from ..errors import EtherclusterError

METHODS = ("vlan_interfaces", "tagged_frames")
BROADCAST = b"\xff" * 6
TPID = 0x8100
ETHERTYPE_ARP = 0x0806
MIN_FRAME = 64  # bytes without the FCS, a tagged frame's minimum (60 + the 4-byte tag)
_DEVICE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}\Z")
_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}\Z")


class LearningError(EtherclusterError):
    """A host's learning setup is wrong or cannot be made; names the host,
    VLAN and interface."""


def learning_vlans(plan: Any, host: str) -> list[dict[str, Any]]:
    """Host ``host``'s part of an intent's ``mac_learning`` block, checked:
    ``[{"vlan", "device", "address", "broadcast"}]`` in VLAN order."""
    if not isinstance(plan, dict) or plan.get("mode") != "self":
        raise LearningError("host %s: the intent has no mac_learning: self block (plan with "
                            "mac_learning: self and the fixed assignment)" % host)
    broadcast = {entry.get("vlan"): entry.get("broadcast") for entry in plan.get("vlans") or []}
    entry = (plan.get("hosts") or {}).get(host)
    if not isinstance(entry, dict):
        raise LearningError("host %s is not in the intent's mac_learning.hosts; is it a host of "
                            "the planned topology?" % host)
    result = []
    for interface in entry.get("interfaces") or []:
        vlan = interface.get("vlan")
        if vlan not in broadcast:
            raise LearningError("host %s VLAN %s: not in mac_learning.vlans" % (host, vlan))
        result.append({"vlan": vlan, "device": interface.get("device"),
                       "address": interface.get("address"), "broadcast": broadcast[vlan]})
    return check_vlans(result, host)


def check_vlans(vlans: Any, host: str) -> list[dict[str, Any]]:
    """``vlans`` (the module's option) checked: VLAN IDs 1-4094, device names
    Linux accepts, IPv4 addresses with a prefix whose subnet's broadcast
    is ``broadcast`` (absent: that broadcast)."""
    if not isinstance(vlans, list) or not vlans:
        raise LearningError("host %s: vlans must be a non-empty list of {vlan, device, address, "
                            "broadcast}" % host)
    checked, seen = [], set()
    for entry in vlans:
        vlan = entry.get("vlan") if isinstance(entry, dict) else None
        where = "host %s VLAN %s" % (host, vlan)
        if isinstance(vlan, bool) or not isinstance(vlan, int) or not 1 <= vlan <= 4094 or vlan in seen:
            raise LearningError("%s: a VLAN ID must be 1-4094 and listed once" % where)
        seen.add(vlan)
        device = str(entry.get("device") or "")
        if not _DEVICE.match(device):
            raise LearningError("%s: %r is not a Linux interface name (1-15 characters)" % (where, device))
        try:
            address = ipaddress.ip_interface(str(entry.get("address")))
            given = entry.get("broadcast")
            broadcast = address.network.broadcast_address if given is None else ipaddress.ip_address(str(given))
        except ValueError as exc:
            raise LearningError("%s interface %s: %s" % (where, device, exc)) from None
        if address.version != 4 or broadcast != address.network.broadcast_address:
            raise LearningError("%s interface %s: %s is not the broadcast address of %s"
                                % (where, device, broadcast, address.network))
        checked.append({"vlan": vlan, "device": device, "address": str(address),
                        "broadcast": str(broadcast)})
    return sorted(checked, key=lambda item: item["vlan"])


def parse_ip_json(text: str) -> dict[str, dict[str, Any]]:
    """``ip -j -d address show`` as ``{device: {"kind", "vlan", "parent",
    "up", "addresses": [prefix, ...]}}`` (``vlan``/``parent`` only for an
    802.1Q device)."""
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise LearningError("cannot read the output of ip -j -d address show: %s" % exc) from None
    devices = {}
    for link in data if isinstance(data, list) else []:
        info = link.get("linkinfo") or {}
        vlan = (info.get("info_data") or {}).get("id") if info.get("info_kind") == "vlan" else None
        devices[link.get("ifname")] = {
            "kind": info.get("info_kind"), "vlan": vlan, "parent": link.get("link"),
            "up": "UP" in (link.get("flags") or []),
            "addresses": ["%s/%s" % (item.get("local"), item.get("prefixlen"))
                          for item in link.get("addr_info") or [] if item.get("family") == "inet"]}
    return devices


def interface_changes(current: dict[str, dict[str, Any]], vlans: list[dict[str, Any]], parent: str,
                      host: str, state: str = "present") -> list[str]:
    """The iproute2 commands that make ``current`` (:func:`parse_ip_json`)
    hold the VLAN interfaces ``vlans`` on ``parent`` (``state`` present) or
    none of them (absent); empty when it already does. A device of the
    same name that is not that VLAN on that parent is refused, naming it."""
    if state not in ("present", "absent"):
        raise LearningError("host %s: state must be present or absent, got %r" % (host, state))
    if parent not in current:
        raise LearningError("host %s: no interface %s to put the VLAN interfaces on" % (host, parent))
    commands: list[str] = []
    for entry in vlans:
        device, vlan = entry["device"], entry["vlan"]
        have = current.get(device)
        if have is not None and (have["kind"] != "vlan" or have["vlan"] != vlan or have["parent"] != parent):
            raise LearningError("host %s VLAN %d: interface %s exists but is not VLAN %d on %s (%s); "
                                "remove it or set another parent interface"
                                % (host, vlan, device, vlan, parent,
                                   "VLAN %s on %s" % (have["vlan"], have["parent"]) if have["kind"] == "vlan"
                                   else "kind %s" % (have["kind"] or "ethernet")))
        if state == "absent":
            if have is not None:
                commands.append("ip link delete %s" % device)
            continue
        if have is None:
            commands.append("ip link add link %s name %s type vlan id %d" % (parent, device, vlan))
        if have is None or entry["address"] not in have["addresses"]:
            commands.append("ip address add %s broadcast %s dev %s" % (entry["address"], entry["broadcast"], device))
        if have is None or not have["up"]:
            commands.append("ip link set %s up" % device)
    return commands


def changes_diff(commands: list[str], host: str) -> dict[str, str]:
    """An Ansible ``diff`` of the commands: before/after as command lists."""
    return {"before_header": "%s: VLAN interfaces" % host, "after_header": "%s: commands" % host,
            "before": "", "after": "".join(command + "\n" for command in commands)}


def pings(vlans: list[dict[str, Any]], count: int = 1) -> list[list[str]]:
    """The broadcast pings of the ``vlan_interfaces`` method (argv lists)."""
    return [["ping", "-b", "-c", str(count), "-W", "1", "-I", entry["device"], entry["broadcast"]]
            for entry in vlans]


def tagged_garp(mac: str, vlan: int, address: str) -> bytes:
    """A gratuitous ARP request from ``mac`` claiming ``address`` (an
    interface address, prefix ignored), broadcast and 802.1Q-tagged with
    ``vlan`` (PCP 0): the frame a VLAN interface sends first."""
    if not _MAC.match(str(mac).lower()):
        raise LearningError("VLAN %s: %r is not a MAC address (aa:bb:cc:dd:ee:ff)" % (vlan, mac))
    source = bytes(int(part, 16) for part in mac.split(":"))
    ip = ipaddress.ip_interface(address).ip.packed
    arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + source + ip + b"\x00" * 6 + ip
    frame = BROADCAST + source + struct.pack("!HHH", TPID, vlan & 0x0FFF, ETHERTYPE_ARP) + arp
    return frame.ljust(MIN_FRAME, b"\x00")


def read_tagged_garp(data: bytes) -> tuple[str, int, str] | None:
    """(source MAC, VLAN, sender address) of a frame :func:`tagged_garp`
    makes; None for any other frame."""
    if len(data) < 46 or data[:6] != BROADCAST:
        return None
    tpid, tci, ethertype = struct.unpack("!HHH", data[12:18])
    if tpid != TPID or ethertype != ETHERTYPE_ARP:
        return None
    mac = ":".join("%02x" % byte for byte in data[6:12])
    return mac, tci & 0x0FFF, str(ipaddress.ip_address(data[32:36]))
