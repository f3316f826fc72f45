# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Linux side of a host-routed plan: one node's interfaces, addresses,
static routes, forwarding and reverse-path filtering (docs/nodes.md).

Pure functions, standard library only (the module ``node_network`` runs
this on the node): the node's entry of the plan (``nodes.<node>`` of the
node network contract, schema ``schemas/node_network.v1.schema.json``) and
the node's live state (``ip -j address``, ``ip -j route``, ``sysctl``
output) in; the iproute2/sysctl commands that make the live state match
out, plus a readable before/after for ``--diff``. The ``ip -j`` parsers
(:func:`parse_links`, :func:`parse_routes`), the route commands and texts
(:func:`route_argv`, :func:`route_text`), :func:`change` and :func:`diff`
serve node_planes too (``planes_node``: its own options, protocol 234).

Ownership: the routes this code installs carry the route protocol
:data:`ROUTE_PROTOCOL`; a route of that protocol that the plan does not
name is removed, routes of any other protocol are left alone unless the
plan names their destination (then they are replaced). Addresses are
declarative on the plan's interfaces only (IPv4, scope global); other
interfaces are never touched.

:func:`planned_paths` follows the routes of the plan hop by hop (longest
prefix match, connected subnets first) and tells which nodes forward a
packet from one node to an address: what the lab's verification compares
with the hops it measures.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from ..errors import EtherclusterError

# the route protocol number of the routes node_network installs (iproute2
# prints it as a number: no name in /etc/iproute2/rt_protos is needed)
ROUTE_PROTOCOL = "233"
IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
SYSCTL_RE = re.compile(r"^[a-z0-9_]+(\.[A-Za-z0-9_-]+)+$")
FORWARDING = "net.ipv4.ip_forward"
# where the changes go when they are applied: links first, then addresses,
# then sysctls (forwarding before routes through other nodes matter), routes last
ORDER = ("link", "address", "sysctl", "route")


class NodeNetworkError(EtherclusterError):
    """A node's entry of the plan, or its live state, cannot be used (names
    the node, interface, route or field)."""


def rp_filter_sysctl(interface: str) -> str:
    """The rp_filter sysctl of ``interface`` (``all`` for the global one)."""
    return "net.ipv4.conf.%s.rp_filter" % interface


def check_node(name: str, entry: Any) -> dict[str, Any]:
    """The node ``name``'s entry of the plan, checked and normalised:
    interfaces (name, address as ``a.b.c.d/len``, lower-case MAC or None),
    routes (``to`` as a network, ``nexthops`` a sorted list of
    ``{via, dev}``), forwarding (bool), rp_filter (0/1/2), sysctls
    (name -> text). Raises :class:`NodeNetworkError` naming the field."""
    where = "node %s" % name
    if not isinstance(entry, dict):
        raise NodeNetworkError("%s: the plan's entry must be a mapping, got %s" % (where, type(entry).__name__))
    unknown = sorted(set(entry) - {"interfaces", "routes", "forwarding", "rp_filter", "sysctls"})
    if unknown:
        raise NodeNetworkError("%s: unknown fields %s" % (where, ", ".join(unknown)))
    interfaces = [_check_interface(where, index, item)
                  for index, item in enumerate(_list(entry.get("interfaces"), where + ": interfaces"))]
    names = [item["name"] for item in interfaces]
    if len(set(names)) != len(names):
        raise NodeNetworkError("%s: interfaces: a name appears twice (%s)" % (where, ", ".join(names)))
    routes = [_check_route(where, index, item, names)
              for index, item in enumerate(_list(entry.get("routes", []), where + ": routes"))]
    targets = [route["to"] for route in routes]
    if len(set(targets)) != len(targets):
        raise NodeNetworkError("%s: routes: a destination appears twice" % where)
    forwarding = entry.get("forwarding", False)
    if not isinstance(forwarding, bool):
        raise NodeNetworkError("%s: forwarding must be true or false, got %r" % (where, forwarding))
    rp_filter = entry.get("rp_filter", 0)
    if isinstance(rp_filter, bool) or rp_filter not in (0, 1, 2):
        raise NodeNetworkError("%s: rp_filter must be 0 (off), 1 (strict) or 2 (loose), got %r" % (where, rp_filter))
    sysctls = entry.get("sysctls") or {}
    if not isinstance(sysctls, dict):
        raise NodeNetworkError("%s: sysctls must be a mapping name -> value" % where)
    for key, value in sysctls.items():
        if not isinstance(key, str) or not SYSCTL_RE.match(key) or isinstance(value, (dict, list)) or value is None:
            raise NodeNetworkError("%s: sysctls: %r = %r is not a sysctl name and a plain value" % (where, key, value))
    return {"name": name, "interfaces": interfaces, "routes": sorted(routes, key=lambda r: _net_key(r["to"])),
            "forwarding": forwarding, "rp_filter": rp_filter,
            "sysctls": {key: _sysctl_text(value) for key, value in sorted(sysctls.items())}}


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise NodeNetworkError("%s: must be a list" % where)
    return value


