# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Precomputed failover (issue 15 item 1; docs/failover.md).

Segment-based routing's fault tolerance (§2.3) precomputes, where it can,
a backup path for every source-destination pair, disjoint from the main
path and balanced over the links, so that a failure diverts the affected
routes at once; a pair without a backup halts the fabric, drains it and
recomputes every table. We precompute, at plan time, one backup routing
per single failure -- every link, every switch (all its links at once) --
with these properties:

* **Only the affected routes move.** For each destination, the states
  (a host port, or an input channel, at a switch) whose path under the base
  routing reaches the destination without crossing the failure keep their
  entry. The others are rerouted along a shortest detour to the nearest
  such state; so the switches whose entries change are only those on the
  detours, and every pair that did not use the failed element keeps its
  path exactly (its frames never notice the switch-over).
* **The base routing's turn order is kept.** Detours use only turns that
  go forward in a topological order of the base routing's channel
  dependency graph (ties by channel id: the same order the link
  transitions keep, :func:`.transition_planner._turn_order`). Every turn of
  the base and of the backup then goes forward in one order, so the union
  of the base's dependencies and the backup's is acyclic: old frames still
  draining on the base paths and new ones on the backup paths can wait on
  each other without a deadlock, whatever order the switches change in.
* **Disjoint and balanced where the topology allows.** Among the shortest
  legal detours, a hop whose link the pair's main path does not use comes
  first, then the channel with the least load (the base loads of the
  unaffected routes plus the detours chosen so far; weights: hosts x
  hosts).
* **Verified**: every surviving pair is walked on the backup table (it
  reaches its destination, never over the failed element, no loop), and
  the union of the base and backup dependency graphs is checked acyclic.

A failure with a pair that has no legal detour is *not covered*: only a
halt-and-drain (§2.3) and a fresh plan recover from it; the coverage
(covered failures / all) goes into the report.

