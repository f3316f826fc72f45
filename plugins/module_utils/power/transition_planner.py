# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The transition planner (:mod:`.transition`, "Method"): which routings a
transition goes through and in which order -- the current routing, the
routing without (or with) the link in the other VLAN bank, a bridge routing
when old and new together have a dependency cycle, a drain as the last
resort -- and :func:`plan_transition`, which checks the request, plans the
routings (:class:`_Router`: kept turn order by default), lets
:mod:`.transition_phases` build the steps of each phase and
:mod:`.transition_proof` prove them, and returns the :class:`Transition`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import networkx as nx

from ..verify import cdg
from ..errors import EtherclusterError, TopologyError
from ..intent.build import Plan, PlanError, add_flood_tree, build_intent, check_intent, plan
from ..assign.macs import static_mac_table
from ..platforms.capabilities import CAPABILITIES, ETHERNET_SPEEDS_MBPS
from ..routing import compute_routing
from ..routing.base import RoutingFunction, select_paths, turns
from ..routing.source_tree import in_paths_form
from ..fabric.topology import Link, Topology
from .link_timings import link_operation_s
from .transition_obstruction import direct_obstruction
from .model import PowerError, switch_profiles
from .transition_phases import (
    Intent,
    PlanLike,
    Transition,
    _Builder,
    _emit_drain,
    _emit_phase,
    _final,
    _keep_ports_up,
    _Phase,
    _PlanView,
)
from .transition_proof import TransitionError, _check_state, _check_window, _Proof
from ..assign.vlans import assign_vlans

ACTIONS = ("off", "on", "speed")
DEFAULT_WAIT_S = 1.0
DEFAULT_CARRIER_TIMEOUT_S = 30.0
# Speed changes: the ports renegotiate for a few seconds (paper §4.3, Table
# 6: 2.3-5.7 s on the measured switches); the executor waits the longer of
# the link's two ends' Table 6 figures (their power profiles' link_timings)
# before it polls for the carrier, or this when a profile has none.
DEFAULT_RENEGOTIATION_S = 3.0
# Window evaluations the flip-order search may spend per switch.
SEARCH_BUDGET_PER_SWITCH = 6


# ---------------------------------------------------------------- planning
def _resolve_link(topology: Topology, link: Any) -> Link:
    """The link ``link`` names (either end, name or index), or TransitionError."""
    try:
        return topology.link(link)
    except TopologyError as exc:
        raise TransitionError("link %r: %s" % (link, "; ".join(exc.problems)), link=str(link)) \
            from None


def _working_topology(topology: Topology, link_index: int | None = None,
                      speed_mbps: int | None = None) -> Topology:
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


def _other(bank: str) -> str:
    """The other VLAN bank."""
    return "B" if bank == "A" else "A"