def _sysctl_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _net_key(network: str) -> tuple[int, int]:
    net = ipaddress.ip_network(network)
    return int(net.network_address), net.prefixlen


def _check_interface(where: str, index: int, item: Any) -> dict[str, Any]:
    here = "%s: interfaces[%d]" % (where, index)
    if not isinstance(item, dict):
        raise NodeNetworkError("%s: must be a mapping" % here)
    name = item.get("name")
    if not isinstance(name, str) or not IFNAME_RE.match(name):
        raise NodeNetworkError("%s: name %r is not a Linux interface name (1-15 letters, digits, '_', '.', '-')"
                               % (here, name))
    here = "%s: interface %s" % (where, name)
    try:
        address = ipaddress.IPv4Interface(str(item.get("address")))
    except ValueError:
        raise NodeNetworkError("%s: address %r is not an IPv4 address with prefix length (10.10.0.2/24)"
                               % (here, item.get("address"))) from None
    if "/" not in str(item.get("address")):
        raise NodeNetworkError("%s: address %r needs its prefix length (10.10.0.2/24)" % (here, item.get("address")))
    mac = item.get("mac")
    if mac is not None:
        mac = str(mac).lower()
        if not MAC_RE.match(mac) or int(mac[:2], 16) & 1:
            raise NodeNetworkError("%s: mac %r is not a unicast MAC (02:00:0a:0a:00:02)" % (here, item.get("mac")))
    return {"name": name, "address": str(address), "mac": mac, "switch": item.get("switch")}


def _check_route(where: str, index: int, item: Any, interfaces: list[str]) -> dict[str, Any]:
    here = "%s: routes[%d]" % (where, index)
    if not isinstance(item, dict):
        raise NodeNetworkError("%s: must be a mapping" % here)
    try:
        to = str(ipaddress.IPv4Network(str(item.get("to")), strict=True))
    except ValueError as exc:
        raise NodeNetworkError("%s: to %r is not an IPv4 network (%s)" % (here, item.get("to"), exc)) from None
    here = "%s: route to %s" % (where, to)
    if "nexthops" in item:
        if "via" in item or "dev" in item:
            raise NodeNetworkError("%s: give either via/dev or nexthops, not both" % here)
        hops = _list(item["nexthops"], here + ": nexthops")
        if not hops:
            raise NodeNetworkError("%s: nexthops is empty" % here)
    else:
        hops = [item]
    nexthops = []
    for hop in hops:
        if not isinstance(hop, dict):
            raise NodeNetworkError("%s: a next hop must be a mapping with via and dev" % here)
        try:
            via = str(ipaddress.IPv4Address(str(hop.get("via"))))
        except ValueError:
            raise NodeNetworkError("%s: via %r is not an IPv4 address" % (here, hop.get("via"))) from None
        dev = hop.get("dev")
        if dev not in interfaces:
            raise NodeNetworkError("%s: dev %r is not one of the node's interfaces (%s)"
                                   % (here, dev, ", ".join(interfaces)))
        nexthops.append({"via": via, "dev": dev})
    nexthops.sort(key=lambda hop: (hop["dev"], int(ipaddress.IPv4Address(hop["via"]))))
    if len({(hop["via"], hop["dev"]) for hop in nexthops}) != len(nexthops):
        raise NodeNetworkError("%s: a next hop appears twice" % here)
    return {"to": to, "nexthops": nexthops}


