# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make-before-break transitions: a link off, a link on, a speed change,
planned as a list of steps that loses no frame and cannot deadlock
(issue 7 item 3; docs/transitions.md).

The switch-tagged paper's on/off procedure (§3.6) computes the routing that
avoids (or uses) the link, implements it (§3.2) and switches the link; it
updates the PVIDs switch after switch by hand and warns that the old and
the new path sets may deadlock while both are in the network (§4.4). The
on/off dynamic-reconfiguration paper names the cure for lossless networks:
*dynamic* reconfiguration instead of static (§3.1: static reconfiguration
stops injection and empties the network), and among the dynamic schemes the
Double Scheme, which runs the old and the new routing in two disjoint
virtual-channel layers. Ethernet has no virtual channels, but 802.1Q gives
us the same two layers: two disjoint VLAN **banks** (vlans.py, A and B).

Method
------
1. Plan the old routing (``current_bank``) and the new one (the other
   bank) with :func:`intent.plan` -- each checked on its own.
2. **Install** the new bank beside the old on every switch: VLAN IDs of the
   banks are disjoint, so memberships and static entries merge without
   conflict; every PVID still points into the old bank, so no frame can
   enter a new VLAN yet. The merged VLAN count is checked against every
   switch's ``max_vlans`` (and static entries against ``mac_table_size``).
3. **Flip** the PVIDs switch by switch (one push per switch, all its PVIDs)
   in an order found by search (greedy, bounded backtracking).
4. **Wait** ``wait_s`` so frames of the old bank still in flight drain.
5. **Clean up**: every switch gets the new plan's entry (old bank removed).
6. Link off: shut the port at both ends. Link on: the ports were brought
   up (and the carrier awaited) before step 1. Speed: detour (steps 1-5
   with the link avoided), set the speed, wait for the carrier after the
   renegotiation, route back over the link in the other bank (1-5 again).

Why it is safe (the proof the planner runs)
-------------------------------------------
*Fixed assignment* (§3.2.1): frames travel tagged between switches, so the
VLAN a frame gets at its source host port stays with it to the
destination: every frame is wholly old or wholly new, a true Double Scheme,
and the dependencies during the transition are exactly the union of the
old and new channel dependency graphs.

*Renamed assignment* (§3.2.2): frames travel untagged and each switch
re-classifies them by the PVID of the input port, so a frame crossing a
flipped and an unflipped switch follows the old routing on some hops and
the new routing on others. Two things can then go wrong that the union of
the two CDGs does not show: a row (VLAN) may have no static entry for a
destination the other routing sends through its input port (the frame
floods: duplicates or a loop), and the mixed paths add dependencies of
their own. We therefore (a) **complete** the rows of both banks: every
(VLAN, destination) pair without an entry gets one, towards the port most
states of that switch use for that destination (never an input port of
the VLAN), with the port added as untagged member; and (b) **simulate**.

