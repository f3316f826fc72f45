# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make-before-break re-deploy (issue 14 item 4; docs/failover.md): a live
fabric holding one routing (engine, engine options, assignment) moves to
another through the other VLAN bank, with the same proof as a link
transition (:mod:`.transition`): every window simulated with 802.1Q, every
pair delivered exactly once, an acyclic dependency graph over each phase.

The transition planner is already "routing X -> routing Y": a phase takes
any two plans in different banks (:meth:`.transition_planner._Planning.route_phase`).
What a re-deploy adds is a request without a link: nothing is shut or
brought up and no port is kept up. The phase tries, in turn, an order-free
flip order (the old and new channel dependency graphs together acyclic:
the Double Scheme condition of the on/off paper, §3.1, with the two VLAN
banks as the two layers), a searched flip order, a bridge routing, and
last a drain, which loses frames and is refused unless allowed.

When the walks of the old routing and those of the new one together close
a dependency cycle, no flip order can exist: every phase's proof holds all
old walks (its install window) and all new ones (its cleanup window). The
move then goes old -> bridge -> new (:mod:`.redeploy_bridge`: a maximal
set of turns that closes no cycle with either routing), the old bank
drained and removed before the second phase, so the dependency graph
restarts from the bridge routing alone and only consecutive routings must
be jointly acyclic. dor -> segment on a 4x4 mesh (renamed) moves that way,
both phases order-free; so do updown <-> segment on the 4x4 torus.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import networkx as nx

from ..errors import EtherclusterError, TopologyError
from ..fabric.topology import Topology
from ..verify import cdg
from ..verify.dot1q import Dot1qFabric
from .redeploy_bridge import bridge_routings
from .transition_phases import PlanLike, Transition, _Builder
from .transition_planner import (
    SEARCH_BUDGET_PER_SWITCH,
    _other,
    _plan_from_routing,
    _Planning,
    _Router,
    _transition,
    _working_topology,
)
from .transition_proof import Edge, TransitionError, _check_state, _fixed_choose, _Proof