The stored form is compact: per failure only the table entries that differ
from the base (switch, input port or ``None`` for the host ports, the
destination switch, the new output port or ``None``), enough to rebuild the
backup routing from the base (:func:`backup_from_changes`).
"""

from __future__ import annotations

import hashlib
import heapq
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..errors import EtherclusterError
from ..fabric.topology import Topology
from ..routing.base import RoutingFunction, _prohibited_keys
from ..routing.source_tree import SourceTreeRouting
from ..verify import cdg
from .transition_planner import _forward_turns, _turn_order

FORMAT = "ethercluster.routing/failover v1"


class FailoverError(EtherclusterError):
    """A failover request or stored failover that cannot be used."""


@dataclass(frozen=True)
class Failure:
    """One failure: a link (``links`` its index) or a switch (all its links)."""

    kind: str
    name: str
    links: frozenset[int]
    switch: str | None = None


@dataclass
class Backup:
    """The backup routing of one failure and what it took."""

    failure: Failure
    covered: bool
    reason: str = ""
    next_hop: Any = None
    changes: list[list[Any]] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    pairs_affected: int = 0
    pairs_disjoint: int = 0
    pairs_lost: int = 0
    max_load: float = 0.0

    def to_data(self) -> dict[str, Any]:
        """The compact stored form (no table, only the changes)."""
        return {"kind": self.failure.kind, "name": self.failure.name,
                "links": sorted(self.failure.links), "switch": self.failure.switch,
                "covered": self.covered, "reason": self.reason, "changes": self.changes,
                "switches": self.switches, "pairs_affected": self.pairs_affected,
                "pairs_disjoint": self.pairs_disjoint, "pairs_lost": self.pairs_lost,
                "max_load": round(self.max_load, 3)}


def single_failures(topology: Topology, down: Iterable[int] = ()) -> list[Failure]:
    """Every single failure of a fabric: each link not down, each switch."""
    down = set(down) | set(topology.down_links())
    result = [Failure("link", link.name, frozenset({link.index}))
              for link in topology.links if link.index not in down]
    for name in topology.switch_names():
        links = frozenset(link.index for link in topology.links
                          if name in (link.a.switch, link.b.switch) and link.index not in down)
        result.append(Failure("switch", name, links, name))
    return result


def dead_channels(links: Iterable[int]) -> set[int]:
    """The channel ids of ``links`` (both directions of each)."""
    return {c for link in links for c in (2 * link, 2 * link + 1)}


def resolve_failure(topology: Topology, link: Any = None, switch: Any = None) -> Failure:
    """The :class:`Failure` a request names: ``link`` (either end, name or
    index) or ``switch`` (a switch name); FailoverError otherwise."""
    if (link is None) == (switch is None):
        raise FailoverError("name one failure: a link (link=sw0:2) or a switch (switch=sw5)")
    if switch is not None:
        if switch not in topology.switches:
            raise FailoverError("switch %r is not a switch of the fabric" % (switch,))
        return [item for item in single_failures(topology) if item.switch == switch][0]
    try:
        found = topology.link(link)
    except EtherclusterError as exc:
        raise FailoverError("link %r: %s" % (link, exc)) from None
    return Failure("link", found.name, frozenset({found.index}))


class _Tables:
    """The base routing's arrays, shared by every failure of one plan."""

    def __init__(self, base: RoutingFunction, traffic_weights: np.ndarray | None = None) -> None:
        topology = base.topology
        self.base = base
        self.topology = topology
        self.names = base.switch_names
        self.n = len(self.names)
        self.channels = topology.channels
        self.C = len(self.channels)
        self.src = np.array([base.index[ch.src] for ch in self.channels], dtype=np.int64)
        self.dst = np.array([base.index[ch.dst] for ch in self.channels], dtype=np.int64)
        self.position = _turn_order(base)
        self.graph = cdg.channel_dependency_graph(base)
        self.graph.add_nodes_from(range(self.C))
        self.reach = {c: nx.descendants(self.graph, c) for c in range(self.C)}
        hosts = np.array([max(1, len(topology.hosts_on(name))) for name in self.names], dtype=float)
        self.weights = traffic_weights if traffic_weights is not None else np.outer(hosts, hosts)
        self.out: list[list[int]] = [[] for _switch in range(self.n)]
        self.into: list[list[int]] = [[] for _switch in range(self.n)]
        for ch in self.channels:
            if ch.link not in base.down:
                self.out[base.index[ch.src]].append(ch.id)
                self.into[base.index[ch.dst]].append(ch.id)

    def switch_of(self, state: int) -> int:
        """The switch a state is at."""
        return state if state < self.n else int(self.dst[state - self.n])

    def walk(self, table: np.ndarray, state: int, dest: int) -> list[int] | None:
        """Channels from ``state`` to ``dest`` on ``table``, or None (dead end, loop)."""
        path: list[int] = []
        seen = set()
        while self.switch_of(state) != dest:
            if state in seen:
                return None
            seen.add(state)
            out = int(table[state, dest])
            if out < 0 or self.src[out] != self.switch_of(state):
                return None
            path.append(out)
            state = self.n + out
        return path


