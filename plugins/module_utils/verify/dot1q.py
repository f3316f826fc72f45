# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An IEEE 802.1Q forwarding simulator that reads nothing but the intent.

It plays what the intent's switches would do with a frame (docs/intent.md
"Semantics"; switch-tagged VLAN routing paper §3.1): so tests, the planner's
checks and the lab verification can ask "does this configuration deliver
that frame, along which ports, and does this broadcast die out?" without
trusting the code that produced the configuration.

Per switch and frame:

1. **Ingress** on port P (admin up, link up): an untagged frame gets VLAN
   ``pvid(P)``; a tagged frame is kept only if P is a member (tagged or
   untagged) of its VLAN (ingress filtering). A VLAN the switch does not
   hold drops the frame.
2. **Learning** (only when the fabric is built with ``learning=True``):
   the switch notes (source MAC, VLAN) -> P.
3. **Forwarding** inside the VLAN: a static entry (MAC, VLAN) -> port
   first, then a learned one; a broadcast or an unknown destination floods
   to every member port of the VLAN except P. A switch whose intent lists
   ``broadcast_ports`` (its ports on the fabric's flood tree, and its host
   ports) sends broadcasts out of those ports only, whatever the VLAN,
   except P -- untagged unless the port is a tagged member of the VLAN. A frame is never sent back
   out of the port it came in on, nor out of a port that is not a member
   of its VLAN or is admin down.
4. **Egress** on Q: untagged if the VLAN is in Q's ``untagged``, tagged if
   in Q's ``tagged``. Out of a host port the host receives it; out of a
   link port it enters the peer port of the link (if the link is up).

A frame's *state* is (switch, input port, VLAN): everything the switch
decides depends on it and on the frame's MACs, so a copy that reaches a
state a second time would loop forever. :meth:`Dot1qFabric.send` explores
the states a frame reaches (one graph for all its copies) and reports a
storm when that graph has a cycle.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

import networkx as nx
import numpy as np
from scipy import sparse

from ..errors import EtherclusterError

BROADCAST = "broadcast"
BROADCAST_MAC = "ff:ff:ff:ff:ff:ff"


def _broadcast_ports(entry: dict[str, Any], ports: dict[str, Any]) -> tuple[str, ...] | None:
    """The ports a broadcast may leave by (intent ``broadcast_ports``: a
    static filtering entry for the broadcast address that holds in every
    VLAN), admin-up ones only; None when the switch floods by membership."""
    listed = entry.get("broadcast_ports")
    if listed is None:
        return None
    return tuple(sorted(str(p) for p in listed if str(p) in ports and ports[str(p)]["admin"] == "up"))


# Senders whose broadcasts broadcast_containment counts in one block.
CONTAINMENT_BLOCK = 128


