# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Applying a precomputed failover and returning to the base routing
(issue 15 items 3-4; docs/failover.md).

:func:`plan_failover`: the fabric holds its base routing (what
deploy_routing.yml pushed) in bank X and a link has failed. The backup
routing of that failure (:mod:`.failover`: only the affected routes
detour, along turns that keep the base routing's turn order) is planned
into bank Y, and the move base -> backup is a make-before-break phase of
the transition planner: install bank Y beside X, flip switch by switch,
wait, remove X. Base and backup dependencies together are acyclic, so the
phase is order-free (any flip order is deadlock-free); the flip order puts
the switches whose entries change first -- once they have flipped, every
pair delivers again (an unchanged switch forwards a frame the same way in
either bank, since with the renamed assignment every switch classifies
the frames it receives by its own PVIDs) -- and the others follow.

The failed link is dead: frames the old routing sends over it are lost at
the failure whatever we do, and nothing of the plan uses it. The proof
simulates it as alive, which only adds walks: a walk over a dead link is
in reality dropped there, and dropping a frame cannot make a flood, a loop
or a dependency cycle elsewhere, so what the proof shows for the other
walks holds. The planned end state has the link down (no VLAN on its
ports), as a switched-off link.

:func:`plan_restore`: the link is back; the move backup -> base through
the other bank (the same proof), so the fabric ends on its base routing.

:func:`execute`: read every switch, find where the transition stands
(before, midway, done: the link transitions' :func:`.transition_run.resume_index`),
run the remaining steps, read back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import EtherclusterError
from ..fabric.topology import Topology
from .fabric_state import switch_state
from .failover import Backup, Failure, FailoverError, backup_from_changes, precompute_failover
from .redeploy import _Redeploy
from .transition_phases import PlanLike, Transition
from .transition_planner import (
    SEARCH_BUDGET_PER_SWITCH,
    _other,
    _plan_from_routing,
    _Router,
    _transition,
    _working_topology,
)
from .transition_proof import TransitionError, _check_state, _Proof
from .transition_run import TransitionRunError, differing, read_states, resume_index, run_steps

Data = dict[str, Any]


class _Failover(_Redeploy):
    """A phase whose flip order puts the switches that change first."""

    def __init__(self, *args: Any, first: list[str], failed: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.first = first
        # the phases' windows simulate the failed link as alive (module doc)
        self.link_name = failed
        self.ends = {"a": "", "b": "", "name": failed}

    def _phase(self, topology: Topology, old: PlanLike, new: PlanLike, label: str,
               allowed: Any = None) -> Any:
        phase = super()._phase(topology, old, new, label, allowed)
        first = [name for name in self.first if name in phase.names]
        rest = [name for name in phase.names if name not in first]
        # the search tries switches in this order (greedy first)
        phase._heuristic_order = lambda: first + rest   # type: ignore[method-assign]
        return phase


def _base_and_backup(topology: Topology, options: Data, failure: Failure, bank: str,
                     stored: Data | None) -> tuple[Any, Any, Data]:
    """The base plan (bank ``bank``), the backup routing and its stored entry."""
    if failure.kind != "link":
        raise FailoverError("switch failures are detected and their backups precomputed, but pushing "
                            "one is not implemented yet (the backup's intent has no entries for a "
                            "missing switch): switch %s" % failure.switch)
    work = _working_topology(topology)
    router = _Router(options, True, failure.name, topology.down_links())
    base = router.plan(work, set(topology.down_links()), bank, "the base routing")
    entry = stored
    if entry is None:
        entry = precompute_failover(base.routing, [failure])["failures"][0]
    if not entry.get("covered"):
        raise FailoverError("failure %s has no precomputed backup: %s" % (failure.name, entry.get("reason")))
    return base, backup_from_changes(base.routing, entry), entry


def _plan(topology: Topology, options: Data, failure: Failure, bank: str, stored: Data | None,
          restore: bool, wait_s: float) -> Transition:
    """Base -> backup (``restore`` False) or backup -> base, through the other bank."""
    started = time.perf_counter()
    work = _working_topology(topology)
    if restore:
        base_now, backup, entry = _base_and_backup(topology, options, failure, _other(bank), stored)
        before = _plan_from_routing(work, backup, bank, options)
        after: Any = _Router(options, True, failure.name, topology.down_links()).plan(
            work, set(topology.down_links()), _other(bank), "the base routing")
    else:
        before, backup, entry = _base_and_backup(topology, options, failure, bank, stored)
        after = _plan_from_routing(work, backup, _other(bank), options)
    label = "%s %s" % ("restore after" if restore else "failover for", failure.name)
    proof = _Proof(work, "restore" if restore else "failover", failure.name)
    _check_state(proof, before.intent, "the fabric before the %s" % ("restore" if restore else "failover"))
    router = _Router(options, True, failure.name, topology.down_links())
    router.resolve(work)
    run = _Failover(proof, before.intent, bank, router, SEARCH_BUDGET_PER_SWITCH * len(topology.switches),
                    wait_s, False, False, first=list(entry["switches"]), failed=failure.name)
    try:
        done = run.route_phase(work, before, after, label)
    except TransitionError as exc:
        raise FailoverError("%s: no proven order (%s): only a halt-and-drain (segment-based routing §2.3) "
                            "and a fresh plan recover; nothing planned" % (label, exc)) from None
    transition = _transition(run, router, "restore" if restore else "failover", before, done, True, None, started)
    transition.link = {"a": "", "b": "", "name": failure.name}
    transition.proof["failure"] = {key: entry[key] for key in ("kind", "name", "links", "switch", "switches",
                                                               "pairs_affected", "pairs_disjoint")}
    return transition


def plan_failover(topology: Topology, options: Data, failure: Failure, current_bank: str = "A",
                  stored: Data | None = None, wait_s: float = 1.0) -> Transition:
    """The move from the base routing (bank ``current_bank``) to the backup of
    ``failure`` (``stored``: its precomputed entry; computed now when None).
    ``options``: engine, assignment, engine_options and plan() keywords, as
    the fabric was deployed. Raises :class:`.failover.FailoverError`."""
    return _plan(topology, options, failure, current_bank, stored, False, wait_s)


def plan_restore(topology: Topology, options: Data, failure: Failure, current_bank: str = "B",
                 stored: Data | None = None, wait_s: float = 1.0) -> Transition:
    """The move from the backup of ``failure`` (bank ``current_bank``) back to
    the base routing in the other bank, once the link is back."""
    return _plan(topology, options, failure, current_bank, stored, True, wait_s)


def execute(topology: Topology, driver: Any, planner: Callable[[str], Transition],
            check_mode: bool = False, log: Callable[[Data], Any] | None = None,
            max_parallel: int | None = None) -> Data:
    """Read the switches, plan with ``planner(current_bank)`` for the bank
    they hold, resume or run the steps, read back. ``bank`` is the bank of
    the switches' PVIDs (a half-done run holds both: then both are tried)."""
    started = time.time()
    names = topology.switch_names()
    states = read_states(driver, names)
    banks = sorted({bank for name in names for bank in switch_state(name, states[name])["pvid_banks"]
                    if bank in ("A", "B")})
    tried, transition, start = [], None, None
    for bank in banks or ["A", "B"]:
        for candidate in (bank, _other(bank)):
            try:
                planned = planner(candidate)
            except EtherclusterError as exc:
                tried.append("bank %s: %s" % (candidate, exc))
                continue
            if not differing(states, planned.after["switches"]):
                return _result(planned, [], started, "done already: the switches hold the end state", False)
            index = resume_index(planned.before["switches"], planned.steps, states)
            if index is not None:
                transition, start = planned, index
                break
            tried.append("bank %s: the switches hold neither its start nor any of its steps" % candidate)
        if transition is not None:
            break
    if transition is None or start is None:
        raise TransitionRunError("nothing to resume or start: %s" % "; ".join(tried[:4]))
    reason = "fresh" if start == 0 else "resumed after step %d" % start
    if check_mode:
        return _result(transition, [], started, reason + " (check mode: nothing changed)", True)
    steps = run_steps(transition.steps, driver, start=start, log=log, max_parallel=max_parallel)
    left = differing(read_states(driver, names), transition.after["switches"])
    if left:
        raise TransitionRunError("every step ran but %s do(es) not hold the planned end state; run again"
                                 % ", ".join(left), steps)
    return _result(transition, steps, started, reason, True)


def _result(transition: Transition, steps: list[Data], started: float, reason: str, changed: bool) -> Data:
    """The task's plain-data result."""
    return {"changed": changed, "reason": reason, "plan": transition.text().splitlines(),
            "steps": steps, "proof": transition.proof, "banks": list(transition.banks),
            "bank_after": transition.after["fabric"]["bank"], "start": round(started, 3),
            "end": round(time.time(), 3), "seconds": round(time.time() - started, 3)}


__all__ = ["Backup", "execute", "plan_failover", "plan_restore"]