def _json_list(text: str, command: str, strict: bool = False) -> list[dict[str, Any]]:
    """The mappings of the JSON list ``command`` printed ([] for no output).
    JSON that is not a list gives [] (``strict``: an error)."""
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise NodeNetworkError("cannot read `%s`: %s" % (command, exc)) from None
    if not isinstance(data, list):
        if strict:
            raise NodeNetworkError("cannot read `%s`: a JSON list was expected, got %s" % (command, type(data).__name__))
        return []
    return [item for item in data if isinstance(item, dict)]


def parse_links(text: str, scope: str | None = "global", strict: bool = False) -> dict[str, dict[str, Any]]:
    """``ip -j address show`` output -> per interface: ``up`` (administratively),
    ``mac``, ``ifindex`` and ``addresses`` (IPv4 ``a.b.c.d/len``, sorted) of
    scope ``scope`` (an address without one is global; None: every scope,
    as node_planes needs for its primary on ``lo``, scope host). ``strict``:
    output that is JSON but not a list is an error, not "no links"."""
    links = {}
    for link in _json_list(text, "ip -j address show", strict):
        if "ifname" not in link:
            continue
        addresses = ["%s/%s" % (info.get("local"), info.get("prefixlen")) for info in link.get("addr_info", [])
                     if info.get("family") == "inet" and scope in (None, info.get("scope", "global"))]
        links[link["ifname"]] = {"up": "UP" in link.get("flags", []), "mac": str(link.get("address", "")).lower(),
                                 "ifindex": int(link.get("ifindex", 0)), "addresses": sorted(addresses)}
    return links


def parse_routes(text: str, gateways_only: bool = True, sort_hops: bool = True,
                 strict: bool = False) -> dict[str, dict[str, Any]]:
    """``ip -j route show`` (IPv4) output -> per destination network
    (``default`` is 0.0.0.0/0, an address a /32): ``protocol``, ``src`` (the
    preferred source address, or None) and ``nexthops`` (``{via, dev}``, plus
    ``onlink: True`` on an onlink next hop).

    ``gateways_only`` (node_network): unicast routes only, and only next
    hops with a gateway (a connected route has none: ``nexthops`` []);
    False: every route, a next hop without a gateway has ``via`` None.
    ``sort_hops``: next hops by device, then address (the order of the
    plan's routes in :func:`check_node`); False: as the kernel lists them,
    the order they were given in (node_planes' plane order). ``strict``:
    output that is JSON but not a list is an error, not "no routes"."""
    routes = {}
    for route in _json_list(text, "ip -j route show", strict):
        if gateways_only and route.get("type", "unicast") != "unicast":
            continue
        dst = str(route.get("dst", ""))
        dst = "0.0.0.0/0" if dst == "default" else dst if "/" in dst else dst + "/32"
        nexthops = [_hop(hop) for hop in route.get("nexthops") or [route] if "gateway" in hop or not gateways_only]
        if sort_hops:
            nexthops.sort(key=_hop_key)
        routes[dst] = {"protocol": str(route.get("protocol", "")), "src": route.get("prefsrc"), "nexthops": nexthops}
    return routes


