# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make-before-break re-deploy (issue 14 item 4; docs/failover.md): a live
fabric holding one routing (engine, engine options, assignment) moves to
another through the other VLAN bank, with the same proof as a link
transition (:mod:`.transition`): every window simulated with 802.1Q, every
pair delivered exactly once, one acyclic dependency graph over the whole
move.

The transition planner is already "routing X -> routing Y": a phase takes
any two plans in different banks (:meth:`.transition_planner._Planning.route_phase`).
What a re-deploy adds is a request without a link: nothing is shut or
brought up and no port is kept up. The phase tries, in turn, an order-free
flip order (the old and new channel dependency graphs together acyclic:
the Double Scheme condition of the on/off paper, §3.1, with the two VLAN
banks as the two layers), a searched flip order, the bridge routing (turns
forward in a topological order of both), and last a drain, which loses
frames and is refused unless allowed.

What we measured on the 4x4 torus with renamed assignment: up*/down* with
and without balancing moves order-free (with every link up, and with some
links down); up*/down* with another root, and routings of *different*
engines (updown -> segment, dor -> segment on a mesh, segment
-> tbtp) have a joint dependency cycle, the bridge leaves a pair without a
path, and only a drain remains. Spanning-tree and up*/down* routings
rooted at every switch were tried as bridges too: on the 4x4 mesh the tree
at sw4 is acyclic together with both dor and segment, but the renamed
assignment's mixed old/new paths then flood in rows that no completion may
fill, so no flip order passes (not shipped; docs/failover.md).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ..errors import TopologyError
from ..fabric.topology import Topology
from .transition_phases import Transition, _Builder
from .transition_planner import (
    SEARCH_BUDGET_PER_SWITCH,
    _other,
    _Planning,
    _Router,
    _transition,
    _working_topology,
)
from .transition_proof import TransitionError, _check_state, _Proof


class _Redeploy(_Planning):
    """A transition without a link: nothing kept up, no link state changes."""

    # pylint: disable=super-init-not-called
    def __init__(self, proof: _Proof, before: dict[str, Any], current_bank: str, router: _Router,
                 budget: int, wait_s: float, allow_intermediate: bool, allow_drain: bool) -> None:
        self.proof = proof
        self.router = router
        self.options = router.options
        self.budget = budget
        self.wait_s = wait_s
        self.allow_intermediate = allow_intermediate
        self.allow_drain = allow_drain
        self.link_name = "(re-deploy)"     # names no link: no link state is touched
        self.ends = {"a": "", "b": "", "name": "(re-deploy)"}
        self.ends_switches = ()  # type: ignore[assignment]  # no link, no ends (only off/on/speed read it)
        self.keep_up: dict[str, set[str]] = {}
        self.builder = _Builder(before)
        self.banks = [current_bank]


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
                    allow_intermediate, allow_drain)
    label = "re-deploy %s -> %s" % (_describe(old_settings), _describe(new_settings))
    done = run.route_phase(work, before, after, label)
    transition = _transition(run, new_router, "redeploy", before, done, True, None, started)
    transition.proof["before_routing"] = before.intent["fabric"]["routing"]
    transition.proof["notes"] = old_router.notes + transition.proof["notes"]
    return transition


def _describe(settings: dict[str, Any]) -> str:
    """``engine (assignment[, options])`` for labels."""
    options = settings.get("engine_options")
    return "%s (%s%s)" % (settings["engine"], settings["assignment"],
                          ", %s" % options if options else "")
