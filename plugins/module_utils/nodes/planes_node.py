# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node of a multi-port planes design (PMCME paper): its spreading mode.

Pure functions, standard library only (the module ``node_planes`` runs this
on the node). In: the planes plan (the node network contract's ``nodes``
with every port's address and MAC, plus each node's primary address), the
node's name, the mode and the node's live state (``ip -j`` output,
sysctl values, the state file of the last run). Out: the commands that
make the live state match, each with a readable before/after.

Every mode gives the node a primary address that applications use (the
planes plan's: port 0's address; a primary outside the ports' subnets
becomes a /32 on ``lo``) and reaches each peer's primary address:

* ``single`` (the paper's 1Port, section 5): port 0 only, through the
  peer's port 0 (the connected subnet, or a route for a primary on ``lo``);
* ``l4_multipath``: every port has its plane's address, the route has one
  nexthop per plane and the kernel picks one per stream by hashing
  addresses and TCP/UDP ports (``fib_multipath_hash_policy=1``): the LACP
  layer3+4 policy (section 3.1) without switch support, one switch per
  plane and no links between them;
* ``pmcme``: the ``single`` path on every port's address, plus the eBPF program of
  ``planes_node_bpf`` on port 0 which moves each stream to the port the
  paper's algorithm picks (sections 3.2 and 4).

The multi-port modes receive a peer's frames for the primary address on
any port: loose reverse-path filtering on the ports
(``rp_filter=2``), ``arp_ignore=1`` (a port answers ARP only for its own
address) and ``arp_announce=2`` (ARP requests carry the port's own
address, not the primary). The values found before are kept in the state
file and put back by ``state: absent``.

Ownership: routes carry protocol :data:`ROUTE_PROTOCOL`; addresses are the
plan's (ports and primary) only; sysctls are restored from the state file.

The live state is read, and the route commands, texts and ``--diff`` are
written, by node_network's code (``linux_network``), with this role's
options: addresses of every scope, every route and next hop in the order
the kernel lists them, output that is not a JSON list refused.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ..errors import EtherclusterError
from . import linux_network as ln
# one change of the module's list (node_network's shape: kind, what, before, after, argv)
from .linux_network import IFNAME_RE, MAC_RE, change

MODES = ("pmcme", "l4_multipath", "single")
# route protocol of the routes node_planes installs (node_network uses 233)
ROUTE_PROTOCOL = "234"
HASH_POLICY = "net.ipv4.fib_multipath_hash_policy"
# section 3.2: a stream with more than 7,000 unacknowledged bytes is high-bandwidth
THRESHOLD = 7000
# section 4: 100 streams per port (Reg_Info), the program's upper bound too
PER_PORT = 100
MAX_PORTS = 16
ORDER_PRESENT = ("link", "address", "sysctl", "bpf", "route")
ORDER_ABSENT = ("bpf", "route", "address", "sysctl")


class PlanesNodeError(EtherclusterError):
    """The plan, the node's entry or its live state cannot be used (names the
    node, port and field)."""


def node_view(plan: Any, node: str) -> dict[str, Any]:
    """The parts of ``plan`` one node needs: its ports (in plane order: name,
    address, MAC), primary address and the peers (name, primary, ports)."""
    if not isinstance(plan, dict) or not isinstance(plan.get("nodes"), dict):
        raise PlanesNodeError("plan: no 'nodes' mapping (is it a planes plan?)")
    if node not in plan["nodes"]:
        raise PlanesNodeError("plan: node %s is not in nodes (%d planned)" % (node, len(plan["nodes"])))
    nodes = {name: _node_entry(plan, name) for name in plan["nodes"]}
    me = nodes[node]
    for name, entry in nodes.items():
        if len(entry["ports"]) != len(me["ports"]):
            raise PlanesNodeError("plan: node %s has %d ports, node %s has %d: a planes design gives every node one port "
                                  "per plane" % (name, len(entry["ports"]), node, len(me["ports"])))
    peers = [dict(entry, name=name) for name, entry in sorted(nodes.items()) if name != node]
    return {"node": node, "ports": me["ports"], "primary": me["primary"], "primary_dev": me["primary_dev"], "peers": peers}


def _node_entry(plan: dict[str, Any], name: str) -> dict[str, Any]:
    """One node's ports and primary address, checked. The primary address is
    ``node_planes.<node>.primary.address`` (the planes plan: port 0's address)
    or ``nodes.<node>.primary`` (then it lives on ``lo`` unless it is a
    port's address)."""
    entry = plan["nodes"][name]
    where = "plan: nodes.%s" % name
    if not isinstance(entry, dict) or not isinstance(entry.get("interfaces"), list) or not entry["interfaces"]:
        raise PlanesNodeError("%s.interfaces: a non-empty list is needed" % where)
    if len(entry["interfaces"]) > MAX_PORTS:
        raise PlanesNodeError("%s.interfaces: %d ports, at most %d" % (where, len(entry["interfaces"]), MAX_PORTS))
    ports = [_port(where, index, item) for index, item in enumerate(entry["interfaces"])]
    primary = ((plan.get("node_planes") or {}).get(name) or {}).get("primary", entry.get("primary"))
    if isinstance(primary, dict):
        primary = primary.get("address")
    if primary is None:
        raise PlanesNodeError("%s: the node's primary address is missing (node_planes.%s.primary)" % (where, name))
    try:
        address = ipaddress.IPv4Interface(str(primary)).ip
    except ValueError:
        raise PlanesNodeError("%s.primary: %r is not an IPv4 address" % (where, primary))
    on_port = [port["name"] for port in ports if port["ip"] == str(address)]
    return {"ports": ports, "primary": "%s/32" % address, "primary_dev": on_port[0] if on_port else "lo"}


def _port(where: str, index: int, item: Any) -> dict[str, Any]:
    """One interface of the plan: name, address (with its prefix length), MAC."""
    here = "%s.interfaces[%d]" % (where, index)
    if not isinstance(item, dict):
        raise PlanesNodeError("%s: a mapping is needed" % here)
    name = str(item.get("name", ""))
    if not IFNAME_RE.match(name):
        raise PlanesNodeError("%s.name: %r is not a Linux interface name" % (here, item.get("name")))
    try:
        address = ipaddress.IPv4Interface(str(item.get("address")))
    except ValueError:
        raise PlanesNodeError("%s.address: %r is not an IPv4 address with a prefix length" % (here, item.get("address")))
    if address.network.prefixlen == 32:
        raise PlanesNodeError("%s.address: %s has no plane subnet (prefix length 32)" % (here, address))
    mac = item.get("mac")
    if mac is not None:
        mac = str(mac).lower()
        if not MAC_RE.match(mac):
            raise PlanesNodeError("%s.mac: %r is not a MAC address" % (here, item.get("mac")))
    return {"name": name, "address": str(address), "ip": str(address.ip), "mac": mac}


def wanted(view: dict[str, Any], mode: str) -> dict[str, Any]:
    """What ``mode`` needs on the node: addresses per device, routes by
    destination, sysctls, MACs, whether the eBPF program is loaded.

    In l4_multipath a primary address held by a port moves to ``lo`` (as a
    /32 of scope host), the port keeping no address and reaching its peers
    through ``onlink`` next hops. Measured on Linux 6.18: a route lookup
    whose source address is a next hop's preferred source (the address the
    kernel picks on that next hop's device) always gets that next hop, never
    the hash (``ip route get PEER from PRIMARY ipproto tcp sport N``), so a
    primary on port 0 keeps every stream on port 0; a host-scope address on
    ``lo`` is no device's preferred source and the hash decides again."""
    if mode not in MODES:
        raise PlanesNodeError("mode %r: one of %s" % (mode, ", ".join(MODES)))
    moved = mode == "l4_multipath" and view["primary_dev"] != "lo"
    addresses = planned_addresses(dict(view, ports=view["ports"] if mode != "single" else view["ports"][:1]))
    if view["primary_dev"] != "lo" and not moved:
        del addresses["lo"]
    if moved:
        keep = [item for item in addresses[view["primary_dev"]] if item.split("/")[0] != view["primary"].split("/")[0]]
        addresses[view["primary_dev"]] = keep
    sysctls: dict[str, str] = {}
    for port in view["ports"] if mode != "single" else []:
        base = "net.ipv4.conf.%s." % port["name"]
        sysctls[base + "rp_filter"] = "2"
        if not (moved and port["name"] == view["primary_dev"]):  # there ARP answers for the primary on lo
            sysctls.update({base + "arp_ignore": "1", base + "arp_announce": "2"})
    if mode == "l4_multipath":
        sysctls[HASH_POLICY] = "1"
    macs = {port["name"]: port["mac"] for port in view["ports"] if port["mac"]}
    return {"addresses": addresses, "routes": _routes(view, mode, moved), "sysctls": sysctls, "macs": macs,
            "bpf": mode == "pmcme"}


def _routes(view: dict[str, Any], mode: str, moved: bool) -> dict[str, dict[str, Any]]:
    """One route per peer primary address: every plane in l4_multipath, port 0
    otherwise (none when the peer's primary is in port 0's connected subnet)."""
    src = view["primary"].split("/")[0]
    subnet0 = ipaddress.IPv4Interface(view["ports"][0]["address"]).network
    routes = {}
    for peer in view["peers"]:
        connected = ipaddress.IPv4Address(peer["primary"].split("/")[0]) in subnet0
        if mode != "l4_multipath" and connected:
            continue
        used = range(len(peer["ports"])) if mode == "l4_multipath" else range(1)
        hops = []
        for index in used:
            hop = {"via": peer["ports"][index]["ip"], "dev": view["ports"][index]["name"]}
            if moved and hop["dev"] == view["primary_dev"]:
                hop["onlink"] = True
            hops.append(hop)
        routes[peer["primary"]] = {"src": src, "nexthops": hops}
    return routes


def planned_addresses(view: dict[str, Any]) -> dict[str, list[str]]:
    """Every address the plan gives the node, the primary on ``lo`` included
    (what ``absent`` and a change of mode may remove)."""
    found: dict[str, list[str]] = {"lo": [view["primary"]]}
    for port in view["ports"]:
        found.setdefault(port["name"], []).append(port["address"])
    return found


def live_links(text: str) -> dict[str, dict[str, Any]]:
    """``ip -j address show`` -> name -> {mac, up, ifindex, addresses}
    (node_network's parser): addresses of every scope (the primary on ``lo``
    is scope host); output that is not a JSON list is an error."""
    return ln.parse_links(text, scope=None, strict=True)


def live_routes(text: str) -> dict[str, dict[str, Any]]:
    """``ip -j route show proto ROUTE_PROTOCOL`` -> destination (a/32) ->
    {src, nexthops [{via, dev, onlink}]} (node_network's parser): every
    route and next hop, in the kernel's order (the planes' order they were
    given in); output that is not a JSON list is an error."""
    return ln.parse_routes(text, gateways_only=False, sort_hops=False, strict=True)


def _route_text(dst: str, route: dict[str, Any]) -> str:
    """One of our routes (``{src, nexthops}``) as one line: what is compared, and shown."""
    return ln.route_text(dst, route["nexthops"], route["src"])


def link_changes(want: dict[str, Any], view: dict[str, Any], links: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Ports missing (an error), MACs to set, ports to bring up."""
    found = []
    for port in view["ports"]:
        name = port["name"]
        live = links.get(name)
        if live is None:
            raise PlanesNodeError("node %s: port %s of the plan is not an interface of the node" % (view["node"], name))
        mac = want["macs"].get(name)
        if mac and live["mac"] != mac:
            found.append(change("link", name + " mac", live["mac"], mac, ["ip", "link", "set", "dev", name, "address", mac]))
        if not live["up"]:
            found.append(change("link", name + " up", "down", "up", ["ip", "link", "set", "dev", name, "up"]))
    return found


def address_changes(want: dict[str, list[str]], planned: dict[str, list[str]],
                    links: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Addresses to add (wanted, missing) and to delete (planned, not wanted, present)."""
    found = []
    for dev in sorted(planned):
        live = set(links.get(dev, {}).get("addresses", []))
        for address in planned[dev]:
            keep = address in want.get(dev, [])
            if keep and address not in live:
                scope = ["scope", "host"] if dev == "lo" else []  # see wanted()
                found.append(change("address", "%s %s" % (dev, address), "", address, ["ip", "address", "add", address, "dev", dev] + scope))
            elif not keep and address in live:
                found.append(change("address", "%s %s" % (dev, address), address, "", ["ip", "address", "del", address, "dev", dev]))
    return found


def route_changes(want: dict[str, dict[str, Any]], live: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Our routes to replace (missing or different) and to delete (not wanted)."""
    found = []
    for dst in sorted(want):
        before = _route_text(dst, live[dst]) if dst in live else ""
        after = _route_text(dst, want[dst])
        if before != after:
            argv = ln.route_argv("replace", dst, want[dst]["nexthops"], ROUTE_PROTOCOL, want[dst]["src"])
            found.append(change("route", dst, before, after, argv))
    for dst in sorted(set(live) - set(want)):
        found.append(change("route", dst, _route_text(dst, live[dst]), "", ln.route_argv("del", dst, [], ROUTE_PROTOCOL)))
    return found


def sysctl_path(name: str) -> str:
    """The /proc/sys file of a sysctl (dots are separators; interface names
    here have none)."""
    return "/proc/sys/" + name.replace(".", "/")


def sysctl_changes(want: dict[str, str], live: dict[str, str | None], saved: dict[str, str]) -> list[dict[str, Any]]:
    """Sysctls to set (``want``) and to put back (in ``saved``, no longer wanted)."""
    found = []
    for name in sorted(set(want) | set(saved)):
        target = want.get(name, saved.get(name))
        before = live.get(name)
        if before is None:
            if name in want:
                raise PlanesNodeError("sysctl %s: not found on the node (is the port there?)" % name)
            continue
        if target is not None and before != target:
            found.append(change("sysctl", name, before, target, ["sysctl", "-q", "-w", "%s=%s" % (name, target)]))
    return found


def saved_sysctls(want: dict[str, str], live: dict[str, str | None], saved: dict[str, str]) -> dict[str, str]:
    """The values to put back one day: those saved before, plus the live value
    of every sysctl this run sets for the first time."""
    result = {name: value for name, value in saved.items() if name in want}
    for name in want:
        if name not in result and live.get(name) is not None:
            result[name] = str(live[name])
    return result


def diff(node: str, found: list[dict[str, Any]]) -> dict[str, str]:
    """``--diff`` text (node_network's): one line per changed item, before and after, led by its kind."""
    return ln.diff(node, found, kinds=True)