class _Redeploy(_Planning):
    """A transition without a link: nothing kept up, no link state changes;
    a joint dependency cycle of the two routings goes through a bridge."""

    # pylint: disable=super-init-not-called
    def __init__(self, proof: _Proof, before: dict[str, Any], current_bank: str, router: _Router,
                 budget: int, wait_s: float, allow_intermediate: bool, allow_drain: bool,
                 down: Iterable[int] = ()) -> None:
        self.proof = proof
        self.router = router
        self.options = router.options
        self.budget = budget
        self.wait_s = wait_s
        self.allow_intermediate = allow_intermediate
        self.allow_drain = allow_drain
        self.down = set(down)
        self.link_name = "(re-deploy)"     # names no link: no link state is touched
        self.ends = {"a": "", "b": "", "name": "(re-deploy)"}
        self.ends_switches = ()  # type: ignore[assignment]  # no link, no ends (only off/on/speed read it)
        self.keep_up: dict[str, set[str]] = {}
        self.builder = _Builder(before)
        self.banks = [current_bank]
        self.bridge: dict[str, Any] | None = None   # the bridge used, for the proof
        self.obstacle = ""     # why the old and new routings cannot coexist, when known

    def _route_phase(self, topology: Topology, old: PlanLike, new: PlanLike, label: str) -> PlanLike:
        """:meth:`_Planning._route_phase`, except that when the old and new
        walks together close a dependency cycle no flip order is searched
        (none can pass: every phase's proof holds both) and the bridge comes
        first."""
        cycle = joint_cycle(topology, old.intent, new.intent)
        if not cycle:
            return super()._route_phase(topology, old, new, label)
        problem = ("%s: the walks of the held routing and those of the new one together have the dependency "
                   "cycle %s; every phase between them holds both (its install window walks every old path, "
                   "its cleanup window every new one), so no flip order exists"
                   % (label, " => ".join(str(topology.channels[a]) for a, _b in cycle)))
        self.obstacle = problem
        if self.allow_intermediate:
            back = self._bridged(topology, old, new, label)
            if back is not None:
                return back
        return self._drained(topology, old, new, label, [problem])

    def _bridged(self, topology: Topology, old: PlanLike, new: PlanLike, label: str) -> PlanLike | None:
        """Old -> bridge (the other bank) -> new (the old bank again), each
        phase order-free (:mod:`.redeploy_bridge`); the plan reached, or None
        (nothing emitted, the proof as before) when no candidate passes."""
        old_bank, new_bank = old.intent["fabric"]["bank"], new.intent["fabric"]["bank"]
        try:
            back = self.router.plan(topology, self.down, old_bank, "the routing to deploy")
        except EtherclusterError:
            return None
        for lead, routing in bridge_routings(topology, old.routing, new.routing, self.down):
            try:
                bridge = _plan_from_routing(topology, routing, new_bank, self.options)
            except EtherclusterError:
                continue
            if self._through(topology, old, bridge, back, "%s, bridge %s" % (label, lead)):
                self.proof.notes.append(
                    "%s: the old and new routings cannot coexist (%s), so the move goes through a bridge routing "
                    "(bank %s, %s: turns that close no dependency cycle with either); bank %s is drained and "
                    "removed before the second phase, which ends in bank %s" % (
                        label, self.obstacle or "no flip order passed", new_bank, lead, old_bank, old_bank))
                self.bridge = {"lead": lead, "bank": new_bank, "why": self.obstacle,
                               "dependency_edges": cdg.channel_dependency_graph(bridge.routing).number_of_edges()}
                self.banks.append(new_bank)
                return back
        return None

    def _through(self, topology: Topology, old: PlanLike, bridge: PlanLike, back: PlanLike, label: str) -> bool:
        """Emit old -> bridge, restart the dependency graph, emit bridge ->
        back; True, or False with everything emitted taken back."""
        mark = _Mark(self)
        try:
            if self._hop(topology, old, bridge, "%s, to the bridge routing" % label):
                self._restart("%s, the bridge routing alone" % label)
                if self._hop(topology, bridge, back, "%s, from the bridge routing" % label):
                    return True
        except TransitionError:
            pass    # a window of this candidate failed: the next candidate
        mark.restore(self)
        return False

    def _hop(self, topology: Topology, old: PlanLike, new: PlanLike, label: str) -> bool:
        """One order-free phase from ``old`` to ``new`` emitted, or False."""
        union = nx.compose(cdg.channel_dependency_graph(old.routing), cdg.channel_dependency_graph(new.routing))
        if not nx.is_directed_acyclic_graph(union):
            return False
        done, _problems = self._order_free(topology, old, new, label, union)
        return done

    def _restart(self, what: str) -> None:
        """The old bank is gone (drained for ``wait_s``, then removed): the
        dependency graph restarts from what the fabric holds now, as after a
        drain (on/off paper §3.1: old and new frames never meet again)."""
        self.proof.dependencies = nx.DiGraph()
        _check_state(self.proof, self.builder.current, what)


class _Mark:
    """What :meth:`_Redeploy._through` takes back when a candidate fails."""

    def __init__(self, run: _Redeploy) -> None:
        proof, builder = run.proof, run.builder
        self.steps, self.states, self.current = len(builder.steps), len(builder.states), builder.current
        self.dependencies = proof.dependencies.copy()
        self.flip_orders, self.completed = len(proof.flip_orders), proof.completed
        self.proof_states, self.order_free, self.notes = proof.states, proof.order_free, len(proof.notes)

    def restore(self, run: _Redeploy) -> None:
        """Put the run's steps and proof back as they were at the mark."""
        proof, builder = run.proof, run.builder
        del builder.steps[self.steps:]
        del builder.states[self.states:]
        builder.current = self.current
        proof.dependencies = self.dependencies
        del proof.flip_orders[self.flip_orders:]
        del proof.notes[self.notes:]
        proof.completed, proof.states, proof.order_free = self.completed, self.proof_states, self.order_free


def joint_cycle(topology: Topology, old: dict[str, Any], new: dict[str, Any]) -> list[Edge]:
    """A cycle of the dependencies of every representative pair's walk in
    the state ``old`` together with those in the state ``new`` (802.1Q
    simulator, one host per switch as in the proof), or []: what any phase
    from ``old`` to ``new`` would hold."""
    scratch = _Proof(topology, "redeploy", "(re-deploy)")
    graph = nx.DiGraph()
    for intent in (old, new):
        edges: set[Edge] = set()
        scratch.window(_fixed_choose(Dot1qFabric(intent)), "a settled routing", edges)
        graph.add_edges_from(edges)
    try:
        return [(int(a), int(b)) for a, b, *_rest in nx.find_cycle(graph)]
    except nx.NetworkXNoCycle:
        return []


