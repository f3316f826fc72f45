# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Source-tree paths: any engine's turn restrictions, one tree per source.

The fixed VLAN assignment (switch-tagged paper §3.2.1, ``N x N -> P``)
gives every source switch one VLAN whose links must form a tree: inside a
VLAN a switch forwards by destination MAC only, and floods (broadcast,
unknown unicast) follow every member link. A balanced ``C x N -> C``
routing (what :func:`.base.select_paths` makes) reaches a switch over
several channels from one source, so fixed assignment cannot carry it,
and the renamed assignment (§3.2.2) floods along every path of it.

This module keeps the engine's deadlock freedom -- its prohibited turns,
the same ones select_paths respected -- and chooses, per source, a tree
of legal paths: a breadth-first growth over the turn graph in which every
switch is entered exactly once, over the channel whose path from the
source costs least (the load earlier trees put on its channels, as
DFSSSP weighs edges). Sources are routed one after the other and, as in
select_paths, a second sweep reroutes each against the load of all the
others. Every path is legal under the engine's turn restrictions, so the
channel dependency graph stays a subgraph of the engine's acyclic one
(segment-based paper §2, Theorem 1 of the switch-tagged paper); the plan
verifies it anyway (verify/cdg.py).

A tree path is the shortest *within the tree*, not always the shortest
legal path: an early entry choice can forbid a turn a later switch
needed. When a switch cannot be reached at all, growth is retried
preferring the entry channels from which most switches are legally
reachable, then refused naming the source and the switch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import (DEFAULT_BALANCE_PASSES, RoutingError, RoutingFunction, _Arrays, _LegalTurns,
                   _run_starts, balance_passes)

PATHS_FORMS = ("per_destination", "source_tree", "paper")


