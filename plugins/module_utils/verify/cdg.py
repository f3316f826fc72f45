# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verification of a routing function: the channel dependency graph (CDG).

With lossless (802.3x flow-controlled) Ethernet a frame holds its channel
while it waits for the next one, so a cycle of such waits is a deadlock
(segment-based routing paper §1.1; Dally and Seitz). A deterministic
routing is deadlock-free when its CDG -- one node per directed link, one
edge per two channels used one after the other by some path -- has no
cycle. :func:`verify_routing` checks that, and that every ordered pair of
switches is connected, no path crosses a down link, no frame is sent back
over the link it came in on (U-turn), and every table entry names a
channel that leaves the switch the frame is at.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..routing.base import RoutingError, RoutingFunction

# How many offending pairs/links a report lists (the counts are complete).
REPORT_LIMIT = 10


def _dependencies(routing: RoutingFunction) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any], int]:
    """Walk every (source, destination) pair; return the unique dependency
    edges (two arrays of channel ids), the channels used and the problems."""
    C = len(routing.topology.channels)
    names = routing.switch_names
    down = np.zeros(C, dtype=bool)
    for link in routing.down:
        down[2 * link:2 * link + 2] = True
    pair_keys, used = [], np.zeros(C, dtype=bool)
    problems: dict[str, Any] = {"unreachable": [], "unreachable_count": 0, "loops": 0, "dead_ends": 0,
                                "inconsistent": [], "inconsistent_count": 0}
    max_length = 0
    for t, dest in enumerate(names):
        sources, hops, status = routing.walk(t)
        for code, key in ((2, "dead_ends"), (3, "loops"), (4, "inconsistent_count")):
            problems[key] += int((status == code).sum())
        for i in np.flatnonzero(status != 1).tolist():
            problems["unreachable_count"] += 1
            if len(problems["unreachable"]) < REPORT_LIMIT:
                problems["unreachable"].append([names[sources[i]], dest,
                                                routing.WALK_PROBLEMS[int(status[i])]])
            if status[i] == 4 and len(problems["inconsistent"]) < REPORT_LIMIT:
                problems["inconsistent"].append([names[sources[i]], dest])
        if hops.shape[1]:
            valid = hops >= 0
            used[hops[valid]] = True
            max_length = max(max_length, int(valid.sum(axis=1).max()))
            first, second = hops[:, :-1], hops[:, 1:]
            pair = (first >= 0) & (second >= 0)
            if pair.any():
                pair_keys.append(np.unique(first[pair] * C + second[pair]))
    keys = np.unique(np.concatenate(pair_keys)) if pair_keys else np.empty(0, np.int64)
    return keys // max(C, 1), keys % max(C, 1), used, down, problems, max_length


def channel_dependency_graph(routing: RoutingFunction) -> nx.DiGraph:
    """The CDG of ``routing``: a DiGraph whose nodes are the channel ids used
    by some path (attribute ``name``: ``"sw0:5->sw1:5"``) and with one edge
    ``c -> d`` per pair of channels used one after the other on a path."""
    first, second, used, _down, _problems, _length = _dependencies(routing)
    return _graph(routing, first, second, used)


def _graph(routing: RoutingFunction, first: np.ndarray, second: np.ndarray,
           used: np.ndarray) -> nx.DiGraph:
    """The CDG from its dependency edges and the channels used."""
    channels = routing.topology.channels
    graph = nx.DiGraph(engine=routing.engine)
    graph.add_nodes_from((int(c), {"name": str(channels[c])}) for c in np.flatnonzero(used))
    graph.add_edges_from(zip(first.tolist(), second.tolist()))
    return graph


def first_cycle(graph: nx.DiGraph) -> list[Any]:
    """A cycle of ``graph`` as a node list, the first node repeated at the
    end ([] if acyclic): searched inside the strongly connected component
    holding the lowest node, so a big acyclic CDG costs one linear pass."""
    if nx.is_directed_acyclic_graph(graph):
        return []
    component = min((part for part in nx.strongly_connected_components(graph) if len(part) > 1),
                    key=min)
    edges = nx.find_cycle(graph.subgraph(component), source=min(component))
    return [a for a, _b in edges] + [edges[0][0]]


def verify_routing(routing: RoutingFunction) -> dict[str, Any]:
    """Check ``routing`` and return a report (plain data):

    ``acyclic`` and ``cycle`` (the first CDG cycle found, as channel
    strings, the first channel repeated at the end; [] if none),
    ``connected`` with ``unreachable`` ([src, dst, why] lists) and its
    count, ``down_links_used`` (link names), ``u_turns`` (``"in -> out"``
    strings), ``consistent`` with ``inconsistent`` pairs, sizes
    (``channels_used``, ``dependencies``, ``max_path_length``) and ``ok``,
    true when every check passed.
    """
    topology = routing.topology
    channels = topology.channels
    first, second, used, down, problems, max_length = _dependencies(routing)
    graph = _graph(routing, first, second, used)
    cycle = [str(channels[c]) for c in first_cycle(graph)]
    down_used = sorted({int(c) >> 1 for c in np.flatnonzero(used & down)})
    u_turn = np.flatnonzero(second == (first ^ 1))
    report = {
        "engine": routing.engine,
        "switches": len(routing.switch_names),
        "pairs": len(routing.switch_names) * (len(routing.switch_names) - 1),
        "acyclic": not cycle,
        "cycle": cycle,
        "connected": problems["unreachable_count"] == 0,
        "unreachable": problems["unreachable"],
        "unreachable_count": problems["unreachable_count"],
        "down_links_used": [topology.links[i].name for i in down_used[:REPORT_LIMIT]],
        "u_turns": ["%s -> %s" % (channels[first[i]], channels[second[i]])
                    for i in u_turn[:REPORT_LIMIT].tolist()],
        "consistent": problems["inconsistent_count"] == 0,
        "inconsistent": problems["inconsistent"],
        "channels_used": int(used.sum()),
        "dependencies": len(first),
        "max_path_length": max_length,
    }
    report["ok"] = bool(report["acyclic"] and report["connected"] and report["consistent"]
                        and not down_used and not len(u_turn))
    return report


def assert_deadlock_free(routing: RoutingFunction) -> dict[str, Any]:
    """Raise RoutingError naming the cycle when the CDG of ``routing`` has
    one; otherwise return the :func:`verify_routing` report."""
    report = verify_routing(routing)
    if not report["acyclic"]:
        raise RoutingError("%s: the routing can deadlock: its channel dependency graph has "
                           "the cycle %s" % (routing.engine, " => ".join(report["cycle"])))
    return report