The proof is exhaustive simulation with the 802.1Q simulator
(:class:`dot1q.Dot1qFabric`, which reads nothing but the intents), over
*windows*: a window is two consecutive states of the step list, and at a
switch where they differ every arrival may be handled by either state
(any interleaving with the frame, also a push that a switch applies port
by port). For every window, every representative host pair (one host per
switch as source and destination, plus a pair inside each switch with two
hosts) the graph of every possible walk must be acyclic and every walk
must end at the destination host, untagged, by static entries only (no
flood, no drop): so each frame is delivered exactly once. Every broadcast
flood of the window must die out (no storm, Theorem 1). The channel
pairs of all those walks, over all windows, form one dependency graph,
which must be acyclic (Dally and Seitz; §4.4's warning): frames of any
windows may then wait on each other without a cycle, so there is no
deadlock. The assumption: a frame spends less time in the fabric than one
push takes (microseconds per hop against a management round trip), so a
frame sees at most two consecutive states; the wait after the last flip
gives the same guarantee before the old bank is removed.

If the old and new CDGs together are acyclic (the Double Scheme condition),
completions are limited to turns forward in a topological order of that
union: every state of any flip order then stays inside one acyclic turn
graph (``proof.order_free``). If no flip order passes, a *bridge* routing
is tried (turns forward in both a topological order of the old CDG and one
of the new; old -> bridge -> new, each hop order-free, the banks alternating
twice), and as a last resort a **drain** step (static reconfiguration:
injection stops at the host ports,
the fabric empties, all PVIDs flip, injection resumes): it loses the frames
hosts send meanwhile, and the step says so.
"""

from __future__ import annotations

import copy
import time
from collections import Counter, deque

import networkx as nx

from . import cdg
from .dot1q import BROADCAST_MAC, Dot1qFabric
from .errors import EtherclusterError, TopologyError
from .intent import Plan, PlanError, build_intent, check_intent, plan
from .macs import static_mac_table
from .routing import compute_routing
from .routing.base import select_paths, turns
from .vlans import assign_vlans
from .platforms.capabilities import CAPABILITIES
from .topology import Topology

ACTIONS = ("off", "on", "speed")
DEFAULT_WAIT_S = 1.0
DEFAULT_CARRIER_TIMEOUT_S = 30.0
# Speed changes: the ports renegotiate for a few seconds (paper Table 6:
# 1.2-5.7 s on the measured switches); the executor waits this long before
# it polls for the carrier.
DEFAULT_RENEGOTIATION_S = 3.0
# Window evaluations the flip-order search may spend per switch.
SEARCH_BUDGET_PER_SWITCH = 6
# Rounds of on-demand row completion per window evaluation.
MAX_COMPLETION_ROUNDS = 12


class TransitionError(EtherclusterError):
    """A transition cannot be planned safely; nothing is planned. The message
    names the link, switch or step; ``link``, ``switch`` and ``step`` hold
    them when known."""

    def __init__(self, message, link=None, switch=None, step=None):
        super().__init__(message)
        self.link = link
        self.switch = switch
        self.step = step


class Transition:
    """A planned transition.

    * ``steps``: the steps in order (plain data, JSON-serialisable):
      ``push`` (``switches``: the full intent entry each listed switch holds
      after the step; ``parallel``: whether those switches may be pushed at
      once), ``wait`` (``seconds``), ``wait_carrier`` (``link`` ends,
      ``timeout_s``, ``up``, ``settle_s``) and ``drain`` (like push, only
      when no safe order exists; it loses frames). Each has ``index``,
      ``kind``, ``name``, ``why``.
    * ``before`` / ``after``: the full intents (INTENT v1) before and after.
    * ``states``: ``[{"step": index, "intent": full intent}]`` -- what the
      fabric holds after each step that changes a switch (step 0 = before).
    * ``proof``: the numbers checked (windows and states simulated, walks,
      dependency edges, acyclic, flip orders, completed entries, ...).
    * ``action``, ``link`` (``{"a", "b", "name"}``), ``banks`` (in order).
    """

    def __init__(self, action, link, steps, before, after, proof, states, banks):
        self.action = action
        self.link = link
        self.steps = steps
        self.before = before
        self.after = after
        self.proof = proof
        self.states = states
        self.banks = banks

    def to_data(self):
        """Plain data: action, link, banks, steps and proof (not the intents)."""
        return {"action": self.action, "link": dict(self.link), "banks": list(self.banks),
                "steps": self.steps, "proof": self.proof}

    def text(self):
        """The human step list (check mode): one line per step, then one
        indented line per switch that the step changes."""
        lines = ["transition: link %s %s%s (banks %s)" % (
            self.link["name"], self.action,
            " to %s Mb/s" % self.proof.get("speed_mbps") if self.action == "speed" else "",
            " -> ".join(self.banks))]
        previous = self.before["switches"]
        for step in self.steps:
            kind = step["kind"]
            if kind in ("push", "drain"):
                lines.append("%2d. %s%s: %s (%d switch%s%s)" % (
                    step["index"], kind, " [frames lost]" if kind == "drain" else "",
                    step["name"], len(step["switches"]),
                    "" if len(step["switches"]) == 1 else "es",
                    ", parallel" if step.get("parallel") else ""))
                for name in step["switches"]:
                    change = _entry_change(previous.get(name), step["switches"][name])
                    lines.append("      %s: %s" % (name, change))
                previous = dict(previous)
                previous.update(step["switches"])
            elif kind == "wait":
                lines.append("%2d. wait %gs: %s" % (step["index"], step["seconds"], step["name"]))
            elif kind == "wait_carrier":
                lines.append("%2d. wait for carrier on %s--%s (%s, timeout %gs%s)" % (
                    step["index"], step["link"]["a"], step["link"]["b"],
                    "up" if step["up"] else "down", step["timeout_s"],
                    ", after %gs" % step["settle_s"] if step.get("settle_s") else ""))
            else:
                lines.append("%2d. %s: %s" % (step["index"], kind, step.get("name", "")))
        proof = self.proof
        lines.append("proof: %d windows, %d states, %d walks simulated with 802.1Q; %d dependency "
                     "edges, acyclic: %s; flip order: %s" % (
                         proof["windows"], proof["states"], proof["walks"],
                         proof["dependency_edges"], proof["acyclic"],
                         " | ".join(", ".join(order) for order in proof["flip_orders"]) or "-"))
        return "\n".join(lines)


# ------------------------------------------------------------- entry diff
def _entry_change(old, new):
    """One line: what changes on a switch between two intent entries."""
    if old is None:
        return "new entry"
    parts = []
    old_vlans, new_vlans = set(old.get("vlans", ())), set(new.get("vlans", ()))
    if new_vlans - old_vlans:
        parts.append("+%d VLANs" % len(new_vlans - old_vlans))
    if old_vlans - new_vlans:
        parts.append("-%d VLANs" % len(old_vlans - new_vlans))
    pvids, admin, speed, members = 0, [], [], 0
    for port, config in new.get("ports", {}).items():
        before = old.get("ports", {}).get(port, {})
        if before.get("pvid") != config.get("pvid"):
            pvids += 1
        if before.get("admin") != config.get("admin"):
            admin.append("%s %s" % (port, config.get("admin")))
        if before.get("speed_mbps") != config.get("speed_mbps"):
            speed.append("%s %s Mb/s" % (port, config.get("speed_mbps")))
        if (set(before.get("untagged", ())) != set(config.get("untagged", ()))
                or set(before.get("tagged", ())) != set(config.get("tagged", ()))):
            members += 1
    if pvids:
        parts.append("%d PVIDs" % pvids)
    if members:
        parts.append("%d port memberships" % members)
    old_static = {(e["mac"], e["vlan"], e["port"]) for e in old.get("static_macs", ())}
    new_static = {(e["mac"], e["vlan"], e["port"]) for e in new.get("static_macs", ())}
    if new_static - old_static:
        parts.append("+%d static entries" % len(new_static - old_static))
    if old_static - new_static:
        parts.append("-%d static entries" % len(old_static - new_static))
    if admin:
        parts.append("admin " + ", ".join(admin))
    if speed:
        parts.append("speed " + ", ".join(speed))
    return "; ".join(parts) if parts else "no change"


# --------------------------------------------------------------- explorer
class _Explorer:
    """Walks frames through one or several configurations at once with the
    802.1Q simulator's own decisions (classify, decide, egress of
    :class:`Dot1qFabric`), caching them. ``choose(switch)`` says which
    fabrics may handle a frame at that switch in the window explored."""

    def __init__(self, topology, hosts):
        self.topology = topology
        self.hosts = hosts          # representative host names
        self.classified = {}
        self.decided = {}
        self.sent = {}
        self.in_channel = {}
        for ch in topology.channels:
            self.in_channel[(ch.dst, ch.dst_port)] = ch.id
        self.out_channel = {(ch.src, ch.src_port): ch.id for ch in topology.channels}
        self.missing = set()     # (switch, vid, dst_host) a unicast walk found no entry for
        self.alive = {}

    def forget(self):
        """Drop the cached decisions (after the fabrics were rebuilt)."""
        self.classified.clear()
        self.decided.clear()
        self.sent.clear()

    def _classify(self, fabric, switch, port, tag):
        # the caches are keyed by id(fabric): keep every fabric alive so that
        # no later fabric can reuse an id and hit another fabric's entries
        self.alive.setdefault(id(fabric), fabric)
        key = (id(fabric), switch, port, tag)
        found = self.classified.get(key)
        if found is None:
            found = self.classified[key] = fabric.classify(switch, port, tag)
        return found

    def _decide(self, fabric, switch, port, vid, mac):
        key = (id(fabric), switch, port, vid, mac)
        found = self.decided.get(key)
        if found is None:
            found = self.decided[key] = fabric.decide(switch, port, vid, mac)
        return found

    def _egress(self, fabric, switch, out, vid):
        key = (id(fabric), switch, out, vid)
        found = self.sent.get(key)
        if found is None:
            found = self.sent[key] = fabric.egress(switch, out, vid)
        return found

    def explore(self, choose, sources, dst_host, dependencies=None):
        """Every walk of frames from each of ``sources`` (host names) to
        ``dst_host`` (a host, or None for a broadcast). Returns ``(nodes,
        problems)``: the number of (switch, port, VLAN) states reached and
        the problems found (unicast: drop, flood, wrong or tagged delivery,
        a loop; broadcast: a storm). Adds (in channel, out channel) pairs of
        unicast walks to ``dependencies`` (a set) when given."""
        fabric0 = choose(None)[0]
        mac = BROADCAST_MAC if dst_host is None else fabric0.hosts[dst_host][2]
        successors = {}
        problems = []
        for src in sources:
            if src == dst_host:
                continue
            switch, port, _mac = fabric0.hosts[src]
            start = ("host", src)
            successors.setdefault(start, set())
            pending = deque()
            self._arrive(choose, start, switch, port, None, successors, pending, problems,
                         src, dst_host)
            while pending:
                node = pending.popleft()
                self._expand(choose, node, mac, successors, pending, problems, src, dst_host,
                             dependencies)
        cycle = _find_cycle(successors)
        if cycle:
            what = "a broadcast storms" if dst_host is None else "frames to %s loop" % dst_host
            problems.append("%s: %s" % (what, " -> ".join("%s:%s/%s" % node for node in cycle)))
        return sum(1 for node in successors if node[0] != "host"), problems

    def _arrive(self, choose, parent, switch, port, tag, successors, pending, problems, src,
                dst_host):
        for fabric in choose(switch):
            vid, reason = self._classify(fabric, switch, port, tag)
            if vid is None:
                if dst_host is not None:
                    problems.append("frames from %s to %s are dropped: %s" % (src, dst_host,
                                                                              reason))
                continue
            node = (switch, port, vid)
            successors[parent].add(node)
            if node not in successors:
                successors[node] = set()
                pending.append(node)

    def _expand(self, choose, node, mac, successors, pending, problems, src, dst_host,
                dependencies):
        switch, port, vid = node
        c_in = self.in_channel.get((switch, port))
        for fabric in choose(switch):
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


def _find_cycle(successors):
    """A cycle of the graph ``{node: successors}`` as a list of nodes, or []."""
    color = {}
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


# ----------------------------------------------------------- intents
def _representatives(topology):
    """(sources, destinations): one host per switch (first by name) as both,
    plus a second host of every switch that has two (the pair inside it)."""
    by_switch = {}
    for name in sorted(topology.hosts):
        by_switch.setdefault(topology.hosts[name].switch, []).append(name)
    dests = [hosts[0] for _sw, hosts in sorted(by_switch.items())]
    sources = list(dests) + [hosts[1] for _sw, hosts in sorted(by_switch.items())
                             if len(hosts) > 1]
    return sources, dests


class _Completion:
    """Row completion of one renamed plan (module doc): on demand, a static
    entry for a (switch, VLAN, destination switch) that has none, pointing
    where the states of that switch send the destination -- preferring a
    port already a member of the VLAN (no new flood turn), never an input
    port of the VLAN (the frame would be filtered)."""

    def __init__(self, topology, made, allowed=None):
        self.topology = topology
        self.allowed = allowed    # nx.DiGraph of legal turns (order-free mode) or None
        self._reach = {}
        self.routing = made.routing
        self.intent = made.intent
        names = self.routing.switch_names
        self.index = {name: i for i, name in enumerate(names)}
        self.n = len(names)
        self.hosts_of = {}
        for name in sorted(topology.hosts):
            host = topology.hosts[name]
            self.hosts_of.setdefault(host.switch, []).append(host)
        self.extra = {}          # switch -> {"static": [...], "untagged": {port: set(vids)}}
        self.done = set()
        self._distance = None

    def distance(self, a, b):
        if self._distance is None:
            graph = self.topology.switch_graph(down=self.routing.down)
            self._distance = dict(nx.all_pairs_shortest_path_length(graph))
        return self._distance.get(a, {}).get(b)

    def members(self, switch, vid):
        entry = self.intent["switches"][switch]
        ports = {port for port, config in entry["ports"].items()
                 if vid in config["untagged"] or vid in config["tagged"]}
        extra = self.extra.get(switch)
        if extra:
            ports.update(port for port, vids in extra["untagged"].items() if vid in vids)
        return ports

    def add(self, switch, vid, dest):
        """Complete (switch, VLAN, destination switch); False if no port fits."""
        key = (switch, vid, dest)
        if key in self.done:
            return False     # already completed and still missing: give up
        entry = self.intent["switches"][switch]
        if vid not in entry["vlans"]:
            return False
        extra = self.extra.setdefault(switch, {"static": [], "untagged": {}})
        if dest == switch:
            for host in self.hosts_of.get(dest, ()):
                extra["static"].append({"mac": host.mac, "vlan": vid, "port": host.port})
                extra["untagged"].setdefault(host.port, set()).add(vid)
            self.done.add(key)
            return True
        inputs = {port for port, config in entry["ports"].items() if config["pvid"] == vid}
        members = self.members(switch, vid)
        channels = self.topology.channels
        votes = Counter()
        states = [self.index[switch]] + [self.n + ch.id for ch in
                                         self.topology.in_channels(switch, self.routing.down)]
        for state in states:
            out = int(self.routing.next_hop[state, self.index[dest]])
            if out >= 0 and channels[out].src_port not in inputs:
                votes[out] += 1
        if self.allowed is not None:
            return self._add_legal(switch, vid, dest, inputs, members, votes, extra, key)
        port = None
        if votes:
            best = min(votes, key=lambda c: (channels[c].src_port not in members, -votes[c], c))
            port = channels[best].src_port
        else:
            here = self.distance(switch, dest)
            closer = sorted(ch.src_port for ch in self.topology.out_channels(
                switch, self.routing.down)
                if ch.src_port in members and ch.src_port not in inputs
                and here is not None and (self.distance(ch.dst, dest) or 0) < here)
            if closer:
                port = closer[0]
        if port is None:
            return False
        for host in self.hosts_of.get(dest, ()):
            extra["static"].append({"mac": host.mac, "vlan": vid, "port": port})
        extra["untagged"].setdefault(port, set()).add(vid)
        self.done.add(key)
        return True

    def reach(self, dest):
        """Channels from which ``dest`` can be reached over legal turns."""
        if dest not in self._reach:
            arrive = [ch.id for ch in self.topology.in_channels(dest, self.routing.down)]
            found = set(arrive)
            for channel in arrive:
                if channel in self.allowed:
                    found |= nx.ancestors(self.allowed, channel)
            self._reach[dest] = found
        return self._reach[dest]

    def _add_legal(self, switch, vid, dest, inputs, members, votes, extra, key):
        """Order-free mode: the out channel must be a legal turn from every
        input channel of the VLAN and lead on to ``dest`` over legal turns,
        so every walk stays inside the acyclic turn graph and progresses."""
        reach = self.reach(dest)
        in_channels = [self.topology.channel_from(switch, port).id ^ 1 for port in inputs
                       if (switch, port) in self._link_ports()]
        best = None
        for ch in self.topology.out_channels(switch, self.routing.down):
            if ch.src_port in inputs or ch.id not in reach:
                continue
            if any(not self.allowed.has_edge(c, ch.id) for c in in_channels):
                continue
            rank = (ch.src_port not in members, -votes.get(ch.id, 0),
                    self.distance(ch.dst, dest) or 0, ch.id)
            if best is None or rank < best[0]:
                best = (rank, ch.src_port)
        if best is None:
            return False
        port = best[1]
        for host in self.hosts_of.get(dest, ()):
            extra["static"].append({"mac": host.mac, "vlan": vid, "port": port})
        extra["untagged"].setdefault(port, set()).add(vid)
        self.done.add(key)
        return True

    def _link_ports(self):
        if not hasattr(self, "_ports"):
            self._ports = {(ch.src, ch.src_port) for ch in self.topology.channels}
        return self._ports

    def snapshot(self):
        return (copy.deepcopy(self.extra), set(self.done))

    def restore(self, saved):
        self.extra, self.done = copy.deepcopy(saved[0]), set(saved[1])

    def count(self):
        return sum(len(item["static"]) for item in self.extra.values())


def _merge_entry(old, new, use_new, extra_old=None, extra_new=None, keep_up=()):
    """One switch holding both banks: memberships and static entries of
    both (plus completions), PVIDs of the new bank if ``use_new``. Ports
    in ``keep_up`` are admin up."""
    ports = {}
    for port, config_old in old["ports"].items():
        config_new = new["ports"].get(port, config_old)
        untagged = set(config_old["untagged"]) | set(config_new["untagged"])
        for extra in (extra_old, extra_new):
            if extra:
                untagged |= extra["untagged"].get(port, set())
        tagged = set(config_old["tagged"]) | set(config_new["tagged"])
        chosen = config_new if use_new else config_old
        merged = dict(chosen)
        merged["untagged"] = sorted(untagged - tagged)
        merged["tagged"] = sorted(tagged)
        merged["admin"] = "up" if (port in keep_up or "up" in (config_old.get("admin", "up"),
                                                               config_new.get("admin", "up"))) \
            else "down"
        ports[port] = merged
    static = list(old["static_macs"]) + list(new["static_macs"])
    for extra in (extra_old, extra_new):
        if extra:
            static.extend(extra["static"])
    entry = dict(new if use_new else old)
    entry["vlans"] = sorted(set(old["vlans"]) | set(new["vlans"]))
    entry["ports"] = ports
    entry["static_macs"] = static
    return entry


def _with_switches(base, switches, link_states=None):
    """A full intent: ``base`` with these switch entries (and link states)."""
    intent = dict(base)
    intent["switches"] = switches
    if link_states:
        links = []
        for item in base["links"]:
            name = "%s--%s" % (item["a"], item["b"])
            if name in link_states:
                item = dict(item, state=link_states[name])
            links.append(item)
        intent["links"] = links
    return intent


# --------------------------------------------------------------- checks
class _Proof:
    """Accumulates the window checks and the global dependency graph."""

    def __init__(self, topology, action, link_name):
        self.topology = topology
        self.action = action
        self.link_name = link_name
        self.sources, self.dests = _representatives(topology)
        self.explorer = _Explorer(topology, self.sources)
        self.dependencies = nx.DiGraph()
        self.windows = 0
        self.states = 0
        self.walks = 0
        self.nodes = 0
        self.flip_orders = []
        self.completed = 0
        self.notes = []
        self.order_free = False

    def window(self, choose, what, dependencies=None):
        """Problems of one window (``choose`` as in :meth:`_Explorer.explore`)."""
        problems = []
        edges = set() if dependencies is None else dependencies
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

    def broadcast(self, choose, what):
        """Storm problems of a broadcast from every representative source."""
        nodes, found = self.explorer.explore(choose, self.sources, None)
        self.nodes += nodes
        return ["%s: %s" % (what, problem) for problem in found[:3]]

    def add_edges(self, edges):
        """Add dependency edges; returns the edges that were new, or raises
        nothing -- the caller checks :meth:`acyclic`."""
        new = [edge for edge in edges if not self.dependencies.has_edge(*edge)]
        self.dependencies.add_edges_from(new)
        return new

    def acyclic(self):
        return nx.is_directed_acyclic_graph(self.dependencies)

    def cycle_text(self):
        try:
            cycle = nx.find_cycle(self.dependencies)
        except nx.NetworkXNoCycle:
            return ""
        channels = self.topology.channels
        return " => ".join(str(channels[u]) for u, _v in cycle)


def _fixed_choose(fabric):
    def choose(_switch):
        return (fabric,)
    return choose


def _pair_choose(first, second):
    both = (first, second)

    def choose(switch):
        return (first,) if switch is None else both
    return choose


# ------------------------------------------------------------- one phase
class _Phase:
    """Old plan (bank X) -> new plan (bank Y): the merged configurations,
    the on-demand row completion, the flip-order search and the steps."""

    def __init__(self, topology, proof, old, new, keep_up, link_states, label, budget,
                 allowed=None):
        self.topology = topology
        self.proof = proof
        self.allowed = allowed
        self.old = old
        self.new = new
        self.keep_up = keep_up            # {switch: ports kept admin up while both banks run}
        self.link_states = link_states    # link states while both banks run
        self.label = label
        self.budget = budget
        self.names = topology.switch_names()
        self.renamed = old.intent["fabric"]["assignment"] == "renamed"
        self.old_vids = {name: set(old.intent["switches"][name]["vlans"]) for name in self.names}
        self.completion = {"old": _Completion(topology, old, allowed),
                           "new": _Completion(topology, new, allowed)}
        self.last_problems = []
        self.evaluations = 0
        self.rebuild()

    @property
    def completed(self):
        return self.completion["old"].count() + self.completion["new"].count()

    def rebuild(self):
        """Merged entries (both banks, completions) and their fabrics."""
        old, new = self.old, self.new
        extra_old, extra_new = self.completion["old"].extra, self.completion["new"].extra
        self.merged = {}
        for use_new in (False, True):
            self.merged[use_new] = {
                name: _merge_entry(old.intent["switches"][name], new.intent["switches"][name],
                                   use_new, extra_old.get(name), extra_new.get(name),
                                   self.keep_up.get(name, ()))
                for name in self.names}
        base = new.intent
        self.intent_old = _with_switches(base, self.merged[False], self.link_states)
        self.intent_new = _with_switches(base, self.merged[True], self.link_states)
        self.fabric_old = Dot1qFabric(self.intent_old)
        self.fabric_new = Dot1qFabric(self.intent_new)
        self.proof.explorer.forget()

    def complete(self, missing):
        """Add completions for ``missing`` (switch, vid, dst host); False when
        one cannot be made (then nothing was added)."""
        if not self.renamed:
            return False
        hosts = self.topology.hosts
        saved = {bank: item.snapshot() for bank, item in self.completion.items()}
        for switch, vid, dst_host in sorted(missing, key=str):
            bank = "old" if vid in self.old_vids[switch] else "new"
            if not self.completion[bank].add(switch, vid, hosts[dst_host].switch):
                for name, item in self.completion.items():
                    item.restore(saved[name])
                return False
        self.rebuild()
        return True

    def snapshot(self):
        return {bank: item.snapshot() for bank, item in self.completion.items()}

    def restore(self, saved):
        for bank, item in self.completion.items():
            item.restore(saved[bank])
        self.rebuild()

    def evaluate(self, flipped, switch):
        """Window check of flipping ``switch`` after ``flipped``, completing
        rows on demand: ``(problems, edges, completed_something)``."""
        proof = self.proof
        changed = False
        for _round in range(MAX_COMPLETION_ROUNDS):
            edges = set()
            proof.explorer.missing = set()
            problems = proof.window(self.window_choose(set(flipped), switch),
                                    "%s, flipping %s" % (self.label, switch), edges)
            missing = proof.explorer.missing
            if not missing:
                return problems, edges, changed
            if not self.complete(missing):
                return problems, edges, changed
            changed = True
        return problems, edges, changed

    def storms(self, flipped_order):
        """Broadcast problems of the install state and of every window of
        ``flipped_order`` with the current (completed) configuration."""
        proof = self.proof
        problems = proof.broadcast(self.state_choose(set()), "%s, both banks" % self.label)
        done = []
        for switch in flipped_order:
            if problems:
                break
            problems = proof.broadcast(self.window_choose(set(done), switch),
                                       "%s, flipping %s" % (self.label, switch))
            done.append(switch)
        return problems

    def check_limits(self):
        for name in self.names:
            entry = self.merged[False][name]
            sw = self.topology.switches[name]
            limits = [sw.max_vlans]
            row = CAPABILITIES.get(sw.platform)
            if row is not None and row.max_vlans:
                limits.append(row.max_vlans)
            if len(entry["vlans"]) > min(limits):
                raise TransitionError(
                    "%s: switch %s would hold %d VLANs while both banks run (old %d + new %d), "
                    "max_vlans is %d; a make-before-break transition needs room for both"
                    % (self.label, name, len(entry["vlans"]),
                       len(self.old.intent["switches"][name]["vlans"]),
                       len(self.new.intent["switches"][name]["vlans"]), min(limits)),
                    switch=name)
            if len(entry["static_macs"]) > sw.mac_table_size:
                raise TransitionError(
                    "%s: switch %s would hold %d static MAC entries while both banks run, "
                    "mac_table_size is %d" % (self.label, name, len(entry["static_macs"]),
                                              sw.mac_table_size), switch=name)

    def state_choose(self, flipped):
        old, new = self.fabric_old, self.fabric_new

        def choose(switch):
            if switch is None:
                return (old,)
            return (new,) if switch in flipped else (old,)
        return choose

    def window_choose(self, flipped, switch_flipping):
        old, new = self.fabric_old, self.fabric_new
        both = (old, new)

        def choose(switch):
            if switch is None:
                return (old,)
            if switch == switch_flipping:
                return both
            return (new,) if switch in flipped else (old,)
        return choose

    def search(self):
        """A flip order whose every window passes and keeps the dependency
        graph acyclic, or None. Greedy (switches farthest from the changed
        link first) with backtracking bounded by ``budget`` window evaluations;
        rows are completed on demand and a completion is kept only when no
        earlier window then storms."""
        proof = self.proof
        order = self._heuristic_order()
        flipped = []
        problems = proof.broadcast(self.state_choose(set()), "%s, both banks" % self.label)
        if problems:
            self.last_problems = problems
            return None

        def extend():
            if len(flipped) == len(order):
                return True
            for switch in order:
                if switch in flipped:
                    continue
                if self.evaluations >= self.budget:
                    return False
                self.evaluations += 1
                saved = self.snapshot()
                problems, edges, changed = self.evaluate(flipped, switch)
                if not problems and changed:
                    problems = self.storms(flipped)
                if problems:
                    self.last_problems = problems
                    if changed:
                        self.restore(saved)
                    continue
                added = proof.add_edges(edges)
                if not proof.acyclic():
                    proof.dependencies.remove_edges_from(added)
                    self.last_problems = ["%s, flipping %s: the dependency graph would have the "
                                          "cycle %s" % (self.label, switch, self._cycle(edges))]
                    if changed:
                        self.restore(saved)
                    continue
                flipped.append(switch)
                if extend():
                    return True
                flipped.pop()
                proof.dependencies.remove_edges_from(added)
                if changed:
                    self.restore(saved)
            return False

        found = extend()
        return list(flipped) if found else None

    def _cycle(self, edges):
        graph = nx.DiGraph(self.proof.dependencies)
        graph.add_edges_from(edges)
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            return "?"
        return " => ".join(str(self.topology.channels[u]) for u, _v in cycle)

    def _heuristic_order(self):
        changed = set()
        for made in (self.old, self.new):
            for name in made.intent["fabric"].get("down_links", ()):
                link = self.topology.link(name)
                changed.update((link.a.switch, link.b.switch))
        old_down = set(self.old.intent["fabric"].get("down_links", ()))
        new_down = set(self.new.intent["fabric"].get("down_links", ()))
        ends = set()
        for name in old_down ^ new_down:
            link = self.topology.link(name)
            ends.update((link.a.switch, link.b.switch))
        if not ends:
            ends = changed or {self.names[0]}
        graph = self.topology.switch_graph()
        distance = {}
        for end in ends:
            for name, hops in nx.single_source_shortest_path_length(graph, end).items():
                distance[name] = min(hops, distance.get(name, hops))
        position = {name: i for i, name in enumerate(self.names)}
        return sorted(self.names, key=lambda name: (-distance.get(name, 0), position[name]))


# ---------------------------------------------------------------- planning
def _resolve_link(topology, link):
    try:
        return topology.link(link)
    except TopologyError as exc:
        raise TransitionError("link %r: %s" % (link, "; ".join(exc.problems)), link=str(link)) \
            from None


def _working_topology(topology, link_index=None, speed_mbps=None):
    """The topology with every link's state up (down links are passed to the
    planner as ``down``) and, when given, one link's speed changed."""
    links = []
    for item in topology.links:
        item = item._replace(state="up")
        if item.index == link_index and speed_mbps is not None:
            item = item._replace(speed_mbps=speed_mbps)
        links.append(item)
    return Topology(topology.name, list(topology.switches.values()), links,
                    list(topology.hosts.values()), shape=topology.shape, source=topology.source)