class _FloodCounting:
    """The flood graph as sparse matrices: successor edges, the switch of
    each state and the hosts each state's flood delivers to."""

    def __init__(self, fabric: Dot1qFabric, graph: nx.DiGraph) -> None:
        nodes = list(nx.topological_sort(graph))
        index = {node: i for i, node in enumerate(nodes)}
        count = len(nodes)
        self.switches = sorted(fabric.switches)
        switch_index = {name: i for i, name in enumerate(self.switches)}
        self.hosts = sorted(fabric.hosts)
        host_index = {name: i for i, name in enumerate(self.hosts)}
        rows, cols = zip(*((index[u], index[v]) for u, v in graph.edges())) if graph.number_of_edges() \
            else ((), ())
        self.step = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(count, count)).T.tocsr()
        at, entered_rows, delivered_rows, delivered_cols = [], [], [], []
        for i, node in enumerate(nodes):
            switch, port, vid = (node[1], None, node[2]) if node[0] == "host" else node
            if node[0] != "host":
                at.append(switch_index[switch])
                entered_rows.append(i)
            for out in fabric.decide(switch, port, vid, BROADCAST_MAC)[0]:
                host = fabric.host_at.get((switch, out))
                if host is not None:
                    delivered_rows.append(i)
                    delivered_cols.append(host_index[host])
        self.entered = sparse.csr_matrix((np.ones(len(at)), (entered_rows, at)),
                                         shape=(count, len(self.switches)))
        self.delivered = sparse.csr_matrix((np.ones(len(delivered_rows)),
                                            (delivered_rows, delivered_cols)),
                                           shape=(count, len(self.hosts)))
        self.sources = sorted(node for node in nodes if node[0] == "host")
        self.source_rows = np.array([index[node] for node in self.sources], dtype=np.int64)
        self.source_switch = np.array([switch_index[node[1]] for node in self.sources], dtype=np.int64)
        self.count = count

    def first_problem(self, first: int, stop: int) -> dict[str, Any] | None:
        """The first offence among senders ``first``..``stop`` - 1."""
        rows = self.source_rows[first:stop]
        block = len(rows)
        copies = np.zeros((self.count, block))
        copies[rows, np.arange(block)] = 1.0
        total = copies.copy()
        for _level in range(self.count):
            copies = self.step @ copies          # one more hop for every copy
            if not copies.any():
                break
            total += copies
        entered = np.asarray(self.entered.T @ total).T                   # senders x switches
        entered[np.arange(block), self.source_switch[first:stop]] += 1.0  # the sender's own switch
        received = np.asarray(self.delivered.T @ total).T                # senders x hosts
        bad_switch: np.ndarray = np.asarray((entered > 1).any(axis=1))
        bad_host: np.ndarray = np.asarray((received != 1).any(axis=1))
        offenders = np.flatnonzero(bad_switch | bad_host)
        if not len(offenders):
            return None
        k = int(offenders[0])
        source = self.sources[first + k]
        if bad_switch[k]:
            where = int(np.flatnonzero(entered[k] > 1)[0])
            return {"source": source[1], "vlan": source[2], "where": self.switches[where],
                    "copies": int(entered[k, where]), "what": "switch"}
        where = int(np.flatnonzero(received[k] != 1)[0])
        return {"source": source[1], "vlan": source[2], "where": self.hosts[where],
                "copies": int(received[k, where]), "what": "host"}


class Dot1qError(EtherclusterError):
    """The intent cannot be simulated (unknown host, missing field); the
    message names the host, switch or port."""


def _endpoint(text: Any) -> tuple[str, str]:
    """``(switch, port)`` of a ``"switch:port"`` link end."""
    switch, _sep, port = str(text).rpartition(":")
    return switch, port