class _Detours:
    """The detours of one failure towards one destination (module doc)."""

    def __init__(self, tables: _Tables, table: np.ndarray, dead: set[int], dead_switch: int | None,
                 dest: int, load: np.ndarray, graph: nx.DiGraph, strict: bool) -> None:
        self.t = tables
        self.graph = graph               # base dependencies plus the detours' so far
        self.strict = strict
        self.table = table
        self.dead = dead                 # channel ids of the failed links
        self.dead_switch = dead_switch
        self.dest = dest
        self.load = load
        self.good: dict[int, bool] = {}

    def legal(self, a: int, b: int) -> bool:
        """Whether the turn ``a -> b`` may be used: forward in the base turn
        order (strict), or at least closing no cycle with the base's own
        dependencies (relaxed; the detours' own edges are checked as they
        are chosen)."""
        if b == a ^ 1:
            return False
        if self.strict:
            return bool(self.t.position[a] < self.t.position[b])
        return a not in self.t.reach[b]

    def closes_cycle(self, edges: list[tuple[int, int]]) -> bool:
        """Whether adding ``edges`` to the dependencies so far makes a cycle."""
        return any(u == v or (v in self.graph and u in self.graph and nx.has_path(self.graph, v, u))
                   for u, v in edges)

    def usable(self, channel: int) -> bool:
        """A channel the backup may use."""
        return channel not in self.dead

    def is_good(self, state: int) -> bool:
        """Whether the base walk from ``state`` reaches the destination without the failure."""
        trail = []
        result = None
        while result is None:
            if state in self.good:
                result = self.good[state]
                break
            trail.append(state)
            at = self.t.switch_of(state)
            if at == self.dest:
                result = True
            elif at == self.dead_switch:
                result = False
            else:
                out = int(self.t.base.next_hop[state, self.dest])
                if out < 0 or out in self.dead or len(trail) > self.t.n + self.t.C:
                    result = False
                else:
                    state = self.t.n + out
        for item in trail:
            self.good[item] = result
        return result

    def distances(self) -> dict[int, int]:
        """Hops from each channel state to a good state over legal turns
        (reverse breadth-first search; good channel states are 0)."""
        t = self.t
        distance: dict[int, int] = {}
        queue: deque[int] = deque()
        for ch in range(t.C):
            if self.usable(ch) and self.is_good(t.n + ch):
                distance[ch] = 0
                queue.append(ch)
        while queue:
            b = queue.popleft()
            for a in t.into[int(t.src[b])]:
                if a in distance or not self.usable(a):
                    continue
                if self.legal(a, b):
                    distance[a] = distance[b] + 1
                    queue.append(a)
        return distance

    def route(self, source: int, primary_links: set[int], distance: dict[int, int],
              fixed: set[int], weight: float) -> list[int] | None:
        """Set the entries from ``source`` along a shortest legal detour; the
        detour's channels, or None when there is none."""
        t = self.t
        state, chosen = source, []
        while not (state in fixed or (state >= t.n and distance.get(state - t.n) == 0)):
            options = [b for b in t.out[t.switch_of(state)] if self.usable(b) and b in distance
                       and (state < t.n or self.legal(state - t.n, b))]
            if state >= t.n:
                options = [b for b in options if distance[b] == distance[state - t.n] - 1]
            elif options:
                best = min(distance[b] for b in options)
                options = [b for b in options if distance[b] == best]
            options.sort(key=lambda b: (int(t.channels[b].link in primary_links), self.load[b], b))
            pick = None
            for b in options:
                edges = self._edges(state, b)
                if not self.closes_cycle(edges):
                    self.graph.add_edges_from(edges)
                    pick = b
                    break
            if pick is None:
                return None
            self.table[state, self.dest] = pick
            self.load[pick] += weight
            fixed.add(state)
            chosen.append(pick)
            state = t.n + pick
        return chosen

    def _edges(self, state: int, b: int) -> list[tuple[int, int]]:
        """The dependencies taking channel ``b`` from ``state`` adds: the turn
        into ``b`` and, when ``b`` ends the detour, the turn onto the base path."""
        t = self.t
        edges = [] if state < t.n else [(state - t.n, b)]
        if self.is_good(t.n + b) and t.switch_of(t.n + b) != self.dest:
            edges.append((b, int(t.base.next_hop[t.n + b, self.dest])))
        return edges


def _primary_paths(tables: _Tables) -> dict[tuple[int, int], list[int]]:
    """The base routing's channel path of every pair (source, destination)."""
    result = {}
    for dest in range(tables.n):
        for source in range(tables.n):
            if source != dest:
                path = tables.walk(tables.base.next_hop, source, dest)
                if path is None:
                    raise FailoverError("the base routing does not deliver %s -> %s"
                                        % (tables.names[source], tables.names[dest]))
                result[(source, dest)] = path
    return result