def _other(bank):
    return "B" if bank == "A" else "A"


def _plan(topology, down, bank, options, what, link_name):
    try:
        return plan(topology, down=sorted(down), bank=bank, **options)
    except PlanError as exc:
        failed = exc.checks[0] if exc.checks else {}
        raise TransitionError("%s: no deadlock-free routing for link %s: %s"
                              % (what, link_name, exc), link=link_name,
                              switch=failed.get("switch")) from None
    except EtherclusterError as exc:
        raise TransitionError("%s (link %s): %s" % (what, link_name, exc), link=link_name) \
            from None


class _Router:
    """The routing the fabric holds for a set of down links.

    With ``keep_turn_order`` (the default) every routing of a transition
    keeps the *turn order* of the base routing -- the one planned with only
    the topology file's down links (what deploy_routing.yml pushed): a
    topological order of the base routing's channel dependency graph
    (ties by channel id) is fixed once, and the routing for another set of
    down links takes the shortest balanced paths whose every turn goes
    forward in that order (:func:`_forward_turns`, :func:`select_paths`).
    Any two such routings then live in one acyclic turn graph, so the
    union of their channel dependency graphs is acyclic -- the Double
    Scheme condition (on-off paper) -- whatever links are down, and every
    transition between them is order-free and lossless. Freshly planned
    routings do not have that property: segment-based routing, for one,
    picks new segments for the reduced fabric, and old plus new form
    cycles (then only a drain helps). The routing stays deterministic (a
    function of the topology and the down links), so the state read back
    from the switches gives the same plans. When the kept order leaves a
    pair without a path (the link was the only forward way), the routing
    is planned afresh and the transition falls back to the search."""

    def __init__(self, options, keep_turn_order, link_name, file_down):
        self.options = options
        self.file_down = set(file_down)  # the working topologies have every link up
        self.keep = keep_turn_order
        self.link_name = link_name
        self.bases = {}  # id(topology) -> (topology, base plan, positions)
        self.notes = []

    def base(self, topology, bank):
        cached = self.bases.get(id(topology))
        if cached is None:
            made = _plan(topology, self.file_down, bank, self.options,
                         "the routing with every link of the topology file", self.link_name)
            cached = (topology, made, _turn_order(made.routing))
            self.bases[id(topology)] = cached
        return cached

    def plan(self, topology, down, bank, what):
        down = set(down)
        if not self.keep or down == self.file_down:
            return _plan(topology, down, bank, self.options, what, self.link_name)
        _topology, base, positions = self.base(topology, bank)
        _allowed, prohibited = _forward_turns(topology, down, [positions])
        engine_options = dict(base.routing.options or {}, kept_turn_order=True)
        try:
            routing = select_paths(topology, prohibited, base.routing.engine, down=sorted(down),
                                   options=engine_options)
            return _plan_from_routing(topology, routing, bank, self.options)
        except EtherclusterError as exc:
            self.notes.append("%s: the base routing's turn order leaves no routing (%s); planned "
                              "afresh with %s" % (what, exc, base.routing.engine))
            return _plan(topology, down, bank, self.options, what, self.link_name)


