# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small simulator of Linux IPv4 forwarding over a host-routed plan, and
the proof it gives: every source reaches every address, without a loop, in
the fewest software forwards.

It reads only the node network contract (``nodes``: interfaces with
addresses and switches, static routes, forwarding; ``switches``: what is
cabled where) and ``subnets`` (the subnet of each switch), not the code
that made the routes. At each node a packet is matched like the kernel
does: the node's own addresses first (the weak host model: a node accepts
a packet for any of its addresses on any NIC), then the longest prefix of
the connected subnets and static routes; a connected match delivers on
that NIC's switch when the address sits on it, a gateway must be a
neighbour on the same switch, and a gateway that does not forward
(``forwarding: false``) drops what is not its own.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from typing import Any

# every source walked to every address up to this many (source, address)
# pairs; above it, the sources are a sample named in the checks
WALK_BUDGET = 4_000_000
MAX_FAILURES = 20


class _Net:
    """The plan read for walking: address owners, per-node prefix tables."""

    def __init__(self, plan: dict) -> None:
        self.nodes = plan["nodes"]
        self.owner: dict[int, tuple[str, str, str]] = {}  # address -> (node, nic, switch)
        self.duplicates: list[str] = []
        self.tables: dict[str, list[tuple[int, dict[int, tuple[str, str, int | None]]]]] = {}
        for name, node in self.nodes.items():
            self._read(name, node)
        self.subnets = {switch: ipaddress.IPv4Network(net) for switch, net in plan["subnets"].items()}

    def _read(self, name: str, node: dict) -> None:
        by_length: dict[int, dict[int, tuple[str, str, int | None]]] = {}
        switch_of = {}
        for nic in node["interfaces"]:
            address = ipaddress.IPv4Interface(nic["address"])
            if int(address.ip) in self.owner:
                self.duplicates.append("%s %s: address %s is also %s's" % (
                    name, nic["name"], address.ip, self.owner[int(address.ip)][0]))
            self.owner[int(address.ip)] = (name, nic["name"], nic["switch"])
            switch_of[nic["name"]] = nic["switch"]
            net = address.network
            by_length.setdefault(net.prefixlen, {})[int(net.network_address)] = (nic["name"], nic["switch"], None)
        for route in node["routes"]:
            net = ipaddress.IPv4Network(route["to"])
            entry = (route["dev"], switch_of.get(route["dev"], "?"), int(ipaddress.IPv4Address(route["via"])))
            by_length.setdefault(net.prefixlen, {}).setdefault(int(net.network_address), entry)
        self.tables[name] = sorted(by_length.items(), reverse=True)

    def lookup(self, node: str, address: int) -> tuple[str, str, int | None] | None:
        """The longest-prefix match of ``address`` in ``node``'s table."""
        for length, entries in self.tables[node]:
            mask = ((1 << length) - 1) << (32 - length) if length else 0
            entry = entries.get(address & mask)
            if entry is not None:
                return entry
        return None

    def splits(self) -> list[str]:
        """Routes more specific than a switch's subnet (the walk per subnet
        would not stand for every address in it then)."""
        found = []
        for node, table in self.tables.items():
            for length, entries in table:
                for network in entries:
                    for switch, subnet in self.subnets.items():
                        if subnet.prefixlen < length and int(subnet.network_address) == \
                                network & (((1 << subnet.prefixlen) - 1) << (32 - subnet.prefixlen)):
                            found.append("%s: a route inside %s's subnet %s" % (node, switch, subnet))
        return found


def _path(net: _Net, source: str, subnet: ipaddress.IPv4Network, memo: dict) -> tuple[list[str], str | None]:
    """The nodes a packet for ``subnet`` visits from ``source`` up to the
    one attached to its switch: ([source, gateway, ...], None), or
    (partial path, why it stops)."""
    path, seen = [source], {source}
    probe = int(subnet.network_address)
    node = source
    while True:
        key = (node, probe)
        if key not in memo:
            memo[key] = net.lookup(node, probe)
        entry = memo[key]
        if entry is None:
            return path, "%s has no route to %s" % (node, subnet)
        nic, switch, via = entry
        if via is None:
            return path, None if net.subnets.get(switch) == subnet else \
                "%s sends %s out of %s onto %s, which is not that subnet's switch" % (node, subnet, nic, switch)
        hop = net.owner.get(via)
        if hop is None or hop[2] != switch:
            return path, "%s's gateway %s for %s is not on %s (%s)" % (
                node, ipaddress.IPv4Address(via), subnet, switch, nic)
        if hop[0] in seen:
            return path + [hop[0]], "loop: %s" % " -> ".join(path + [hop[0]])
        path.append(hop[0])
        seen.add(hop[0])
        node = hop[0]