def _settings(what: str, given: Any) -> dict[str, Any]:
    """A routing's settings: engine, assignment, engine_options and plan() keywords."""
    if not isinstance(given, dict) or not given.get("engine"):
        raise TransitionError("%s: a mapping with at least 'engine' is needed, got %r" % (what, given))
    settings = dict(given)
    settings.setdefault("assignment", "renamed")
    settings.setdefault("engine_options", None)
    if settings.get("mac_learning", "static") != "static":
        raise TransitionError("%s: mac_learning: a re-deploy needs static MAC entries (a switch "
                              "learns nothing in the new bank until hosts send in it)" % what)
    return settings


def _down(topology: Topology, down: Iterable[Any]) -> set[int]:
    """The file's down links plus ``down`` (indexes or link references)."""
    try:
        result = set(topology.down_links())
        for ref in down or ():
            result.add(ref if isinstance(ref, int) and not isinstance(ref, bool)
                       else topology.link(ref).index)
    except TopologyError as exc:
        raise TransitionError("down: %s" % "; ".join(exc.problems)) from None
    return result


def plan_redeploy(topology: Topology, held: dict[str, Any], wanted: dict[str, Any], current_bank: str = "A",
                  down: Iterable[Any] = (), wait_s: float = 1.0, search_budget: int | None = None,
                  allow_intermediate: bool = True, allow_drain: bool = False) -> Transition:
    """Plan the move of a live fabric from the routing ``held`` to the routing
    ``wanted`` (each ``{"engine", "assignment", "engine_options", plan()
    keywords}``), make-before-break through the other VLAN bank, proven as a
    link transition is. ``current_bank``: the bank the switches hold;
    ``down``: links down besides the file's (both routings avoid them; with
    links down each routing is the one keeping its base's turn order, what
    the link transitions leave). ``allow_drain`` (default False): accept a
    drain when no order and no bridge works (frames are lost; said in
    ``proof.notes``). Returns a :class:`Transition` whose ``action`` is
    ``"redeploy"``; raises :class:`TransitionError`."""
    started = time.perf_counter()
    if not isinstance(topology, Topology):
        raise TransitionError("plan_redeploy: topology must be a Topology, got %s" % type(topology).__name__)
    if current_bank not in ("A", "B"):
        raise TransitionError("current_bank: must be A or B, got %r" % (current_bank,))
    old_settings, new_settings = _settings("held", held), _settings("wanted", wanted)
    down_now = _down(topology, down)
    work = _working_topology(topology)
    old_router = _Router(old_settings, True, "(re-deploy)", topology.down_links())
    new_router = _Router(new_settings, True, "(re-deploy)", topology.down_links())
    before = old_router.plan(work, down_now, current_bank, "the routing the switches hold")
    after = new_router.plan(work, down_now, _other(current_bank), "the routing to deploy")
    proof = _Proof(work, "redeploy", "(re-deploy)")
    _check_state(proof, before.intent, "the current fabric")
    budget = SEARCH_BUDGET_PER_SWITCH * len(topology.switches) if search_budget is None else search_budget
    run = _Redeploy(proof, before.intent, current_bank, new_router, budget, wait_s,
                    allow_intermediate, allow_drain, down_now)
    label = "re-deploy %s -> %s" % (_describe(old_settings), _describe(new_settings))
    done = run.route_phase(work, before, after, label)
    transition = _transition(run, new_router, "redeploy", before, done, True, None, started)
    transition.proof["before_routing"] = before.intent["fabric"]["routing"]
    transition.proof["notes"] = old_router.notes + transition.proof["notes"]
    transition.proof["bridge"] = run.bridge
    return transition


def _describe(settings: dict[str, Any]) -> str:
    """``engine (assignment[, options])`` for labels."""
    options = settings.get("engine_options")
    return "%s (%s%s)" % (settings["engine"], settings["assignment"],
                          ", %s" % options if options else "")