class SourceTreeRouting(RoutingFunction):
    """A routing ``N x N -> C``: per source switch ``s`` a tree, stored as
    ``entry[s, v]`` -- the channel by which frames from ``s`` enter switch
    ``v`` (-1 at ``s`` itself). The path from ``s`` to ``d`` is the tree
    path; a switch forwards by (source, destination), which the fixed VLAN
    assignment implements with one VLAN per tree.

    ``next_hop`` is None: a table indexed by input channel cannot hold
    these paths. :meth:`hop` answers per source.
    """

    paths_form = "source_tree"

    def __init__(self, base: RoutingFunction, entry: np.ndarray, depth: np.ndarray) -> None:
        options = dict(base.options, paths="source_tree")
        n, C = len(base.switch_names), len(base.topology.channels)
        # the base class checks a table's shape; a read-only view of one -1 passes it, unallocated
        super().__init__(base.topology, base.engine, np.broadcast_to(np.int32(-1), (n + C, n)),
                         base.down - base.blocked, options, base.blocked)
        self.next_hop = None  # type: ignore[assignment]  # no per-input-channel table
        self.prohibited_keys = base.prohibited_keys
        for name in ("segmentation", "turn_prohibition"):
            if hasattr(base, name):
                setattr(self, name, getattr(base, name))
        self.entry = np.asarray(entry, dtype=np.int64)
        self.depth = np.asarray(depth, dtype=np.int64)
        rows = np.arange(n)
        self.parent = np.where(self.entry >= 0, self._src[np.maximum(self.entry, 0)], rows[:, None])
        # Binary lifting: _up[j][s, v] is v's 2**j-th ancestor in s's tree.
        self._up = [self.parent]
        while (1 << len(self._up)) <= max(1, int(self.depth.max(initial=0))):
            last = self._up[-1]
            self._up.append(np.take_along_axis(last, last, axis=1))

    def _ancestor(self, sources: np.ndarray, nodes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        for j, up in enumerate(self._up):
            take = ((steps >> j) & 1).astype(bool)
            nodes = np.where(take, up[sources, nodes], nodes)
        return nodes

    def hop(self, sources: np.ndarray, states: np.ndarray, dests: np.ndarray) -> np.ndarray:
        """The channel leaving the state's switch on the tree path from
        ``sources[i]`` to ``dests[i]``; -1 at the destination, or when the
        state is not on that path (no such frame)."""
        sources = np.asarray(sources, dtype=np.int64)
        states = np.asarray(states, dtype=np.int64)
        dests = np.asarray(dests, dtype=np.int64)
        n = len(self.switch_names)
        arrived = states >= n
        channel = np.where(arrived, states - n, 0)
        here = np.where(arrived, self._dst[channel], states)
        on_tree = np.where(arrived, self.entry[sources, here] == channel, states == sources)
        steps = self.depth[sources, dests] - self.depth[sources, here] - 1
        on_tree &= (steps >= 0) & (here != dests)
        below = self._ancestor(sources, dests, np.maximum(steps, 0))
        out = self.entry[sources, below]
        on_tree &= self.parent[sources, below] == here
        return np.where(on_tree, out, -1)

    def same_paths(self, other: Any) -> bool:
        if other is self:
            return True
        return (isinstance(other, SourceTreeRouting) and other.engine == self.engine
                and bool(np.array_equal(other.entry, self.entry)))

    def next_channel(self, switch: str, in_channel: int | None, dest: str) -> int | None:
        raise RoutingError("%s: with source-tree paths the next hop depends on the source; "
                           "use path(source, destination)" % self.engine)

    def tables(self) -> dict[str, dict[str, dict[str, str]]]:
        """Per switch ``{"from <source>": {dest_switch: output_port}}``."""
        channels = self.topology.channels
        names = self.switch_names
        result: dict[str, dict[str, dict[str, str]]] = {name: {} for name in names}
        for (s, d), path in self.paths().items():
            for channel in path:
                ch = channels[channel]
                result[ch.src].setdefault("from " + s, {})[d] = ch.src_port
        return result

    def to_data(self) -> dict[str, Any]:
        """Engine, options, avoided links and per source the port each
        switch is entered by (``trees``)."""
        channels = self.topology.channels
        names = self.switch_names
        trees = {}
        for s, row in enumerate(self.entry.tolist()):
            trees[names[s]] = {names[v]: channels[c].dst_port for v, c in enumerate(row) if c >= 0}
        return {"engine": self.engine, "options": dict(self.options),
                "paths": self.paths_form, "down": sorted(self.down),
                "blocked": sorted(self.blocked), "switches": list(names), "trees": trees}


def source_trees(routing: RoutingFunction, balance: bool | int | None = True) -> SourceTreeRouting:
    """Source-tree paths under the turn restrictions ``routing`` was made
    with (:attr:`RoutingFunction.prohibited_keys`, set by select_paths),
    avoiding the links it avoids. ``balance``: sweeps as in select_paths.
    Raises RoutingError naming a source whose tree cannot reach a switch."""
    if routing.paths_form != "per_destination":
        return routing   # type: ignore[return-value]
    grower, _arrays = _grower_of(routing)
    entry, depth = grower.all_trees(balance_passes(balance, routing.engine))
    return SourceTreeRouting(routing, entry, depth)


def in_paths_form(routing: RoutingFunction, paths: str, balance: bool | int | None = True) -> RoutingFunction:
    """``routing`` (per destination, from an engine or select_paths) in the
    paths form ``paths``: :func:`source_trees` under its turn restrictions
    for ``source_tree``, else ``routing`` itself."""
    return source_trees(routing, balance) if paths == "source_tree" else routing


def _grower_of(routing: RoutingFunction) -> tuple[_Grower, _Arrays]:
    """The tree grower under ``routing``'s turn restrictions and avoided links."""
    topology = routing.topology
    keys = routing.prohibited_keys
    if keys is None:
        raise RoutingError("%s: source-tree paths need the engine's turn restrictions (a routing "
                           "made by select_paths)" % routing.engine)
    C = len(topology.channels)
    arrays = _Arrays(topology, frozenset(routing.down))
    legal = _LegalTurns(arrays, np.stack([keys // max(C, 1), keys % max(C, 1)], axis=1))
    return _Grower(legal, arrays, _source_hosts(topology, arrays.names), routing.engine), arrays


def _source_hosts(topology: Any, names: list[str]) -> np.ndarray:
    """Hosts per switch (every switch counts 1 when the fabric lists none):
    the weight of a tree's traffic."""
    if not topology.hosts:
        return np.ones(len(names))
    return np.array([len(topology.hosts_on(name)) for name in names], dtype=np.float64)


class _Grower:
    """Grows the trees of all sources, balancing their load."""

    def __init__(self, legal: _LegalTurns, arrays: _Arrays, hosts: np.ndarray, engine: str) -> None:
        self.legal, self.engine, self.hosts = legal, engine, hosts
        self.n, self.C = arrays.n, arrays.C
        self.dst, self.src = arrays.dst, arrays.src
        self.ptr = np.searchsorted(legal.rows, np.arange(self.n + self.C + 1))
        self.weight = np.zeros(self.C)
        self._reach: np.ndarray | None = None

    def reach(self) -> np.ndarray:
        """Per channel, how many switches are legally reachable after it."""
        if self._reach is None:
            self._reach = np.isfinite(self.legal.distances(np.arange(self.n))).sum(axis=0)
        return self._reach

    def all_trees(self, passes: int, roots: np.ndarray | None = None,
                  weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(entry, depth)`` matrices (source x switch) after ``passes``
        balancing sweeps (at least one growth per source). A source is a
        switch (``roots``, default every switch) sending for ``weights``
        hosts (default: the switch's hosts)."""
        n = self.n
        roots = np.arange(n) if roots is None else np.asarray(roots, dtype=np.int64)
        weights = self.hosts[roots] if weights is None else np.asarray(weights, dtype=np.float64)
        count = len(roots)
        entry = np.full((count, n), -1, dtype=np.int64)
        depth = np.zeros((count, n), dtype=np.int64)
        own: list[np.ndarray | None] = [None] * count
        steps = max(1, min(count, 32))
        order: Any = np.concatenate([np.arange(first, count, steps) for first in range(steps)]) \
            if count else []
        for _sweep in range(max(1, passes)):
            for row in order:
                previous = own[row]
                if previous is not None:
                    self.weight -= previous
                entry[row], depth[row], levels = self.tree(int(roots[row]))
                if passes:   # balance false: every tie to the lowest channel id
                    own[row] = self.load(float(weights[row]), entry[row], levels)
                    self.weight += own[row]
        return entry, depth

    def tree(self, source: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """The tree of ``source``: entry channel and depth per switch, and
        the switches added at each level. Cheapest growth first; if a switch
        stays unreached, growth preferring flexible channels."""
        entry, depth, levels, reached = self._grow(source, None)
        if not reached.all():
            entry, depth, levels, reached = self._grow(source, self.reach())
        if not reached.all():
            missing = int(np.flatnonzero(~reached)[0])
            raise RoutingError(
                "%s: no tree of legal paths from switch %s reaches switch %s (the engine's turn "
                "restrictions need two ways into one switch); use paths: per_destination"
                % (self.engine, self.legal.names[source], self.legal.names[missing]))
        return entry, depth, levels

    def _grow(self, source: int, reach: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], np.ndarray]:
        """Breadth-first over the turn graph from ``source``: each level,
        every unreached switch next to the last level takes the entry whose
        path costs least (with ``reach``: the most flexible entry first)."""
        n, legal = self.n, self.legal
        entry = np.full(n, -1, dtype=np.int64)
        depth = np.zeros(n, dtype=np.int64)
        cost = np.zeros(n)
        reached = np.zeros(n, dtype=bool)
        reached[source] = True
        frontier = np.array([source], dtype=np.int64)   # states: injection, then n + channel
        levels: list[np.ndarray] = []
        level = 0
        while len(frontier):
            level += 1
            starts, counts = self.ptr[frontier], self.ptr[frontier + 1] - self.ptr[frontier]
            total = int(counts.sum())
            if not total:
                break
            index = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
            candidates = legal.cols[index]
            targets = self.dst[candidates]
            fresh = ~reached[targets]
            if not fresh.any():
                break
            candidates, targets = candidates[fresh], targets[fresh]
            key = cost[self.src[candidates]] + self.weight[candidates]
            sort_keys = (candidates, key, targets) if reach is None \
                else (candidates, key, -reach[candidates], targets)
            order = np.lexsort(sort_keys)
            first = order[_run_starts(targets[order])]
            new, channels = targets[first], candidates[first]
            entry[new], depth[new], cost[new] = channels, level, key[first]
            reached[new] = True
            levels.append(new)
            frontier = n + channels
        return entry, depth, levels, reached

    def load(self, senders: float, entry: np.ndarray, levels: list[np.ndarray]) -> np.ndarray:
        """Host pairs over each channel of a tree: its ``senders`` (hosts)
        times the hosts of the subtree a channel enters."""
        below = self.hosts.copy()
        for added in reversed(levels):
            np.add.at(below, self.src[entry[added]], below[added])
        load = np.zeros(self.C)
        reached = entry >= 0
        load[entry[reached]] = senders * below[reached]
        return load


def source_port_loads(routing: RoutingFunction, groups: int,
                      balance: bool | int | None = True) -> np.ndarray:
    """Channel loads (ordered host pairs, uniform traffic) if the hosts of
    every switch were split into ``groups`` groups (round robin in port
    order; ``groups`` >= the hosts per switch: a tree per host port), each
    group with its own balanced tree of legal paths -- the switch-tagged
    paper's Fig. 2, where hosts of one switch leave by different uplinks.

    A measurement of the source-port form (docs/benchmarks.md "Path
    forms"): a fixed assignment would give each group's host ports that
    group's VLAN as PVID, which the planner does not build yet."""
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise RoutingError("source_port_loads: groups must be a whole number >= 1, got %r" % (groups,))
    grower, _arrays = _grower_of(routing)
    roots, weights = [], []
    for s, hosts in enumerate(grower.hosts.tolist()):
        split = [len(range(k, int(hosts), groups)) for k in range(groups)] if hosts else [0]
        for size in split:
            if size or not hosts:
                roots.append(s)
                weights.append(float(size))
    entry, depth = grower.all_trees(balance_passes(balance, routing.engine), np.array(roots),
                                    np.array(weights))
    loads = np.zeros(grower.C)
    for row in range(len(roots)):
        loads += grower.load(weights[row], entry[row], _levels(depth[row]))
    return loads


def _levels(depth: np.ndarray) -> list[np.ndarray]:
    """The switches at depth 1, 2, ... of a tree (its growth levels)."""
    top = int(depth.max(initial=0))
    return [np.flatnonzero(depth == level) for level in range(1, top + 1)]


__all__ = ["PATHS_FORMS", "SourceTreeRouting", "source_trees", "source_port_loads",
           "DEFAULT_BALANCE_PASSES"]