def _plan(topology: Topology, down: Iterable[int], bank: str, options: dict[str, Any], what: str,
          link_name: str) -> Plan:
    """:func:`.intent.plan`, its refusal turned into a TransitionError naming ``what``."""
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

    def __init__(self, options: dict[str, Any], keep_turn_order: bool, link_name: str,
                 file_down: Iterable[int]) -> None:
        self.options = options
        self.resolved = False
        self.file_down = set(file_down)  # the working topologies have every link up
        self.keep = keep_turn_order
        self.link_name = link_name
        # id(topology) -> (topology, base plan, positions)
        self.bases: dict[int, tuple[Topology, Plan, dict[int, int]]] = {}
        self.notes: list[str] = []
        # why a routing could not keep the turn order (transition_obstruction)
        self.obstructions: list[dict[str, Any]] = []

    def resolve(self, topology: Topology) -> None:
        """``assignment: auto`` made concrete -- what auto picks for the
        fabric with only the file's links down, as deploy_routing.yml
        pushed it -- then refused unless transitions can move it."""
        if not self.resolved and self.options.get("assignment") == "auto":
            made = _plan(topology, self.file_down, "A", self.options,
                         "the routing with every link of the topology file", self.link_name)
            choice = made.intent["fabric"]["assignment_choice"]
            self.options = dict(self.options, assignment=choice["picked"])
            if choice["paths"] != "per_destination":
                self.options["engine_options"] = dict(self.options.get("engine_options") or {},
                                                      paths=choice["paths"])
        self.resolved = True
        _check_paths_form(self.options.get("assignment"), self.options.get("engine_options"))

    def base(self, topology: Topology, bank: str) -> tuple[Topology, Plan, dict[int, int]]:
        """The base routing of ``topology`` (only the file's links down) and its turn order."""
        self.resolve(topology)
        cached = self.bases.get(id(topology))
        if cached is None:
            made = _plan(topology, self.file_down, bank, self.options,
                         "the routing with every link of the topology file", self.link_name)
            cached = (topology, made, _turn_order(made.routing))
            self.bases[id(topology)] = cached
        return cached

    def plan(self, topology: Topology, down: Iterable[int], bank: str, what: str) -> Plan:
        """The plan with the links ``down`` down, in bank ``bank`` (``what`` names it in errors)."""
        down = set(down)
        self.resolve(topology)
        if not self.keep or down == self.file_down:
            return _plan(topology, down, bank, self.options, what, self.link_name)
        try:
            return _plan_from_routing(topology, self.kept(topology, down, bank), bank, self.options)
        except EtherclusterError as exc:
            base = self.base(topology, bank)[1]
            reason = str(exc)
            obstruction = direct_obstruction(topology, base.routing, down)
            if obstruction is not None:
                self.obstructions.append(dict(obstruction, routing=what))
                reason = obstruction["reason"]
            self.notes.append("%s: no routing without the link keeps the base routing's turn order "
                              "(%s); planned afresh with %s" % (what, reason, base.routing.engine))
            return _plan(topology, down, bank, self.options, what, self.link_name)

    def kept(self, topology: Topology, down: Iterable[int], bank: str = "A") -> RoutingFunction:
        """The routing with the links ``down`` down whose every turn goes
        forward in the base routing's turn order, in the base's paths form;
        EtherclusterError when that order leaves a pair without a path."""
        _topology, base, positions = self.base(topology, bank)
        _allowed, prohibited = _forward_turns(topology, down, [positions])
        engine_options = dict(base.routing.options or {}, kept_turn_order=True)
        return _in_form(select_paths(topology, prohibited, base.routing.engine, down=sorted(down),
                                     options=engine_options), base.routing.paths_form)


def _check_paths_form(assignment: Any, engine_options: Any) -> None:
    """Transitions keep the turn order (above) of per-destination or
    source-tree paths (the latter what the fixed assignment carries on a
    fabric whose balanced paths are no trees); the paper's paths form is
    refused by name, before anything is planned."""
    paths = dict(engine_options or {}).get("paths", "per_destination")
    if assignment not in ("fixed", "renamed") or paths not in ("per_destination", "source_tree") \
            or (paths == "source_tree" and assignment != "fixed"):
        raise TransitionError(
            "link transitions move per-destination routings (fixed or renamed assignment) and "
            "source-tree routings (fixed assignment; engine option paths: source_tree); this "
            "fabric's settings are assignment %s with %s paths. Plan and deploy it with one of "
            "those to save power on it" % (assignment, paths))


def _in_form(routing: RoutingFunction, paths_form: str) -> RoutingFunction:
    """``routing`` (from select_paths, per destination) in the base routing's
    paths form: with source-tree paths, a tree per source under the same
    turn restrictions, so its dependencies stay within the kept turn order
    and the fixed assignment can carry it."""
    return in_paths_form(routing, paths_form, (routing.options or {}).get("balance", True))


def held_intent(topology: Topology, down: Iterable[Any] = (), bank: str = "A", engine: str = "segment",
                assignment: str = "renamed", engine_options: dict[str, Any] | None = None,
                keep_turn_order: bool = True, **plan_kwargs: Any) -> Intent:
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