def held_intent(topology, down=(), bank="A", engine="segment", assignment="renamed",
                engine_options=None, keep_turn_order=True, **plan_kwargs):
    """The intent a settled fabric holds with the links ``down`` (indexes
    or ``"sw:port"``, besides the file's down links) down, in VLAN bank
    ``bank``: plan() with only the file's links down (what deploy_routing.yml
    pushes), else the routing that keeps its turn order (:class:`_Router`)
    -- exactly the ``before`` a transition starting there plans, so an
    executor reading the switches can tell a settled fabric from an
    interrupted transition. Raises :class:`TransitionError`."""
    try:
        file_down = set(topology.down_links())
        wanted = set(file_down)
        for ref in down or ():
            wanted.add(ref if isinstance(ref, int) and not isinstance(ref, bool)
                       else topology.link(ref).index)
    except TopologyError as exc:
        raise TransitionError("down: %s" % "; ".join(exc.problems)) from None
    options = dict(plan_kwargs, engine=engine, assignment=assignment,
                   engine_options=engine_options)
    router = _Router(options, keep_turn_order, "(none)", file_down)
    return router.plan(_working_topology(topology), wanted, bank, "the settled routing").intent


def kept_order_router(topology, engine="segment", engine_options=None):
    """A function ``down -> RoutingFunction``: the routing a fabric with the
    links ``down`` (indexes, besides the file's down links) down holds when
    its transitions keep the base routing's turn order (:class:`_Router`).
    The base routing (no extra link down) is the engine's own. Raises
    :class:`~.routing.base.RoutingError` when the kept order leaves a pair
    without a path (such a link can only go off through a fresh plan and,
    usually, a drain). The link selection of the power-saving playbook uses
    it, so the loads it weighs are those of the routings it will push."""
    file_down = frozenset(topology.down_links())
    base = compute_routing(topology, engine, down=sorted(file_down), **dict(engine_options or {}))
    positions = _turn_order(base)

    def route(down):
        down = frozenset(int(i) for i in down) | file_down
        if down == file_down:
            return base
        _allowed, prohibited = _forward_turns(topology, down, [positions])
        return select_paths(topology, prohibited, base.engine, down=sorted(down),
                            options=dict(base.options or {}, kept_turn_order=True))
    return route