class Dot1qFabric:
    """The switches of an intent, ready to forward frames.

    ``learning``: switches learn source MACs per VLAN (kept across
    :meth:`send` calls, as on a real switch; :meth:`forget` clears them).
    """

    def __init__(self, intent: dict[str, Any], learning: bool = False) -> None:
        if not isinstance(intent, dict) or not isinstance(intent.get("switches"), dict):
            raise Dot1qError("the intent must be a mapping with 'switches' (schema "
                             "ethercluster.routing/intent/v1)")
        self.intent = intent
        self.learning = learning
        self.learned: dict[tuple[str, int, str], str] = {}
        # flood graphs by tagged_sources: broadcasts never use static or learned
        # entries, so the graph is fixed once the intent is read
        self._flood_graphs: dict[bool, nx.DiGraph] = {}
        self._mac_filter: frozenset[str] | None = None
        self.switches: dict[str, dict[str, Any]] = {}
        for name, entry in intent["switches"].items():
            ports = {}
            for port, config in (entry.get("ports") or {}).items():
                ports[str(port)] = {
                    "pvid": config.get("pvid"),
                    "untagged": frozenset(config.get("untagged") or ()),
                    "tagged": frozenset(config.get("tagged") or ()),
                    "admin": config.get("admin", "up"),
                }
            members: dict[int, list[str]] = {}
            for port, config in ports.items():
                if config["admin"] != "up":
                    continue
                for vid in config["untagged"] | config["tagged"]:
                    members.setdefault(vid, []).append(port)
            self.switches[name] = {"vlans": frozenset(entry.get("vlans") or ()), "ports": ports,
                                   "members": {vid: tuple(sorted(ps))
                                               for vid, ps in members.items()},
                                   "static_source": entry.get("static_macs") or (),
                                   "static": None,
                                   "broadcast_ports": _broadcast_ports(entry, ports)}
        self.peer = {}
        for link in intent.get("links") or ():
            if link.get("state", "up") != "up":
                continue
            a, b = _endpoint(link["a"]), _endpoint(link["b"])
            self.peer[a] = b
            self.peer[b] = a
        self.hosts = {}
        self.host_at = {}
        self.host_of_mac = {}
        for name, host in (intent.get("hosts") or {}).items():
            mac = str(host["mac"]).lower()
            self.hosts[name] = (host["switch"], str(host["port"]), mac)
            self.host_at[(host["switch"], str(host["port"]))] = name
            self.host_of_mac[mac] = name

    def forget(self) -> None:
        """Clear every learned entry."""
        self.learned = {}

    def _static(self, switch: str) -> dict[tuple[str, int], str]:
        """The static entries of ``switch`` (read on first use)."""
        entry = self.switches[switch]
        if entry["static"] is None:
            wanted = self._mac_filter
            entry["static"] = {(str(item["mac"]).lower(), item["vlan"]): str(item["port"])
                               for item in entry["static_source"]
                               if wanted is None or item["mac"] in wanted}
        return entry["static"]

    def restrict_static(self, macs: Iterable[str] | None) -> None:
        """Read only the static entries of these MACs (None: all again).
        A large fabric holds millions of entries; a check that follows a
        few destinations needs only theirs."""
        self._mac_filter = None if macs is None else frozenset(str(m).lower() for m in macs)
        for entry in self.switches.values():
            entry["static"] = None

    def walk_unicast(self, src_host: str, dst_host: str, learned: bool = False) -> dict[str, Any]:
        """Follow one untagged unicast frame from ``src_host`` to host
        ``dst_host`` by static entries only (``learned``: or by entries
        learned so far), without building a graph.
        Returns ``{"hops": [(switch, out_port) between switches], "error":
        None or why it was not delivered untagged, "switch": where}``."""
        switch, port, _mac = self.hosts[src_host]
        dst_mac = self.hosts[dst_host][2]
        tag: int | None = None
        hops: list[tuple[str, str]] = []
        seen = set()
        while True:
            vid, reason = self.classify(switch, port, tag)
            if vid is None:
                return {"hops": hops, "error": "dropped: %s" % reason, "switch": switch}
            if (switch, port, vid) in seen:
                return {"hops": hops, "error": "loops back to %s:%s in VLAN %s"
                        % (switch, port, vid), "switch": switch}
            seen.add((switch, port, vid))
            out = self._static(switch).get((dst_mac, vid))
            if out is None and learned:
                out = self.learned.get((switch, vid, dst_mac))
            if out is None:
                return {"hops": hops, "error": "no %s entry for %s in VLAN %s at %s (the "
                        "frame would flood)" % ("static or learned" if learned else "static",
                                                dst_mac, vid, switch), "switch": switch}
            learning, self.learning = self.learning, learned
            outs, _how, reason = self.decide(switch, port, vid, dst_mac)
            self.learning = learning
            if reason:
                return {"hops": hops, "error": reason, "switch": switch}
            tag, where = self.egress(switch, out, vid)
            if where is None:
                return {"hops": hops, "error": "%s:%s leads nowhere (link down)" % (switch, out),
                        "switch": switch}
            if where[0] == "host":
                if where[1] != dst_host:
                    return {"hops": hops, "error": "delivered to %s instead" % where[1],
                            "switch": switch}
                if tag is not None:
                    return {"hops": hops, "error": "delivered tagged (VLAN %s)" % tag,
                            "switch": switch}
                return {"hops": hops, "error": None, "switch": None}
            hops.append((switch, out))
            switch, port = where[1]

    # ----------------------------------------------------------- one switch
    def classify(self, switch: str, port: str, tag: int | None) -> tuple[int | None, str | None]:
        """The VLAN of a frame entering ``switch`` on ``port`` with VLAN tag
        ``tag`` (None: untagged), or ``(None, reason)`` when it is dropped."""
        entry = self.switches.get(switch)
        if entry is None:
            return None, "switch %s is not in the intent" % switch
        config = entry["ports"].get(port)
        if config is None:
            return None, "port %s:%s is not in the intent" % (switch, port)
        if config["admin"] != "up":
            return None, "port %s:%s is admin down" % (switch, port)
        if tag is None:
            vid = config["pvid"]
        elif tag in config["untagged"] or tag in config["tagged"]:
            vid = tag
        else:
            return None, "ingress filtering: %s:%s is no member of VLAN %s" % (switch, port, tag)
        if vid not in entry["vlans"]:
            return None, "switch %s does not hold VLAN %s" % (switch, vid)
        return vid, None

    def decide(self, switch: str, port: str | None, vid: int,
               dst_mac: str) -> tuple[list[str], str, str | None]:
        """Output ports for a frame to ``dst_mac`` in VLAN ``vid`` that came
        in on ``port``: ``(ports, how, reason)``; how is static, learned or
        flood, reason says why nothing goes out."""
        entry = self.switches[switch]
        out, how = None, "flood"
        if dst_mac != BROADCAST_MAC:
            out = self._static(switch).get((dst_mac, vid))
            how = "static"
            if out is None and self.learning:
                out = self.learned.get((switch, vid, dst_mac))
                how = "learned"
            if out is None:
                how = "flood"
        elif entry["broadcast_ports"] is not None:   # the switch's flood tree (intent field)
            return [p for p in entry["broadcast_ports"] if p != port], how, None
        if out is not None:
            config = entry["ports"].get(out)
            if out == port:
                return [], how, "filtered: the %s entry points back to the input port %s:%s" % (
                    how, switch, port)
            if config is None or vid not in (config["untagged"] | config["tagged"]):
                return [], how, "the %s entry for VLAN %s names %s:%s, which is no member" % (
                    how, vid, switch, out)
            if config["admin"] != "up":
                return [], how, "port %s:%s is admin down" % (switch, out)
            return [out], how, None
        return [p for p in entry["members"].get(vid, ()) if p != port], how, None

    def egress(self, switch: str, port: str, vid: int) -> tuple[int | None, tuple | None]:
        """What leaves ``switch`` on ``port`` in VLAN ``vid``: ``(tag, where)``
        where is ("host", name), ("switch", (peer switch, peer port)) or None."""
        config = self.switches[switch]["ports"][port]
        # untagged unless a tagged member (a broadcast_ports port need not be a member)
        tag = vid if vid in config["tagged"] else None
        host = self.host_at.get((switch, port))
        if host is not None:
            return tag, ("host", host)
        peer = self.peer.get((switch, port))
        return tag, (("switch", peer) if peer is not None else None)

    # -------------------------------------------------------------- frames
    def _resolve(self, dst: str) -> tuple[str, str | None]:
        """``(destination MAC, destination host or None)`` of ``dst``."""
        if dst == BROADCAST or dst == BROADCAST_MAC:
            return BROADCAST_MAC, None
        if dst in self.hosts:
            return self.hosts[dst][2], dst
        text = str(dst).lower()
        if text in self.host_of_mac:
            return text, self.host_of_mac[text]
        if ":" in text and len(text) == 17:
            return text, None   # a MAC no host has: floods like any unknown unicast
        raise Dot1qError("unknown destination %r: give a host name, a MAC or 'broadcast'" % (dst,))

    def send(self, src_host: str, dst: str, vlan_tag: int | None = None) -> dict[str, Any]:
        """Send one frame from host ``src_host`` to ``dst`` (a host name, a
        MAC or ``"broadcast"``), untagged or tagged with ``vlan_tag``, and
        follow every copy. Returns plain data:

        * ``delivered``: ``{host: {"copies", "tagged", "vlans"}}`` -- every
          host a copy reached (``copies`` None when it storms);
        * ``received``: the destination host got it (unicast);
        * ``untagged``: every copy that reached the destination was untagged;
        * ``path``: hops ``{"switch", "in_port", "vlan", "out_port", "how",
          "tag"}`` of the first copy to reach the destination (or, for a
          broadcast, empty);
        * ``flooded``, ``learned_used``: whether any switch flooded or used a
          learned entry; ``dropped``: why copies were dropped;
        * ``storm`` and ``cycle``: whether some state is reachable from
          itself, and one such cycle of states ``"switch:port/vlan"``;
        * ``states``: how many (switch, port, VLAN) states copies reached.
        """
        if src_host not in self.hosts:
            raise Dot1qError("unknown source host %r" % (src_host,))
        src_switch, src_port, src_mac = self.hosts[src_host]
        dst_mac, dst_host = self._resolve(dst)
        trace = _Trace(("host", src_host))
        trace.arrive(self, trace.start, src_switch, src_port, vlan_tag, None)
        self._follow(trace, src_mac, dst_mac)
        graph = trace.graph
        cycle_edges = []
        if not nx.is_directed_acyclic_graph(graph):
            cycle_edges = nx.find_cycle(graph, trace.start)
        storm = bool(cycle_edges)
        delivered = _deliveries(graph, trace.start, storm)
        received = dst_host is not None and dst_host in delivered
        path, untagged = [], False
        if dst_host is not None and received:
            path, untagged = trace.path_to(dst_host), not delivered[dst_host]["tagged"]
        return {
            "src": src_host,
            "dst": dst_host if dst_host is not None else (BROADCAST if dst_mac == BROADCAST_MAC
                                                          else dst_mac),
            "delivered": delivered,
            "received": received,
            "untagged": untagged,
            "path": path,
            "flooded": trace.flooded,
            "learned_used": trace.learned_used,
            "dropped": trace.dropped,
            "storm": storm,
            "cycle": ["%s:%s/%s" % u for u, _v in cycle_edges if u[0] != "host"],
            "states": sum(1 for node in graph.nodes if node[0] != "host"),
        }

    def _follow(self, trace: _Trace, src_mac: str, dst_mac: str) -> None:
        """Forward every queued state of ``trace`` until no copy is left:
        learn, decide, and send each copy to a host or the next switch."""
        while trace.queue:
            state = trace.queue.popleft()
            switch, port, vid = state
            if self.learning:
                self.learned[(switch, vid, src_mac)] = port
            outs, how, reason = self.decide(switch, port, vid, dst_mac)
            if reason:
                trace.dropped.append({"switch": switch, "port": port, "vlan": vid,
                                      "reason": reason})
            trace.flooded = trace.flooded or how == "flood"
            trace.learned_used = trace.learned_used or how == "learned"
            for out in outs:
                tag, where = self.egress(switch, out, vid)
                hop = {"switch": switch, "in_port": port, "vlan": vid, "out_port": out,
                       "how": how, "tag": tag}
                if where is None:
                    continue
                if where[0] == "host":
                    node = ("host", where[1], tag)
                    trace.graph.add_edge(state, node)
                    trace.hop_of[(state, node)] = hop
                    continue
                peer_switch, peer_port = where[1]
                trace.arrive(self, state, peer_switch, peer_port, tag, hop)

    # ------------------------------------------------------------- floods
    def flood_graph(self, tagged_sources: bool = False) -> nx.DiGraph:
        """The graph of states a flooded frame (broadcast, unknown unicast)
        can reach from any host, over switch ports only: nodes ``(switch,
        port, vlan)`` and ``("host", switch, vlan)`` for what hosts inject,
        one edge per switch-to-switch hop. ``tagged_sources``: hosts may
        also send frames tagged with any VLAN their port is a member of
        (``mac_learning: self`` pings). Host ports are sinks, so they are
        left out. Storm freedom (switch-tagged paper Theorem 1) is this
        graph having no cycle. Computed once per fabric and
        ``tagged_sources``; treat it as read-only."""
        key = bool(tagged_sources)
        if key not in self._flood_graphs:
            self._flood_graphs[key] = self._build_flood_graph(key)
        return self._flood_graphs[key]

    def _build_flood_graph(self, tagged_sources: bool) -> nx.DiGraph:
        """:meth:`flood_graph`, built."""
        graph = nx.DiGraph()
        queue: deque[tuple] = deque()
        seen = set()

        def arrive(parent, switch, port, tag):
            vid, _reason = self.classify(switch, port, tag)
            if vid is None:
                return
            state = (switch, port, vid)
            graph.add_edge(parent, state)
            if state not in seen:
                seen.add(state)
                queue.append(state)

        def flood(node, switch, port, vid):
            for out in self.decide(switch, port, vid, BROADCAST_MAC)[0]:
                tag, where = self.egress(switch, out, vid)
                if where is not None and where[0] == "switch":
                    arrive(node, where[1][0], where[1][1], tag)

        sources = set()
        for switch, port, _mac in self.hosts.values():
            config = self.switches.get(switch, {}).get("ports", {}).get(port)
            if config is None:
                continue
            tags = [None]
            if tagged_sources:
                tags.extend(sorted(config["untagged"] | config["tagged"]))
            for tag in tags:
                vid, _reason = self.classify(switch, port, tag)
                if vid is not None:
                    sources.add((switch, port, vid))
        # Hosts of one switch in one VLAN flood the same way, except that
        # each skips its own port (a sink): one source per (switch, VLAN)
        # that floods to every member covers them all.
        done = set()
        for switch, port, vid in sorted(sources):
            if (switch, vid) in done:
                continue
            done.add((switch, vid))
            node = ("host", switch, vid)
            graph.add_node(node)
            flood(node, switch, None, vid)
        while queue:
            state = queue.popleft()
            flood(state, *state)
        return graph

    def broadcast_copies(self, tagged_sources: bool = False) -> tuple[int, str | None, int | None] | None:
        """How many times one flooded frame (a broadcast such as an ARP
        request) crosses a switch-to-switch link, for the worst source:
        ``(copies, switch, vlan)`` of that source, or None when the flood
        graph has a cycle (see :meth:`storm_cycle`). A fixed assignment
        floods along one tree (switches - 1 copies); a renamed one follows
        every path of the routing's turn graph, which can be exponentially
        many (Theorem 1 only says the flood ends)."""
        graph = self.flood_graph(tagged_sources)
        if not nx.is_directed_acyclic_graph(graph):
            return None
        # paths[n]: flood states reached from n, counted with multiplicity
        # (n itself included): one reverse topological pass for all sources
        paths: dict[tuple, int] = {}
        for node in reversed(list(nx.topological_sort(graph))):
            paths[node] = 1 + sum(paths[succ] for succ in graph.successors(node))
        worst = (0, None, None)
        for node in graph:
            if node[0] == "host":
                copies = paths[node] - 1
                if copies > worst[0]:
                    worst = (copies, node[1], node[2])
        return worst

    def broadcast_containment(self) -> dict[str, Any]:
        """Whether one broadcast from any host reaches every other host
        exactly once and crosses every link direction at most once (a flood
        tree). Counts, per sending (switch, VLAN), the copies that enter
        each switch (the paths to each state of the acyclic flood graph)
        and the copies each host receives -- for all senders at once, a
        block of senders at a time, as sparse products level by level.

        Returns ``{"contained": bool, "sources": int, "problem": None or
        {"source", "vlan", "where", "copies", "what"}}`` for the first
        offending sender (``what``: ``"switch"`` entered by several
        copies, ``"host"`` receiving several or none)."""
        graph = self.flood_graph()
        result: dict[str, Any] = {"contained": True, "sources": 0, "problem": None}
        if not nx.is_directed_acyclic_graph(graph):
            result["contained"] = False
            return result
        counting = _FloodCounting(self, graph)
        result["sources"] = len(counting.sources)
        for first in range(0, len(counting.sources), CONTAINMENT_BLOCK):
            problem = counting.first_problem(first, first + CONTAINMENT_BLOCK)
            if problem is not None:
                result["contained"] = False
                result["problem"] = problem
                break
        return result

    def storm_cycle(self, tagged_sources: bool = False) -> list[str]:
        """A cycle of flood states (``"switch:port/vlan"`` strings, the first
        repeated at the end), or [] when every flood dies out."""
        graph = self.flood_graph(tagged_sources)
        if nx.is_directed_acyclic_graph(graph):
            return []
        try:
            edges = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            return []
        return ["%s:%s/%s" % u for u, _v in edges] + ["%s:%s/%s" % edges[0][0]]