def kept_order_router(topology: Topology, engine: str = "segment",
                      engine_options: dict[str, Any] | None = None) -> Callable[[Iterable[int]], RoutingFunction]:
    """A function ``down -> RoutingFunction``: the routing a fabric with the
    links ``down`` (indexes, besides the file's down links) down holds when
    its transitions keep the base routing's turn order (:class:`_Router`).
    The base routing (no extra link down) is the engine's own. Raises
    :class:`~.routing.base.RoutingError` when the kept order leaves a pair
    without a path (such a link can only go off through a fresh plan and,
    usually, a drain). The link selection of the power-saving playbook uses
    it, so the loads it weighs are those of the routings it will push."""
    _check_paths_form("fixed", engine_options)
    file_down = frozenset(topology.down_links())
    base = compute_routing(topology, engine, down=sorted(file_down), **dict(engine_options or {}))
    positions = _turn_order(base)

    def route(down: Iterable[int]) -> RoutingFunction:
        down = frozenset(int(i) for i in down) | file_down
        if down == file_down:
            return base
        _allowed, prohibited = _forward_turns(topology, down, [positions])
        return _in_form(select_paths(topology, prohibited, base.engine, down=sorted(down),
                                     options=dict(base.options or {}, kept_turn_order=True)), base.paths_form)
    return route


# ------------------------------------------------------------ turn orders
def _turn_order(routing: RoutingFunction, key: Callable[[int], Any] | None = None) -> dict[int, int]:
    """Channel positions in a topological order of ``routing``'s channel
    dependency graph (every channel, ties broken by ``key``)."""
    graph = cdg.channel_dependency_graph(routing)
    graph.add_nodes_from(range(len(routing.topology.channels)))
    order = nx.lexicographical_topological_sort(graph, key=key)
    return {c: i for i, c in enumerate(order)}


def _forward_turns(topology: Topology, down: Iterable[int],
                   positions: list[dict[int, int]]) -> tuple[nx.DiGraph, list[tuple[int, int]]]:
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


def _bridge_plan(topology: Topology, old: PlanLike, new: PlanLike, bank: str,
                 options: dict[str, Any]) -> tuple[Plan, nx.DiGraph, nx.DiGraph]:
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
            routing = _in_form(select_paths(topology, prohibited, old.routing.engine, down=sorted(down),
                                            options=engine_options), old.routing.paths_form)
            break
        except EtherclusterError as exc:
            error = exc
    if routing is None:
        # both leads failed, each with an error
        raise error if error is not None else EtherclusterError("no bridge routing")
    bridge = _plan_from_routing(topology, routing, bank, options)
    allowed_old, _p = _forward_turns(topology, _requested_down(old), [first])
    allowed_new, _p = _forward_turns(topology, _requested_down(new), [second])
    return bridge, allowed_old, allowed_new


def _plan_from_routing(topology: Topology, routing: RoutingFunction, bank: str,
                       options: dict[str, Any]) -> Plan:
    """intent.plan's pipeline for a routing made here (no engine run)."""
    made = Plan(topology, routing=routing)
    made.verification = cdg.verify_routing(routing)
    if not made.verification["acyclic"] or not made.verification["connected"]:
        raise TransitionError("the turn-order routing is not deadlock-free and complete")
    made.assignment = assign_vlans(routing, options.get("assignment", "renamed"), bank=bank,
                                   vlan_range=options.get("vlan_range"),
                                   reserved=options.get("reserved", ()))
    add_flood_tree(topology, routing, made.assignment, options.get("broadcast", "contained"))
    static = static_mac_table(topology, routing, made.assignment)
    made.intent = build_intent(topology, routing, made.assignment, static_macs=static)
    made.intent["fabric"]["max_broadcast_copies"] = options.get("max_broadcast_copies",
                                                                100000)
    made.intent["fabric"]["broadcast"] = options.get("broadcast", "contained")
    checks = check_intent(topology, made.intent, routing=routing,
                          verification=made.verification)
    failed = [check for check in checks if not check["ok"]]
    if failed:
        raise TransitionError("the turn-order routing fails the check %s: %s"
                              % (failed[0]["name"], failed[0]["detail"]))
    made.checks = checks
    return made


def _requested_down(made: PlanLike) -> set[int]:
    """The links a plan was asked to avoid (its down links minus the ones the
    engine left idle by itself)."""
    return set(made.routing.down) - set(made.routing.blocked)