def _failover_one(tables: _Tables, primaries: dict[tuple[int, int], list[int]], failure: Failure) -> Backup:
    """The backup routing of one failure (module doc): detours forward in the
    base turn order; if a pair has none, detours that only close no cycle
    with the base dependencies (relaxed); else not covered."""
    t = tables
    dead = dead_channels(failure.links)
    dead_switch = t.base.index[failure.switch] if failure.switch else None
    affected = {pair for pair, path in primaries.items()
                if dead_switch not in pair
                and (set(path) & dead or any(int(t.dst[c]) == dead_switch for c in path))}
    backup = Backup(failure, True, pairs_affected=len(affected),
                    pairs_lost=2 * (t.n - 1) if dead_switch is not None else 0)
    reason = strict_reason = ""
    for strict in (True, False):
        table, reason = _detour_tables(t, primaries, failure, affected, strict)
        strict_reason = reason if strict else strict_reason
        if table is not None:
            backup.next_hop = table
            backup.reason = "" if strict else ("no detour forward in the base turn order for %s; "
                                               "detours that close no dependency cycle with it" % strict_reason)
            _finish(t, primaries, backup, affected, dead)
            return backup
    return Backup(failure, False, "no detour for %s without %s closes no dependency cycle with the base "
                  "routing: halt-and-drain (§2.3) and a fresh plan" % (reason, failure.name),
                  pairs_affected=len(affected), pairs_lost=backup.pairs_lost)


def _detour_tables(t: _Tables, primaries: dict[tuple[int, int], list[int]], failure: Failure,
                   affected: set[tuple[int, int]], strict: bool) -> tuple[Any, str]:
    """``(table, "")`` with every affected pair detoured, or ``(None, "src -> dst")``."""
    dead = dead_channels(failure.links)
    dead_switch = t.base.index[failure.switch] if failure.switch else None
    table = np.array(t.base.next_hop, copy=True)
    load = np.zeros(t.C)
    for pair, path in primaries.items():
        if pair not in affected and dead_switch not in pair:
            load[path] += t.weights[pair]
    graph = nx.DiGraph(t.graph)
    for dest in range(t.n):
        sources = sorted(source for source, d in affected if d == dest)
        if not sources:
            continue
        detours = _Detours(t, table, dead, dead_switch, dest, load, graph, strict)
        distance = detours.distances()
        fixed: set[int] = set()
        for source in sources:
            links = {t.channels[c].link for c in primaries[(source, dest)]}
            if detours.route(source, links, distance, fixed, t.weights[source, dest]) is None:
                return None, "%s -> %s" % (t.names[source], t.names[dest])
    # entries no frame reaches any more (towards the failure, to or at a
    # failed switch) are left as they are: only the detours are pushed
    return table, ""


def _finish(t: _Tables, primaries: dict[tuple[int, int], list[int]], backup: Backup,
            affected: set[tuple[int, int]], dead: set[int]) -> None:
    """The backup's changes, changed switches, disjoint pairs and max load."""
    table = backup.next_hop
    differ = np.argwhere(table != t.base.next_hop)
    switches = set()
    for state, dest in differ.tolist():
        at = t.switch_of(state)
        switches.add(t.names[at])
        in_port = None if state < t.n else t.channels[state - t.n].dst_port
        out = int(table[state, dest])
        backup.changes.append([t.names[at], in_port, t.names[dest],
                               None if out < 0 else t.channels[out].src_port])
    backup.switches = sorted(switches, key=t.names.index)
    load = np.zeros(t.C)
    for pair in primaries:
        if backup.failure.switch is not None and t.names.index(backup.failure.switch) in pair:
            continue
        path = t.walk(table, pair[0], pair[1]) or []
        load[path] += t.weights[pair]
        if pair in affected:
            main = {t.channels[c].link for c in primaries[pair]}
            if not main & {t.channels[c].link for c in path}:
                backup.pairs_disjoint += 1
    backup.max_load = float(load.max()) if t.C else 0.0


def verify_backup(base: RoutingFunction, backup: Backup) -> list[str]:
    """Independent check of a backup table: every pair of surviving switches
    is delivered without the failed links or switch and without a loop, and
    base and backup dependencies together are acyclic. Problems, or []."""
    t = _Tables(base)
    dead = dead_channels(backup.failure.links)
    problems = []
    graph = cdg.channel_dependency_graph(base)
    for dest, name in enumerate(t.names):
        for source in range(t.n):
            if source == dest or backup.failure.switch in (name, t.names[source]):
                continue
            path = t.walk(backup.next_hop, source, dest)
            if path is None:
                problems.append("%s -> %s is not delivered" % (t.names[source], name))
            elif set(path) & dead:
                problems.append("%s -> %s crosses the failed %s" % (t.names[source], name, backup.failure.name))
            else:
                graph.add_edges_from(zip(path, path[1:]))
    if not nx.is_directed_acyclic_graph(graph):
        cycle = nx.find_cycle(graph)
        problems.append("base and backup dependencies together have the cycle %s"
                        % " => ".join(str(t.channels[a]) for a, _b in cycle))
    return problems