class _Builder:
    """Collects steps and the states they leave the fabric in."""

    def __init__(self, before):
        self.steps = []
        self.states = [{"step": 0, "intent": before}]
        self.current = before

    def push(self, kind, name, why, switches, parallel, link_states=None, **more):
        step = {"index": len(self.steps) + 1, "kind": kind, "name": name, "why": why,
                "switches": switches, "parallel": parallel}
        step.update(more)
        self.steps.append(step)
        merged = dict(self.current["switches"])
        merged.update(switches)
        self.current = _with_switches(self.current, merged, link_states)
        self.states.append({"step": step["index"], "intent": self.current})
        return step

    def add(self, kind, name, why, **fields):
        step = {"index": len(self.steps) + 1, "kind": kind, "name": name, "why": why}
        step.update(fields)
        self.steps.append(step)
        return step


def _check_window(proof, first, second, what):
    """Window check between two full intents (any switches may differ)."""
    edges = set()
    problems = proof.window(_pair_choose(Dot1qFabric(first), Dot1qFabric(second)), what, edges)
    if problems:
        raise TransitionError("; ".join(problems), step=what)
    proof.add_edges(edges)
    if not proof.acyclic():
        raise TransitionError("%s: the dependency graph has the cycle %s"
                              % (what, proof.cycle_text()), step=what)