def _hop(item: dict[str, Any]) -> dict[str, Any]:
    """One next hop of ``ip -j route`` output: ``{via, dev}`` (+ ``onlink``)."""
    hop: dict[str, Any] = {"via": item.get("gateway"), "dev": item.get("dev")}
    if "onlink" in (item.get("flags") or []):
        hop["onlink"] = True
    return hop


def _hop_key(hop: dict[str, Any]) -> tuple[str, int]:
    """Device name, then address (no gateway first)."""
    return str(hop["dev"]), int(ipaddress.IPv4Address(hop["via"])) if hop["via"] else -1


def parse_sysctl(text: str) -> dict[str, str]:
    """``sysctl NAME...`` output (``name = value`` lines) -> name -> value.
    A name sysctl did not know (an interface that does not exist) is absent."""
    values = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(" = ")
        if sep:
            values[key.strip().replace("/", ".")] = value.strip()
    return values


def wanted_sysctls(node: dict[str, Any]) -> dict[str, str]:
    """The sysctls the node's entry sets: forwarding, rp_filter of ``all``
    and of every interface of the plan, then the extra ones."""
    wanted = {FORWARDING: "1" if node["forwarding"] else "0", rp_filter_sysctl("all"): str(node["rp_filter"])}
    for interface in node["interfaces"]:
        wanted[rp_filter_sysctl(interface["name"])] = str(node["rp_filter"])
    wanted.update(node["sysctls"])
    return wanted


def route_argv(verb: str, to: str, nexthops: list[dict[str, Any]], protocol: str = ROUTE_PROTOCOL,
               src: str | None = None) -> list[str]:
    """``ip route VERB TO proto PROTOCOL``, then (not for ``del``) ``src`` and
    the next hops: ``via A dev D`` for one, ``nexthop via A dev D`` each for
    several, ``onlink`` after an onlink one."""
    argv = ["ip", "route", verb, to, "proto", protocol]
    if verb == "del":
        return argv
    argv += ["src", src] if src else []
    for hop in nexthops:
        argv += ([] if len(nexthops) == 1 else ["nexthop"]) + ["via", hop["via"], "dev", hop["dev"]]
        argv += ["onlink"] if hop.get("onlink") else []
    return argv


def route_text(to: str, nexthops: list[dict[str, Any]], src: str | None = None) -> str:
    """A route as one line, the same for the plan and the live state:
    ``TO [src S] via A dev D [onlink] ...`` (``TO connected``: no next hop)."""
    hops = " ".join("via %s dev %s%s" % (hop["via"], hop["dev"], " onlink" if hop.get("onlink") else "")
                    for hop in nexthops)
    return "%s%s %s" % (to, " src %s" % src if src else "", hops or "connected")