# ------------------------------------------------------------ source trees
# The fixed assignment carries one VLAN per source switch, whose links must
# form a tree (routing/source_tree.py): a detour for the affected pairs alone
# would give a tree a second way into a switch. The backup of a link failure
# therefore repairs the trees that crossed the link (:func:`repair_trees`),
# else takes the whole routing with the link down whose every turn goes
# forward in the base routing's turn order (the link transitions' kept-order
# routing, transition_planner._Router.kept). Either way every turn goes
# forward in that order: base and backup live in one acyclic turn graph, so
# the switch-over cannot deadlock while old frames drain (the Double Scheme
# condition). The backup is a function of the base and the failed link, so
# it is recomputed when applied and compared with the fingerprint stored at
# plan time.
TREE_SWITCH_REASON = ("a switch failure is pushed only with the renamed assignment (frames travel untagged, so the "
                      "switches around the failed one do not depend on the VLANs it holds); source-tree paths "
                      "are the fixed assignment's")


def routing_digest(routing: RoutingFunction) -> str:
    """A fingerprint of a routing's paths: its per-destination table, or a
    source-tree routing's per-source entry channels."""
    table = routing.next_hop if routing.next_hop is not None else getattr(routing, "entry")
    return hashlib.sha256(np.ascontiguousarray(table).tobytes() + repr(table.shape).encode()).hexdigest()[:16]


def _tree_links(routing: RoutingFunction) -> list[set[int]]:
    """Per source switch, the links of its tree."""
    channels = routing.topology.channels
    return [{channels[c].link for c in row if c >= 0} for row in getattr(routing, "entry").tolist()]


def tree_backup(base: RoutingFunction, backup: RoutingFunction, failure: Failure) -> Backup:
    """The summary of a source-tree routing's backup (``backup``: its trees
    repaired, or the kept-order routing without the failed links, above), verified: every
    pair is delivered without the failure, base and backup dependencies
    together are acyclic. The switches listed are the sources of the trees
    that change: with the fixed assignment a frame travels in the bank of
    its source switch's host port, so once those switches have flipped
    every pair delivers again (the failover flips them first)."""
    topology = base.topology
    channels = topology.channels
    dead = dead_channels(failure.links)
    names = base.switch_names
    hosts = {name: max(1, len(topology.hosts_on(name))) for name in names}
    changed = [name for name, old, new in zip(names, _tree_links(base), _tree_links(backup)) if old != new]
    result = Backup(failure, True, switches=changed)
    main, paths = base.paths(), backup.paths()
    load = np.zeros(len(channels))
    problems = []
    for pair, path in paths.items():
        load[path] += hosts[pair[0]] * hosts[pair[1]]
        if set(path) & dead:
            problems.append("%s -> %s crosses the failed %s" % (pair[0], pair[1], failure.name))
        if set(main[pair]) & dead:
            result.pairs_affected += 1
            if not {channels[c].link for c in main[pair]} & {channels[c].link for c in path}:
                result.pairs_disjoint += 1
    graph = nx.compose(cdg.channel_dependency_graph(base), cdg.channel_dependency_graph(backup))
    if not nx.is_directed_acyclic_graph(graph):
        cycle = nx.find_cycle(graph)
        problems.append("base and backup dependencies together have the cycle %s"
                        % " => ".join(str(channels[a]) for a, _b in cycle))
    if problems:
        return Backup(failure, False, "the backup fails its check: %s" % problems[0],
                      pairs_affected=result.pairs_affected)
    result.max_load = float(load.max()) if len(channels) else 0.0
    return result