def _route_phase(builder, proof, topology, old, new, keep_up, link_states, label, budget,
                 options, allow_intermediate, allow_drain, wait_s):
    """Steps from ``old`` to ``new`` (plans in different banks) appended to
    ``builder``. Returns the plan the fabric holds at the end: ``new``, or
    the same routing in the old bank when it went through an intermediate
    routing (the banks alternate twice)."""
    old_bank, new_bank = old.intent["fabric"]["bank"], new.intent["fabric"]["bank"]
    union = nx.compose(cdg.channel_dependency_graph(old.routing),
                       cdg.channel_dependency_graph(new.routing))
    problems = []
    if nx.is_directed_acyclic_graph(union):
        # Double Scheme condition: old and new turns in one acyclic turn graph
        union.add_nodes_from(range(len(topology.channels)))
        position = {c: i for i, c in enumerate(nx.lexicographical_topological_sort(union))}
        allowed, _prohibited = _forward_turns(topology, _requested_down(old)
                                              & _requested_down(new), [position])
        phase = _Phase(topology, proof, old, new, keep_up, link_states, label, budget, allowed)
        phase.check_limits()
        order = phase.search()
        if order is not None:
            proof.order_free = True
            _emit_phase(builder, proof, phase, order, wait_s, _final(new, keep_up), link_states)
            return new
        problems = phase.last_problems
    phase = _Phase(topology, proof, old, new, keep_up, link_states, label, budget)
    phase.check_limits()
    order = phase.search()
    if order is not None:
        _emit_phase(builder, proof, phase, order, wait_s, _final(new, keep_up), link_states)
        return new
    problems = problems or phase.last_problems
    if allow_intermediate:
        saved = proof.dependencies.copy()
        try:
            bridge, allowed_old, allowed_new = _bridge_plan(topology, old, new, new_bank, options)
            back = plan(topology, down=sorted(_requested_down(new)), bank=old_bank, **options)
        except EtherclusterError:
            bridge = None
        if bridge is not None:
            first = _Phase(topology, proof, old, bridge, keep_up, link_states,
                           "%s, to the bridge routing" % label, budget, allowed_old)
            first.check_limits()
            first_order = first.search()
            second_order = None
            if first_order is not None:
                second = _Phase(topology, proof, bridge, back, keep_up, link_states,
                                "%s, from the bridge routing" % label, budget, allowed_new)
                second.check_limits()
                second_order = second.search()
            if second_order is not None:
                proof.notes.append(
                    "%s: the old and new channel dependency graphs together have a cycle, so "
                    "the transition goes through a bridge routing (bank %s) whose turns go "
                    "forward in both the old and the new turn order; it ends in bank %s"
                    % (label, new_bank, old_bank))
                proof.order_free = True
                _emit_phase(builder, proof, first, first_order, wait_s, _final(bridge, keep_up),
                            link_states)
                _emit_phase(builder, proof, second, second_order, wait_s,
                            _final(back, keep_up), link_states)
                return back
            proof.dependencies = saved
    if not allow_drain:
        raise TransitionError("%s: no flip order keeps every frame and the dependency graph "
                              "acyclic (%s); only a drain step would do, which loses the frames "
                              "hosts send meanwhile, and drains are not allowed (allow_drain; "
                              "playbooks: -e transition_allow_drain=true); nothing planned"
                              % (label, "; ".join(problems[:2])), step=label)
    proof.notes.append("%s: no flip order keeps every frame and the dependency graph acyclic "
                       "(%s); drained instead: frames sent meanwhile are lost"
                       % (label, "; ".join(problems[:1])))
    plain = _Phase(topology, proof, old, new, keep_up, link_states, label, budget)
    _emit_drain(builder, proof, plain, wait_s, _final(new, keep_up), link_states)
    return new


def _turn_order(routing, key=None):
    """Channel positions in a topological order of ``routing``'s channel
    dependency graph (every channel, ties broken by ``key``)."""
    graph = cdg.channel_dependency_graph(routing)
    graph.add_nodes_from(range(len(routing.topology.channels)))
    order = nx.lexicographical_topological_sort(graph, key=key)
    return {c: i for i, c in enumerate(order)}


def _forward_turns(topology, down, positions):
    """``(allowed DiGraph, prohibited list)``: the turns between usable
    channels that go forward in every one of ``positions`` (acyclic: each
    order is a topological order of the allowed graph)."""
    first, second = turns(topology, down)
    allowed = nx.DiGraph()
    allowed.add_nodes_from(range(len(topology.channels)))
    prohibited = []
    for a, b in zip(first.tolist(), second.tolist()):
        if all(pos[a] < pos[b] for pos in positions):
            allowed.add_edge(a, b)
        else:
            prohibited.append((a, b))
    return allowed, prohibited


def _bridge_plan(topology, old, new, bank, options):
    """The intermediate routing of the two-hop transition: old turn order
    ``t1`` (a topological order of the old CDG) and new turn order ``t2`` (of
    the new CDG, ties broken by ``t1`` so the two agree where they can); the
    bridge routing uses only turns forward in both, on the links both
    routings may use. Returns ``(bridge Plan, allowed1, allowed2)``;
    allowed1 holds the old and bridge turns, allowed2 the bridge and new
    turns, both acyclic. Raises EtherclusterError when the bridge leaves a
    pair without a legal path."""
    down = _requested_down(old) | _requested_down(new)
    engine_options = dict(old.routing.options or {}, transition_bridge=True)
    routing = error = None
    for lead in ("old", "new"):     # which order breaks the other's ties
        if lead == "old":
            first = _turn_order(old.routing)
            second = _turn_order(new.routing, key=lambda c: first[c])
        else:
            second = _turn_order(new.routing)
            first = _turn_order(old.routing, key=lambda c: second[c])
        _both, prohibited = _forward_turns(topology, down, [first, second])
        try:
            routing = select_paths(topology, prohibited, old.routing.engine, down=sorted(down),
                                   options=engine_options)
            break
        except EtherclusterError as exc:
            error = exc
    if routing is None:
        raise error
    bridge = _plan_from_routing(topology, routing, bank, options)
    allowed_old, _p = _forward_turns(topology, _requested_down(old), [first])
    allowed_new, _p = _forward_turns(topology, _requested_down(new), [second])
    return bridge, allowed_old, allowed_new


def _plan_from_routing(topology, routing, bank, options):
    """intent.plan's pipeline for a routing made here (no engine run)."""
    made = Plan(topology, routing=routing)
    made.verification = cdg.verify_routing(routing)
    if not made.verification["acyclic"] or not made.verification["connected"]:
        raise TransitionError("the turn-order routing is not deadlock-free and complete")
    made.assignment = assign_vlans(routing, options.get("assignment", "renamed"), bank=bank,
                                   vlan_range=options.get("vlan_range"),
                                   reserved=options.get("reserved", ()))
    static = static_mac_table(topology, routing, made.assignment)
    made.intent = build_intent(topology, routing, made.assignment, static_macs=static)
    made.intent["fabric"]["max_broadcast_copies"] = options.get("max_broadcast_copies",
                                                                100000)
    checks = check_intent(topology, made.intent, routing=routing,
                          verification=made.verification)
    failed = [check for check in checks if not check["ok"]]
    if failed:
        raise TransitionError("the turn-order routing fails the check %s: %s"
                              % (failed[0]["name"], failed[0]["detail"]))
    made.checks = checks
    return made


def _requested_down(made):
    """The links a plan was asked to avoid (its down links minus the ones the
    engine left idle by itself)."""
    return set(made.routing.down) - set(made.routing.blocked)


def _final(made, keep_up):
    """The entries after a phase's cleanup: the plan's, with the ports of
    the link being switched kept admin up (it is shut last, if at all)."""
    return _keep_ports_up(dict(made.intent["switches"]), keep_up)