def changes(node: dict[str, Any], links: dict[str, dict[str, Any]], routes: dict[str, dict[str, Any]],
            sysctls: dict[str, str], state: str = "present",
            saved: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """What to run so that the live state (``links`` of :func:`parse_links`,
    ``routes`` of :func:`parse_routes`, ``sysctls`` of :func:`parse_sysctl`)
    matches the checked entry ``node`` (``state`` present), or no longer
    holds what the entry added (``state`` absent: the plan's addresses and
    every route of :data:`ROUTE_PROTOCOL` go; the sysctls go back to
    ``saved``, their values before the first run). Each change: ``kind``
    (:data:`ORDER`), ``what``, ``before``, ``after`` (texts) and ``argv``.
    [] when nothing differs."""
    missing = [item["name"] for item in node["interfaces"] if item["name"] not in links]
    if missing:
        raise NodeNetworkError("node %s: interface %s is not on the node (it has %s)"
                               % (node["name"], ", ".join(missing), ", ".join(sorted(links)) or "none"))
    if state == "absent":
        # routes go before the addresses: deleting an address makes the kernel flush the routes
        # through its subnet, and a later `ip route del` of one would fail
        found = _absent_routes(routes) + _sysctl_changes(dict(saved or {}), sysctls) + _absent_links(node, links)
        return found
    found = _link_changes(node, links) + _route_changes(node, routes)
    found += _sysctl_changes(wanted_sysctls(node), sysctls)
    return sorted(found, key=lambda item: ORDER.index(item["kind"]))


def change(kind: str, what: str, before: str, after: str, argv: list[str]) -> dict[str, Any]:
    """One change: its kind, what it is about, before and after (texts), the command."""
    return {"kind": kind, "what": what, "before": before, "after": after, "argv": argv}


def _link_changes(node: dict[str, Any], links: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for item in node["interfaces"]:
        name, live = item["name"], links[item["name"]]
        if item["mac"] is not None and live["mac"] != item["mac"]:
            found.append(change("link", "%s mac" % name, live["mac"], item["mac"],
                                ["ip", "link", "set", "dev", name, "address", item["mac"]]))
        if not live["up"]:
            found.append(change("link", "%s state" % name, "down", "up", ["ip", "link", "set", "dev", name, "up"]))
        for address in live["addresses"]:
            if address != item["address"]:
                found.append(change("address", "%s address %s" % (name, address), address, "",
                                    ["ip", "address", "del", address, "dev", name]))
        if item["address"] not in live["addresses"]:
            found.append(change("address", "%s address %s" % (name, item["address"]), "", item["address"],
                                ["ip", "address", "add", item["address"], "dev", name]))
    return found


def _route_changes(node: dict[str, Any], routes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    wanted = {route["to"]: route["nexthops"] for route in node["routes"]}
    for to, nexthops in wanted.items():
        live = routes.get(to)
        if live is not None and live["protocol"] == ROUTE_PROTOCOL and live["nexthops"] == nexthops:
            continue
        before = route_text(to, live["nexthops"]) + " proto " + live["protocol"] if live else ""
        found.append(change("route", "route %s" % to, before, route_text(to, nexthops),
                            route_argv("replace", to, nexthops)))
    return found + _absent_routes({to: live for to, live in routes.items() if to not in wanted})


def _absent_links(node: dict[str, Any], links: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [change("address", "%s address %s" % (item["name"], item["address"]), item["address"], "",
                   ["ip", "address", "del", item["address"], "dev", item["name"]])
            for item in node["interfaces"] if item["address"] in links[item["name"]]["addresses"]]


def _absent_routes(routes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [change("route", "route %s" % to, route_text(to, live["nexthops"]), "", route_argv("del", to, []))
            for to, live in sorted(routes.items(), key=lambda item: _net_key(item[0]))
            if live["protocol"] == ROUTE_PROTOCOL]


def _sysctl_changes(wanted: dict[str, str], live: dict[str, str]) -> list[dict[str, Any]]:
    found = []
    for key, value in wanted.items():
        if live.get(key) is None:
            raise NodeNetworkError("sysctl %s does not exist on the node" % key)
        if live[key].split() != value.split():
            found.append(change("sysctl", key, live[key], value, ["sysctl", "-q", "-w", "%s=%s" % (key, value)]))
    return found


def saved_sysctls(node: dict[str, Any], live: dict[str, str], saved: dict[str, str] | None) -> dict[str, str]:
    """The values to restore with ``state=absent``: what was saved before,
    completed with the live value of every sysctl the plan sets and that
    was not saved yet (so the first run records the node's own values)."""
    result = dict(saved or {})
    for key in wanted_sysctls(node):
        if key not in result and key in live:
            result[key] = live[key]
    return result


def diff(node_name: str, found: list[dict[str, Any]], kinds: bool = False) -> dict[str, str]:
    """An Ansible ``diff`` of the changes: one line ``what: value`` per change
    before and after (a side without a value has no line). ``kinds``: each
    line starts with the change's kind (node_planes, whose ``what`` names
    only the item: a route's destination, a port)."""
    lines = {}
    for side in ("before", "after"):
        lines[side] = "".join("%s%s: %s\n" % (item["kind"] + " " if kinds else "", item["what"], item[side])
                              for item in found if item[side])
    return {"before": lines["before"], "after": lines["after"],
            "before_header": "node %s (live)" % node_name, "after_header": "node %s (plan)" % node_name}


def address_owners(nodes: dict[str, Any]) -> dict[str, str]:
    """Address (without prefix length) -> the node that holds it."""
    owners = {}
    for name, entry in nodes.items():
        for item in entry.get("interfaces", []):
            owners[str(ipaddress.IPv4Interface(item["address"]).ip)] = name
    return owners


def route_table(entry: dict[str, Any]) -> list[tuple[int, int, int, list[str]]]:
    """``entry``'s connected subnets and routes as ``(network, mask,
    prefix length, next hops)`` (integers; no next hop: connected), longest
    prefix first, connected before a route of the same prefix: what
    :func:`planned_paths` looks addresses up in."""
    table: list[tuple[int, int, int, list[str]]] = []
    for item in entry.get("interfaces", []):
        net = ipaddress.IPv4Interface(item["address"]).network
        table.append((int(net.network_address), int(net.netmask), net.prefixlen, []))
    for route in entry.get("routes", []):
        net = ipaddress.IPv4Network(route["to"])
        hops = sorted(str(hop["via"]) for hop in route.get("nexthops") or [route])
        table.append((int(net.network_address), int(net.netmask), net.prefixlen, hops))
    return sorted(table, key=lambda row: (-row[2], len(row[3])))


def _lookup(table: list[tuple[int, int, int, list[str]]], dst: int) -> list[str] | None:
    """The next hops (addresses) of the longest prefix holding ``dst``; []
    when ``dst`` is on a connected subnet; None: no route."""
    for network, mask, _prefixlen, hops in table:
        if dst & mask == network:
            return hops
    return None


def planned_paths(nodes: dict[str, Any], src: str, dst: str, limit: int = 16,
                  cache: dict[str, Any] | None = None) -> list[list[str]]:
    """Every sequence of forwarding nodes the plan's routes take from node
    ``src`` to address ``dst`` (several with multipath routes). Raises
    :class:`NodeNetworkError` when a node on the way has no route, a next
    hop belongs to no node or to a node whose forwarding is off, or the
    path loops (more than ``limit`` hops). ``cache``: a dict kept between
    calls on the same ``nodes`` (the owners and route tables, built once)."""
    cache = {} if cache is None else cache
    if "owners" not in cache:
        cache["owners"] = address_owners(nodes)
        cache["tables"] = {name: route_table(entry) for name, entry in nodes.items()}
    owners, tables = cache["owners"], cache["tables"]
    target = int(ipaddress.IPv4Address(dst))
    done: list[list[str]] = []
    todo: list[tuple[str, list[str]]] = [(src, [])]
    while todo:
        node, path = todo.pop()
        if owners.get(dst) == node:
            done.append(path)
            continue
        hops = _lookup(tables[node], target)
        if hops is None:
            raise NodeNetworkError("node %s: no route to %s (from %s)" % (node, dst, src))
        if not hops:
            done.append(path)
            continue
        if len(path) >= limit:
            raise NodeNetworkError("the route from %s to %s loops (%s)" % (src, dst, " -> ".join(path)))
        for hop in hops:
            if hop not in owners:
                raise NodeNetworkError("node %s: next hop %s towards %s is no node's address" % (node, hop, dst))
            if owners[hop] == owners.get(dst):  # the gateway is the destination node (another of its NICs)
                done.append(path)
            elif not nodes[owners[hop]].get("forwarding", False):
                raise NodeNetworkError("node %s would forward from %s to %s, but its forwarding is off"
                                       % (owners[hop], src, dst))
            else:
                todo.append((owners[hop], path + [owners[hop]]))
    return sorted(done)
