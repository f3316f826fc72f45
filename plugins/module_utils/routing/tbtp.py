# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tree-based turn prohibition (TBTP): De Pellegrini, Starobinski,
Karpovsky, Levitin, "Scalable cycle-breaking algorithms for gigabit
Ethernet backbones", INFOCOM 2004 (journal version: J. Optical Networking
5(2), 2006), the baseline of the segment-based routing paper (§1.1, §3).

What the paper states, and this module keeps: TBTP starts from a spanning
tree (any one; we build the IEEE 802.1D tree: root = lowest switch id,
least hop count, ties to the lower switch id and link id); it never
prohibits a turn between two tree links, so frames can always follow the
802.1D tree (backward compatibility with legacy switches); it breaks every
cycle of the turn graph; and it prohibits at most 1/2 of the turns for any
graph and any spanning tree, in polynomial time, which avoids up*/down*'s
hot spot at the root.

What we reconstructed: the paper's full text was not available to us (the
reference search returned its abstract only), so the step rule below is
ours, built on the turn-prohibition (TP) framework the paper extends
(Starobinski, Karpovsky, Zakrevski, IEEE/ACM ToN 2003: pick a node,
prohibit the turns *around* it, permit the turns *starting* from it,
delete it, repeat). TBTP's tree lets the pick be a leaf of the remaining
spanning tree, so the remaining fabric stays connected. At each step, for
the chosen leaf ``v`` (remaining links only):

* rule A (TP): prohibit every turn around ``v`` and permit every turn that
  starts or ends at ``v``; or
* rule B: permit every turn around ``v`` and prohibit the turns that start
  or end at ``v`` unless both of their links are tree links;

whichever prohibits fewer turns (ties to rule A). Every turn is decided
exactly once, at the step of the first of its three switches to go, and
each step prohibits at most half of the turns it decides, hence the 1/2
bound. The leaf taken at each step is the one whose step prohibits
fewest turns (ties to the lower id), a greedy order; the bound holds for
any order.

Why it is deadlock-free: in a cycle of the turn graph take the switch
``v`` deleted first. Every turn of the cycle at or next to ``v`` was
decided at ``v``'s step. Under rule A the cycle's turn around ``v`` is
prohibited. Under rule B the cycle enters and leaves ``v`` only over tree
links, and ``v`` has one tree link left (it is a leaf), so the cycle would
make a U-turn. Why every pair stays connected: a tree path only makes
tree-tree turns, and those are never prohibited (a leaf has no tree-tree
turn around it; rule B keeps tree-tree turns that start at it).

Paths are then the shortest legal ones, balanced, by
:func:`.base.select_paths`. Options:

* ``root``: the spanning tree's root (switch name; default the lowest id).
* ``tree``: any spanning tree instead, as link references (index,
  ``"sw:port"`` or link name), as the paper allows.
* ``rule``: ``"auto"`` (default: the rule prohibiting fewer turns per
  step; the only one with the 1/2 bound), ``"around"`` (always A: TP on the
  tree) or ``"starting"`` (always B). All three are deadlock-free.
* ``order``: ``"fewest"`` (default: the leaf whose step prohibits fewest
  turns) or ``"deepest"`` (farthest from the root first: a bottom-up sweep
  of the tree; it gave higher channel loads in our runs).
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import TYPE_CHECKING, Any, NamedTuple

from .base import RoutingError, RoutingFunction, check_options, down_set, select_paths, switch_option

if TYPE_CHECKING:
    from ..fabric.topology import Topology

NAME = "tbtp"
OPTIONS = {"root", "tree", "rule", "order"}
RULES = ("auto", "around", "starting")
ORDERS = ("fewest", "deepest")