# ------------------------------------------------------- one transition
class _Planning:
    """One transition being planned: what its phases share (the proof, the
    steps so far, the link, the settings) and the banks it goes through."""

    def __init__(self, target: Link, proof: _Proof, before: Intent, current_bank: str,
                 options: dict[str, Any], budget: int, wait_s: float, allow_intermediate: bool,
                 allow_drain: bool) -> None:
        self.proof = proof
        self.options = options
        self.budget = budget
        self.wait_s = wait_s
        self.allow_intermediate = allow_intermediate
        self.allow_drain = allow_drain
        self.link_name = target.name
        self.ends = {"a": str(target.a), "b": str(target.b), "name": target.name}
        self.ends_switches = (target.a.switch, target.b.switch)
        # the link's own ports stay admin up until it is shut (last, if at all)
        self.keep_up = {target.a.switch: {target.a.port}, target.b.switch: {target.b.port}}
        if target.a.switch == target.b.switch:
            self.keep_up = {target.a.switch: {target.a.port, target.b.port}}
        self.builder = _Builder(before)
        self.banks = [current_bank]

    def push_checked(self, name: str, why: str, switches: dict[str, Intent],
                     link_states: dict[str, str]) -> dict[str, Any]:
        """A parallel push of ``switches``, its window proven at once."""
        builder = self.builder
        step = builder.push("push", name, why, switches, True, link_states)
        _check_window(self.proof, builder.states[-2]["intent"], builder.states[-1]["intent"],
                      "step %d (%s)" % (step["index"], step["name"]))
        return step

    def wait_carrier(self, name: str, why: str, timeout_s: float, settle_s: float,
                     expected_s: float | None) -> None:
        """A step waiting until both ends of the link see carrier;
        ``expected_s``: how long the switch models take (Table 6), if known."""
        self.builder.add("wait_carrier", name, why,
                         link={"a": self.ends["a"], "b": self.ends["b"]}, timeout_s=float(timeout_s),
                         up=True, settle_s=float(settle_s), expected_s=expected_s)

    def route_phase(self, topology: Topology, old: PlanLike, new: PlanLike, label: str) -> PlanLike:
        """Steps from ``old`` to ``new`` (plans in different banks) appended to
        the builder, trying in turn an order-free flip order, a searched one,
        a bridge routing (``allow_intermediate``) and a drain (``allow_drain``).
        Returns the plan the fabric holds at the end: ``new``, or the same
        routing in the old bank when it went through an intermediate
        routing (the banks alternate twice); its bank is added to ``banks``."""
        done = self._route_phase(topology, old, new, label)
        self.banks.append(done.intent["fabric"]["bank"])
        return done

    def _route_phase(self, topology: Topology, old: PlanLike, new: PlanLike, label: str) -> PlanLike:
        """:meth:`route_phase` without the bank bookkeeping."""
        union = nx.compose(cdg.channel_dependency_graph(old.routing),
                           cdg.channel_dependency_graph(new.routing))
        problems: list[str] = []
        if nx.is_directed_acyclic_graph(union):
            done, problems = self._order_free(topology, old, new, label, union)
            if done:
                return new
        phase = self._phase(topology, old, new, label)
        order = phase.search()
        if order is not None:
            self._emit(phase, order, new)
            return new
        problems = problems or phase.last_problems
        if self.allow_intermediate:
            back = self._bridged(topology, old, new, label)
            if back is not None:
                return back
        return self._drained(topology, old, new, label, problems)

    def _phase(self, topology: Topology, old: PlanLike, new: PlanLike, label: str,
               allowed: nx.DiGraph | None = None) -> _Phase:
        """A phase from ``old`` to ``new``, refused when a switch cannot hold both banks."""
        phase = _Phase(topology, self.proof, old, new, self.keep_up, {self.link_name: "up"}, label,
                       self.budget, allowed)
        phase.check_limits()
        return phase

    def _emit(self, phase: _Phase, order: list[str], new: PlanLike) -> None:
        """The steps of ``phase`` with the flip order ``order``, ending in ``new``."""
        _emit_phase(self.builder, self.proof, phase, order, self.wait_s, _final(new, self.keep_up),
                    {self.link_name: "up"})

    def _order_free(self, topology: Topology, old: PlanLike, new: PlanLike, label: str,
                    union: nx.DiGraph) -> tuple[bool, list[str]]:
        """Double Scheme condition (old and new CDGs together acyclic): search a
        flip order whose completions stay inside one acyclic turn graph, a
        topological order of the union. ``(emitted, problems)``."""
        union.add_nodes_from(range(len(topology.channels)))
        position = {c: i for i, c in enumerate(nx.lexicographical_topological_sort(union))}
        allowed, _prohibited = _forward_turns(topology, _requested_down(old)
                                              & _requested_down(new), [position])
        phase = self._phase(topology, old, new, label, allowed)
        order = phase.search()
        if order is None:
            return False, phase.last_problems
        self.proof.order_free = True
        self._emit(phase, order, new)
        return True, []

    def _bridged(self, topology: Topology, old: PlanLike, new: PlanLike, label: str) -> PlanLike | None:
        """Old -> bridge -> old routing planned again in the old bank, each hop
        order-free (:func:`_bridge_plan`); the plan reached, or None (nothing
        emitted, the dependency graph as before) when no bridge works."""
        proof = self.proof
        old_bank, new_bank = old.intent["fabric"]["bank"], new.intent["fabric"]["bank"]
        saved = proof.dependencies.copy()
        try:
            bridge, allowed_old, allowed_new = _bridge_plan(topology, old, new, new_bank, self.options)
            back = plan(topology, down=sorted(_requested_down(new)), bank=old_bank, **self.options)
        except EtherclusterError:
            return None
        first = self._phase(topology, old, bridge, "%s, to the bridge routing" % label, allowed_old)
        first_order = first.search()
        second_order = None
        if first_order is not None:
            second = self._phase(topology, bridge, back, "%s, from the bridge routing" % label,
                                 allowed_new)
            second_order = second.search()
        if first_order is None or second_order is None:
            proof.dependencies = saved
            return None
        proof.notes.append(
            "%s: the old and new channel dependency graphs together have a cycle, so "
            "the transition goes through a bridge routing (bank %s) whose turns go "
            "forward in both the old and the new turn order; it ends in bank %s"
            % (label, new_bank, old_bank))
        proof.order_free = True
        self._emit(first, first_order, bridge)
        self._emit(second, second_order, back)
        return back

    def _drained(self, topology: Topology, old: PlanLike, new: PlanLike, label: str,
                 problems: list[str]) -> PlanLike:
        """The last resort: a drain (frames lost), unless drains are not allowed."""
        if not self.allow_drain:
            raise TransitionError("%s: no flip order keeps every frame and the dependency graph "
                                  "acyclic (%s); only a drain step would do, which loses the frames "
                                  "hosts send meanwhile, and drains are not allowed (allow_drain; "
                                  "playbooks: -e transition_allow_drain=true); nothing planned"
                                  % (label, "; ".join(problems[:2])), step=label)
        self.proof.notes.append("%s: no flip order keeps every frame and the dependency graph acyclic "
                                "(%s); drained instead: frames sent meanwhile are lost"
                                % (label, "; ".join(problems[:1])))
        plain = _Phase(topology, self.proof, old, new, self.keep_up, {self.link_name: "up"}, label,
                       self.budget)
        _emit_drain(self.builder, self.proof, plain, self.wait_s, _final(new, self.keep_up),
                    {self.link_name: "up"})
        return new


