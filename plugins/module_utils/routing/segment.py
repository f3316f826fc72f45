# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Segment-based routing (SR): Mejia, Flich, Duato, Reinemo, Skeie,
"Boosting Ethernet Performance by Segment-Based Routing" (§2), after
"Segment-based routing: an efficient fault-tolerant routing algorithm for
meshes and tori" (IPDPS 2006, the paper's [18]).

SR works in three steps (§2.1):

1. **Segmentation.** Switches and links are labelled with unique ids
   (switch id = position in ``topology.switch_names()``, link id = link
   index). From the lowest-id switch, the fabric is cut into disjoint
   *segments*, each made as short as possible (§2.2: shortest distance to
   any already visited switch):

   * the *starting* segment of a subnet is a cycle through the subnet's
     starting switch;
   * a *regular* segment starts on a link at a visited switch, goes
     through one or more new switches and ends on a link at a visited
     switch (possibly the same one);
   * a *unitary* segment is a single link between two visited switches.

   A link through which no segment can be closed is a *bridge link*; the
   visited switch it was searched from is a *terminal switch*. The switch
   on its far side starts a new *subnet* when it still has unvisited
   links. Bridge links lie on no cycle, so they need no restriction. With
   the links that are down removed, subnets are exactly the 2-edge-connected
   components of the fabric.

2. **Turn restrictions**, one bidirectional restriction per segment (§2.1):
   on a starting segment at any of its switches except the starting one; on
   a regular segment at any of its (new) switches; both forbid the turn
   between the segment's two links at that switch, in both directions. A
   unitary segment is blocked on one side: at that switch, the turns
   between the unitary link and every link already visited there (the
   already restricted segments, and bridges) are forbidden both ways.

   Why any placement is deadlock-free ("locality independence", §2): take a
   cycle of the turn graph and the latest segment whose links it uses. The
   switches new in that segment carried no older link when it was made, so
   the cycle runs through the whole segment and meets its restriction; if
   the latest segment is unitary, the cycle turns at its blocked side onto
   an older link, which is forbidden. Each segment keeps everything
   connected because its restriction leaves both halves attached to the
   visited part, and turns onto older links stay allowed.

3. **Path selection** (§2.2): shortest legal paths balancing link weights,
   via :func:`.base.select_paths`.