class TurnProhibition(NamedTuple):
    """The result of TBTP before path selection."""

    root: str
    tree_links: frozenset      # link ids of the spanning tree
    order: tuple               # (switch, rule "A" or "B", turns prohibited) per step
    prohibited: frozenset      # (in_channel, out_channel) pairs
    total_turns: int           # all turns between usable links, U-turns excluded

    @property
    def prohibited_fraction(self) -> float:
        """Prohibited turns over all turns (at most 1/2 under rule auto)."""
        return len(self.prohibited) / self.total_turns if self.total_turns else 0.0

    def to_data(self) -> dict[str, Any]:
        """Plain data (JSON-serialisable)."""
        return {"root": self.root, "tree_links": sorted(self.tree_links),
                "order": [list(step) for step in self.order],
                "prohibited": [list(turn) for turn in sorted(self.prohibited)],
                "total_turns": self.total_turns,
                "prohibited_fraction": self.prohibited_fraction}


def _leave(ends: dict[int, tuple[int, int]], link: int, i: int) -> int:
    """Channel of ``link`` leaving switch index ``i``."""
    return 2 * link if ends[link][0] == i else 2 * link + 1


def _arrive(ends: dict[int, tuple[int, int]], link: int, i: int) -> int:
    """Channel of ``link`` entering switch index ``i``."""
    return _leave(ends, link, i) ^ 1


def _spanning_tree(n: int, adj: list[list[tuple[int, int]]],
                   root: int) -> tuple[frozenset[int], list[int | None], list[int], list[int]]:
    """802.1D-like tree: BFS from ``root``; each switch's root port goes to
    the neighbour nearest the root, ties to the lower switch id, then the
    lower link id. Returns (tree link ids, parent link per switch, unreached)."""
    dist = [-1] * n
    dist[root] = 0
    queue = deque([root])
    order = []
    while queue:
        i = queue.popleft()
        order.append(i)
        for _link, j in adj[i]:
            if dist[j] < 0:
                dist[j] = dist[i] + 1
                queue.append(j)
    parent_link: list[int | None] = [None] * n
    for i in order[1:]:
        parent_link[i] = min((dist[j], j, link) for link, j in adj[i] if dist[j] == dist[i] - 1)[2]
    unreached = [i for i in range(n) if dist[i] < 0]
    return (frozenset(link for link in parent_link if link is not None), parent_link,
            unreached, dist)


def _given_tree(topology: Topology, refs: Any, ends: dict[int, tuple[int, int]], n: int,
                root: int) -> tuple[frozenset[int], list[int]]:
    """Validate option ``tree`` (link references forming a spanning tree of
    the usable links); return (tree link ids, depth per switch)."""
    if isinstance(refs, (str, int)):
        refs = [refs]
    links = []
    for ref in refs:
        try:
            links.append(topology.link(ref).index)
        except Exception as exc:  # TopologyError, or a reference of the wrong type
            raise RoutingError("%s: option tree: %s" % (NAME, exc)) from None
    tree = frozenset(links)
    unusable = [topology.links[i].name for i in sorted(tree) if i not in ends]
    if unusable:
        raise RoutingError("%s: option tree: link %s is down" % (NAME, unusable[0]))
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for link in sorted(tree):
        a, b = (find(e) for e in ends[link])
        if a == b:
            raise RoutingError("%s: option tree: link %s closes a cycle, a spanning tree has "
                               "none" % (NAME, topology.links[link].name))
        parent[a] = b
    if len(tree) != n - 1:
        raise RoutingError("%s: option tree: %d links do not span %d switches (a spanning tree "
                           "has %d)" % (NAME, len(tree), n, n - 1))
    adj: list[list[tuple[int, int]]] = [[] for _unused in range(n)]
    for link in tree:
        a, b = ends[link]
        adj[a].append((link, b))
        adj[b].append((link, a))
    _tree, _parent, _unreached, depth = _spanning_tree(n, adj, root)
    return tree, depth


