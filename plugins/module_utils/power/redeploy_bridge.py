# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bridge routings for re-deploys whose two routings cannot coexist
(docs/failover.md, "Make-before-break re-deploy"): when the old and the new
channel dependency graphs together have a cycle, no flip order can be
proven (every phase's proof holds all of the old routing's dependencies,
from its install window, and all of the new one's, from its cleanup
window), so the move goes through a third routing, the *bridge*, in two
phases: old -> bridge, then bridge -> new. The old bank is drained and
removed before the second phase starts, so only consecutive routings ever
coexist and each phase needs its own pair to be jointly acyclic -- the
Double Scheme condition of the on/off paper (§3.1), once per phase.

The bridge is made of a *compatible turn set* ``T``: turns added one at a
time, each kept only if it closes no cycle with the old routing's
dependencies nor with the new one's (nor with the turns kept before).
``T`` is maximal: every turn left out would close a cycle with one of
them. The bridge takes the shortest balanced paths over ``T``
(:func:`.routing.base.select_paths`), so its dependencies are a subset of
``T`` and both phases meet the Double Scheme condition. The order in
which turns are offered decides which maximal set comes out: first the
turns both routings use (never refused), then those of one routing, then
those of the other, then every other turn (by channel ids) -- "old first"
or "new first". The link transitions' bridge (turns forward in one fixed
topological order of each graph) refuses many turns that close no cycle
at all; on the 4x4 mesh it leaves a pair of dor -> segment without a path,
where both maximal sets route every pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import networkx as nx

from ..errors import EtherclusterError
from ..fabric.topology import Topology
from ..routing.base import RoutingFunction, select_paths, turns
from ..verify import cdg

Turn = tuple[int, int]
# The orders in which turns are offered to the compatible set, tried in turn.
LEADS = ("old first", "new first")


def compatible_turns(graphs: Iterable[nx.DiGraph], offered: Iterable[Turn]) -> list[Turn]:
    """The turns of ``offered`` kept greedily, in that order: a turn
    ``(a, b)`` is kept when ``b`` reaches ``a`` in none of ``graphs``
    (each with the turns kept so far), so that every graph stays acyclic
    with all kept turns added. The graphs are not changed."""
    grown = [nx.DiGraph(graph) for graph in graphs]
    kept: list[Turn] = []
    for a, b in offered:
        if any(a in graph and b in graph and nx.has_path(graph, b, a) for graph in grown):
            continue
        for graph in grown:
            graph.add_edge(a, b)
        kept.append((a, b))
    return kept


def offered_turns(every: Iterable[Turn], old: nx.DiGraph, new: nx.DiGraph, lead: str) -> list[Turn]:
    """Every turn in the order ``lead`` offers them: the turns both
    dependency graphs hold, then the old graph's others and the new
    graph's others (``"old first"``; ``"new first"`` swaps these two),
    then the remaining turns, each group by channel ids."""
    turns_sorted = sorted(every)
    both = [turn for turn in turns_sorted if old.has_edge(*turn) and new.has_edge(*turn)]
    only_old = [turn for turn in turns_sorted if old.has_edge(*turn) and not new.has_edge(*turn)]
    only_new = [turn for turn in turns_sorted if new.has_edge(*turn) and not old.has_edge(*turn)]
    rest = [turn for turn in turns_sorted if not old.has_edge(*turn) and not new.has_edge(*turn)]
    middle = only_old + only_new if lead == "old first" else only_new + only_old
    return both + middle + rest


def bridge_routings(topology: Topology, old: RoutingFunction, new: RoutingFunction,
                    down: Iterable[int]) -> Iterator[tuple[str, RoutingFunction]]:
    """``(lead, routing)`` for each lead of :data:`LEADS` whose compatible
    turn set routes every pair (the others are skipped): the candidate
    bridges between ``old`` and ``new`` on the links not in ``down``. The
    routing's engine is the old one's, with the engine option
    ``transition_bridge`` naming the lead."""
    old_graph = cdg.channel_dependency_graph(old)
    new_graph = cdg.channel_dependency_graph(new)
    first, second = turns(topology, sorted(down))
    every = list(zip(first.tolist(), second.tolist()))
    for lead in LEADS:
        kept = set(compatible_turns((old_graph, new_graph), offered_turns(every, old_graph, new_graph, lead)))
        prohibited = [turn for turn in every if turn not in kept]
        options = dict(old.options or {}, transition_bridge=lead)
        try:
            routing = select_paths(topology, prohibited, old.engine, down=sorted(down), options=options)
        except EtherclusterError:
            continue     # a pair without a path over this set: the next lead
        yield lead, routing