Placement. §2.2 picks the restricted switch of each segment at random
(``placement="random"``, seeded). The default ``placement="balanced"``
does better. Every candidate turn is priced by the traffic that would
cross it under unrestricted shortest-path routing (uniform all-to-all,
split evenly over equal paths: what prohibiting it pushes onto other
paths, :func:`turn_traffic`); each segment takes its cheapest candidate,
a unitary segment the side that forbids fewer turns. On fabrics up to
``SEARCH_MAX_SWITCHES`` switches a search follows, judged by the routing
itself (maximum channel load under uniform all-to-all host pairs, as
:mod:`..metrics` counts them, then the sum of squared loads): a few more
segmentations, breaking ties between equally short segments at random
(still §2.2's shortest segments), and a local search that moves single
restrictions to their other allowed places, nearest the most loaded
channel first. Everything is seeded, so a seed gives one routing.

:func:`segmentation` exposes steps 1 and 2 as data; :func:`route` adds
step 3 and returns the :class:`.base.RoutingFunction`.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from .base import RoutingError, RoutingFunction, check_options, down_set, select_paths, select_paths_many

if TYPE_CHECKING:
    from ..fabric.topology import Topology

NAME = "segment"
PLACEMENTS = ("balanced", "random")
OPTIONS = {"seed", "placement", "restarts", "refine"}
# The search (restarts, local moves) routes the whole fabric once per try,
# tens of milliseconds at 64 switches: DEFAULT_RESTARTS + DEFAULT_REFINE
# tries up to 64 switches, proportionally fewer up to SEARCH_MAX_SWITCHES,
# none above by default. Restarts pay most on tori: on the 8x8 torus 8
# restarts reach a max channel load of 125, 24 reach 108 (64 and 128 no
# better); meshes and random fabrics stay within 2 % either way.
SEARCH_MAX_SWITCHES = 128
DEFAULT_RESTARTS = 24
DEFAULT_REFINE = 16
# Turn prices come from every source switch up to this many, a sample above,
# computed for blocks of sources of about this many (source x switch) cells.
TRAFFIC_MAX_SOURCES = 2048
TRAFFIC_BLOCK_CELLS = 1 << 21
# The search routes its candidates side by side (base.select_paths_many), up
# to this many (candidate x switch x state) cells per batch; local moves
# REFINE_BATCH at a time (those after the first improving one are wasted).
BATCH_CELLS = 1 << 21
REFINE_BATCH = 6

STARTING, REGULAR, UNITARY = "starting", "regular", "unitary"


class Segment(NamedTuple):
    """One segment. ``switches``: the switches that belong to it (a
    starting segment's starting switch first, then along the path; none
    for a unitary one). ``links``: link ids in path order. ``ends``: the
    visited switches the path starts and ends on (the starting switch
    twice for a starting segment)."""

    index: int  # type: ignore[assignment]  # a field, shadowing tuple.index on purpose
    kind: str
    subnet: int
    switches: tuple
    links: tuple
    ends: tuple


class Restriction(NamedTuple):
    """The turns one segment forbids, all at ``switch``: between link
    ``link`` and each link of ``against``, both directions. For a starting
    or regular segment ``link`` and ``against[0]`` are the segment's two
    links at ``switch``; for a unitary one ``link`` is the unitary link."""

    segment: int
    switch: str
    link: int
    against: tuple

    def turns(self, topology: Topology) -> list[tuple[int, int]]:
        """The forbidden turns as ``(in_channel, out_channel)`` pairs."""
        result = []
        for other in self.against:
            result.append((_arrive(topology, self.link, self.switch),
                           _leave(topology, other, self.switch)))
            result.append((_arrive(topology, other, self.switch),
                           _leave(topology, self.link, self.switch)))
        return result


class Subnet(NamedTuple):
    index: int  # type: ignore[assignment]  # a field, shadowing tuple.index on purpose
    start: str
    via_bridge: int | None  # the bridge link that led here (None: the first subnet)
    segments: tuple          # segment indexes
    switches: tuple


class Bridge(NamedTuple):
    link: int
    terminal: str   # the visited switch the search started from
    far: str        # the switch reached over the bridge


class Segmentation(NamedTuple):
    """Segments, subnets, bridges and the chosen restriction per segment
    (``restrictions[i]`` belongs to ``segments[i]``)."""

    segments: tuple
    subnets: tuple
    bridge_links: tuple
    terminal_switches: tuple
    restrictions: tuple
    down: frozenset
    options: dict

    def prohibited(self, topology: Topology) -> list[tuple[int, int]]:
        """All forbidden turns, a sorted list of ``(in, out)`` channel pairs."""
        turns = set()
        for restriction in self.restrictions:
            turns.update(restriction.turns(topology))
        return sorted(turns)

    def to_data(self) -> dict[str, Any]:
        """Plain data (JSON-serialisable) for docs, tests and reports."""
        return {
            "segments": [{"index": s.index, "type": s.kind, "subnet": s.subnet,
                          "switches": list(s.switches), "links": list(s.links),
                          "ends": list(s.ends)} for s in self.segments],
            "subnets": [{"index": n.index, "start": n.start, "via_bridge": n.via_bridge,
                         "segments": list(n.segments), "switches": list(n.switches)}
                        for n in self.subnets],
            "bridge_links": [{"link": b.link, "terminal": b.terminal, "far": b.far}
                             for b in self.bridge_links],
            "terminal_switches": list(self.terminal_switches),
            "restrictions": [{"segment": r.segment, "switch": r.switch, "link": r.link,
                              "against": list(r.against)} for r in self.restrictions],
            "down": sorted(self.down),
            "options": dict(self.options),
        }


# ------------------------------------------------------------ channel helpers
def _arrive(topology: Topology, link: int, switch: str) -> int:
    """The channel of ``link`` that enters ``switch``."""
    return 2 * link if topology.links[link].b.switch == switch else 2 * link + 1


def _leave(topology: Topology, link: int, switch: str) -> int:
    """The channel of ``link`` that leaves ``switch``."""
    return 2 * link if topology.links[link].a.switch == switch else 2 * link + 1


# ------------------------------------------------------------------- graph
class _Graph:
    """Integer view of the usable fabric: switch ``i`` = ``switch_names()[i]``,
    ``adj[i]`` = ``[(link, neighbour), ...]`` sorted by link id."""

    def __init__(self, topology: Topology, avoided: frozenset[int]) -> None:
        self.names = topology.switch_names()
        index = {name: i for i, name in enumerate(self.names)}
        self.n = len(self.names)
        self.adj: list[list[tuple[int, int]]] = [[] for _unused in range(self.n)]
        self.ends: dict[int, tuple[int, int]] = {}
        # turn_traffic's shortest-path counts, per sample of sources (_brandes).
        self.brandes: dict[tuple[int, int], tuple[np.ndarray, ...]] = {}
        for link in topology.links:
            if link.index in avoided or link.state != "up":
                continue
            a, b = index[link.a.switch], index[link.b.switch]
            self.adj[a].append((link.index, b))
            self.adj[b].append((link.index, a))
            self.ends[link.index] = (a, b)

    def other(self, link: int, i: int) -> int:
        """The switch at the other end of ``link`` from switch ``i``."""
        a, b = self.ends[link]
        return b if a == i else a

    def unreachable_from(self, start: int) -> list[int]:
        """The switches no path of usable links joins to ``start``."""
        seen = [False] * self.n
        seen[start] = True
        queue = deque([start])
        while queue:
            i = queue.popleft()
            for _link, j in self.adj[i]:
                if not seen[j]:
                    seen[j] = True
                    queue.append(j)
        return [i for i in range(self.n) if not seen[i]]

    def bridges(self) -> set[int]:
        """Links on no cycle (iterative lowlink DFS; a parallel link is a
        cycle, so only the link itself, not its end switch, is skipped)."""
        disc = [-1] * self.n
        low = [0] * self.n
        result = set()
        counter = 0
        for root in range(self.n):
            if disc[root] >= 0:
                continue
            disc[root] = low[root] = counter
            counter += 1
            stack = [(root, -1, iter(self.adj[root]))]
            while stack:
                node, via, it = stack[-1]
                advanced = False
                for link, nxt in it:
                    if link == via:
                        continue
                    if disc[nxt] < 0:
                        disc[nxt] = low[nxt] = counter
                        counter += 1
                        stack.append((nxt, link, iter(self.adj[nxt])))
                        advanced = True
                        break
                    low[node] = min(low[node], disc[nxt])
                if advanced:
                    continue
                stack.pop()
                if stack:
                    parent = stack[-1][0]
                    low[parent] = min(low[parent], low[node])
                    if low[node] > disc[parent]:
                        result.add(via)
        return result


# -------------------------------------------------------------- segmentation
class _Raw(NamedTuple):
    """Segmentation in switch indexes, before restrictions are chosen."""

    segments: list      # (kind, subnet, switches, links, ends)
    subnets: list       # (start, via_bridge, [segment indexes], [switches])
    bridges: list       # (link, terminal, far)
    visited_links_at: list  # per segment: {switch: links visited there before it}


class _Segmenter:
    """The state of one segmentation (§2.1/§2.2) of a connected fabric:
    what is visited, and the segments, subnets and bridges made so far."""

    def __init__(self, graph: _Graph, rng: random.Random | None = None) -> None:
        self.graph, self.rng = graph, rng
        self.bridges = graph.bridges()
        self.visited = [False] * graph.n
        self.link_done: set[int] = set()
        # Links visited so far at each switch, in visiting order: what a unitary
        # segment made now must block its unitary link against.
        self.visited_at: list[list[int]] = [[] for _unused in range(graph.n)]
        self.segments: list[tuple] = []
        self.subnets: list[tuple] = []
        self.bridge_list: list[tuple[int, int, int]] = []
        self.before: list[dict[int, list[int]]] = []

    def visit_link(self, link: int) -> None:
        """Mark ``link`` visited, at both of its switches."""
        self.link_done.add(link)
        a, b = self.graph.ends[link]
        self.visited_at[a].append(link)
        self.visited_at[b].append(link)

    def add_segment(self, kind: str, subnet: int, switches: Iterable[int], links: Sequence[int],
                    ends: Sequence[int]) -> None:
        """Record a segment of ``subnet`` and visit its links."""
        self.before.append({ends[0]: list(self.visited_at[ends[0]]),
                            ends[1]: list(self.visited_at[ends[1]])} if kind == UNITARY else {})
        self.segments.append((kind, subnet, tuple(switches), tuple(links), tuple(ends)))
        self.subnets[subnet][2].append(len(self.segments) - 1)
        for link in links:
            self.visit_link(link)

    def grow_subnet(self, start: int, via: int | None, members: list[int]) -> None:
        """Open the subnet of ``start`` and cut it into segments, each the
        shortest left (§2.2), until none closes; ``members`` grows."""
        self.subnets.append((start, via, [], members))
        subnet = len(self.subnets) - 1
        scan = list(members)  # the members that may still have open links, in order
        while True:
            found = _shortest_segment(self.graph, scan, self.visited, self.link_done,
                                      self.bridges, self.rng)
            if found is None:
                return
            path_switches, path_links, ends = found
            kind = STARTING if not self.subnets[subnet][2] else REGULAR
            for i in path_switches:
                self.visited[i] = True
            members.extend(path_switches)
            scan.extend(path_switches)
            shown = ([start] + list(path_switches)) if kind == STARTING else path_switches
            self.add_segment(kind, subnet, shown, path_links, ends)
            # Links that now join two visited switches can only be unitary:
            # make them at once, so they block as few older links as possible.
            for i in sorted(set(path_switches)):
                for link, j in self.graph.adj[i]:
                    if link not in self.link_done and link not in self.bridges and self.visited[j]:
                        self.add_segment(UNITARY, subnet, (), (link,), self.graph.ends[link])

    def cross_bridges(self, members: list[int], queue: deque) -> None:
        """Visit the bridges out of ``members`` (a subnet, or a switch reached
        by bridges only) and queue the switches on their far side."""
        for i in members:
            for link, j in self.graph.adj[i]:
                if link in self.bridges and link not in self.link_done:
                    self.visit_link(link)
                    self.bridge_list.append((link, i, j))
                    self.visited[j] = True
                    queue.append((j, link))


def _segment_fabric(graph: _Graph, rng: random.Random | None = None) -> _Raw:
    """§2.1/§2.2 segmentation of a connected fabric, from switch 0."""
    state = _Segmenter(graph, rng)
    queue: deque[tuple[int, int | None]] = deque([(0, None)])
    state.visited[0] = True
    while queue:
        start, via = queue.popleft()
        members = [start]
        has_cycle_links = any(link not in state.bridges and link not in state.link_done
                              for link, _j in graph.adj[start])
        if has_cycle_links:
            state.grow_subnet(start, via, members)
        state.cross_bridges(members, queue)
    return _Raw(state.segments, state.subnets, state.bridge_list, state.before)


class _Offers:
    """Closing links found by the segment search, kept while they make a
    segment as short as the shortest so far."""

    def __init__(self) -> None:
        self.best: int | None = None
        self.found: list[tuple[int, int, int, int]] = []  # (length, y, closing_link, z)

    def offer(self, length: int, y: int, link: int, z: int) -> None:
        """A segment of ``length`` closed by ``link`` from ``y`` to ``z``."""
        if self.best is None or length <= self.best:
            self.best = length
            self.found.append((length, y, link, z))


def _shortest_segment(graph: _Graph, members: list[int], visited: list[bool], link_done: set[int],
                      bridges: set[int], rng: random.Random | None = None) -> tuple | None:
    """The shortest path from a visited switch of ``members`` through new
    switches back to a visited one (§2.2), or None when none is left.

    Multi-source BFS from the visited switches over unvisited links and
    switches, labelling each new switch with the link it was entered from
    the visited part by ("branch"); a closing link between two branches, or
    from a branch back to a visited switch over another link, is a segment.
    Among equally short segments the first found wins (earliest visited
    end, lowest link ids), or, given ``rng``, a random one.
    """
    offers, parent = _segment_search(graph, members, visited, link_done, bridges)
    if offers.best is None:
        return None
    ties = [o for o in offers.found if o[0] == offers.best]
    _length, y, closing, z = ties[0] if rng is None else ties[rng.randrange(len(ties))]
    first_switches, first_links, first_end = _chain(parent, y)
    if visited[z]:
        return first_switches, first_links + [closing], (first_end, z)
    last_switches, last_links, last_end = _chain(parent, z)
    return (first_switches + last_switches[::-1], first_links + [closing] + last_links[::-1],
            (first_end, last_end))


def _segment_search(graph: _Graph, members: list[int], visited: list[bool], link_done: set[int],
                    bridges: set[int]) -> tuple[_Offers, dict[int, tuple[int, int]]]:
    """The BFS of :func:`_shortest_segment`: the closing links it offers,
    and per new switch reached ``(link entered by, previous switch)``.
    Drops from ``members`` the switches left with no open link (an
    unvisited link to an unvisited switch): links and switches only ever
    get visited, so they never have one again and later searches, which
    otherwise rescan the whole visited part, skip them."""
    dist: dict[int, int] = {}
    branch: dict[int, int] = {}
    parent: dict[int, tuple[int, int]] = {}
    frontier = []
    offers = _Offers()
    alive: list[int] = []
    for u in members:
        for link, x in graph.adj[u]:
            if link in link_done or link in bridges or visited[x]:
                continue
            if not alive or alive[-1] != u:
                alive.append(u)
            if x not in dist:
                dist[x], branch[x], parent[x] = 1, link, (link, u)
                frontier.append(x)
            else:
                offers.offer(2, x, link, u)
    members[:] = alive
    level = 1
    while frontier and (offers.best is None or level + 1 <= offers.best):
        nxt = []
        for y in frontier:
            for link, z in graph.adj[y]:
                if link == parent[y][0] or link in link_done or link in bridges:
                    continue
                if visited[z]:
                    offers.offer(dist[y] + 1, y, link, z)
                elif z in dist:
                    if branch[z] != branch[y]:
                        offers.offer(dist[y] + dist[z] + 1, y, link, z)
                else:
                    dist[z], branch[z], parent[z] = dist[y] + 1, branch[y], (link, y)
                    nxt.append(z)
        frontier = nxt
        level += 1
    return offers, parent


def _chain(parent: dict[int, tuple[int, int]], i: int) -> tuple[list[int], list[int], int]:
    """New switches and links from the visited part to ``i``, and the
    visited switch the chain starts from."""
    switches, links = [], []
    while i in parent:
        switches.append(i)
        link, i = parent[i]
        links.append(link)
    return switches[::-1], links[::-1], i


# ---------------------------------------------------------------- turn price
def turn_traffic(graph: _Graph, turns: Any, max_sources: int = TRAFFIC_MAX_SOURCES) -> np.ndarray:
    """Traffic over each turn under unrestricted shortest-path routing.

    ``turns``: int array ``(k, 3)`` of switch indexes ``(a, w, b)`` (a turn
    at ``w`` from a link a-w onto a link w-b). Returns, per turn, the number
    of ordered switch pairs whose shortest paths cross it when every pair
    splits evenly over all its shortest paths (Brandes' dependency
    accumulation: from source s, the share through the turn is
    sigma(s, a) / sigma(s, b) x (1 + delta(s, b)) when a-w-b lies on a
    shortest path). Per link: parallel links each carry their share.
    Sources are taken in blocks so memory stays linear in the fabric; above
    ``max_sources`` switches an evenly spaced sample of sources is scaled up.
    """
    n = graph.n
    turns = np.asarray(turns, dtype=np.int64).reshape(-1, 3)
    total = np.zeros(len(turns))
    if n < 2 or not len(turns):
        return total
    step = -(-n // max_sources)
    sources = np.arange(0, n, step)
    block = max(1, TRAFFIC_BLOCK_CELLS // max(n, len(turns)))
    a, w, b = turns[:, 0], turns[:, 1], turns[:, 2]
    for first in range(0, len(sources), block):
        chosen = sources[first:first + block]
        dist, sigma, safe_sigma, delta = _brandes(graph, chosen, len(chosen) == len(sources))
        on_path = (dist[:, a] + 1 == dist[:, w]) & (dist[:, w] + 1 == dist[:, b])
        share = sigma[:, a] / safe_sigma[:, b] * (1.0 + delta[:, b])
        total += np.where(on_path, share, 0.0).sum(axis=0)
    return total * (n / len(sources))


def _brandes(graph: _Graph, chosen: np.ndarray, whole: bool) -> tuple[np.ndarray, ...]:
    """Hop distances, shortest-path counts (sigma, and sigma with 1 for 0)
    and dependencies (delta) from the sources ``chosen``. Kept on ``graph``
    when ``whole`` (they are every source sampled): they depend on the
    fabric only, and the search prices every restart's turns with them."""
    key = (len(chosen), int(chosen[-1]))
    if whole and key in graph.brandes:
        return graph.brandes[key]
    n = graph.n
    rows, cols = [], []
    for a, b in graph.ends.values():
        rows += [a, b]
        cols += [b, a]
    adjacency = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    dist = csgraph.shortest_path(adjacency, method="D", unweighted=True, indices=chosen)
    dist[np.isinf(dist)] = -2.0  # unreachable: never matches a +1 step
    dist = dist.astype(np.int64)
    sigma = np.zeros(dist.shape)
    sigma[np.arange(len(chosen)), chosen] = 1.0
    top = int(dist.max())
    for level in range(1, top + 1):
        spread = np.asarray(adjacency.T @ (sigma * (dist == level - 1)).T).T
        sigma = np.where(dist == level, spread, sigma)
    safe_sigma = np.where(sigma > 0, sigma, 1.0)
    delta = np.zeros(dist.shape)
    for level in range(top - 1, -1, -1):
        carry = np.where(dist == level + 1, (1.0 + delta) / safe_sigma, 0.0)
        delta = np.where(dist == level,
                         sigma * np.asarray(adjacency.T @ carry.T).T, delta)
    if whole:
        graph.brandes[key] = (dist, sigma, safe_sigma, delta)
    return dist, sigma, safe_sigma, delta


# ----------------------------------------------------------------- placement
class _Candidate(NamedTuple):
    switch: int
    link: int
    against: tuple


def _candidates(graph, raw, index):
    """Every restriction segment ``index`` may take (§2.1 rules)."""
    kind, _subnet, switches, links, ends = raw.segments[index]
    if kind == UNITARY:
        link = links[0]
        return [_Candidate(side, link, tuple(raw.visited_links_at[index][side]))
                for side in dict.fromkeys(ends)]
    inner = switches[1:] if kind == STARTING else switches
    # The path visits inner[k] between links[k] and links[k + 1].
    return [_Candidate(w, links[k], (links[k + 1],)) for k, w in enumerate(inner)]


def _candidate_turns(graph, candidate):
    """The ``(a, w, b)`` switch triples of a candidate's forbidden turns."""
    w = candidate.switch
    result = []
    for other in candidate.against:
        a, b = graph.other(candidate.link, w), graph.other(other, w)
        result += [(a, w, b), (b, w, a)]
    return result


def _place(graph, raw, placement, rng):
    """Choose one candidate per segment: ``random`` (§2.2) or ``balanced``."""
    options = [_candidates(graph, raw, i) for i in range(len(raw.segments))]
    if placement == "random":
        return [rng.choice(cands) for cands in options], options
    triples, owner = [], []
    for i, cands in enumerate(options):
        for k, cand in enumerate(cands):
            for triple in _candidate_turns(graph, cand):
                triples.append(triple)
                owner.append((i, k))
    traffic = turn_traffic(graph, np.array(triples, dtype=np.int64).reshape(-1, 3))
    price = {}
    for (i, k), value in zip(owner, traffic.tolist()):
        price[(i, k)] = price.get((i, k), 0.0) + value
    chosen = []
    for i, cands in enumerate(options):
        # Fewest forbidden turns first (matters for unitary sides), then the
        # least displaced traffic; near-equal prices are a tie for the seed.
        keys = [(len(c.against), round(price[(i, k)], 6), rng.random())
                for k, c in enumerate(cands)]
        chosen.append(cands[min(range(len(cands)), key=keys.__getitem__)])
    return chosen, options


# ---------------------------------------------------------------- public API
def _int_option(options, field, default, minimum=0):
    value = options.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RoutingError("%s: option %s must be a whole number >= %d, got %r"
                           % (NAME, field, minimum, value))
    return value


def _options(options, n=0):
    """Checked options with their defaults for a fabric of ``n`` switches."""
    check_options(NAME, options, OPTIONS)
    seed = options.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise RoutingError("%s: option seed must be a whole number, got %r" % (NAME, seed))
    placement = options.get("placement", "balanced")
    if placement not in PLACEMENTS:
        raise RoutingError("%s: option placement=%r is not one of %s"
                           % (NAME, placement, ", ".join(PLACEMENTS)))
    searching = placement == "balanced" and n <= SEARCH_MAX_SWITCHES
    scale = min(1.0, 64.0 / max(n, 1)) if searching else 0.0
    return {"seed": seed, "placement": placement,
            "restarts": _int_option(options, "restarts",
                                    max(1, int(DEFAULT_RESTARTS * scale)), 1),
            "refine": _int_option(options, "refine", int(DEFAULT_REFINE * scale))}


def _prepare(topology, down):
    avoided = down_set(topology, down)
    graph = _Graph(topology, avoided)
    if graph.n == 0:
        raise RoutingError("%s: the fabric has no switches" % NAME)
    lost = graph.unreachable_from(0)
    if lost:
        names = [graph.names[i] for i in lost]
        shown = ", ".join(names[:10]) + (" and %d more" % (len(names) - 10)
                                         if len(names) > 10 else "")
        raise RoutingError("%s: switch%s %s cannot be reached from %s over links that are up "
                           "(%d link%s down)" % (NAME, "es" if len(names) > 1 else "", shown,
                                                 graph.names[0], len(avoided),
                                                 "" if len(avoided) == 1 else "s"))
    return avoided, graph


def _build(graph, raw, chosen, avoided, options):
    names = graph.names
    segments = tuple(Segment(i, kind, subnet, tuple(names[s] for s in switches), links,
                             tuple(names[e] for e in ends))
                     for i, (kind, subnet, switches, links, ends) in enumerate(raw.segments))
    subnets = tuple(Subnet(i, names[start], via, tuple(segs), tuple(names[s] for s in members))
                    for i, (start, via, segs, members) in enumerate(raw.subnets))
    bridges = tuple(Bridge(link, names[t], names[f]) for link, t, f in raw.bridges)
    terminals = tuple(names[t] for t in sorted({t for _l, t, _f in raw.bridges}))
    restrictions = tuple(Restriction(i, names[c.switch], c.link, c.against)
                         for i, c in enumerate(chosen))
    return Segmentation(segments, subnets, bridges, terminals, restrictions, avoided,
                        dict(options))


def _attempt(graph, opts, restart):
    """Segmentation and placement number ``restart`` (0: the canonical
    segmentation, first-found ties; others: seeded ties)."""
    rng = random.Random("%s/%d" % (opts["seed"], restart))
    raw = _segment_fabric(graph, rng if restart else None)
    chosen, alternatives = _place(graph, raw, opts["placement"], rng)
    return raw, chosen, alternatives


def segmentation(topology: Topology, down: Any = (), **options: Any) -> Segmentation:
    """Segments, subnets, bridge links, terminal switches and the chosen
    restriction per segment (§2.1-§2.2) for the links that are up and not
    in ``down``, before any search: the canonical segmentation from the
    lowest-id switch, restrictions placed by ``placement`` (``"balanced"``
    or ``"random"``) with ties broken by ``seed``. ``route(...).segmentation``
    is the one a routing actually uses.

    Raises RoutingError naming the switches that cannot be reached.
    """
    avoided, graph = _prepare(topology, down)
    opts = _options(options, graph.n)
    raw, chosen, _alternatives = _attempt(graph, opts, 0)
    return _build(graph, raw, chosen, avoided, opts)


def _prohibited(topology, graph, chosen):
    turns = set()
    for cand in chosen:
        turns.update(Restriction(0, graph.names[cand.switch], cand.link, cand.against)
                     .turns(topology))
    return turns


def channel_loads(routing_function: RoutingFunction, hosts: bool = False) -> np.ndarray:
    """Load per channel under uniform all-to-all traffic (an array indexed
    by channel id): the number of ordered switch pairs whose path crosses
    it, or with ``hosts`` the number of ordered host pairs (hosts at the
    source x hosts at the destination; one per switch when the topology has
    no hosts, as in :mod:`..metrics`)."""
    topology = routing_function.topology
    n = len(routing_function.switch_names)
    if hosts and topology.hosts:
        weight = np.array([len(topology.hosts_on(name)) for name in routing_function.switch_names],
                          dtype=np.float64)
    else:
        weight = np.ones(n)
    load = np.zeros(len(topology.channels))
    next_hop = routing_function.next_hop
    enters = np.array([routing_function.index[ch.dst] for ch in topology.channels],
                      dtype=np.int64)
    # All (source, destination) pairs of a block of destinations walk the
    # table together: a few numpy calls per hop instead of per destination
    # (the search scores every candidate with this). Loads are whole
    # numbers, so the order of the additions does not matter.
    targets = np.flatnonzero(weight)
    sources = targets
    block = max(1, (1 << 20) // max(len(sources), 1))
    for first in range(0, len(targets), block):
        grid = np.meshgrid(targets[first:first + block], sources, indexing="ij")
        dest, state = grid[0].ravel(), grid[1].ravel()
        keep = dest != state
        dest, state = dest[keep], state[keep]
        carried = weight[state] * weight[dest]
        while len(state):
            out = next_hop[state, dest].astype(np.int64)
            moving = out >= 0
            out, carried, dest = out[moving], carried[moving], dest[moving]
            load += np.bincount(out, weights=carried, minlength=len(load))
            going = enters[out] != dest
            state, carried, dest = n + out[going], carried[going], dest[going]
    return load if hosts else load.astype(np.int64)


def _score(load):
    """Search objective: maximum channel load, then sum of squared loads."""
    return (float(load.max()) if len(load) else 0.0, float((load ** 2).sum()))


def route(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """Segment-based routing of ``topology`` avoiding ``down`` links.

    Options (all deterministic given ``seed``):

    * ``seed`` (int, default 0): tie-breaks, the random placement and the
      segmentations tried after the first.
    * ``placement``: ``"balanced"`` (default) or ``"random"`` (§2.2).
    * ``restarts``: segmentations tried, the routing with the lowest
      maximum channel load (then sum of squared loads) kept; the first is
      the canonical one. Default 24 for balanced placement up to 64
      switches, 12 at 128, else 1.
    * ``refine``: local-search moves tried on the kept one (default 16 up
      to 64 switches, 8 at 128, else 0).

    Returns a RoutingFunction whose ``segmentation`` attribute holds the
    :class:`Segmentation` used. Raises RoutingError naming unreachable
    switches when the links that are up do not connect the fabric.
    """
    avoided, graph = _prepare(topology, down)
    opts = _options(options, graph.n)
    attempts = [_attempt(graph, opts, restart) for restart in range(opts["restarts"])]
    if opts["restarts"] == 1 and not opts["refine"]:
        raw, chosen, _alternatives = attempts[0]
        routing = select_paths(topology, _prohibited(topology, graph, chosen), NAME,
                               down=avoided, options=opts)
        routing.segmentation = _build(graph, raw, chosen, avoided, opts)
        return routing
    routings = _route_placements(topology, graph, [chosen for _raw, chosen, _alt in attempts],
                                 avoided, opts)
    loads = [channel_loads(routing, hosts=True) for routing in routings]
    scores = [_score(load) for load in loads]
    kept = scores.index(min(scores))  # ties: the earliest restart
    (raw, chosen, alternatives), routing, load = attempts[kept], routings[kept], loads[kept]
    if opts["refine"] and graph.n > 1:
        chosen, routing = _refine(topology, graph, chosen, alternatives, routing, load,
                                  avoided, opts)
    routing.segmentation = _build(graph, raw, chosen, avoided, opts)
    return routing


def _route_placements(topology, graph, placements, avoided, opts):
    """The routing of every placement (a list of chosen candidates), each
    exactly what :func:`.base.select_paths` makes of it alone, routed side
    by side in batches of at most ``BATCH_CELLS`` (placement x switch x
    state) cells (:func:`.base.select_paths_many`: the search's candidates
    differ only in their prohibited turns, and routing them together pays
    numpy's per-call overhead once per batch)."""
    n = max(graph.n, 1)
    size = max(1, BATCH_CELLS // (n * (n + len(topology.channels))))
    routings = []
    for first in range(0, len(placements), size):
        sets = [_prohibited(topology, graph, chosen) for chosen in placements[first:first + size]]
        routings += select_paths_many(topology, sets, NAME, down=avoided, options=opts)
    return routings


def _refine(topology, graph, chosen, alternatives, routing, load, avoided, opts):
    """Local search (first improvement): move one segment's restriction to
    another allowed place, nearest the most loaded channel first; keep a
    move when the maximum channel load, then the sum of squared loads,
    drops. At most ``opts["refine"]`` moves count as tried: moves are
    routed ``REFINE_BATCH`` at a time (speed), but only those up to the
    first improving one count, and the outcome is that of trying them one
    by one."""
    rows, cols = [], []
    for a, b in graph.ends.values():
        rows += [a, b]
        cols += [b, a]
    hops = csgraph.shortest_path(
        sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(graph.n, graph.n)),
        method="D", unweighted=True)
    index = {name: i for i, name in enumerate(graph.names)}
    best = _score(load)
    budget = opts["refine"]
    rejected = set()
    while budget > 0:
        hot = topology.channels[int(np.argmax(load))]
        near = np.minimum(hops[:, index[hot.src]], hops[:, index[hot.dst]])
        moves = sorted(((near[cand.switch], i, k) for i, cands in enumerate(alternatives)
                        for k, cand in enumerate(cands)
                        if cand != chosen[i] and (i, k, best) not in rejected))
        found = _first_improvement(topology, graph, chosen, alternatives,
                                   [(i, k) for _distance, i, k in moves[:budget]], best,
                                   avoided, opts)
        budget -= found[0]
        for i, k in found[1]:
            rejected.add((i, k, best))
        if found[2] is None:
            break
        chosen, routing, load = found[2]
        best = _score(load)
    return chosen, routing


def _first_improvement(topology, graph, chosen, alternatives, moves, best, avoided, opts):
    """Try ``moves`` (``(segment, candidate)``) in order, ``REFINE_BATCH`` at
    a time, until one beats ``best``. Returns ``(tried, rejected, kept)``:
    how many count as tried (up to the improving one), the moves tried
    without improvement, and ``(chosen, routing, load)`` of the improving
    move or None."""
    rejected = []
    for first in range(0, len(moves), REFINE_BATCH):
        trials = []
        for i, k in moves[first:first + REFINE_BATCH]:
            trial = list(chosen)
            trial[i] = alternatives[i][k]
            trials.append(trial)
        for (i, k), trial, routing in zip(moves[first:first + REFINE_BATCH], trials,
                                          _route_placements(topology, graph, trials, avoided,
                                                            opts)):
            load = channel_loads(routing, hosts=True)
            if _score(load) < best:
                return len(rejected) + 1, rejected, (trial, routing, load)
            rejected.append((i, k))
    return len(rejected), rejected, None