def _deliver(net: _Net, path: list[str], stop: str | None, address: int) -> tuple[int | None, str | None]:
    """Software forwards to ``address`` along a subnet's path (the weak host
    model: the first node owning it takes it), or (None, why not)."""
    owner, _nic, switch = net.owner[address]
    for position, node in enumerate(path):
        if node == owner:
            return max(0, position - 1), None
        if position and not net.nodes[node]["forwarding"]:
            return None, "%s does not forward (towards %s)" % (node, ipaddress.IPv4Address(address))
    if stop is not None:
        return None, stop
    return len(path) - 1, None


def trace(plan: dict, source: str, address: str) -> list[str]:
    """The gateways (addresses, in order) a packet from node ``source`` to
    ``address`` passes, as traceroute lists them before the destination.
    Raises ValueError when the plan does not deliver it."""
    net = _Net(plan)
    target = ipaddress.IPv4Address(address)
    subnet = next((s for s in net.subnets.values() if target in s), None)
    if subnet is None or int(target) not in net.owner:
        raise ValueError("%s is no address of the plan" % address)
    path, stop = _path(net, source, subnet, {})
    forwards, why = _deliver(net, path, stop, int(target))
    if forwards is None:
        raise ValueError(why)
    # traceroute lists the gateways' addresses: the "via" of each node before the last forward
    return [str(ipaddress.IPv4Address(net.lookup(node, int(target))[2]))  # type: ignore[index]
            for node in path[:forwards]]


def _switch_distances(plan: dict) -> dict[str, dict[str, int]]:
    """Switch hops between switches through forwarding nodes (breadth first),
    independent of the routes: the fewest software forwards possible."""
    graph: dict[str, set[str]] = {name: set() for name in plan["switches"]}
    for node in plan["nodes"].values():
        if node["forwarding"]:
            attached = [nic["switch"] for nic in node["interfaces"]]
            for switch in attached:
                graph[switch].update(other for other in attached if other != switch)
    distances = {}
    for start in graph:
        seen = {start: 0}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            for there in graph[here]:
                if there not in seen:
                    seen[there] = seen[here] + 1
                    queue.append(there)
        distances[start] = seen
    return distances


def _sources(plan: dict, sample: list[str] | None) -> tuple[list[str], bool]:
    names = list(plan["nodes"])
    addresses = sum(len(node["interfaces"]) for node in plan["nodes"].values())
    if len(names) * addresses <= WALK_BUDGET or not sample:
        return names, True
    return sample, False


def prove(plan: dict, expected: dict, sample: list[str] | None = None) -> dict[str, Any]:
    """Walk every source node to every address of the plan (or, above
    :data:`WALK_BUDGET` pairs, the ``sample`` sources) and report:
    ``delivered`` (every walk arrives), ``loops``, the most software forwards
    over (node, address) and over node pairs (nearest address), whether
    they stay within ``expected`` ({pairs, addresses}), whether every walk
    is as short as the fabric allows (``shortest``), the transit count of
    each forwarding node, and the plan's own consistency (unique addresses,
    cabling, ports)."""
    net = _Net(plan)
    problems = list(net.duplicates) + net.splits() + _cabling_problems(plan)
    sources, complete = _sources(plan, sample)
    distances = _switch_distances(plan)
    by_subnet: dict[str, list[int]] = {switch: [] for switch in net.subnets}
    for address, (_node, _nic, switch) in net.owner.items():
        by_subnet.setdefault(switch, []).append(address)
    result = _walk_all(plan, net, sources, by_subnet, distances)
    failures = problems + result.pop("failures")
    within = result["most_forwards"]["pairs"] <= expected["pairs"] \
        and result["most_forwards"]["addresses"] <= expected["addresses"]
    result.update({"sources": len(sources), "complete": complete, "expected_forwards": expected,
                   "within_expected": within, "failures": failures[:MAX_FAILURES],
                   "failure_count": len(failures)})
    result["passed"] = not failures and result["delivered"] and within and result["shortest"]
    return result


def _cabling_problems(plan: dict) -> list[str]:
    problems = []
    cabled = {(node, nic) for switch in plan["switches"].values() for node, nic in switch["attached"]}
    for name, node in plan["nodes"].items():
        for nic in node["interfaces"]:
            if (name, nic["name"]) not in cabled or [name, nic["name"]] not in plan["switches"][nic["switch"]]["attached"]:
                problems.append("%s %s: not cabled to %s" % (name, nic["name"], nic["switch"]))
    for switch, data in plan["switches"].items():
        if len(data["attached"]) > data["ports"]:
            problems.append("%s: %d NICs on %d ports" % (switch, len(data["attached"]), data["ports"]))
    return problems


