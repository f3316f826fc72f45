# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The proof of a make-before-break transition (:mod:`.transition`, "Why it
is safe"): every window -- two consecutive states of the step list, where
a switch that differs may handle any arrival with either state -- is
simulated exhaustively with the 802.1Q simulator (:class:`.dot1q.Dot1qFabric`,
which reads nothing but the intents), and the channel pairs of all walks
of all windows form one dependency graph that must stay acyclic (Dally and
Seitz; the switch-tagged paper's §4.4 warning).

Also :class:`TransitionError`, raised by every part of the planner.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Optional

import networkx as nx

from ..verify.dot1q import BROADCAST_MAC, Dot1qFabric
from ..errors import EtherclusterError
from ..fabric.topology import Topology

# A full intent (docs/intent.md) or one switch's entry of it: plain data.
Intent = dict[str, Any]
# Which fabrics may handle a frame at a switch (None: at the source host).
Choose = Callable[[Optional[str]], tuple[Dot1qFabric, ...]]  # evaluated at run time: Optional, as sanity pylint reads it for older Pythons
# A dependency between two channels: (in channel id, out channel id).
Edge = tuple[int, int]
# A node of the walk graph: (switch, port, VLAN) or ("host", name).
Node = tuple[Any, ...]


class TransitionError(EtherclusterError):
    """A transition cannot be planned safely; nothing is planned. The message
    names the link, switch or step; ``link``, ``switch`` and ``step`` hold
    them when known."""

    def __init__(self, message: str, link: str | None = None, switch: str | None = None,
                 step: str | None = None) -> None:
        super().__init__(message)
        self.link = link
        self.switch = switch
        self.step = step


# --------------------------------------------------------------- explorer
class _Explorer:
    """Walks frames through one or several configurations at once with the
    802.1Q simulator's own decisions (classify, decide, egress of
    :class:`Dot1qFabric`), caching them. ``choose(switch)`` says which
    fabrics may handle a frame at that switch in the window explored."""

    def __init__(self, topology: Topology, hosts: list[str]) -> None:
        self.topology = topology
        self.hosts = hosts          # representative host names
        self.classified: dict[tuple[Any, ...], Any] = {}
        self.decided: dict[tuple[Any, ...], Any] = {}
        self.sent: dict[tuple[Any, ...], Any] = {}
        self.in_channel: dict[tuple[str, str], int] = {}
        for ch in topology.channels:
            self.in_channel[(ch.dst, ch.dst_port)] = ch.id
        self.out_channel = {(ch.src, ch.src_port): ch.id for ch in topology.channels}
        # (switch, vid, dst_host) a unicast walk found no entry for
        self.missing: set[tuple[str, int, str]] = set()
        self.alive: dict[int, Dot1qFabric] = {}
        # (switch, port) of links that failed: a frame sent there is lost at
        # the failure, as it is in reality (a failover's walks end there); a
        # problem only where the pairs must be delivered around the failure
        self.dead_ports: set[tuple[str, str]] = set()
        self.dead_strict = False
        # a switch that changes during a window handles each frame wholly with
        # one of its states (an atomic write, e.g. an OpenFlow bundle): the
        # walk graph's nodes then carry which state classified the frame
        self.atomic = False

    def forget(self) -> None:
        """Drop the cached decisions (after the fabrics were rebuilt)."""
        self.classified.clear()
        self.decided.clear()
        self.sent.clear()

    def _classify(self, fabric: Dot1qFabric, switch: str, port: str, tag: int | None) -> Any:
        # the caches are keyed by id(fabric): keep every fabric alive so that
        # no later fabric can reuse an id and hit another fabric's entries
        self.alive.setdefault(id(fabric), fabric)
        key = (id(fabric), switch, port, tag)
        found = self.classified.get(key)
        if found is None:
            found = self.classified[key] = fabric.classify(switch, port, tag)
        return found

    def _decide(self, fabric: Dot1qFabric, switch: str, port: str, vid: int, mac: str) -> Any:
        key = (id(fabric), switch, port, vid, mac)
        found = self.decided.get(key)
        if found is None:
            found = self.decided[key] = fabric.decide(switch, port, vid, mac)
        return found

    def _egress(self, fabric: Dot1qFabric, switch: str, out: str, vid: int) -> Any:
        key = (id(fabric), switch, out, vid)
        found = self.sent.get(key)
        if found is None:
            found = self.sent[key] = fabric.egress(switch, out, vid)
        return found

    def explore(self, choose: Choose, sources: Iterable[str], dst_host: str | None,
                dependencies: set[Edge] | None = None) -> tuple[int, list[str]]:
        """Every walk of frames from each of ``sources`` (host names) to
        ``dst_host`` (a host, or None for a broadcast). Returns ``(nodes,
        problems)``: the number of (switch, port, VLAN) states reached and
        the problems found (unicast: drop, flood, wrong or tagged delivery,
        a loop; broadcast: a storm). Adds (in channel, out channel) pairs of
        unicast walks to ``dependencies`` (a set) when given."""
        fabric0 = choose(None)[0]
        mac = BROADCAST_MAC if dst_host is None else fabric0.hosts[dst_host][2]
        successors: dict[Node, set[Node]] = {}
        problems: list[str] = []
        for src in sources:
            if src == dst_host:
                continue
            switch, port, _mac = fabric0.hosts[src]
            start = ("host", src)
            successors.setdefault(start, set())
            pending: deque[Node] = deque()
            self._arrive(choose, start, switch, port, None, successors, pending, problems,
                         src, dst_host)
            while pending:
                node = pending.popleft()
                self._expand(choose, node, mac, successors, pending, problems, src, dst_host,
                             dependencies)
        cycle = _find_cycle(successors)
        if cycle:
            what = "a broadcast storms" if dst_host is None else "frames to %s loop" % dst_host
            problems.append("%s: %s" % (what, " -> ".join("%s:%s/%s" % node[:3] for node in cycle)))
        return sum(1 for node in successors if node[0] != "host"), problems

    def _arrive(self, choose: Choose, parent: Node, switch: str, port: str, tag: int | None,
                successors: dict[Node, set[Node]], pending: deque[Node], problems: list[str],
                src: str, dst_host: str | None) -> None:
        for which, fabric in enumerate(choose(switch)):
            vid, reason = self._classify(fabric, switch, port, tag)
            if vid is None:
                if dst_host is not None:
                    problems.append("frames from %s to %s are dropped: %s" % (src, dst_host,
                                                                              reason))
                continue
            node = (switch, port, vid, which) if self.atomic else (switch, port, vid)
            successors[parent].add(node)
            if node not in successors:
                successors[node] = set()
                pending.append(node)

    def _expand(self, choose: Choose, node: Node, mac: str, successors: dict[Node, set[Node]],
                pending: deque[Node], problems: list[str], src: str, dst_host: str | None,
                dependencies: set[Edge] | None) -> None:
        switch, port, vid = node[:3]
        c_in = self.in_channel.get((switch, port))
        fabrics = choose(switch)
        for fabric in (fabrics[node[3]],) if self.atomic else fabrics:
            outs, how, reason = self._decide(fabric, switch, port, vid, mac)
            if dst_host is not None:
                if reason:
                    problems.append("frames from %s to %s are dropped at %s: %s"
                                    % (src, dst_host, switch, reason))
                    continue
                if how != "static":
                    self.missing.add((switch, vid, dst_host))
                    problems.append("frames from %s to %s flood at %s:%s in VLAN %s (no static "
                                    "entry)" % (src, dst_host, switch, port, vid))
                    continue
            for out in outs:
                if (switch, out) in self.dead_ports:
                    if self.dead_strict and dst_host is not None:
                        problems.append("frames from %s to %s are still sent into the failure at %s:%s"
                                        % (src, dst_host, switch, out))
                    continue
                tag, where = self._egress(fabric, switch, out, vid)
                if where is None:
                    if dst_host is not None:
                        problems.append("frames from %s to %s leave %s:%s into a down link"
                                        % (src, dst_host, switch, out))
                    continue
                if where[0] == "host":
                    if dst_host is not None and (where[1] != dst_host or tag is not None):
                        problems.append("frames from %s to %s are delivered %s" % (
                            src, dst_host, "to %s" % where[1] if where[1] != dst_host
                            else "tagged (VLAN %s)" % tag))
                    continue
                if dependencies is not None and c_in is not None:
                    dependencies.add((c_in, self.out_channel[(switch, out)]))
                self._arrive(choose, node, where[1][0], where[1][1], tag, successors, pending,
                             problems, src, dst_host)


def _find_cycle(successors: dict[Node, set[Node]]) -> list[Node]:
    """A cycle of the graph ``{node: successors}`` as a list of nodes, or []."""
    color: dict[Node, int] = {}
    for root in successors:
        if root in color:
            continue
        color[root] = 1
        stack = [(root, iter(successors[root]))]
        path = [root]
        while stack:
            node, children = stack[-1]
            for child in children:
                state = color.get(child)
                if state is None:
                    color[child] = 1
                    stack.append((child, iter(successors.get(child, ()))))
                    path.append(child)
                    break
                if state == 1:
                    return [n for n in path[path.index(child):] if n[0] != "host"]
            else:
                color[node] = 2
                stack.pop()
                path.pop()
    return []


def _representatives(topology: Topology, absent: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(sources, destinations): one host per switch (first by name) as both,
    plus a second host of every switch that has two (the pair inside it).
    Hosts of the ``absent`` switches (failed ones) neither send nor receive."""
    absent = set(absent)
    by_switch: dict[str, list[str]] = {}
    for name in sorted(topology.hosts):
        if topology.hosts[name].switch in absent:
            continue
        by_switch.setdefault(topology.hosts[name].switch, []).append(name)
    dests = [hosts[0] for _sw, hosts in sorted(by_switch.items())]
    sources = list(dests) + [hosts[1] for _sw, hosts in sorted(by_switch.items())
                             if len(hosts) > 1]
    return sources, dests


# --------------------------------------------------------------- checks
class _Proof:
    """Accumulates the window checks and the global dependency graph."""

    def __init__(self, topology: Topology, action: str, link_name: str, absent: Iterable[str] = (),
                 dead_ports: Iterable[tuple[str, str]] = ()) -> None:
        self.topology = topology
        self.action = action
        self.link_name = link_name
        self.sources, self.dests = _representatives(topology, absent)
        self.explorer = _Explorer(topology, self.sources)
        self.explorer.dead_ports = set(dead_ports)
        self.dependencies = nx.DiGraph()
        self.windows = 0
        self.states = 0
        self.walks = 0
        self.nodes = 0
        self.flip_orders: list[list[str]] = []
        self.completed = 0
        self.notes: list[str] = []
        self.order_free = False

    def window(self, choose: Choose, what: str, dependencies: set[Edge] | None = None) -> list[str]:
        """Problems of one window (``choose`` as in :meth:`_Explorer.explore`)."""
        problems: list[str] = []
        edges: set[Edge] = set() if dependencies is None else dependencies
        for dst in self.dests:
            nodes, found = self.explorer.explore(choose, self.sources, dst, edges)
            self.nodes += nodes
            self.walks += len(self.sources) - 1
            problems.extend(found)
            if found and not self.explorer.missing:
                break
        if not problems:
            problems = self.broadcast(choose, what)
        else:
            problems = ["%s: %s" % (what, problem) for problem in problems[:3]]
        self.windows += 1
        return problems

    def broadcast(self, choose: Choose, what: str) -> list[str]:
        """Storm problems of a broadcast from every representative source."""
        nodes, found = self.explorer.explore(choose, self.sources, None)
        self.nodes += nodes
        return ["%s: %s" % (what, problem) for problem in found[:3]]

    def add_edges(self, edges: Iterable[Edge]) -> list[Edge]:
        """Add dependency edges; returns the edges that were new, or raises
        nothing -- the caller checks :meth:`acyclic`."""
        new = [edge for edge in edges if not self.dependencies.has_edge(*edge)]
        self.dependencies.add_edges_from(new)
        return new

    def acyclic(self) -> bool:
        """Whether the dependency graph so far has no cycle."""
        return nx.is_directed_acyclic_graph(self.dependencies)

    def cycle_text(self) -> str:
        """A cycle of the dependency graph as channel names, or ""."""
        try:
            cycle = nx.find_cycle(self.dependencies)
        except nx.NetworkXNoCycle:
            return ""
        channels = self.topology.channels
        return " => ".join(str(channels[u]) for u, _v in cycle)


def _fixed_choose(fabric: Dot1qFabric) -> Choose:
    """Every switch handles frames with ``fabric`` (one state)."""
    def choose(_switch: str | None) -> tuple[Dot1qFabric, ...]:
        return (fabric,)
    return choose


def _pair_choose(first: Dot1qFabric, second: Dot1qFabric) -> Choose:
    """Frames enter with ``first``; every switch may handle them with either."""
    both = (first, second)

    def choose(switch: str | None) -> tuple[Dot1qFabric, ...]:
        return (first,) if switch is None else both
    return choose


def _check_window(proof: _Proof, first: Intent, second: Intent, what: str, atomic: bool = False) -> None:
    """Window check between two full intents (any switches may differ).
    ``atomic``: each switch's change is one atomic write (an OpenFlow
    bundle), so it handles every frame wholly with its old or its new
    state; otherwise each lookup of a frame may use either."""
    proof.explorer.atomic = atomic
    try:
        _check_choose(proof, _pair_choose(Dot1qFabric(first), Dot1qFabric(second)), what)
    finally:
        proof.explorer.atomic = False


def _check_state(proof: _Proof, intent: Intent, what: str) -> None:
    """Check one state on its own (the running fabric before any step)."""
    _check_choose(proof, _fixed_choose(Dot1qFabric(intent)), what)


def _check_choose(proof: _Proof, choose: Choose, what: str) -> None:
    """Walk every frame the window ``choose`` allows, add its dependency
    edges to the proof and refuse problems or a cycle, naming ``what``."""
    edges: set[Edge] = set()
    problems = proof.window(choose, what, edges)
    if problems:
        raise TransitionError("; ".join(problems), step=what)
    proof.add_edges(edges)
    if not proof.acyclic():
        raise TransitionError("%s: the dependency graph has the cycle %s"
                              % (what, proof.cycle_text()), step=what)


def _check_recovered(proof: _Proof, intent: Intent, what: str) -> None:
    """Every pair of ``proof``'s hosts is delivered in the state ``intent``
    without any frame sent into the failure (its dead ports): what a
    failover must reach once its urgent pushes are done. Raises TransitionError."""
    explorer = proof.explorer
    explorer.dead_strict = True
    try:
        problems = proof.window(_fixed_choose(Dot1qFabric(intent)), what)
    finally:
        explorer.dead_strict = False
    if problems:
        raise TransitionError("; ".join(problems), step=what)