# ------------------------------------------------------- request checks
def _check_arguments(topology: Any, action: str, current_bank: str,
                     seconds: Iterable[tuple[str, Any]], plan_kwargs: dict[str, Any]) -> None:
    """Refuse a request whose arguments are wrong, before anything is planned."""
    if not isinstance(topology, Topology):
        raise TransitionError("plan_transition: topology must be a Topology, got %s"
                              % type(topology).__name__)
    if action not in ACTIONS:
        raise TransitionError("action: must be one of %s, got %r" % (", ".join(ACTIONS), action))
    if current_bank not in ("A", "B"):
        raise TransitionError("current_bank: must be A or B, got %r" % (current_bank,))
    for name, value in seconds:
        if value is None and name == "renegotiation_s":
            continue   # from the switches' Table 6 figures
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise TransitionError("%s: must be a number of seconds >= 0, got %r" % (name, value))
    if plan_kwargs.get("mac_learning", "static") != "static":
        raise TransitionError("mac_learning: transitions need static MAC entries (a switch "
                              "learns nothing in the new bank until hosts ping in it)")


def _current_down(topology: Topology, current_down: Iterable[Any] | None) -> set[int]:
    """Indexes of the links down now: the file's plus ``current_down``."""
    try:
        down = set(topology.down_links())
        for ref in (current_down or ()):
            down.add(ref if isinstance(ref, int) and not isinstance(ref, bool)
                     else topology.link(ref).index)
    except TopologyError as exc:
        raise TransitionError("current_down: %s" % "; ".join(exc.problems)) from None
    return down


