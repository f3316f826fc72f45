# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A failover's urgent pushes in as few proven rounds as possible
(issue 15; docs/failover.md, "Push rounds").

A planned failover (:func:`.failover_run.plan_failover`) installs the
backup in the other VLAN bank on every switch, then flips the switches
whose entries change one at a time, each flip proven by a window of the
802.1Q simulation. Every round trip costs time while pairs are cut off, so
the responder wants the flips of many switches in one parallel push. That
the phase is *order-free* (old and new dependencies together acyclic:
deadlock-free in any order) does not make a parallel push safe: with the
renamed assignment a frame that crosses flipped and unflipped switches in
a mix the proven order never produced can meet a row with no entry for
its destination (it floods) or go round in a broadcast loop -- found on
the 4x4 torus with segment routing for 40 of 40 planned failovers when
every changing switch was flipped at once.

So the rounds are proven, not assumed: a round is one parallel push, and
its window -- every switch it writes may handle any frame with its old or
its new entry, each frame wholly with one of them (an Open vSwitch write is
one OpenFlow bundle, atomic) -- is simulated exhaustively like every other
window. :func:`in_rounds` builds them greedily: each round flips as many
changing switches as its window allows, trying them in the proven order,
each flipped switch written whole (the backup bank installed and its ports'
PVIDs moved to it, one bundle). Besides those, the first round writes only
the switches whose install also completes the old bank (entries in the
VLANs they use now, for frames flipped neighbours send them before they
flip); the installs that only add the backup bank's VLANs
(:func:`_adds_only_vlans`) go in one push after the rounds, off the urgent
path. With the renamed assignment that costs nothing, since frames cross
the links untagged and each switch classifies them by its own PVIDs: a
bank installed but not used changes no forwarding (round 1 of link sw5:4
on the 4x4 torus wrote 8 switches instead of 16). Where that is not so
(the fixed assignment carries a frame's VLAN from switch to switch) the
windows show it, and the rounds fall back to installing the backup bank
on every switch in the first round. The steps
after the last flip of a changing switch (the other flips, the drain
wait, the old bank's removal) follow unchanged. Everything is proven anew
on the states the rounds pass through, with one dependency graph that
must stay acyclic, and every surviving pair must be delivered around the
failure after the last round. When the greedy rounds get stuck (no switch
can flip alone from the state they reached), the planned
one-switch-at-a-time flips are kept.

Not every changing switch is needed for the surviving pairs to deliver
again (:func:`_delivering`: each flip whose absence still lets every
surviving pair be delivered, without a frame sent into the failure, is
left out). The urgent rounds flip the needed ones; the others flip in
rounds after recovery (``after_recovery``), off the urgent path, whose
windows must also send no surviving pair's frame into the failure. When
those rounds cannot be proven, every flip is urgent as before.

From an armed base (:mod:`.failover_arming`: continuation rows the base
never reads, the flips' backup rows completed from the base) a frame that
meets a switch in the other state is forwarded instead of flooded, and far
more switches flip in one round (``in_rounds(armed=...)``).

A restore (:func:`.failover_run.plan_restore`: back from the backup to the
base once the failed part has carrier again) is grouped the same way
(``restore=True``): its carrier waits stay first, then its install and all
its flips become rounds. Nothing is failed then, so every window must
deliver every pair, the returned switch's host included.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ..fabric.topology import Topology
from . import failover_arming as arming
from .failover import Failure
from .failover_run import failed_ports, prove_recovered, recovery_proof, urgent_cut
from .transition_phases import Transition
from .transition_planner import _working_topology
from .transition_proof import TransitionError, _check_recovered, _check_state, _check_window, _Proof

Data = dict[str, Any]
Entries = dict[str, Data]


def _proof(topology: Topology, failure: Failure, restore: bool = False) -> _Proof:
    """A proof for ``failure``'s states: a failed switch's hosts neither send
    nor receive, and frames sent into its links are lost there (none of
    that for a ``restore``: the failed part is back)."""
    if restore:
        return _Proof(_working_topology(topology), "restore", failure.name)
    absent = [failure.switch] if failure.switch is not None else []
    dead = [(switch, port) for switch, ports in failed_ports(topology, failure).items() for port in ports]
    return _Proof(_working_topology(topology), "failover", failure.name, absent=absent,
                  dead_ports=dead if absent else ())


def _passes(topology: Topology, failure: Failure, before: Data, entries: Entries, so_far: _Proof,
            restore: bool, delivered: bool = False) -> bool:
    """Whether the round writing ``entries`` from ``before`` passes its window
    with the dependencies of the rounds before it (``so_far``, left as it is);
    ``delivered``: and no frame of a surviving pair is sent into the failure
    in any of its mixes (a round after every pair delivers again)."""
    scratch = _proof(topology, failure, restore)
    scratch.dependencies = so_far.dependencies.copy()
    try:
        _round_window(scratch, before, dict(before, switches=dict(before["switches"], **entries)), "round",
                      delivered)
    except TransitionError:
        return False
    return True


def _round_window(proof: _Proof, before: Data, after: Data, what: str, delivered: bool) -> None:
    """The window of one round (atomic writes); ``delivered``: strict about
    the failure too (:func:`_passes`). Raises TransitionError."""
    proof.explorer.dead_strict = delivered
    try:
        _check_window(proof, before, after, what, atomic=True)
    finally:
        proof.explorer.dead_strict = False


def _greedy(topology: Topology, failure: Failure, before: Data, install: Entries, flips: Entries,
            order: list[str], restore: bool = False, then: Iterable[str] = ()) -> tuple[list[Entries], int] | None:
    """The rounds' entries (module doc) and how many of them flip the
    switches of ``order`` (the urgent ones); the switches of ``then`` follow
    in rounds of their own. None when stuck. ``install``: the entries the
    first round writes besides its flips (the backup bank on every switch,
    or nothing: each flip then installs its own switch's)."""
    rounds: list[Entries] = []
    so_far = _proof(topology, failure, restore)
    current = before
    base: Entries = dict(install)
    urgent = 0
    for part in (list(order), list(then)):
        left = part
        delivered = bool(rounds) and not restore     # every pair delivers already: it must go on doing so
        while left:
            chosen: Entries = dict(base)
            for switch in list(left):
                trial = dict(chosen, **{switch: flips[switch]})
                if _passes(topology, failure, current, trial, so_far, restore, delivered):
                    chosen = trial
                    left.remove(switch)
            if chosen == base and base == {}:
                return None
            following = dict(current, switches=dict(current["switches"], **chosen))
            _round_window(so_far, current, following, "round %d" % (len(rounds) + 1), delivered)
            rounds.append(chosen)
            current, base = following, {}
        if not urgent:
            urgent = len(rounds)
    return rounds, urgent


def _delivering(topology: Topology, failure: Failure, start: Data, install: Entries, flips: Entries) -> list[str]:
    """The switches of ``flips`` (in its order) whose flips alone, after
    ``install``, deliver every surviving pair around the failure: each
    flip whose absence changes nothing for delivery is left out, one at a
    time. The others (their entries change too, for frames no surviving
    pair sends now or for balance) can wait until every pair delivers."""
    proof = recovery_proof(_working_topology(topology), failure)
    entries = dict(start["switches"], **install)
    needed = list(flips)
    for switch in reversed(list(flips)):
        trial = [name for name in needed if name != switch]
        try:
            _check_recovered(proof, dict(start, switches=dict(entries, **{name: flips[name] for name in trial})),
                             "without flipping %s" % switch)
        except TransitionError:
            continue
        needed = trial
    return needed


def in_rounds(topology: Topology, failure: Failure, transition: Transition, first: Iterable[str],
              restore: bool = False, armed: Entries | None = None) -> Transition:
    """``transition`` (a failover planned by :mod:`.failover_run`, or its
    restore when ``restore``) with its urgent part as proven parallel rounds
    (module doc); ``first``: the switches whose entries change (a restore:
    every switch). ``armed``: the switches the fabric holds with continuation
    rows (:func:`.failover_arming.armed`): the move then starts from them,
    its installs keep them and its flips complete their backup rows
    (:func:`.failover_arming.completed_flips`). Raises TransitionError when
    the new steps fail their proof (the caller keeps ``transition``)."""
    started = time.perf_counter()
    first = list(first)
    steps = transition.steps
    lead = next((position for position, step in enumerate(steps) if step["kind"] != "wait_carrier"), len(steps))
    if lead == len(steps) or steps[lead]["kind"] != "push" or not steps[lead]["name"].startswith("install "):
        raise TransitionError("%s: the planned move does not start with an install step" % failure.name)
    cut = urgent_cut(transition, first)
    if armed:
        transition = _from_armed(transition, armed, lead, cut)
        steps = transition.steps
    flips: Entries = {}
    for step in steps[lead + 1:cut]:
        flips.update(step.get("switches") or {})
    start = dict(transition.before, links=_links_at(transition, lead + 1))
    install = steps[lead]["switches"]
    # the lean rounds leave out the installs that add nothing but the backup bank's VLANs
    needed = {name: entry for name, entry in install.items()
              if not _adds_only_vlans(transition.before["switches"].get(name) or {}, entry)}
    tried = []
    # from an armed base the continuation rows often make the installs' old-bank completions unneeded:
    # the flips alone first; when every install is needed the lean rounds are the others: build them once
    candidates: list[Entries] = [{}] if armed else []
    candidates += [written for written in (needed, install) if written not in candidates]
    for written in candidates:
        lean = written != install
        # a failover's urgent rounds flip only the switches every surviving pair needs; a
        # restore's windows must deliver every pair anyway, so all its flips are urgent
        order = list(flips) if restore else _delivering(topology, failure, start, written, flips)
        for urgent_order in dict.fromkeys([tuple(order), tuple(flips)]):
            built = _greedy(topology, failure, start, written, flips, list(urgent_order), restore,
                            [name for name in flips if name not in urgent_order])
            if built is None:
                tried.append("no round can be proven from a state the greedy rounds reached")
                continue
            rounds, urgent = built
            new_steps, originals = _round_steps(transition, rounds, urgent, flips, install, (lead, cut), lean)
            try:
                return _proven(topology, failure, transition, new_steps, (urgent, len(rounds)), originals,
                               first, started, restore)
            except TransitionError as exc:
                tried.append(str(exc))
    raise TransitionError("%s: %s" % (failure.name, "; ".join(dict.fromkeys(tried))))


def _from_armed(transition: Transition, armed: Entries, lead: int, cut: int) -> Transition:
    """``transition`` started from the armed switches: the install keeps
    each armed switch's continuation rows, the flips up to ``cut`` complete
    their backup rows from the plain base (:mod:`.failover_arming`); the
    steps after ``cut`` write what they wrote (the old bank's removal ends
    on the plain backup)."""
    plain = transition.before["switches"]
    added = {name: arming.added_rows(entry, plain[name]) for name, entry in armed.items() if name in plain}
    steps = [dict(step) for step in transition.steps]
    steps[lead]["switches"] = {name: arming.with_rows(entry, added.get(name) or {})
                               for name, entry in steps[lead]["switches"].items()}
    macs = arming.destinations(plain, *(step.get("switches") or {} for step in steps[lead + 1:cut]))
    for position in range(lead + 1, cut):
        if steps[position].get("switches"):
            steps[position]["switches"] = arming.completed_flips(steps[position]["switches"], plain, macs)
    before = dict(transition.before, switches=dict(plain, **{name: armed[name] for name in added}))
    # a switch no step writes (a failed switch) keeps its rows to the end
    written = {name for step in steps for name in step.get("switches") or {}}
    kept = {name: armed[name] for name in added if name not in written}
    after = dict(transition.after, switches=dict(transition.after["switches"], **kept))
    return Transition(transition.action, dict(transition.link), steps, before, after,
                      dict(transition.proof), list(transition.states), list(transition.banks))


def _adds_only_vlans(before: Data, installed: Data) -> bool:
    """Whether the switch entry ``installed`` is ``before`` plus VLANs that
    ``before`` does not hold (their port memberships and static entries),
    every PVID where it was: the switch then handles every frame it
    classifies into a VLAN it held as before. (An install can also complete
    the old bank, entries for frames the new routing brings in while the
    switch is not flipped yet: then it is needed before the flips.)"""
    held = set(before.get("vlans") or [])
    if not held or not held <= set(installed.get("vlans") or []):
        return False
    ports = {}
    for port, settings in (installed.get("ports") or {}).items():
        ports[port] = dict(settings, **{key: [vlan for vlan in settings[key] if vlan in held]
                                        for key in ("untagged", "tagged") if key in settings})
    restricted = dict(installed, vlans=[vlan for vlan in installed["vlans"] if vlan in held], ports=ports,
                      static_macs=[entry for entry in installed.get("static_macs") or [] if entry.get("vlan") in held])
    return restricted == before


def _round_steps(transition: Transition, rounds: list[Entries], urgent: int, flips: Entries, install: Entries,
                 lead_cut: tuple[int, int], lean: bool) -> tuple[list[Data], list[int]]:
    """The steps of a move in ``rounds`` (the first ``urgent`` of them make
    every pair deliver) and, per step, the step of ``transition`` whose link
    states it has: the carrier waits, the urgent rounds, (``lean``: the
    backup bank's install on the switches no round writes), the other
    rounds, then the steps after ``cut``."""
    lead, cut = lead_cut
    steps = transition.steps
    bank = transition.banks[-1]
    new_steps: list[Data] = [dict(step) for step in steps[:lead]]
    originals = [step["index"] for step in steps[:lead]]
    made: list[Data] = []
    for position, entries in enumerate(rounds, 1):
        flipped = [name for name in flips if name in entries and entries[name] == flips[name]]     # not installs
        if lean:
            others = [name for name in entries if name not in flipped]
            name = "round %d: flip %s to bank %s (installing it)%s" % (
                position, ", ".join(flipped), bank, "; install it on %s" % ", ".join(others) if others else "")
        elif flipped:
            name = "round %d: %sflip %s to bank %s" % (
                position, "install bank %s, " % bank if position == 1 else "", ", ".join(flipped), bank)
        else:       # an install alone (the fixed assignment: no flip before every switch has the bank)
            name = "round %d: install bank %s on %s" % (position, bank, ", ".join(entries))
        if position > urgent:
            name += " (every pair delivers already)"
        step: Data = {"kind": "push", "parallel": True, "switches": entries, "name": name,
                      "why": "one parallel push whose window (any of its switches old or new, each frame "
                             "handled wholly by one of its states) was simulated",
                      "round" if position <= urgent else "after_recovery": position}
        made.append(step)
    written = {name for entries in rounds for name in entries}
    rest = {name: entry for name, entry in install.items()
            if name not in written and entry != transition.before["switches"].get(name)}
    if lean and rest:
        made.insert(urgent, {"kind": "push", "parallel": True, "switches": rest,
                             "name": "install bank %s on %s" % (bank, ", ".join(rest)),
                             "why": "the switches the rounds do not write get the bank their flips need"})
    for step in made:
        new_steps.append(dict(step, index=len(new_steps) + 1))
        originals.append(lead + 1)
    for step in steps[cut:]:
        new_steps.append(dict(step, index=len(new_steps) + 1))
        originals.append(step["index"])
    return new_steps, originals


def _links_at(transition: Transition, step: int) -> Any:
    """The link states of the fabric once ``transition``'s step ``step`` ran."""
    links = transition.before["links"]
    for state in transition.states:
        if state["step"] <= step:
            links = state["intent"]["links"]
    return links


def _proven(topology: Topology, failure: Failure, transition: Transition, steps: list[Data],
            counts: tuple[int, int], originals: list[int], first: list[str], started: float,
            restore: bool) -> Transition:
    """The transition with ``steps`` (``counts``: how many of its rounds are
    urgent, how many there are in all; ``originals``: per step, the step of
    ``transition`` whose link states it has), every window proven on one
    dependency graph."""
    rounds, every_round = counts
    proof = _proof(topology, failure, restore)
    current = transition.before
    _check_state(proof, current, "the fabric before the %s for %s" % (
        "restore" if restore else "failover", failure.name))
    states = [{"step": 0, "intent": current}]
    for step, original in zip(steps, originals):
        if step["kind"] not in ("push", "drain") or not step.get("switches"):
            continue
        following = dict(current, switches=dict(current["switches"], **step["switches"]),
                         links=_links_at(transition, original))
        what = "step %d (%s)" % (step["index"], step["name"])
        if step.get("round") or step.get("after_recovery"):
            _round_window(proof, current, following, what, bool(step.get("after_recovery")))
        else:
            _check_window(proof, current, following, what)
        states.append({"step": step["index"], "intent": following})
        current = following
    if current["switches"] != transition.after["switches"] or not proof.acyclic():
        raise TransitionError("%s: the rounds do not end where the move does, deadlock-free" % failure.name)
    made = Transition(transition.action, dict(transition.link), steps, transition.before, transition.after,
                      dict(transition.proof), states, list(transition.banks))
    made.proof.update(windows=proof.windows, states=len(states), walks=proof.walks, simulated_states=proof.nodes,
                      dependency_edges=proof.dependencies.number_of_edges(), acyclic=True, rounds=rounds,
                      rounds_after_recovery=every_round - rounds,
                      seconds=round(time.perf_counter() - started + transition.proof.get("seconds", 0), 3))
    if not restore:
        prove_recovered(_working_topology(topology), failure, made, first)
    return made
