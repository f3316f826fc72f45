# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a link cannot switch without a drain: the obstruction proof.

A transition is order-free and lossless when the old and the new routing's
channel dependency graphs together are acyclic (the on/off paper's Double
Scheme condition, §3.3). For most links the routing that keeps the base
routing's turn order (:class:`.transition_planner._Router`) has that
property. For a few links near the engine's root (3 of the 32 links of a
segment-routed 4x4 torus, 11 of the 128 of an 8x8 one) none exists, and
:func:`direct_obstruction` shows why for the report: some pair loses every
walk that avoids the link and makes no turn ``a -> b`` whose channel ``b``
already reaches ``a`` in the base routing's dependency graph. Every routing
without the link routes that pair over such a turn, which closes a cycle
with the old routing's dependencies; and the transition proof holds the
old routing's dependencies in its very first window (frames of the old
bank are in flight until it is drained). So no flip order, searched or
order-free, is provably deadlock-free, and the planner empties the fabric
instead (a drain, frames lost, said).

What this does not rule out: a chain of intermediate routings, each hop
acyclic together with the one before and the old bank drained between
hops. Such chains exist for the 4x4 torus's three links, but with the
renamed assignment a frame crossing a flipped and an unflipped switch
follows both routings on one walk, and those mixed walks need every
channel to continue forward in one turn order: the chains found so far do
not give that (docs/transitions.md, "Limits").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

from ..fabric.topology import Topology
from ..routing.base import RoutingError, RoutingFunction, select_paths, turns
from ..verify import cdg

# A backward turn costs this many hops in the detour search.
BACKWARD_COST = 1000

Turn = tuple[int, int]


def dependency_graph(routing: RoutingFunction) -> nx.DiGraph:
    """The channel dependency graph of ``routing``, every channel a node."""
    graph = cdg.channel_dependency_graph(routing)
    graph.add_nodes_from(range(len(routing.topology.channels)))
    return graph


def closing_turns(topology: Topology, graph: nx.DiGraph, down: Iterable[int]) -> set[Turn]:
    """Turns ``(a, b)`` between usable channels (links ``down`` unused) with
    ``b`` reaching ``a`` in the acyclic ``graph``: each closes a cycle with
    it by itself."""
    closure = nx.transitive_closure_dag(graph)
    first, second = turns(topology, sorted(down))
    return {(a, b) for a, b in zip(first.tolist(), second.tolist()) if closure.has_edge(b, a)}


def detour_path(topology: Topology, graph: nx.DiGraph, pair: tuple[str, str],
                down: Iterable[int]) -> list[int]:
    """The walk (channel ids) from ``pair[0]`` to ``pair[1]`` avoiding the
    links ``down`` that makes the fewest turns backward in ``graph`` (turns
    ``a -> b`` with ``b`` reaching ``a``), then the fewest hops."""
    closure = nx.transitive_closure_dag(graph)
    down = set(down)
    first, second = turns(topology, sorted(down))
    walks = nx.DiGraph()
    for a, b in zip(first.tolist(), second.tolist()):
        walks.add_edge(a, b, weight=1 + BACKWARD_COST * closure.has_edge(b, a))
    source, target = pair
    for channel in topology.channels:
        if channel.link in down:
            continue
        if channel.src == source:
            walks.add_edge("source", channel.id, weight=1)
        if channel.dst == target:
            walks.add_edge(channel.id, "target", weight=0)
    return nx.shortest_path(walks, "source", "target", weight="weight")[1:-1]


def direct_obstruction(topology: Topology, start: RoutingFunction, down: Iterable[int]) -> dict[str, Any] | None:
    """Why no routing without the links ``down`` can follow ``start``
    directly: a pair every one of whose walks (no U-turns) makes a turn
    ``a -> b`` with ``b`` reaching ``a`` in ``start``'s dependency graph --
    such a turn closes a cycle with the old routing whatever else the new
    one does --, with one such turn and the dependency chain back. None
    when no pair is cut off that way. ``pair`` is None in the result when
    the links alone cut the pair off."""
    graph = dependency_graph(start)
    prohibited = closing_turns(topology, graph, down)
    try:
        select_paths(topology, sorted(prohibited), start.engine, down=sorted(down),
                     options=dict(start.options or {}), balance=False)
        return None
    except RoutingError as exc:
        if exc.pair is None:
            raise
        pair = exc.pair
    walk = detour_path(topology, graph, pair, down)
    backward = [(a, b) for a, b in zip(walk, walk[1:]) if nx.has_path(graph, b, a)]
    if not backward:    # the pair is cut off by the links alone
        return {"pair": None, "reason": "%s cannot reach %s without the link" % pair}
    a, b = backward[0]
    channels = topology.channels
    back = nx.shortest_path(graph, b, a)
    return {"pair": list(pair),
            "turn": [str(channels[a]), str(channels[b])],
            "chain": [str(channels[c]) for c in back],
            "reason": "every walk from %s to %s without the link turns backward in the base "
                      "routing's dependency graph, e.g. %s -> %s while the base routing has a "
                      "chain of %d dependencies from %s back to %s" % (
                          pair[0], pair[1], channels[a], channels[b], len(back) - 1, channels[b],
                          channels[a])}