def _check_link(topology: Topology, action: str, target: Link, down: set[int],
                speed_mbps: Any) -> None:
    """Refuse an action the link's state does not allow: an off on a down
    link or one that splits the fabric, an on on an up link, a bad speed."""
    link_name = target.name
    is_down = target.index in down
    if action == "off" and is_down:
        raise TransitionError("link %s is already down; nothing to switch off" % link_name,
                              link=link_name)
    if action == "on" and not is_down:
        raise TransitionError("link %s is already up; nothing to switch on" % link_name,
                              link=link_name)
    if action == "speed":
        _check_speed(topology, target, is_down, speed_mbps)
    if action == "off":
        graph = topology.switch_graph(down=down | {target.index})
        if not nx.is_connected(graph):
            parts = sorted(nx.connected_components(graph), key=len)
            raise TransitionError("switching link %s off would disconnect %s from the rest of "
                                  "the fabric" % (link_name, ", ".join(sorted(parts[0]))),
                                  link=link_name)


def _speed_problem(speed_mbps: Any) -> str:
    """What is wrong with ``speed_mbps`` as the target of a speed change
    (missing, not a whole number, not positive), or an empty string."""
    if speed_mbps is None:
        return "missing: give the new speed (-e speed_mbps=100 or link_transition_speed_mbps)"
    if isinstance(speed_mbps, bool) or not isinstance(speed_mbps, int):
        return "a whole number of Mb/s is needed, got %r" % (speed_mbps,)
    if speed_mbps <= 0:
        return "a speed above 0 Mb/s is needed, got %d" % speed_mbps
    return ""