def repair_trees(base: RoutingFunction, links: Iterable[int], position: dict[int, int]) -> RoutingFunction:
    """``base`` (source trees) with the trees that cross ``links`` repaired:
    in each, the switches below the failed link are entered again from the
    rest of their tree over the shortest legal way (every turn forward in the
    base turn order ``position``, least loaded channel first); every other
    entry, and every tree that did not cross the links, stays. FailoverError
    when a switch cannot be entered so."""
    topology = base.topology
    channels = topology.channels
    names = base.switch_names
    n, C = len(names), len(channels)
    links = set(links)
    dead = dead_channels(links)
    down = set(base.down) | links
    out: list[list[int]] = [[] for _switch in range(n)]
    for ch in channels:
        if ch.link not in down:
            out[base.index[ch.src]].append(ch.id)
    src = [base.index[ch.src] for ch in channels]
    dst = [base.index[ch.dst] for ch in channels]
    entry = np.array(getattr(base, "entry"), copy=True)
    depth = np.array(getattr(base, "depth"), copy=True)
    load = np.bincount(entry[entry >= 0], minlength=C).astype(float)
    for s in range(n):
        cut: set[int] = set()
        for v in sorted(range(n), key=lambda v: depth[s, v]):
            c = int(entry[s, v])
            if c >= 0 and (c in dead or src[c] in cut):
                cut.add(v)
        if cut and _regrow(s, entry[s], depth[s], cut, out, dst, position, load):
            raise FailoverError("the tree of %s cannot enter %s again without %s under the base turn order"
                                % (names[s], ", ".join(names[v] for v in sorted(cut)),
                                   ", ".join(topology.links[link].name for link in sorted(links))))
    _allowed, prohibited = _forward_turns(topology, down, [position])
    shell = RoutingFunction(topology, base.engine, np.broadcast_to(np.int32(-1), (n + C, n)),
                            down=(set(base.down) - set(base.blocked)) | links, options=base.options,
                            blocked=base.blocked)
    shell.prohibited_keys = _prohibited_keys(prohibited, C)
    return SourceTreeRouting(shell, entry, depth)


def _regrow(s: int, row: np.ndarray, depth: np.ndarray, cut: set[int], out: list[list[int]], dst: list[int],
            position: dict[int, int], load: np.ndarray) -> set[int]:
    """Enter the switches ``cut`` off source ``s``'s tree (``row``: its entry
    channels, ``depth``: its hops; both updated) again from the rest of it,
    breadth first over legal turns, least loaded channel first; returns the
    switches that could not be entered (``cut`` is emptied as they are)."""
    load[row[sorted(cut)]] -= 1
    heap: list[tuple[int, float, int]] = []

    def offer(u: int) -> None:
        arrived = int(row[u])
        for c in out[u]:
            if dst[c] in cut and (u == s or (c != arrived ^ 1 and position[arrived] < position[c])):
                heapq.heappush(heap, (int(depth[u]) + 1, load[c], c))
    for u in range(len(row)):
        if u not in cut:
            offer(u)
    while heap and cut:
        hops, _load, c = heapq.heappop(heap)
        w = dst[c]
        if w not in cut:
            continue
        cut.discard(w)
        row[w], depth[w] = c, hops
        load[c] += 1
        offer(w)
    return cut


def tree_failover(base: RoutingFunction, failure: Failure, kept: Callable[[frozenset[int]], RoutingFunction],
                  position: dict[int, int] | None = None) -> tuple[dict[str, Any], RoutingFunction | None]:
    """The stored form of one failure of a source-tree routing (above) and
    its backup routing (None when not covered): the base's trees repaired
    (:func:`repair_trees`, fewest switches change), else the kept-order
    routing ``kept`` makes for the failed links (every tree grown again)."""
    if failure.switch is not None:
        return Backup(failure, False, TREE_SWITCH_REASON).to_data(), None
    try:
        backup = repair_trees(base, failure.links, _turn_order(base) if position is None else position)
    except EtherclusterError:
        try:
            backup = kept(failure.links)
        except EtherclusterError as exc:
            return Backup(failure, False, "no routing without %s keeps the base routing's turn order (%s): "
                          "halt-and-drain (§2.3) and a fresh plan" % (failure.name, exc)).to_data(), None
    found = tree_backup(base, backup, failure)
    stored = found.to_data()
    if not found.covered:
        return stored, None
    stored["backup_digest"] = routing_digest(backup)
    return stored, backup