def turn_prohibition(topology: Topology, down: Any = (), **options: Any) -> TurnProhibition:
    """Run TBTP on the links that are up and not in ``down``; return a
    :class:`TurnProhibition`. Raises RoutingError naming unreachable
    switches or a bad option."""
    check_options(NAME, options, OPTIONS)
    avoided = down_set(topology, down)
    names = topology.switch_names()
    n = len(names)
    if n == 0:
        raise RoutingError("%s: the fabric has no switches" % NAME)
    root = switch_option(topology, NAME, "root", options["root"]) if "root" in options else 0
    rule_option = options.get("rule", "auto")
    if rule_option not in RULES:
        raise RoutingError("%s: option rule=%r is not one of %s"
                           % (NAME, rule_option, ", ".join(RULES)))
    order_option = options.get("order", "fewest")
    if order_option not in ORDERS:
        raise RoutingError("%s: option order=%r is not one of %s"
                           % (NAME, order_option, ", ".join(ORDERS)))
    adj, ends = _usable_links(topology, avoided, names)
    tree, depth = _tree(topology, options.get("tree"), adj, ends, root, names)
    total_turns = sum(len(links) * (len(links) - 1) for links in adj)
    deletion = _Deletion(names, adj, ends, tree, rule_option, order_option, depth)
    deletion.run()
    return TurnProhibition(names[root], tree, tuple(deletion.order),
                           frozenset(deletion.prohibited), total_turns)


def _usable_links(topology: Topology, avoided: frozenset[int],
                  names: list[str]) -> tuple[list[list[tuple[int, int]]], dict[int, tuple[int, int]]]:
    """Per switch index its ``(link, neighbour)`` over the links that are up
    and not avoided, and per such link its two end switch indexes."""
    index = {name: i for i, name in enumerate(names)}
    adj: list[list[tuple[int, int]]] = [[] for _unused in range(len(names))]
    ends = {}
    for link in topology.links:
        if link.index in avoided or link.state != "up":
            continue
        a, b = index[link.a.switch], index[link.b.switch]
        ends[link.index] = (a, b)
        adj[a].append((link.index, b))
        adj[b].append((link.index, a))
    return adj, ends


def _tree(topology: Topology, given: Any, adj: list[list[tuple[int, int]]],
          ends: dict[int, tuple[int, int]], root: int,
          names: list[str]) -> tuple[frozenset[int], list[int]]:
    """The spanning tree (802.1D, or option ``tree`` when ``given``) and the
    depth of every switch in it; RoutingError naming unreachable switches."""
    n = len(names)
    tree, _parent, unreached, depth = _spanning_tree(n, adj, root)
    if not unreached and given is not None:
        tree, depth = _given_tree(topology, given, ends, n, root)
    if unreached:
        shown = ", ".join(names[i] for i in unreached[:10])
        more = " and %d more" % (len(unreached) - 10) if len(unreached) > 10 else ""
        raise RoutingError("%s: switch%s %s%s cannot be reached from %s over links that are up"
                           % (NAME, "es" if len(unreached) > 1 else "", shown, more, names[root]))
    return tree, depth


