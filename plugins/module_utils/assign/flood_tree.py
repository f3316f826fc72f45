# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric's broadcast flood tree: contained broadcasts for a renamed
VLAN assignment.

A renamed assignment (switch-tagged paper §3.2.2) re-classifies frames at
every input port, so a broadcast floods along every turn of the routing:
Theorem 1 makes it end, but one ARP request on an 8x8 torus with segment
routing crosses switch links ~2e8 times and reaches each host many times.
Broadcasts need no particular path, only to reach every host once, so
they can leave the VLANs aside: every switch sends a broadcast out of the
ports of one spanning tree of the fabric and its host ports, never back
out of the port it came in on. From any source each switch is then
entered once and each host receives one copy, whatever VLAN the frame is
in (the intent's per-switch ``broadcast_ports``, verify/dot1q.py).

The tree is a breadth-first tree from a switch of least eccentricity (the
fewest hops for the farthest host), over the links the routing uses, the
lowest link index first among parallel links. Unicast frames keep the
routing's paths; only platforms whose pipeline matches the broadcast
address across VLANs can hold the tree (platforms/capabilities.py
``BROADCAST_TREE_PLATFORMS``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import networkx as nx

from .vlans import _port_key

if TYPE_CHECKING:
    from ..fabric.topology import Topology


def flood_tree(topology: Topology, avoided: Iterable[int] = ()) -> dict[str, Any]:
    """The broadcast flood tree of ``topology`` over its links not in
    ``avoided`` (indexes) and not down: ``{"root": switch, "links": [link
    indexes], "ports": {switch: [its tree ports and host ports, sorted]}}``.
    A disconnected fabric gets one tree per part (each part's broadcasts
    stay in it, as its unicasts do)."""
    graph = topology.switch_graph(down=set(avoided))
    links: list[int] = []
    roots = []
    for part in sorted((sorted(nodes) for nodes in nx.connected_components(graph)), key=min):
        sub = nx.Graph()
        sub.add_nodes_from(part)
        for a, b, key in sorted(graph.subgraph(part).edges(keys=True), key=lambda e: e[2]):
            if not sub.has_edge(a, b):
                sub.add_edge(a, b, link=key)
        eccentricity = nx.eccentricity(sub) if len(part) > 1 else {part[0]: 0}
        root = min(part, key=lambda name: (eccentricity[name], topology.switches[name].index))
        roots.append(root)
        for parent, child in nx.bfs_edges(sub, root, sort_neighbors=sorted):
            links.append(sub.edges[parent, child]["link"])
    ports: dict[str, set[str]] = {name: set() for name in topology.switches}
    for index in links:
        link = topology.links[index]
        ports[link.a.switch].add(link.a.port)
        ports[link.b.switch].add(link.b.port)
    for host in topology.hosts.values():
        ports[host.switch].add(host.port)
    return {"root": roots[0] if roots else None, "links": sorted(links),
            "ports": {name: sorted(found, key=_port_key) for name, found in ports.items()}}