class _Trace:
    """The states the copies of one frame reach: a graph from the sending
    host (``start``), the hop behind each edge, and what went wrong."""

    def __init__(self, start: tuple) -> None:
        self.start = start
        self.graph = nx.DiGraph()
        self.graph.add_node(start)
        self.dropped: list[dict[str, Any]] = []
        self.flooded = False
        self.learned_used = False
        self.hop_of: dict[tuple, dict[str, Any]] = {}   # edge (u, v) -> hop record
        self.queue: deque[tuple] = deque()

    def arrive(self, fabric: Dot1qFabric, parent: tuple, switch: str, port: str, tag: int | None,
               hop: dict[str, Any] | None) -> None:
        """A copy reaches ``switch:port`` from ``parent``: record the edge,
        and queue the state when it is new (or record why it is dropped)."""
        vid, reason = fabric.classify(switch, port, tag)
        if vid is None:
            self.dropped.append({"switch": switch, "port": port, "vlan": tag, "reason": reason})
            return
        state = (switch, port, vid)
        new = state not in self.graph
        self.graph.add_edge(parent, state)
        if hop is not None:
            self.hop_of[(parent, state)] = hop
        if new:
            self.queue.append(state)

    def path_to(self, dst_host: str) -> list[dict[str, Any]]:
        """The hops of the first copy to reach host ``dst_host``."""
        targets = [node for node in self.graph.nodes
                   if node[0] == "host" and len(node) == 3 and node[1] == dst_host]
        found = nx.shortest_path(self.graph, self.start, targets[0])
        return [self.hop_of[(u, v)] for u, v in zip(found, found[1:]) if (u, v) in self.hop_of]