def _walk_all(plan: dict, net: _Net, sources: list[str], by_subnet: dict[str, list[int]],
              distances: dict[str, dict[str, int]]) -> dict[str, Any]:
    memo: dict = {}
    failures: list[str] = []
    transit = {name: 0 for name, node in plan["nodes"].items() if node["forwarding"]}
    most = {"pairs": 0, "addresses": 0}
    walks = loops = longer = 0
    for source in sources:
        own = [nic["switch"] for nic in plan["nodes"][source]["interfaces"]]
        nearest: dict[str, int] = {}
        for switch, subnet in net.subnets.items():
            path, stop = _path(net, source, subnet, memo)
            loops += 1 if stop is not None and stop.startswith("loop") else 0
            if stop is None and len(path) - 1 > min(distances[s].get(switch, 1 << 30) for s in own):
                longer += 1
            for node in path[1:]:
                transit[node] = transit.get(node, 0) + 1
            for address in by_subnet.get(switch, []):
                owner = net.owner[address][0]
                if owner == source:
                    continue
                walks += 1
                forwards, why = _deliver(net, path, stop, address)
                if forwards is None:
                    failures.append("%s -> %s: %s" % (source, ipaddress.IPv4Address(address), why))
                    continue
                most["addresses"] = max(most["addresses"], forwards)
                nearest[owner] = min(nearest.get(owner, forwards), forwards)
        if nearest:
            most["pairs"] = max(most["pairs"], *nearest.values())
    return {"walks": walks, "delivered": not failures, "loops": loops, "most_forwards": most,
            "shortest": longer == 0, "longer_than_shortest": longer, "transit": transit, "failures": failures}


def _hops(net: _Net, source: str, address: int, memo: dict) -> list[tuple[str, str, str]]:
    """The NIC links a packet from ``source`` to ``address`` crosses, each
    (node, nic, "out"/"in"), following the tables like :func:`_path`."""
    owner, owner_nic, _switch = net.owner[address]
    links, node = [], source
    for _step in range(len(net.nodes)):
        key = (node, address)
        if key not in memo:
            memo[key] = net.lookup(node, address)
        nic, _switch, via = memo[key]
        links.append((node, nic, "out"))
        if via is None:
            return links + [(owner, owner_nic, "in")]
        hop, hop_nic, _hop_switch = net.owner[via]
        links.append((hop, hop_nic, "in"))
        if hop == owner:
            return links
        node = hop
    raise ValueError("loop from %s to %s" % (source, ipaddress.IPv4Address(address)))


def uniform_loads(plan: dict) -> dict[str, Any]:
    """Uniform all-to-all traffic over a plan that :func:`prove` passed:
    one unit per ordered node pair, sent to the destination's nearest
    address (fewest forwards; ties taken in turn, by the pair's index sum,
    so neither side of the ring is favoured). Returns the load of
    every directed NIC link (``"node nic out|in"``), ``max_load``,
    ``average_links`` (NIC links crossed per pair, two per SSB) and
    ``average_forwards`` (software forwards per pair)."""
    net = _Net(plan)
    memo: dict = {}
    loads: dict[str, int] = {}
    names = list(plan["nodes"])
    addresses = {name: [int(ipaddress.IPv4Interface(nic["address"]).ip) for nic in plan["nodes"][name]["interfaces"]]
                 for name in names}
    links_total = forwards_total = pairs = 0
    for first, source in enumerate(names):
        for second, target in enumerate(names):
            if target == source:
                continue
            ways = [_hops(net, source, address, memo) for address in addresses[target]]
            fewest = min(len(way) for way in ways)  # two links per SSB: fewest links, fewest forwards
            ties = [way for way in ways if len(way) == fewest]
            best = ties[(first + second // 2) % len(ties)]
            for node, nic, way in best:
                name = "%s %s %s" % (node, nic, way)
                loads[name] = loads.get(name, 0) + 1
            links_total += len(best)
            forwards_total += len(best) // 2 - 1
            pairs += 1
    return {"link_loads": loads, "max_load": max(loads.values()) if loads else 0,
            "average_links": links_total / pairs if pairs else 0.0,
            "average_forwards": forwards_total / pairs if pairs else 0.0, "pairs": pairs}