class _Deletion:
    """TBTP's steps (module doc): delete a leaf of the remaining spanning
    tree at a time, the cheapest first, deciding every turn at or next to it
    by rule A or B."""

    def __init__(self, names: list[str], adj: list[list[tuple[int, int]]],
                 ends: dict[int, tuple[int, int]], tree: frozenset[int], rule_option: str,
                 order_option: str, depth: list[int]) -> None:
        n = len(names)
        self.names, self.adj, self.ends, self.tree = names, adj, ends, tree
        self.rule_option, self.order_option, self.depth = rule_option, order_option, depth
        self.alive = [True] * n
        self.degree = [len(links) for links in adj]
        self.tree_degree = [sum(1 for link, _j in links if link in tree) for links in adj]
        self.version = [0] * n
        self.heap: list[tuple[int, int, int]] = []
        self.prohibited: set[tuple[int, int]] = set()
        self.order: list[tuple[str, str, int]] = []

    def price(self, v: int) -> tuple[int, str]:
        """(turns prohibited, rule) for deleting leaf ``v`` now."""
        d = self.degree[v]
        around = d * (d - 1)
        shared: dict[int, int] = {}  # neighbour -> links it shares with v (parallel links)
        starting = 0
        for link, a in self.adj[v]:
            if self.alive[a]:
                shared[a] = shared.get(a, 0) + 1
                if link in self.tree:  # tree-tree turns at a stay allowed
                    starting -= 2 * (self.tree_degree[a] - 1)
        for a, p in shared.items():
            # Turns at a using at least one of its p links to v: a turn
            # between two of them goes from v back to v and counts once.
            starting += 2 * p * (self.degree[a] - 1) - p * (p - 1)
        if self.rule_option == "around" or (self.rule_option == "auto" and around <= starting):
            return around, "A"
        return starting, "B"

    def push(self, v: int) -> None:
        """(Re)queue leaf ``v`` with its current key; older entries go stale."""
        self.version[v] += 1
        key = self.price(v)[0] if self.order_option == "fewest" else -self.depth[v]
        heapq.heappush(self.heap, (key, v, self.version[v]))

    def run(self) -> None:
        """Delete leaves until every switch is gone."""
        for v in range(len(self.names)):
            if self.tree_degree[v] <= 1:
                self.push(v)
        while self.heap:
            _cost, v, stamp = heapq.heappop(self.heap)
            if not self.alive[v] or stamp != self.version[v] or self.tree_degree[v] > 1:
                continue
            self.delete(v)

    def delete(self, v: int) -> None:
        """One step: decide the turns at and next to leaf ``v``, remove it,
        and requeue the switches whose price may have changed."""
        cost, rule = self.price(v)
        links = [(link, a) for link, a in self.adj[v] if self.alive[a]]
        before = len(self.prohibited)
        self.prohibit(v, links, rule)
        if len(self.prohibited) - before != cost:  # every turn is decided exactly once
            raise RoutingError("%s: internal error: step at %s prohibited %d turns, priced %d"
                               % (NAME, self.names[v], len(self.prohibited) - before, cost))
        self.order.append((self.names[v], rule, cost))
        self.alive[v] = False
        touched = set()
        for link, a in links:
            self.degree[a] -= 1
            if link in self.tree:
                self.tree_degree[a] -= 1
            touched.add(a)
            touched.update(b for _l, b in self.adj[a] if self.alive[b])
        for u in touched:
            if self.alive[u] and self.tree_degree[u] <= 1:
                self.push(u)

    def prohibit(self, v: int, links: list[tuple[int, int]], rule: str) -> None:
        """Rule A: the turns around ``v``; rule B: the turns starting or
        ending at ``v`` unless both links are tree links."""
        ends, prohibited = self.ends, self.prohibited
        if rule == "A":
            for l1, _a in links:
                for l2, _b in links:
                    if l1 != l2:
                        prohibited.add((_arrive(ends, l1, v), _leave(ends, l2, v)))
        else:
            for link, a in links:
                for other, b in self.adj[a]:
                    if other == link or not self.alive[b] or (link in self.tree and other in self.tree):
                        continue
                    prohibited.add((_leave(ends, link, v), _leave(ends, other, a)))
                    prohibited.add((_arrive(ends, other, a), _leave(ends, link, a)))


def route(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """TBTP routing: the turns of :func:`turn_prohibition` are prohibited,
    paths are the shortest legal ones, balanced (:func:`.base.select_paths`).
    The returned RoutingFunction carries the :class:`TurnProhibition` as
    its ``turn_prohibition`` attribute."""
    result = turn_prohibition(topology, down, **options)
    routing = select_paths(topology, result.prohibited, NAME, down=down_set(topology, down),
                           options=dict(options))
    routing.turn_prohibition = result
    return routing