def _deliveries(graph: nx.DiGraph, start: tuple, storm: bool) -> dict[str, dict[str, Any]]:
    """``{host: {"copies", "tagged", "vlans"}}`` for every host a copy of
    the frame reached; ``copies`` None when the frame storms."""
    copies = None
    if not storm:
        copies = {start: 1}
        for node in nx.topological_sort(graph):
            if node == start:
                continue
            copies[node] = sum(copies.get(p, 0) for p in graph.predecessors(node))
    delivered: dict[str, dict[str, Any]] = {}
    for node in graph.nodes:
        if node[0] != "host" or len(node) != 3:
            continue
        _kind, host, tag = node
        record = delivered.setdefault(host, {"copies": 0, "tagged": False, "vlans": []})
        if copies is None:
            record["copies"] = None
        else:
            record["copies"] += copies.get(node, 0)
        if tag is not None:
            record["tagged"] = True
            record["vlans"].append(tag)
    for record in delivered.values():
        record["vlans"].sort()
    return delivered


def simulate_8021q(intent: dict[str, Any], src_host: str, dst_host: str, learning: bool = False,
                   vlan_tag: int | None = None) -> dict[str, Any]:
    """One frame from ``src_host`` to ``dst_host`` (a host, a MAC or
    ``"broadcast"``) through the switches of ``intent``; see
    :meth:`Dot1qFabric.send` for the trace it returns."""
    return Dot1qFabric(intent, learning=learning).send(src_host, dst_host, vlan_tag=vlan_tag)