def precompute_failover(base: RoutingFunction, failures: Iterable[Failure] | None = None,
                        kept: Callable[[frozenset[int]], RoutingFunction] | None = None) -> dict[str, Any]:
    """Backups for every single failure (or ``failures``) of the base routing,
    each verified (:func:`verify_backup`, :func:`tree_backup`). Returns the
    stored form: ``{"format", "engine", "failures": [compact backups],
    "coverage": {...}}``. A source-tree routing needs ``kept``: the
    kept-order routing for a set of failed links (above)."""
    if base.paths_form not in ("per_destination", "source_tree"):
        raise FailoverError("failover needs per-destination or source-tree paths; this routing has %s paths"
                            % base.paths_form)
    if base.paths_form == "source_tree" and kept is None:
        raise FailoverError("a source-tree routing's failover needs its kept-order routings "
                            "(failover_run.failover_document, link_failed.yml); per-destination detours do not apply")
    started = time.perf_counter()
    wanted = list(single_failures(base.topology, base.down) if failures is None else failures)
    stored = []
    if kept is not None and base.paths_form == "source_tree":   # (kept checked above; narrowed for the types)
        position = _turn_order(base)
        stored = [tree_failover(base, failure, kept, position)[0] for failure in wanted]
        return {"format": FORMAT, "engine": base.engine, "paths": base.paths_form, "failures": stored,
                "coverage": coverage(stored), "seconds": round(time.perf_counter() - started, 3)}
    tables = _Tables(base)
    primaries = _primary_paths(tables)
    for failure in wanted:
        backup = _failover_one(tables, primaries, failure)
        if backup.covered:
            problems = verify_backup(base, backup)
            if problems:
                backup = Backup(failure, False, "the backup fails its check: %s" % problems[0],
                                pairs_affected=backup.pairs_affected)
        stored.append(backup.to_data())
    return {"format": FORMAT, "engine": base.engine, "paths": base.paths_form, "failures": stored,
            "coverage": coverage(stored), "seconds": round(time.perf_counter() - started, 3)}


def coverage(stored: list[dict[str, Any]]) -> dict[str, Any]:
    """Covered failures over all, per kind, and the uncovered ones by name."""
    result: dict[str, Any] = {}
    for kind in ("link", "switch"):
        items = [item for item in stored if item["kind"] == kind]
        result[kind] = {"covered": sum(1 for item in items if item["covered"]), "total": len(items)}
    result["covered"] = sum(1 for item in stored if item["covered"])
    result["total"] = len(stored)
    affected = sum(item["pairs_affected"] for item in stored if item["covered"])
    result["pairs_affected"] = affected
    result["pairs_disjoint"] = sum(item["pairs_disjoint"] for item in stored if item["covered"])
    result["uncovered"] = [item["name"] for item in stored if not item["covered"]]
    return result


def backup_from_changes(base: RoutingFunction, stored: dict[str, Any]) -> RoutingFunction:
    """The backup routing of one stored failure, rebuilt from the base and its changes."""
    if not stored.get("covered"):
        raise FailoverError("failure %s has no backup: %s" % (stored.get("name"), stored.get("reason")))
    topology = base.topology
    table = np.array(base.next_hop, copy=True)
    n = len(base.switch_names)
    for switch, in_port, dest, out_port in stored["changes"]:
        if switch not in base.index or dest not in base.index:
            raise FailoverError("failure %s: stored change names an unknown switch" % stored["name"])
        state = base.index[switch]
        if in_port is not None:
            channel = topology.channel_from(switch, in_port)
            if channel is None:
                raise FailoverError("failure %s: %s has no link port %s" % (stored["name"], switch, in_port))
            state = n + topology.reverse(channel).id
        out = -1
        if out_port is not None:
            channel = topology.channel_from(switch, out_port)
            if channel is None:
                raise FailoverError("failure %s: %s has no link port %s" % (stored["name"], switch, out_port))
            out = channel.id
        table[state, base.index[dest]] = out
    options = dict(base.options or {}, failover=stored["name"])
    return RoutingFunction(topology, base.engine, table, down=set(base.down) | set(stored["links"]),
                           options=options)
