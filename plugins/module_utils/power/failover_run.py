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
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import EtherclusterError
from ..fabric.topology import Topology
from ..routing.base import RoutingFunction
from .fabric_state import switch_state
from .failover import (FORMAT, Failure, FailoverError, backup_from_changes, precompute_failover,
                       routing_digest, tree_failover)
from .redeploy import _Redeploy
from .transition_phases import PlanLike, Transition, _keep_ports_up, _PlanView
from .transition_planner import (
    SEARCH_BUDGET_PER_SWITCH,
    _other,
    _plan_from_routing,
    _Router,
    _transition,
    _turn_order,
    _working_topology,
)
from .transition_proof import TransitionError, _check_recovered, _check_state, _Proof
from .transition_run import (TransitionRunError, check_platforms, differing, read_states, resume_index,
                             run_steps)

Data = dict[str, Any]


class FailoverRun(_Redeploy):
    """The planner of a failover's (or a restore's) phase: a re-deploy's
    planner whose flip order puts the switches that change first, with the
    failed link simulated as alive in the windows and its ports kept up.
    The responder (:mod:`.failover_watch`) plans its moves with it too."""

    def __init__(self, *args: Any, first: list[str], failed: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.first = first
        # the phases' windows simulate the failed link as alive (module doc)
        self.link_name = failed.name
        self.ends = {"a": str(failed.a), "b": str(failed.b), "name": failed.name}
        # its ports stay as configured (admin up): a dead cable is not shut, so the
        # link returns as soon as its carrier does
        self.keep_up = {failed.a.switch: {failed.a.port}, failed.b.switch: {failed.b.port}}

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
    """The base plan (bank ``bank``), the backup routing and its stored entry.

    A switch failure's backup keeps the base's entries for the frames no
    surviving pair sends (to the failed switch's hosts, at the failed
    switch: :func:`.failover._detour_tables`), and is planned with the
    failed switch's links up, as the base: its frames to those hosts are
    lost at the failure, and the failed switch itself is never written
    (:func:`frozen_failed`)."""
    router = _base_router(topology, options)
    work = _working_topology(topology)
    base = router.plan(work, set(topology.down_links()), bank, "the base routing")
    if base.routing.paths_form == "source_tree":
        return (base,) + _tree_backup(router, work, base.routing, failure, stored)
    entry = stored
    if entry is None:
        entry = precompute_failover(base.routing, [failure])["failures"][0]
    if not entry.get("covered"):
        raise FailoverError("failure %s has no precomputed backup: %s" % (failure.name, entry.get("reason")))
    backup = backup_from_changes(base.routing, entry)
    if failure.kind == "switch":
        if options.get("assignment", "renamed") != "renamed":
            raise FailoverError("switch %s: a switch failure is pushed only with the renamed assignment (frames "
                                "travel untagged, so the switches around the failed one do not depend on the "
                                "VLANs it holds); this fabric has %s" % (failure.switch, options.get("assignment")))
        backup = RoutingFunction(backup.topology, backup.engine, backup.next_hop, down=base.routing.down,
                                 options=backup.options)
    return base, backup, entry


def _tree_backup(router: _Router, work: Topology, base: RoutingFunction, failure: Failure,
                 stored: Data | None) -> tuple[Any, Data]:
    """A source-tree routing's backup of ``failure`` (:mod:`.failover`,
    "source trees": the trees that crossed the failed link repaired, else
    the kept-order routing without it) and its entry, computed and verified
    now; a stored entry must carry this backup's fingerprint."""
    entry, backup = tree_failover(base, failure, _kept_routing(router, work, router.file_down))
    if backup is None:
        raise FailoverError("failure %s has no backup: %s" % (failure.name, entry["reason"]))
    if stored is not None and stored.get("backup_digest") != entry["backup_digest"]:
        raise FailoverError("failure %s: the stored backup is not the one computed now from the same base routing; "
                            "re-run failover_plan.yml" % failure.name)
    return backup, entry


def tree_backup_of_held(topology: Topology, options: Data, held: RoutingFunction, failure: Failure,
                        base: RoutingFunction) -> tuple[Data, Any]:
    """A source-tree routing's backup of ``failure`` from ``held``, the trees
    a fabric holds while an earlier failure's backup holds (``failure.links``:
    every failed link): the trees of ``held`` that cross them repaired under
    ``base``'s turn order, else the kept-order routing without them (base
    order too: frames draining on ``held`` and the new ones share one turn
    order). ``(stored entry, backup or None)`` as :func:`.failover.tree_failover`."""
    router = _base_router(topology, options)
    work = _working_topology(topology)
    return tree_failover(held, failure, _kept_routing(router, work, router.file_down), position=_turn_order(base))


def _kept_routing(router: _Router, work: Topology, down: set[int]) -> Callable[[frozenset[int]], RoutingFunction]:
    """The kept-order routing of the working topology ``work`` with the
    file's down links ``down`` and ``links`` down (the router plans its
    base on ``work`` once)."""
    def kept(links: frozenset[int]) -> RoutingFunction:
        return router.kept(work, down | set(links))
    return kept


def kept_up(made: Any, up: dict[str, set[str]]) -> PlanLike:
    """The backup plan with the failed link's ports admin up (not shut: module doc)."""
    return _PlanView(made, _keep_ports_up({name: made.intent["switches"][name] for name in up}, up))


def failed_ports(topology: Topology, failure: Failure) -> dict[str, set[str]]:
    """``{switch: ports}`` of every failed link's two ends."""
    result: dict[str, set[str]] = {}
    for index in failure.links:
        link = topology.links[index]
        for end in (link.a, link.b):
            result.setdefault(end.switch, set()).add(str(end.port))
    return result


def frozen_failed(made: Any, failure: Failure, held: Any) -> Any:
    """``made`` with the failed switch holding what it held (``held``'s
    entry): it cannot be reached, so no step may write it."""
    if failure.switch is None:
        return made
    return _PlanView(made, {failure.switch: held.intent["switches"][failure.switch]})


def _plan(topology: Topology, options: Data, failure: Failure, bank: str, stored: Data | None,
          restore: bool, wait_s: float, carrier_timeout_s: float = 30.0) -> tuple[Transition, Any]:
    """Base -> backup (``restore`` False) or backup -> base, through the other
    bank; and the backup routing."""
    started = time.perf_counter()
    work = _working_topology(topology)
    # assignment auto made concrete (what the deploy picked), for the backup's plan too
    resolver = _base_router(topology, options)
    resolver.resolve(work)
    options = resolver.options
    link = topology.links[min(failure.links)]
    up = failed_ports(topology, failure)
    if restore:
        base_now, backup, entry = _base_and_backup(topology, options, failure, _other(bank), stored)
        before: Any = kept_up(_plan_from_routing(work, backup, bank, options), up)
        after: Any = base_now
        # the returned switch holds what it held when it failed: the base in the base's bank
        before = frozen_failed(before, failure, after)
    else:
        before, backup, entry = _base_and_backup(topology, options, failure, bank, stored)
        after = frozen_failed(kept_up(_plan_from_routing(work, backup, _other(bank), options), up), failure, before)
    label = "%s %s" % ("restore after" if restore else "failover for", failure.name)
    absent = [failure.switch] if failure.switch and not restore else []
    dead = [(switch, port) for switch, ports in up.items() for port in ports] if absent else []
    proof = _Proof(work, "restore" if restore else "failover", failure.name, absent=absent, dead_ports=dead)
    _check_state(proof, before.intent, "the fabric before the %s" % ("restore" if restore else "failover"))
    router = _Router(options, True, failure.name, topology.down_links())
    router.resolve(work)
    first = [name for name in entry["switches"] if name not in absent]
    run = FailoverRun(proof, before.intent, bank, router, SEARCH_BUDGET_PER_SWITCH * len(topology.switches),
                      wait_s, False, False, first=first, failed=link)
    run.keep_up = up
    if restore:
        for index in sorted(failure.links):
            ends = topology.links[index]
            run.ends = {"a": str(ends.a), "b": str(ends.b), "name": ends.name}
            run.wait_carrier("wait for carrier on %s" % ends.name,
                             "the base routing may use the link again only once both ends see carrier",
                             carrier_timeout_s, 0.0, None)
    try:
        done = run.route_phase(work, before, after, label)
    except TransitionError as exc:
        raise FailoverError("%s: no proven order (%s): only a halt-and-drain (segment-based routing §2.3) "
                            "and a fresh plan recover; nothing planned" % (label, exc)) from None
    transition = _transition(run, router, "restore" if restore else "failover", before, done, True, None, started)
    transition.link = {"a": "", "b": "", "name": failure.name}
    if failure.switch is not None:
        leave_out(transition, failure.switch)
    transition.proof["failure"] = {key: entry[key] for key in ("kind", "name", "links", "switch", "switches",
                                                               "pairs_affected", "pairs_disjoint")}
    if not restore:
        try:
            prove_recovered(work, failure, transition, first)
        except TransitionError as exc:
            raise FailoverError("%s: the planned steps leave a surviving pair cut off (%s); nothing planned"
                                % (label, exc)) from None
    return transition, backup


def leave_out(transition: Transition, switch: str) -> None:
    """Take ``switch`` (failed, frozen: :func:`frozen_failed`) out of every push:
    its entry never changes, so no step needs to reach it. Pushes left
    empty go."""
    held = transition.before["switches"][switch]
    steps = []
    for step in transition.steps:
        entries = step.get("switches")
        if entries and switch in entries:
            if entries[switch] != held:
                raise FailoverError("switch %s failed, but step %d (%s) would change it" % (
                    switch, step["index"], step["name"]))
            step = dict(step, switches={name: entry for name, entry in entries.items() if name != switch})
            if not step["switches"]:
                continue
        steps.append(step)
    renumbered = {0: 0}
    for position, step in enumerate(steps, 1):
        renumbered[step["index"]] = position
        step["index"] = position
    transition.steps = steps
    transition.states = [dict(state, step=renumbered[state["step"]]) for state in transition.states
                         if state["step"] in renumbered]


def urgent_cut(transition: Transition, first: Iterable[str]) -> int:
    """How many of ``transition``'s steps make every pair deliver again: the
    install (and carrier waits) and the flips up to the last one of a
    switch in ``first`` (the switches whose entries change); or the carrier
    waits and the proven rounds, when the flips were made rounds."""
    first = set(first)
    cut = 0
    rounds = False
    for position, step in enumerate(transition.steps):
        if step.get("round"):            # proven rounds (failover_rounds.py) are the urgent part
            cut, rounds = position + 1, True
            continue
        if rounds:
            break
        flips = step["kind"] == "push" and step["name"].startswith("flip ")
        if flips and set(step.get("switches") or {}) <= first:
            cut = position + 1
        elif flips or step["kind"] in ("wait", "drain"):
            break
        elif step["kind"] in ("push", "wait_carrier"):
            cut = position + 1
    return cut


def recovery_proof(work: Topology, failure: Failure) -> _Proof:
    """A proof for :func:`.transition_proof._check_recovered` of ``failure``
    on the working topology ``work``: a failed switch's hosts neither send
    nor receive, and every port into the failure is dead."""
    dead = [(switch, port) for switch, ports in failed_ports(work, failure).items() for port in ports]
    absent = [failure.switch] if failure.switch is not None else []
    return _Proof(work, "failover", failure.name, absent=absent, dead_ports=dead)


def prove_recovered(work: Topology, failure: Failure, transition: Transition, first: list[str]) -> None:
    """Every surviving pair is delivered without touching the failure once
    the urgent steps ran, and at the end (what the windows, which let frames
    die at the failure, do not show); raises TransitionError."""
    proof = recovery_proof(work, failure)
    cut = urgent_cut(transition, first)
    entries = dict(transition.before["switches"])
    for step in transition.steps[:cut]:
        entries.update(step.get("switches") or {})
    urgent = dict(transition.after, switches=entries)
    _check_recovered(proof, urgent, "after the urgent steps (1-%d) of the failover for %s" % (cut, failure.name))
    _check_recovered(proof, transition.after, "at the end of the failover for %s" % failure.name)
    transition.proof["recovered_after_step"] = cut


def plan_failover(topology: Topology, options: Data, failure: Failure, current_bank: str = "A",
                  stored: Data | None = None, wait_s: float = 1.0) -> Transition:
    """The move from the base routing (bank ``current_bank``) to the backup of
    ``failure`` (``stored``: its precomputed entry; computed now when None).
    ``options``: engine, assignment, engine_options and plan() keywords, as
    the fabric was deployed. Raises :class:`.failover.FailoverError`."""
    return _plan(topology, options, failure, current_bank, stored, False, wait_s)[0]


def plan_failover_and_backup(topology: Topology, options: Data, failure: Failure, current_bank: str = "A",
                             stored: Data | None = None, wait_s: float = 1.0) -> tuple[Transition, Any]:
    """:func:`plan_failover` and the backup routing it moves to (the routing
    the fabric then holds; a source-tree routing's repaired trees)."""
    return _plan(topology, options, failure, current_bank, stored, False, wait_s)


def plan_restore(topology: Topology, options: Data, failure: Failure, current_bank: str = "B",
                 stored: Data | None = None, wait_s: float = 1.0, carrier_timeout_s: float = 30.0) -> Transition:
    """The move from the backup of ``failure`` (bank ``current_bank``) back to
    the base routing in the other bank, once the link is back: the carrier
    of both ends is awaited first (``carrier_timeout_s``)."""
    return _plan(topology, options, failure, current_bank, stored, True, wait_s, carrier_timeout_s)[0]


def read_ports_up(state: Data, ports: Iterable[str]) -> Data:
    """``state`` (a switch's, as read) with ``ports`` read as admin up, in
    place: a failed link's ends, which a move keeps as configured."""
    for port in ports:
        if port in state.get("ports", {}):
            state["ports"][port]["admin"] = "up"
    return state


class _FailedPortsUp:
    """A driver that reads the failed link's ports as admin up: a cut cable
    (in the lab, a veth set down in the switch's namespace) shows as a port
    down, which no step should write back; the plan keeps those ports as
    configured."""

    def __init__(self, driver: Any, ports: list[tuple[str, str]]) -> None:
        self.driver = driver
        self.ports = ports

    def read(self, switch: str) -> Data:
        """The switch's state, the failed link's ports read as admin up."""
        return read_ports_up(self.driver.read(switch), [port for name, port in self.ports if name == switch])

    def write(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        """As the driver."""
        self.driver.write(switch, changes, desired, current)

    def carrier(self, switch: str, port: str) -> str:
        """As the driver."""
        return str(self.driver.carrier(switch, port))


def execute(topology: Topology, driver: Any, planner: Callable[[str], Transition],
            check_mode: bool = False, log: Callable[[Data], Any] | None = None,
            max_parallel: int | None = None, failure: Failure | None = None) -> Data:
    """Read the switches, plan with ``planner(current_bank)`` for the bank
    they hold, resume or run the steps, read back. ``bank`` is the bank of
    the switches' PVIDs (a half-done run holds both: then both are tried).
    ``failure``: its links' ports are read as admin up (:class:`_FailedPortsUp`)."""
    started = time.time()
    check_platforms(topology, "failovers")
    if failure is not None:
        ends = [topology.links[index] for index in sorted(failure.links)]
        driver = _FailedPortsUp(driver, [(end.switch, end.port) for link in ends for end in (link.a, link.b)])
    # a failed switch cannot be read; no step writes it (:func:`leave_out`)
    gone = {failure.switch} if failure is not None and failure.kind == "switch" else set()
    names = [name for name in topology.switch_names() if name not in gone]
    states = read_states(driver, names)

    def alive(entries: Data) -> Data:
        return {name: entry for name, entry in entries.items() if name not in gone}
    banks = sorted({bank for name in names for bank in switch_state(name, states[name])["pvid_banks"]
                    if bank in ("A", "B")})
    tried, candidates = [], []
    for candidate in dict.fromkeys([bank for held in banks or ["A", "B"] for bank in (held, _other(held))]):
        try:
            planned = planner(candidate)
        except EtherclusterError as exc:
            tried.append("bank %s: %s" % (candidate, exc))
            continue
        # a fabric already at a plan's end is done, even where it is also another plan's start
        if not differing(states, alive(planned.after["switches"])):
            return _result(planned, [], started, "done already: the switches hold the end state", False)
        candidates.append((candidate, planned))
    transition, start = None, None
    for candidate, planned in candidates:
        start = resume_index(alive(planned.before["switches"]), planned.steps, states)
        if start is not None:
            transition = planned
            break
        tried.append("bank %s: the switches hold neither its start nor any of its steps" % candidate)
    if transition is None or start is None:
        raise TransitionRunError("nothing to resume or start: %s" % "; ".join(tried[:4]))
    reason = "fresh" if start == 0 else "resumed after step %d" % start
    if check_mode:
        return _result(transition, [], started, reason + " (check mode: nothing changed)", True)
    steps = run_steps(transition.steps, driver, start=start, log=log, max_parallel=max_parallel)
    left = differing(read_states(driver, names), alive(transition.after["switches"]))
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


# ------------------------------------------------------------ stored form
FAILOVER_FILE = "failover.json"
FAILOVER_REPORT = "failover.md"


def _base_router(topology: Topology, options: Data) -> _Router:
    """The router of the deployed routing: kept turn order, the file's down links."""
    return _Router(options, True, "(failover)", topology.down_links())


def base_plan(topology: Topology, options: Data, bank: str = "A") -> Any:
    """The base routing's plan (every link of the file up but its down ones)."""
    router = _base_router(topology, options)
    return router.plan(_working_topology(topology), set(topology.down_links()), bank, "the base routing")


def failover_document(topology: Topology, options: Data) -> Data:
    """Backups of every single failure of the deployed routing, stored form
    (:func:`.failover.precompute_failover`) plus the base's fingerprint and settings."""
    router = _base_router(topology, options)
    work = _working_topology(topology)
    base = router.plan(work, set(topology.down_links()), "A", "the base routing")
    stored = precompute_failover(base.routing, kept=_kept_routing(router, work, router.file_down))
    stored["base_digest"] = routing_digest(base.routing)
    stored["settings"] = {key: options.get(key) for key in ("engine", "assignment", "engine_options")}
    stored["topology"] = topology.name
    return stored


def stored_entry(topology: Topology, options: Data, document: Data | None, failure: Failure) -> Data | None:
    """The stored backup of ``failure`` when ``document`` was made for this
    base routing, else None (it is then computed on the spot)."""
    if not document or document.get("format") != FORMAT:
        return None
    if document.get("base_digest") != routing_digest(base_plan(topology, options).routing):
        return None
    for entry in document.get("failures", ()):
        if entry.get("name") == failure.name:
            return dict(entry)
    return None


def failover_report(document: Data) -> str:
    """The failover section of the plan's report (Markdown)."""
    cover = document["coverage"]
    moved = ("the source trees that crossed the failed link are repaired (the sources of the changed trees "
             "flip first)" if document.get("paths") == "source_tree"
             else "only the routes that used the failed element detour")
    lines = ["# Failover", "",
             "Precomputed backups for every single failure of the %s routing (segment-based routing §2.3): "
             "%s, along turns that keep the base routing's turn order, so the switch-over cannot deadlock while "
             "old frames drain." % (document["engine"], moved),
             "",
             "| failures | covered | links | switches | pairs detoured | disjoint from their main path |",
             "|---|---|---|---|---|---|",
             "| %d | %d | %d/%d | %d/%d | %d | %d |" % (
                 cover["total"], cover["covered"], cover["link"]["covered"], cover["link"]["total"],
                 cover["switch"]["covered"], cover["switch"]["total"], cover["pairs_affected"],
                 cover["pairs_disjoint"]), ""]
    if cover["uncovered"]:
        lines += ["Not covered (halt-and-drain and a fresh plan): %s." % ", ".join(cover["uncovered"]), ""]
    lines += ["| failure | switches changing | pairs detoured | disjoint | max channel load | note |",
              "|---|---|---|---|---|---|"]
    for entry in document["failures"]:
        lines.append("| %s %s | %s | %d | %d | %s | %s |" % (
            entry["kind"], entry["name"], len(entry["switches"]) if entry["covered"] else "-",
            entry["pairs_affected"], entry["pairs_disjoint"],
            entry["max_load"] if entry["covered"] else "-", entry["reason"] or "kept turn order"))
    return "\n".join(lines) + "\n"
