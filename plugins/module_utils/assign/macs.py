# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MAC address management for switch-tagged routing (switch-tagged VLAN
routing paper, Koibuchi et al., TPDS 2010, §3.3; docs/vlans.md).

A switch learns MAC addresses per VLAN. With switch-tagged routing the
frames from A to B and from B to A travel in different VLANs, so no switch
would ever learn B in the VLAN that carries A's frames to B. Two ways out:

* ``mac_learning: static`` (:func:`static_mac_table`): register
  ``(MAC, VLAN) -> port`` on every switch, for every host, in every VLAN in
  which frames to that host arrive at that switch. Static entries rank
  above learned ones, so frames follow the planned path and nothing floods.
* ``mac_learning: self`` (:func:`self_learning_plan`, fixed assignment
  only): every host gets one virtual interface per VLAN with an address of
  its own segment and broadcasts a ping from each, repeated before the
  switches' aging time runs out (§3.3 steps 1-3). In a fixed VLAN the tree
  is the only path between two switches, so the port a switch learns for
  a host is the port the routing uses towards it. In the renamed
  assignment a frame changes VLAN at every switch, so learning cannot work.
"""

from __future__ import annotations

import ipaddress
import math
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EtherclusterError
from ..platforms.capabilities import mac_aging_for

if TYPE_CHECKING:
    from ..routing.base import RoutingFunction
    from ..fabric.topology import Host, Topology
    from .vlans import Assignment

DEFAULT_AGING_TIME = 300          # seconds: the common default on commodity switches
DEFAULT_LEARNING_NETWORK = "10.254.0.0/16"
DEFAULT_PARENT_INTERFACE = "eth0"


class MacError(EtherclusterError):
    """Static MAC entries or a self-learning plan cannot be made; the
    message names the host, switch, option or network at fault."""


def _host_order(topology: Topology) -> dict[str, list[Host]]:
    """Hosts per switch name, sorted by MAC (entries are listed that way)."""
    result: dict[str, list[Host]] = {name: [] for name in topology.switch_names()}
    for host in topology.hosts.values():
        result[host.switch].append(host)
    for hosts in result.values():
        hosts.sort(key=lambda host: host.mac)
    return result


def _check_routing(routing: RoutingFunction | None, assignment: Assignment) -> None:
    """MacError unless ``assignment`` was made from ``routing`` (or it is None)."""
    if routing is not None and not routing.same_paths(assignment.routing):
        raise MacError("static_mac_table: the VLAN assignment was made for another routing "
                       "(%s); assign the VLANs of this routing (%s) first"
                       % (assignment.routing.engine, routing.engine))


def static_mac_table(topology: Topology, routing: RoutingFunction | None,
                     assignment: Assignment) -> dict[str, list[dict[str, Any]]]:
    """Static MAC entries of every switch (§3.3): ``{switch: [{"mac",
    "vlan", "port"}]}``, one entry per host and per VLAN in which frames to
    that host reach the switch, pointing at the port the routing sends them
    out of (the host's own port on its switch).

    Entries are listed by VLAN, then by the host's switch (id order), then
    by MAC. The entry dicts are shared between switches (a large fabric
    holds millions of entries): treat them as read-only.

    ``routing`` must be the routing ``assignment`` was made from (or None).
    """
    _check_routing(routing, assignment)
    names = assignment.routing.switch_names
    channels = topology.channels
    # Output ports as numbers (ports are strings of digits, from "1"): the
    # same (destination, VLAN, port) block serves every switch that sends
    # that destination out of a port of that number.
    port_number = np.array([int(ch.src_port) for ch in channels] + [0], dtype=np.int64)
    stride = int(port_number.max()) + 1
    by_switch = _host_order(topology)
    hosts_of = [by_switch[name] for name in names]

    def block(key: int, vid: int) -> list[dict[str, Any]]:
        """The entries of every host of one destination switch, all sent
        out of one port (or each to its own port on its switch)."""
        t, number = divmod(key, stride)
        port = str(number) if number else None
        return [{"mac": host.mac, "vlan": vid, "port": host.port if port is None else port}
                for host in hosts_of[t]]

    # Blocks are keyed by (destination, output channel) per VLAN and shared
    # by every switch that needs them; the loops below stay in C (map,
    # chain) because a large fabric has tens of millions of entries.
    shared: dict[int, dict[int, list[dict[str, Any]]]] = {}
    table = {}
    for name in names:
        parts = []
        for vid, dests, outs in sorted(assignment.forwarding_arrays(name),
                                       key=lambda item: item[0]):
            keys = (np.asarray(dests, dtype=np.int64) * stride
                    + port_number[np.asarray(outs, dtype=np.int64)]).tolist()   # -1 -> 0
            cache = shared.setdefault(vid, {})
            blocks: list[Any] = list(map(cache.get, keys))   # None: not made yet
            if None in blocks:
                for i, key in enumerate(keys):
                    if blocks[i] is None:
                        blocks[i] = cache[key] = block(key, vid)
            parts.append(chain.from_iterable(blocks))
        table[name] = list(chain.from_iterable(parts))
    return table


def learned_entry_counts(topology: Topology, assignment: Assignment) -> dict[str, int]:
    """Per switch, how many (MAC, VLAN) entries it holds once every host
    has pinged in every VLAN (``mac_learning: self``): hosts x VLANs whose
    tree reaches the switch."""
    hosts = len(topology.hosts)
    counts = {}
    for name, entry in assignment.switches.items():
        member_vlans = set()
        for port in entry["ports"].values():
            member_vlans.update(port["untagged"])
            member_vlans.update(port["tagged"])
        counts[name] = hosts * len(member_vlans)
    return counts


def switch_mac_aging(topology: Topology, aging_time: int | None = None) -> dict[str, int]:
    """``mac_learning: self``: the MAC aging time (seconds, 0 = never) each
    switch is set to. ``aging_time`` None: as long as each platform
    allows (0 where entries can be kept forever, else the platform's
    longest); a figure: that figure on every switch (0 becomes the
    longest where a platform cannot keep entries forever). Raises
    MacError naming the switch and its platform's range."""
    try:
        return {name: mac_aging_for(sw.platform, aging_time, name)
                for name, sw in sorted(topology.switches.items())}
    except EtherclusterError as exc:
        raise MacError("mac_learning.aging_time: %s" % exc) from None


def effective_aging_time(aging: dict[str, int]) -> int:
    """The aging time the learning pings must beat: the shortest non-zero
    one of ``aging`` (:func:`switch_mac_aging`), 0 when no switch ages."""
    finite = [seconds for seconds in aging.values() if seconds]
    return min(finite) if finite else 0


def _learning_networks(network: Any, vlan_count: int,
                       host_count: int) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """One subnet per VLAN inside ``network``, each large enough for every host."""
    try:
        base = ipaddress.ip_network(str(network), strict=True)
    except ValueError as exc:
        raise MacError("mac_learning.network: %s" % exc) from None
    if base.version != 4:
        raise MacError("mac_learning.network: %s is not an IPv4 network (the learning pings "
                       "are IPv4 broadcasts)" % base)
    host_bits = max(2, math.ceil(math.log2(host_count + 2)))
    prefix = 32 - host_bits
    needed_bits = math.ceil(math.log2(max(vlan_count, 1)))
    if prefix < base.prefixlen or prefix - base.prefixlen < needed_bits:
        raise MacError("mac_learning.network: %s is too small for %d VLANs of %d hosts each "
                       "(needs one /%d per VLAN); give a larger network"
                       % (base, vlan_count, host_count, prefix))
    subnets = base.subnets(new_prefix=prefix)
    return [next(subnets) for _unused in range(vlan_count)]


def self_learning_plan(topology: Topology, assignment: Assignment, network: Any = DEFAULT_LEARNING_NETWORK,
                       aging_time: int = DEFAULT_AGING_TIME,
                       parent_interface: str = DEFAULT_PARENT_INTERFACE) -> dict[str, Any]:
    """The host-side plan of ``mac_learning: self`` (§3.3 steps 1-3) as data.

    Per VLAN a subnet of ``network``; per host one VLAN interface
    (``eth0.<vid>``) per VLAN with an address in that VLAN's subnet, and
    the broadcast ping to send from each, repeated every ``repeat_every_s``
    (half the switches' ``aging_time``, so an entry never ages out; 0 means
    the switches never age entries and one round is enough).

    Returns ``{"mode": "self", "aging_time_s", "repeat_every_s", "network",
    "vlans": [{"vlan", "subnet", "broadcast"}], "hosts": {host:
    {"parent", "interfaces": [{"vlan", "device", "address"}], "commands":
    [...], "pings": [...]}}}``. Raises MacError for the renamed assignment
    (frames change VLAN at every switch, nothing can be learned), a bad
    network or aging time."""
    if assignment.kind != "fixed":
        raise MacError("mac_learning: self works only with the fixed VLAN assignment (§3.3): "
                       "with the renamed assignment a frame changes VLAN at every switch, so "
                       "no switch learns the hosts in the VLANs that carry frames to them; "
                       "use mac_learning: static")
    if isinstance(aging_time, bool) or not isinstance(aging_time, int) or aging_time < 0:
        raise MacError("mac_learning.aging_time: must be whole seconds >= 0 (0: never age), "
                       "got %r" % (aging_time,))
    if not isinstance(parent_interface, str) or not parent_interface:
        raise MacError("mac_learning.parent_interface: must be an interface name such as eth0")
    vids = list(assignment.vlan_ids)
    hosts = sorted(topology.hosts.values(), key=lambda host: host.name)
    subnets = _learning_networks(network, len(vids), len(hosts))
    vlans = [{"vlan": vid, "subnet": str(net), "broadcast": str(net.broadcast_address)}
             for vid, net in zip(vids, subnets)]
    repeat = aging_time // 2
    plan_hosts = {}
    for number, host in enumerate(hosts):
        interfaces: list[dict[str, Any]] = []
        commands: list[str] = []
        pings: list[str] = []
        for vid, net in zip(vids, subnets):
            device = "%s.%d" % (parent_interface, vid)
            if len(device) > 15:
                raise MacError("mac_learning.parent_interface: %s makes the device name %s "
                               "longer than Linux's 15 characters" % (parent_interface, device))
            address = "%s/%d" % (net.network_address + number + 1, net.prefixlen)
            interfaces.append({"vlan": vid, "device": device, "address": address})
            commands.extend([
                "ip link add link %s name %s type vlan id %d" % (parent_interface, device, vid),
                "ip address add %s broadcast %s dev %s" % (address, net.broadcast_address, device),
                "ip link set %s up" % device,
            ])
            pings.append("ping -b -c 1 -W 1 -I %s %s" % (device, net.broadcast_address))
        plan_hosts[host.name] = {"parent": parent_interface, "mac": host.mac,
                                 "interfaces": interfaces, "commands": commands, "pings": pings}
    return {"mode": "self", "aging_time_s": aging_time, "repeat_every_s": repeat,
            "network": str(ipaddress.ip_network(str(network))), "vlans": vlans,
            "hosts": plan_hosts}
