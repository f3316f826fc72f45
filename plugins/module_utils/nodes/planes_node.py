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
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from ..errors import EtherclusterError

MODES = ("pmcme", "l4_multipath", "single")
# route protocol of the routes node_planes installs (node_network uses 233)
ROUTE_PROTOCOL = "234"
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")
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


def parse_links(text: str) -> dict[str, dict[str, Any]]:
    """``ip -j address show`` -> name -> {mac, up, addresses (IPv4 a/len)}."""
    links = {}
    for item in _json_list(text, "ip -j address show"):
        addresses = ["%s/%s" % (a.get("local"), a.get("prefixlen")) for a in item.get("addr_info", [])
                     if a.get("family") == "inet"]
        links[str(item.get("ifname"))] = {"mac": str(item.get("address", "")).lower(),
                                          "up": "UP" in item.get("flags", []), "addresses": addresses,
                                          "ifindex": int(item.get("ifindex", 0))}
    return links


def parse_routes(text: str) -> dict[str, dict[str, Any]]:
    """``ip -j route show proto ROUTE_PROTOCOL`` -> destination (a/32) ->
    {src, nexthops [{via, dev}]} (a single-path route has one nexthop)."""
    routes = {}
    for item in _json_list(text, "ip -j route show"):
        dst = str(item.get("dst"))
        dst = dst if "/" in dst else dst + "/32"
        hops = item.get("nexthops") or [item]
        routes[dst] = {"src": item.get("prefsrc"),
                       "nexthops": [_hop(hop) for hop in hops]}
    return routes


def _hop(item: dict[str, Any]) -> dict[str, Any]:
    """One next hop of ``ip -j route`` output."""
    hop: dict[str, Any] = {"via": item.get("gateway"), "dev": item.get("dev")}
    if "onlink" in (item.get("flags") or []):
        hop["onlink"] = True
    return hop


def _json_list(text: str, what: str) -> list[dict[str, Any]]:
    """The JSON list an iproute2 command printed."""
    try:
        value = json.loads(text or "[]")
    except ValueError as exc:
        raise PlanesNodeError("%s: unreadable output (%s)" % (what, exc))
    if not isinstance(value, list):
        raise PlanesNodeError("%s: a JSON list was expected" % what)
    return [item for item in value if isinstance(item, dict)]


def route_text(dst: str, route: dict[str, Any]) -> str:
    """A route as one line (``--diff``)."""
    hops = " ".join("nexthop via %s dev %s%s" % (hop["via"], hop["dev"], " onlink" if hop.get("onlink") else "")
                    for hop in route["nexthops"])
    return "%s src %s %s" % (dst, route["src"], hops)


def route_argv(verb: str, dst: str, route: dict[str, Any]) -> list[str]:
    """``ip route replace|del`` for one of our routes."""
    argv = ["ip", "route", verb, dst, "proto", ROUTE_PROTOCOL]
    if verb == "del":
        return argv
    argv += ["src", route["src"]]
    hops = route["nexthops"]
    for hop in hops:
        argv += ([] if len(hops) == 1 else ["nexthop"]) + ["via", hop["via"], "dev", hop["dev"]] + (["onlink"] if hop.get("onlink") else [])
    return argv


def change(kind: str, what: str, before: str, after: str, argv: list[str]) -> dict[str, Any]:
    """One change: what it is about, before and after, the command."""
    return {"kind": kind, "what": what, "before": before, "after": after, "argv": argv}


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
        before = route_text(dst, live[dst]) if dst in live else ""
        after = route_text(dst, want[dst])
        if before != after:
            found.append(change("route", dst, before, after, route_argv("replace", dst, want[dst])))
    for dst in sorted(set(live) - set(want)):
        found.append(change("route", dst, route_text(dst, live[dst]), "", route_argv("del", dst, live[dst])))
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
    """``--diff`` text: one line per changed item, before and after."""
    before = ["%s %s: %s" % (item["kind"], item["what"], item["before"] or "(none)") for item in found]
    after = ["%s %s: %s" % (item["kind"], item["what"], item["after"] or "(none)") for item in found]
    return {"before_header": "%s (live)" % node, "after_header": "%s (planned)" % node,
            "before": "\n".join(before) + ("\n" if before else ""), "after": "\n".join(after) + ("\n" if after else "")}