def _check_speed(topology: Topology, target: Link, is_down: bool, speed_mbps: Any) -> None:
    """Refuse a speed change of a down link, to a bad or the same speed, or
    to one the platform of either end cannot set."""
    link_name = target.name
    if is_down:
        raise TransitionError("link %s is down; bring it on before changing its speed"
                              % link_name, link=link_name)
    problem = _speed_problem(speed_mbps)
    if problem:
        raise TransitionError("speed_mbps: %s for the speed change of link %s" % (problem, link_name),
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
    # platforms without a speed list (OVS shapes any rate with tc) stand in for real switches
    if speed_mbps not in ETHERNET_SPEEDS_MBPS:
        raise TransitionError("speed_mbps: %d Mb/s is no Ethernet rate (IEEE 802.3: %s) for the speed "
                              "change of link %s" % (speed_mbps, ", ".join(str(rate) for rate in ETHERNET_SPEEDS_MBPS),
                                                     link_name), link=link_name)


# -------------------------------------------------------------- actions
def _plan_off(run: _Planning, router: _Router, work: Topology, before: Plan, down: set[int],
              index: int) -> PlanLike:
    """Link off: route around the link, then shut it at both ends."""
    link_name = run.link_name
    after: PlanLike = router.plan(work, down | {index}, _other(run.banks[0]),
                                  "the routing without the link")
    after = run.route_phase(work, before, after, "off %s" % link_name)
    shut = {name: after.intent["switches"][name] for name in run.ends_switches}
    run.push_checked("shut link %s at both ends" % link_name,
                     "no routing uses the link any more; admin down saves its power "
                     "(§3.6)", shut, {link_name: "down"})
    return after


def _link_waits(topology: Topology, target: Link, action: str, speed_mbps: Any,
                renegotiation_s: float | None, power_profiles: dict[str, Any] | None) -> dict[str, Any]:
    """The waits of a transition on ``target``: ``expected_s``, how long its
    operation takes on the link's switch models (the longer end, §4.3 Table
    6; None when a profile has no figure), the ``profiles`` used, and
    ``renegotiation_s``, the wait before polling after a speed change
    (given, else ``expected_s``, else :data:`DEFAULT_RENEGOTIATION_S`)."""
    try:
        profiles = switch_profiles(topology, power_profiles)
    except PowerError as exc:
        raise TransitionError(str(exc), link=target.name) from None
    ends = (profiles[target.a.switch], profiles[target.b.switch])
    expected = link_operation_s((end.link_timings for end in ends), action,
                                target.speed_mbps, speed_mbps)
    if renegotiation_s is not None:
        wait, source = float(renegotiation_s), "renegotiation_s"
    elif expected is not None:
        wait, source = expected, "Table 6 (power profiles)"
    else:
        wait, source = DEFAULT_RENEGOTIATION_S, "default"
    return {"expected_s": expected, "profiles": sorted({end.name for end in ends}),
            "renegotiation_s": wait if action == "speed" else None,
            "renegotiation_source": source if action == "speed" else None}


def _plan_on(run: _Planning, router: _Router, work: Topology, before: Plan, down: set[int],
             index: int, carrier_timeout_s: float, waits: dict[str, Any]) -> PlanLike:
    """Link on: bring its ports up, wait for carrier, route over it."""
    link_name = run.link_name
    after = router.plan(work, down - {index}, _other(run.banks[0]), "the routing with the link")
    opened = _keep_ports_up({name: before.intent["switches"][name]
                             for name in run.ends_switches}, run.keep_up)
    run.push_checked("bring link %s up at both ends" % link_name,
                     "no routing uses the link yet: its ports are no member of any VLAN "
                     "in use", opened, {link_name: "up"})
    run.wait_carrier("wait for carrier on %s" % link_name,
                     "the new routing may use the link only once both ends see carrier; the "
                     "executor polls and fails naming the link after the timeout",
                     carrier_timeout_s, 0.0, waits["expected_s"])
    return run.route_phase(work, _PlanView(before, opened), after, "on %s" % link_name)


def _plan_speed(run: _Planning, router: _Router, topology: Topology, work: Topology, before: Plan,
                down: set[int], index: int, speed_mbps: int, carrier_timeout_s: float,
                waits: dict[str, Any]) -> PlanLike:
    """Speed change: detour around the link, set its speed, wait for the
    carrier after the renegotiation, route back over it."""
    link_name = run.link_name
    detour: PlanLike = router.plan(work, down | {index}, _other(run.banks[0]),
                                   "the detour routing without the link")
    detour = run.route_phase(work, before, detour, "detour around %s" % link_name)
    detour_bank = detour.intent["fabric"]["bank"]
    fast = _working_topology(topology, index, speed_mbps)
    detour_fast = router.plan(fast, down | {index}, detour_bank,
                              "the detour routing at the new speed")
    after = router.plan(fast, down, _other(detour_bank), "the routing at the new speed")
    slowed = {}
    for name in run.ends_switches:
        entry = dict(run.builder.current["switches"][name])
        entry["ports"] = {port: (dict(config, speed_mbps=speed_mbps)
                                 if port in run.keep_up.get(name, ()) else config)
                          for port, config in entry["ports"].items()}
        slowed[name] = entry
    run.push_checked("set link %s to %d Mb/s" % (link_name, speed_mbps),
                     "no routing uses the link now; the ports renegotiate", slowed,
                     {link_name: "up"})
    run.wait_carrier("wait for carrier on %s after the speed change" % link_name,
                     "the ports go down while they renegotiate (§3.6, Table 6: seconds); the "
                     "executor waits settle_s, then polls until both ends see carrier",
                     carrier_timeout_s, waits["renegotiation_s"], waits["expected_s"])
    now = _PlanView(detour_fast, run.builder.current["switches"])
    return run.route_phase(fast, now, after, "back over %s" % link_name)


def _transition(run: _Planning, router: _Router, action: str, before: Plan, after: PlanLike,
                keep_turn_order: bool, speed_mbps: Any, started: float) -> Transition:
    """The planned :class:`Transition`, after the defensive end checks."""
    proof, builder = run.proof, run.builder
    if not proof.acyclic():   # every addition was checked; defensive
        raise TransitionError("the dependency graph of the transition has the cycle %s"
                              % proof.cycle_text(), link=run.link_name)
    last = builder.current
    expected = after.intent
    if last["switches"] != expected["switches"]:   # defensive: the cleanup pushes the plan
        differ = [name for name in expected["switches"]
                  if last["switches"].get(name) != expected["switches"][name]]
        raise TransitionError("internal: the last state differs from the plan on %s"
                              % ", ".join(differ[:5]), link=run.link_name)
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
        "obstructions": router.obstructions,
        "kept_turn_order": bool(keep_turn_order),
        "drain": any(step["kind"] == "drain" for step in builder.steps),
        "order_free": proof.order_free,
        "after_routing": expected["fabric"]["routing"],
        "after_engine_options": expected["fabric"].get("engine_options"),
        "seconds": round(time.perf_counter() - started, 3),
    }
    if action == "speed":
        proof_data["speed_mbps"] = speed_mbps
    return Transition(action, run.ends, builder.steps, before.intent, expected, proof_data,
                      builder.states, run.banks)