def _emit_phase(builder, proof, phase, order, wait_s, final_switches, link_states):
    old_bank = phase.old.intent["fabric"]["bank"]
    new_bank = phase.new.intent["fabric"]["bank"]
    install = builder.push(
        "push", "install bank %s beside bank %s" % (new_bank, old_bank),
        "%s: the new routing (%s) is configured in bank %s while every PVID still points into "
        "bank %s, so no frame enters it yet (Double Scheme: two disjoint layers)%s"
        % (phase.label, phase.new.intent["fabric"]["routing"], new_bank, old_bank,
           "; rows of both banks completed with %d static entries so that mixed old/new paths "
           "never flood" % phase.completed if phase.completed else ""),
        dict(phase.merged[False]), True, link_states)
    _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                  "step %d (%s)" % (install["index"], install["name"]))
    proof.states += 1
    flipped = set()
    for switch in order:
        flipped.add(switch)
        builder.push("push", "flip %s to bank %s" % (switch, new_bank),
                     "%s: every PVID of %s moves to bank %s in one push; simulated with any "
                     "mix of old and new PVIDs at %s while it flips" % (
                         phase.label, switch, new_bank, switch),
                     {switch: phase.merged[True][switch]}, False, link_states)
        proof.states += 1
    proof.flip_orders.append(list(order))
    proof.completed += phase.completed
    builder.add("wait", "let bank %s frames drain" % old_bank,
                "frames classified into bank %s before the last flip leave the fabric before "
                "the bank is removed" % old_bank, seconds=float(wait_s))
    cleanup = builder.push(
        "push", "remove bank %s" % old_bank,
        "%s: every switch now holds only the new routing (bank %s)" % (phase.label, new_bank),
        dict(final_switches), True, link_states)
    _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                  "step %d (%s)" % (cleanup["index"], cleanup["name"]))
    proof.states += 1


def _emit_drain(builder, proof, phase, wait_s, final_switches, link_states):
    old_bank = phase.old.intent["fabric"]["bank"]
    new_bank = phase.new.intent["fabric"]["bank"]
    builder.push("push", "install bank %s beside bank %s" % (new_bank, old_bank),
                 "%s: new routing configured, PVIDs still in bank %s" % (phase.label, old_bank),
                 dict(phase.merged[False]), True, link_states)
    _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                  "install (%s)" % phase.label)

    def stopped(entries):
        result = {}
        for name, entry in entries.items():
            entry = dict(entry)
            entry["ports"] = {port: (dict(config, admin="down") if config.get("role") == "host"
                                     else config) for port, config in entry["ports"].items()}
            result[name] = entry
        return result

    builder.push("drain", "stop injection at every host port",
                 "%s: no flip order is safe, so the fabric is emptied (static reconfiguration, "
                 "on/off paper §3.1): host ports go admin down and FRAMES HOSTS SEND UNTIL "
                 "INJECTION RESUMES ARE LOST" % phase.label,
                 stopped(phase.merged[False]), True, link_states, stop=True)
    builder.add("wait", "let the fabric empty", "every frame in flight leaves the fabric",
                seconds=float(wait_s))
    builder.push("drain", "flip every switch to bank %s, injection still stopped" % new_bank,
                 "the fabric is empty, so the order does not matter",
                 stopped(phase.merged[True]), True, link_states, stop=True)
    builder.push("drain", "resume injection", "host ports admin up again, now in bank %s"
                 % new_bank, dict(phase.merged[True]), True, link_states, stop=False)
    proof.states += 4
    proof.flip_orders.append([])
    # static reconfiguration: no old frame is left when new ones enter, so the
    # old dependencies no longer count
    proof.dependencies = nx.DiGraph()
    builder.add("wait", "let bank %s frames drain" % old_bank, "nothing left in bank %s"
                % old_bank, seconds=float(wait_s))
    cleanup = builder.push("push", "remove bank %s" % old_bank, "only the new routing remains",
                           dict(final_switches), True, link_states)
    _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                  "step %d (%s)" % (cleanup["index"], cleanup["name"]))


