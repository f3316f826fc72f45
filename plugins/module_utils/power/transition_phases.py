# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The phases and steps of a make-before-break transition (:mod:`.transition`,
"Method"): one phase takes the fabric from the old plan (bank X) to the new
one (bank Y) -- install the new bank beside the old, flip the PVIDs switch
by switch in an order found by search, wait, remove the old bank -- with
the merged configurations, the on-demand row completion of renamed plans,
the flip-order search (each window proven by :mod:`.transition_proof`) and
the steps it emits; also the drain (static reconfiguration, the on/off
paper's §3.1) when no order is safe, and :class:`Transition`, the result.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, cast

import networkx as nx

from ..verify.dot1q import Dot1qFabric
from ..platforms.capabilities import CAPABILITIES
from ..fabric.topology import Topology
from .transition_proof import Choose, Edge, Intent, TransitionError, _check_window, _Proof

# Rounds of on-demand row completion per window evaluation.
MAX_COMPLETION_ROUNDS = 12


class PlanLike(Protocol):
    """What the phases read of a plan (:class:`.intent.Plan` or :class:`_PlanView`)."""

    routing: Any
    assignment: Any
    intent: Intent


@dataclass(eq=False)
class Transition:
    """A planned transition.

    * ``steps``: the steps in order (plain data, JSON-serialisable):
      ``push`` (``switches``: the full intent entry each listed switch holds
      after the step; ``parallel``: whether those switches may be pushed at
      once), ``wait`` (``seconds``), ``wait_carrier`` (``link`` ends,
      ``timeout_s``, ``up``, ``settle_s``; ``expected_s``, the switch
      models' Table 6 figure or None) and ``drain`` (like push, only
      when no safe order exists; it loses frames). Each has ``index``,
      ``kind``, ``name``, ``why``.
    * ``before`` / ``after``: the full intents (INTENT v1) before and after.
    * ``states``: ``[{"step": index, "intent": full intent}]`` -- what the
      fabric holds after each step that changes a switch (step 0 = before).
    * ``proof``: the numbers checked (windows and states simulated, walks,
      dependency edges, acyclic, flip orders, completed entries, ...).
    * ``action``, ``link`` (``{"a", "b", "name"}``), ``banks`` (in order).
    """

    action: str
    link: dict[str, str]
    steps: list[dict[str, Any]]
    before: Intent
    after: Intent
    proof: dict[str, Any]
    states: list[dict[str, Any]]
    banks: list[str]

    def to_data(self) -> dict[str, Any]:
        """Plain data: action, link, banks, steps and proof (not the intents)."""
        return {"action": self.action, "link": dict(self.link), "banks": list(self.banks),
                "steps": self.steps, "proof": self.proof}

    def text(self) -> str:
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
                lines.append("%2d. wait for carrier on %s--%s (%s, timeout %gs%s%s)" % (
                    step["index"], step["link"]["a"], step["link"]["b"],
                    "up" if step["up"] else "down", step["timeout_s"],
                    ", after %gs" % step["settle_s"] if step.get("settle_s") else "",
                    ", the switches take %gs" % step["expected_s"]
                    if step.get("expected_s") is not None else ""))
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
def _entry_change(old: Intent | None, new: Intent) -> str:
    """One line: what changes on a switch between two intent entries."""
    if old is None:
        return "new entry"
    parts = []
    old_vlans, new_vlans = set(old.get("vlans", ())), set(new.get("vlans", ()))
    if new_vlans - old_vlans:
        parts.append("+%d VLANs" % len(new_vlans - old_vlans))
    if old_vlans - new_vlans:
        parts.append("-%d VLANs" % len(old_vlans - new_vlans))
    pvids, members = 0, 0
    admin: list[str] = []
    speed: list[str] = []
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


class _Completion:
    """Row completion of one renamed plan (:mod:`.transition` doc): on demand, a static
    entry for a (switch, VLAN, destination switch) that has none, pointing
    where the states of that switch send the destination -- preferring a
    port already a member of the VLAN (no new flood turn), never an input
    port of the VLAN (the frame would be filtered)."""

    def __init__(self, topology: Topology, made: PlanLike, allowed: nx.DiGraph | None = None) -> None:
        self.topology = topology
        self.allowed = allowed    # nx.DiGraph of legal turns (order-free mode) or None
        self._reach: dict[str, set[int]] = {}
        self.routing = made.routing
        self.intent = made.intent
        names = self.routing.switch_names
        self.index = {name: i for i, name in enumerate(names)}
        self.n = len(names)
        self.hosts_of: dict[str, list[Any]] = {}
        for name in sorted(topology.hosts):
            host = topology.hosts[name]
            self.hosts_of.setdefault(host.switch, []).append(host)
        self.extra: dict[str, dict[str, Any]] = {}  # switch -> {"static": [...], "untagged": {port: set(vids)}}
        self.done: set[tuple[str, int, str]] = set()
        self._distance: dict[str, dict[str, int]] | None = None

    def distance(self, a: str, b: str) -> int | None:
        """Hops between switches ``a`` and ``b`` (links down avoided), or None."""
        if self._distance is None:
            graph = self.topology.switch_graph(down=self.routing.down)
            self._distance = dict(nx.all_pairs_shortest_path_length(graph))
        return self._distance.get(a, {}).get(b)

    def members(self, switch: str, vid: int) -> set[str]:
        """Ports of ``switch`` that are members of VLAN ``vid`` (completions included)."""
        entry = self.intent["switches"][switch]
        ports = {port for port, config in entry["ports"].items()
                 if vid in config["untagged"] or vid in config["tagged"]}
        extra = self.extra.get(switch)
        if extra:
            ports.update(port for port, vids in extra["untagged"].items() if vid in vids)
        return ports

    def add(self, switch: str, vid: int, dest: str) -> bool:
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
        votes: Counter[int] = Counter()
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

    def reach(self, dest: str) -> set[int]:
        """Channels from which ``dest`` can be reached over legal turns."""
        if dest not in self._reach:
            allowed = cast(nx.DiGraph, self.allowed)  # order-free mode: always set
            arrive = [ch.id for ch in self.topology.in_channels(dest, self.routing.down)]
            found = set(arrive)
            for channel in arrive:
                if channel in allowed:
                    found |= nx.ancestors(allowed, channel)
            self._reach[dest] = found
        return self._reach[dest]

    def _add_legal(self, switch: str, vid: int, dest: str, inputs: set[str], members: set[str],
                   votes: Counter[int], extra: dict[str, Any], key: tuple[str, int, str]) -> bool:
        """Order-free mode: the out channel must be a legal turn from every
        input channel of the VLAN and lead on to ``dest`` over legal turns,
        so every walk stays inside the acyclic turn graph and progresses."""
        reach = self.reach(dest)
        allowed = cast(nx.DiGraph, self.allowed)  # order-free mode: always set
        # link ports (filtered here) always have a channel
        in_channels = [self.topology.channel_from(switch, port).id ^ 1  # type: ignore[union-attr]
                       for port in inputs if (switch, port) in self._link_ports()]
        best: tuple[tuple[Any, ...], str] | None = None
        for ch in self.topology.out_channels(switch, self.routing.down):
            if ch.src_port in inputs or ch.id not in reach:
                continue
            if any(not allowed.has_edge(c, ch.id) for c in in_channels):
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

    def _link_ports(self) -> set[tuple[str, str]]:
        if not hasattr(self, "_ports"):
            self._ports = {(ch.src, ch.src_port) for ch in self.topology.channels}
        return self._ports

    def snapshot(self) -> tuple[dict[str, dict[str, Any]], set[tuple[str, int, str]]]:
        """A copy of the completions so far, for :meth:`restore`."""
        return (copy.deepcopy(self.extra), set(self.done))

    def restore(self, saved: tuple[dict[str, dict[str, Any]], set[tuple[str, int, str]]]) -> None:
        """Go back to the completions of a :meth:`snapshot`."""
        self.extra, self.done = copy.deepcopy(saved[0]), set(saved[1])

    def count(self) -> int:
        """How many static entries the completions added."""
        return sum(len(item["static"]) for item in self.extra.values())


def _merge_entry(old: Intent, new: Intent, use_new: bool, extra_old: dict[str, Any] | None = None,
                 extra_new: dict[str, Any] | None = None, keep_up: Iterable[str] = ()) -> Intent:
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
    # the same entry in both banks (an unchanged switch of a failed one) once
    static = list({_static_key(item): item for item in static}.values())
    entry = dict(new if use_new else old)
    entry["vlans"] = sorted(set(old["vlans"]) | set(new["vlans"]))
    entry["ports"] = ports
    entry["static_macs"] = static
    return entry


def _static_key(item: dict[str, Any]) -> tuple[Any, ...]:
    """A static MAC entry as a hashable key."""
    return tuple(sorted((key, str(value)) for key, value in item.items()))


def _with_switches(base: Intent, switches: dict[str, Intent],
                   link_states: dict[str, str] | None = None) -> Intent:
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


# ------------------------------------------------------------- one phase
class _Phase:
    """Old plan (bank X) -> new plan (bank Y): the merged configurations,
    the on-demand row completion, the flip-order search and the steps."""

    def __init__(self, topology: Topology, proof: _Proof, old: PlanLike, new: PlanLike,
                 keep_up: dict[str, set[str]], link_states: dict[str, str], label: str, budget: int,
                 allowed: nx.DiGraph | None = None) -> None:
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
        self.last_problems: list[str] = []
        self.evaluations = 0
        self.rebuild()

    @property
    def completed(self) -> int:
        """Static entries the completions of both banks added."""
        return self.completion["old"].count() + self.completion["new"].count()

    def rebuild(self) -> None:
        """Merged entries (both banks, completions) and their fabrics."""
        old, new = self.old, self.new
        extra_old, extra_new = self.completion["old"].extra, self.completion["new"].extra
        self.merged: dict[bool, dict[str, Intent]] = {}
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

    def complete(self, missing: Iterable[tuple[str, int, str]]) -> bool:
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

    def snapshot(self) -> dict[str, Any]:
        """The completions of both banks, for :meth:`restore`."""
        return {bank: item.snapshot() for bank, item in self.completion.items()}

    def restore(self, saved: dict[str, Any]) -> None:
        """Go back to a :meth:`snapshot` and rebuild the fabrics."""
        for bank, item in self.completion.items():
            item.restore(saved[bank])
        self.rebuild()

    def evaluate(self, flipped: Iterable[str], switch: str) -> tuple[list[str], set[Edge], bool]:
        """Window check of flipping ``switch`` after ``flipped``, completing
        rows on demand: ``(problems, edges, completed_something)``."""
        proof = self.proof
        changed = False
        for _round in range(MAX_COMPLETION_ROUNDS):
            edges: set[Edge] = set()
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

    def storms(self, flipped_order: Iterable[str]) -> list[str]:
        """Broadcast problems of the install state and of every window of
        ``flipped_order`` with the current (completed) configuration."""
        proof = self.proof
        problems = proof.broadcast(self.state_choose(set()), "%s, both banks" % self.label)
        done: list[str] = []
        for switch in flipped_order:
            if problems:
                break
            problems = proof.broadcast(self.window_choose(set(done), switch),
                                       "%s, flipping %s" % (self.label, switch))
            done.append(switch)
        return problems

    def check_limits(self) -> None:
        """Refuse when a switch cannot hold both banks at once (VLANs, static entries)."""
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

    def state_choose(self, flipped: set[str]) -> Choose:
        """One state: the switches of ``flipped`` in the new bank, the others old."""
        old, new = self.fabric_old, self.fabric_new

        def choose(switch: str | None) -> tuple[Dot1qFabric, ...]:
            if switch is None:
                return (old,)
            return (new,) if switch in flipped else (old,)
        return choose

    def window_choose(self, flipped: set[str], switch_flipping: str) -> Choose:
        """The window of flipping ``switch_flipping`` after ``flipped``: it may
        handle a frame with either bank's PVIDs."""
        old, new = self.fabric_old, self.fabric_new
        both = (old, new)

        def choose(switch: str | None) -> tuple[Dot1qFabric, ...]:
            if switch is None:
                return (old,)
            if switch == switch_flipping:
                return both
            return (new,) if switch in flipped else (old,)
        return choose

    def search(self) -> list[str] | None:
        """A flip order whose every window passes and keeps the dependency
        graph acyclic, or None. Greedy (switches farthest from the changed
        link first) with backtracking bounded by ``budget`` window evaluations;
        rows are completed on demand and a completion is kept only when no
        earlier window then storms."""
        proof = self.proof
        order = self._heuristic_order()
        flipped: list[str] = []
        problems = proof.broadcast(self.state_choose(set()), "%s, both banks" % self.label)
        if problems:
            self.last_problems = problems
            return None

        def extend() -> bool:
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

    def _cycle(self, edges: Iterable[Edge]) -> str:
        graph = nx.DiGraph(self.proof.dependencies)
        graph.add_edges_from(edges)
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            return "?"
        return " => ".join(str(self.topology.channels[u]) for u, _v in cycle)

    def _heuristic_order(self) -> list[str]:
        changed: set[str] = set()
        for made in (self.old, self.new):
            for name in made.intent["fabric"].get("down_links", ()):
                link = self.topology.link(name)
                changed.update((link.a.switch, link.b.switch))
        old_down = set(self.old.intent["fabric"].get("down_links", ()))
        new_down = set(self.new.intent["fabric"].get("down_links", ()))
        ends: set[str] = set()
        for name in old_down ^ new_down:
            link = self.topology.link(name)
            ends.update((link.a.switch, link.b.switch))
        if not ends:
            ends = changed or {self.names[0]}
        graph = self.topology.switch_graph()
        distance: dict[str, int] = {}
        for end in ends:
            for name, hops in nx.single_source_shortest_path_length(graph, end).items():
                distance[name] = min(hops, distance.get(name, hops))
        position = {name: i for i, name in enumerate(self.names)}
        return sorted(self.names, key=lambda name: (-distance.get(name, 0), position[name]))


class _Builder:
    """Collects steps and the states they leave the fabric in."""

    def __init__(self, before: Intent) -> None:
        self.steps: list[dict[str, Any]] = []
        self.states: list[dict[str, Any]] = [{"step": 0, "intent": before}]
        self.current = before

    def push(self, kind: str, name: str, why: str, switches: dict[str, Intent], parallel: bool,
             link_states: dict[str, str] | None = None, **more: Any) -> dict[str, Any]:
        """Append a step that changes ``switches`` and record the state it leaves."""
        step: dict[str, Any] = {"index": len(self.steps) + 1, "kind": kind, "name": name, "why": why,
                                "switches": switches, "parallel": parallel}
        step.update(more)
        self.steps.append(step)
        merged = dict(self.current["switches"])
        merged.update(switches)
        self.current = _with_switches(self.current, merged, link_states)
        self.states.append({"step": step["index"], "intent": self.current})
        return step

    def add(self, kind: str, name: str, why: str, **fields: Any) -> dict[str, Any]:
        """Append a step that changes no switch (a wait)."""
        step: dict[str, Any] = {"index": len(self.steps) + 1, "kind": kind, "name": name, "why": why}
        step.update(fields)
        self.steps.append(step)
        return step


def _final(made: PlanLike, keep_up: dict[str, set[str]]) -> dict[str, Intent]:
    """The entries after a phase's cleanup: the plan's, with the ports of
    the link being switched kept admin up (it is shut last, if at all)."""
    return _keep_ports_up(dict(made.intent["switches"]), keep_up)


def _emit_phase(builder: _Builder, proof: _Proof, phase: _Phase, order: list[str], wait_s: float,
                final_switches: dict[str, Intent], link_states: dict[str, str]) -> None:
    """The steps of a phase whose flip order was found: install, flips, wait, cleanup."""
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
    flipped: set[str] = set()
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


def _emit_drain(builder: _Builder, proof: _Proof, phase: _Phase, wait_s: float,
                final_switches: dict[str, Intent], link_states: dict[str, str]) -> None:
    """The steps of a drained phase (no safe flip order): install, stop injection,
    wait, flip all, resume injection, wait, cleanup. Frames sent meanwhile are lost."""
    old_bank = phase.old.intent["fabric"]["bank"]
    new_bank = phase.new.intent["fabric"]["bank"]
    builder.push("push", "install bank %s beside bank %s" % (new_bank, old_bank),
                 "%s: new routing configured, PVIDs still in bank %s" % (phase.label, old_bank),
                 dict(phase.merged[False]), True, link_states)
    _check_window(proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                  "install (%s)" % phase.label)

    def stopped(entries: dict[str, Intent]) -> dict[str, Intent]:
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


def _keep_ports_up(entries: dict[str, Intent], keep_up: dict[str, set[str]]) -> dict[str, Intent]:
    """``entries`` with the ports of ``keep_up`` ({switch: ports}) admin up."""
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

    def __init__(self, made: PlanLike, switches: dict[str, Intent]) -> None:
        self.routing = made.routing
        self.assignment = made.assignment
        self.intent = dict(made.intent)
        merged = dict(made.intent["switches"])
        merged.update(switches)
        self.intent["switches"] = merged