def plan_transition(topology: Topology, action: str, link: Any, current_down: Iterable[Any] = (),
                    current_bank: str = "A", speed_mbps: int | None = None, engine: str = "segment",
                    assignment: str = "renamed", engine_options: dict[str, Any] | None = None,
                    wait_s: float = DEFAULT_WAIT_S, carrier_timeout_s: float = DEFAULT_CARRIER_TIMEOUT_S,
                    renegotiation_s: float | None = None, search_budget: int | None = None,
                    allow_intermediate: bool = True, allow_drain: bool = True,
                    keep_turn_order: bool = True, power_profiles: dict[str, Any] | None = None,
                    **plan_kwargs: Any) -> Transition:
    """Plan a make-before-break transition (:mod:`.transition` doc) and prove it safe.

    ``action``: ``"off"`` | ``"on"`` | ``"speed"`` (``speed_mbps`` the new
    speed); ``link``: ``"sw0:25"`` (either end), a link name or index;
    ``current_down``: links down now besides the file's down links;
    ``current_bank``: the bank the switches hold now (the new routing goes
    into the other one). ``engine``, ``assignment``, ``engine_options`` and
    ``plan_kwargs`` (vlan_range, reserved, traffic, max_broadcast_copies)
    as in :func:`intent.plan`. ``wait_s``: drain wait after the last flip;
    ``carrier_timeout_s``: how long the executor polls for carrier;
    ``renegotiation_s``: how long a speed change takes before polling
    (default: the longer of the link's ends' Table 6 figures, from their
    power profiles, ``power_profiles`` adding user ones; else
    :data:`DEFAULT_RENEGOTIATION_S`);
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
    _check_arguments(topology, action, current_bank, (
        ("wait_s", wait_s), ("carrier_timeout_s", carrier_timeout_s),
        ("renegotiation_s", renegotiation_s)), plan_kwargs)
    target = _resolve_link(topology, link)
    down = _current_down(topology, current_down)
    _check_link(topology, action, target, down, speed_mbps)
    waits = _link_waits(topology, target, action, speed_mbps, renegotiation_s, power_profiles)
    options = dict(plan_kwargs, engine=engine, assignment=assignment, engine_options=engine_options)
    work = _working_topology(topology)
    proof = _Proof(work, action, target.name)
    budget = SEARCH_BUDGET_PER_SWITCH * len(topology.switches) if search_budget is None else search_budget
    router = _Router(options, keep_turn_order, target.name, topology.down_links())
    before = router.plan(work, down, current_bank, "the current routing")
    run = _Planning(target, proof, before.intent, current_bank, router.options, budget, wait_s,
                    allow_intermediate, allow_drain)
    _check_state(proof, before.intent, "the current fabric")   # the running fabric must deliver
    if action == "off":
        after = _plan_off(run, router, work, before, down, target.index)
    elif action == "on":
        after = _plan_on(run, router, work, before, down, target.index, carrier_timeout_s, waits)
    else:
        after = _plan_speed(run, router, topology, work, before, down, target.index,
                            int(speed_mbps or 0), carrier_timeout_s, waits)
    transition = _transition(run, router, action, before, after, keep_turn_order, speed_mbps, started)
    transition.proof["link_timings"] = waits
    return transition