def plan_transition(topology, action, link, current_down=(), current_bank="A", speed_mbps=None,
                    engine="segment", assignment="renamed", engine_options=None, wait_s=1.0,
                    carrier_timeout_s=30.0, renegotiation_s=DEFAULT_RENEGOTIATION_S,
                    search_budget=None, allow_intermediate=True, allow_drain=True,
                    keep_turn_order=True, **plan_kwargs):
    """Plan a make-before-break transition (module doc) and prove it safe.

    ``action``: ``"off"`` | ``"on"`` | ``"speed"`` (``speed_mbps`` the new
    speed); ``link``: ``"sw0:25"`` (either end), a link name or index;
    ``current_down``: links down now besides the file's down links;
    ``current_bank``: the bank the switches hold now (the new routing goes
    into the other one). ``engine``, ``assignment``, ``engine_options`` and
    ``plan_kwargs`` (vlan_range, reserved, traffic, max_broadcast_copies)
    as in :func:`intent.plan`. ``wait_s``: drain wait after the last flip;
    ``carrier_timeout_s``: how long the executor polls for carrier;
    ``renegotiation_s``: how long a speed change takes before polling;
    ``search_budget``: window evaluations the flip-order search may spend
    (default 6 per switch); ``allow_intermediate`` / ``allow_drain``: the
    fallbacks when no flip order works; ``keep_turn_order`` (default True):
    every routing keeps the turn order of the routing with all the file's
    links (:class:`_Router`: lossless, order-free transitions); False plans
    each routing afresh with the engine.

    Returns a :class:`Transition`. Raises :class:`TransitionError` (nothing
    planned) for an unknown link, an off on a down link, an on on an up link,
    an off that leaves a pair without a deadlock-free routing, a speed the
    platform cannot set, or when no safe sequence exists."""
    started = time.perf_counter()
    if not isinstance(topology, Topology):
        raise TransitionError("plan_transition: topology must be a Topology, got %s"
                              % type(topology).__name__)
    if action not in ACTIONS:
        raise TransitionError("action: must be one of %s, got %r" % (", ".join(ACTIONS), action))
    if current_bank not in ("A", "B"):
        raise TransitionError("current_bank: must be A or B, got %r" % (current_bank,))
    for name, value in (("wait_s", wait_s), ("carrier_timeout_s", carrier_timeout_s),
                        ("renegotiation_s", renegotiation_s)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise TransitionError("%s: must be a number of seconds >= 0, got %r" % (name, value))
    if plan_kwargs.get("mac_learning", "static") != "static":
        raise TransitionError("mac_learning: transitions need static MAC entries (a switch "
                              "learns nothing in the new bank until hosts ping in it)")
    target = _resolve_link(topology, link)
    link_name = target.name
    ends = {"a": str(target.a), "b": str(target.b), "name": link_name}
    try:
        down = set(topology.down_links())
        for ref in (current_down or ()):
            down.add(ref if isinstance(ref, int) and not isinstance(ref, bool)
                     else topology.link(ref).index)
    except TopologyError as exc:
        raise TransitionError("current_down: %s" % "; ".join(exc.problems)) from None
    is_down = target.index in down
    if action == "off" and is_down:
        raise TransitionError("link %s is already down; nothing to switch off" % link_name,
                              link=link_name)
    if action == "on" and not is_down:
        raise TransitionError("link %s is already up; nothing to switch on" % link_name,
                              link=link_name)
    if action == "speed":
        if is_down:
            raise TransitionError("link %s is down; bring it on before changing its speed"
                                  % link_name, link=link_name)
        if isinstance(speed_mbps, bool) or not isinstance(speed_mbps, int) or speed_mbps <= 0:
            raise TransitionError("speed_mbps: a whole number of Mb/s > 0 is needed for a speed "
                                  "change of link %s, got %r" % (link_name, speed_mbps),
                                  link=link_name)
        if speed_mbps == target.speed_mbps:
            raise TransitionError("link %s already runs at %d Mb/s" % (link_name, speed_mbps),
                                  link=link_name)
        for end in (target.a, target.b):
            platform = topology.switches[end.switch].platform
            row = CAPABILITIES.get(platform)
            if row is not None and row.speeds_mbps and speed_mbps not in row.speeds_mbps:
                raise TransitionError(
                    "link %s: switch %s (platform %s) cannot set %d Mb/s; it can set %s"
                    % (link_name, end.switch, platform, speed_mbps,
                       ", ".join(str(s) for s in row.speeds_mbps)),
                    link=link_name, switch=end.switch)
    if action == "off":
        graph = topology.switch_graph(down=down | {target.index})
        if not nx.is_connected(graph):
            parts = sorted(nx.connected_components(graph), key=len)
            raise TransitionError("switching link %s off would disconnect %s from the rest of "
                                  "the fabric" % (link_name, ", ".join(sorted(parts[0]))),
                                  link=link_name)
    options = dict(plan_kwargs, engine=engine, assignment=assignment,
                   engine_options=engine_options)
    work = _working_topology(topology)
    other = _other(current_bank)
    proof = _Proof(work, action, link_name)
    budget = search_budget if search_budget is not None else \
        SEARCH_BUDGET_PER_SWITCH * len(topology.switches)
    router = _Router(options, keep_turn_order, link_name, topology.down_links())
    before = router.plan(work, down, current_bank, "the current routing")
    ends_switches = (target.a.switch, target.b.switch)
    keep_up = {target.a.switch: {target.a.port}, target.b.switch: {target.b.port}}
    if target.a.switch == target.b.switch:
        keep_up = {target.a.switch: {target.a.port, target.b.port}}
    builder = _Builder(before.intent)
    # state 0 must deliver on its own (it is the running fabric)
    _check_state(proof, before.intent, "the current fabric")
    banks = [current_bank]

    if action == "off":
        after = router.plan(work, down | {target.index}, other, "the routing without the link")
        after = _route_phase(builder, proof, work, before, after, keep_up, {link_name: "up"},
                             "off %s" % link_name, budget, options, allow_intermediate,
                             allow_drain, wait_s)
        shut = {name: after.intent["switches"][name] for name in ends_switches}
        step = builder.push("push", "shut link %s at both ends" % link_name,
                            "no routing uses the link any more; admin down saves its power "
                            "(§3.6)", shut, True, {link_name: "down"})
        _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                      "step %d (%s)" % (step["index"], step["name"]))
        banks.append(after.intent["fabric"]["bank"])
    elif action == "on":
        after = router.plan(work, down - {target.index}, other, "the routing with the link")
        opened = _keep_ports_up({name: before.intent["switches"][name]
                                 for name in ends_switches}, keep_up)
        step = builder.push("push", "bring link %s up at both ends" % link_name,
                            "no routing uses the link yet: its ports are no member of any VLAN "
                            "in use", opened, True, {link_name: "up"})
        _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                      "step %d (%s)" % (step["index"], step["name"]))
        builder.add("wait_carrier", "wait for carrier on %s" % link_name,
                    "the new routing may use the link only once both ends see carrier; the "
                    "executor polls and fails naming the link after the timeout",
                    link={"a": ends["a"], "b": ends["b"]}, timeout_s=float(carrier_timeout_s),
                    up=True, settle_s=0.0)
        after = _route_phase(builder, proof, work, _PlanView(before, opened), after, keep_up,
                             {link_name: "up"}, "on %s" % link_name, budget, options,
                             allow_intermediate, allow_drain, wait_s)
        banks.append(after.intent["fabric"]["bank"])
    else:
        detour = router.plan(work, down | {target.index}, other,
                             "the detour routing without the link")
        detour = _route_phase(builder, proof, work, before, detour, keep_up, {link_name: "up"},
                              "detour around %s" % link_name, budget, options,
                              allow_intermediate, allow_drain, wait_s)
        detour_bank = detour.intent["fabric"]["bank"]
        banks.append(detour_bank)
        fast = _working_topology(topology, target.index, speed_mbps)
        detour_fast = router.plan(fast, down | {target.index}, detour_bank,
                                  "the detour routing at the new speed")
        after = router.plan(fast, down, _other(detour_bank), "the routing at the new speed")
        slowed = {}
        for name in ends_switches:
            entry = dict(builder.current["switches"][name])
            entry["ports"] = {port: (dict(config, speed_mbps=speed_mbps)
                                     if port in keep_up.get(name, ()) else config)
                              for port, config in entry["ports"].items()}
            slowed[name] = entry
        step = builder.push("push", "set link %s to %d Mb/s" % (link_name, speed_mbps),
                            "no routing uses the link now; the ports renegotiate", slowed, True,
                            {link_name: "up"})
        _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                      "step %d (%s)" % (step["index"], step["name"]))
        builder.add("wait_carrier", "wait for carrier on %s after the speed change" % link_name,
                    "the ports go down while they renegotiate (§3.6, Table 6: seconds); the "
                    "executor waits settle_s, then polls until both ends see carrier",
                    link={"a": ends["a"], "b": ends["b"]}, timeout_s=float(carrier_timeout_s),
                    up=True, settle_s=float(renegotiation_s))
        now = _PlanView(detour_fast, builder.current["switches"])
        after = _route_phase(builder, proof, fast, now, after, keep_up, {link_name: "up"},
                             "back over %s" % link_name, budget, options, allow_intermediate,
                             allow_drain, wait_s)
        banks.append(after.intent["fabric"]["bank"])
    result_after = after
    if not proof.acyclic():   # every addition was checked; defensive
        raise TransitionError("the dependency graph of the transition has the cycle %s"
                              % proof.cycle_text(), link=link_name)
    last = builder.current
    expected = result_after.intent
    if last["switches"] != expected["switches"]:   # defensive: the cleanup pushes the plan
        differ = [name for name in expected["switches"]
                  if last["switches"].get(name) != expected["switches"][name]]
        raise TransitionError("internal: the last state differs from the plan on %s"
                              % ", ".join(differ[:5]), link=link_name)
    proof_data = {
        "method": "double-bank make-before-break (module doc)",
        "assignment": before.intent["fabric"]["assignment"],
        "engine": before.intent["fabric"]["routing"],
        "windows": proof.windows,
        "states": len(builder.states),
        "walks": proof.walks,
        "simulated_states": proof.nodes,
        "dependency_edges": proof.dependencies.number_of_edges(),
        "acyclic": True,
        "flip_orders": proof.flip_orders,
        "completed_entries": proof.completed,
        "representative_hosts": len(proof.dests),
        "notes": router.notes + proof.notes,
        "kept_turn_order": bool(keep_turn_order),
        "drain": any(step["kind"] == "drain" for step in builder.steps),
        "order_free": proof.order_free,
        "after_routing": result_after.intent["fabric"]["routing"],
        "after_engine_options": result_after.intent["fabric"].get("engine_options"),
        "seconds": round(time.perf_counter() - started, 3),
    }
    if action == "speed":
        proof_data["speed_mbps"] = speed_mbps
    return Transition(action, ends, builder.steps, before.intent, expected, proof_data,
                      builder.states, banks)


def _keep_ports_up(entries, keep_up):
    result = dict(entries)
    for name, ports in keep_up.items():
        entry = dict(result[name])
        entry["ports"] = {port: (dict(config, admin="up") if port in ports else config)
                          for port, config in entry["ports"].items()}
        result[name] = entry
    return result


class _PlanView:
    """A plan whose intent's switches were replaced (the fabric as it is
    now, e.g. with a link's ports brought up); routing and assignment kept."""

    def __init__(self, made, switches):
        self.routing = made.routing
        self.assignment = made.assignment
        self.intent = dict(made.intent)
        merged = dict(made.intent["switches"])
        merged.update(switches)
        self.intent["switches"] = merged


def _check_state(proof, intent, what):
    fabric = Dot1qFabric(intent)
    edges = set()
    problems = proof.window(_fixed_choose(fabric), what, edges)
    if problems:
        raise TransitionError("; ".join(problems), step=what)
    proof.add_edges(edges)
    if not proof.acyclic():
        raise TransitionError("%s: the dependency graph has the cycle %s"
                              % (what, proof.cycle_text()), step=what)


__all__ = ["ACTIONS", "Transition", "TransitionError", "held_intent", "kept_order_router",
           "plan_transition"]
