# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A link cut while a transition runs (issue 18, item 2; docs/reliability.md).

A transition (docs/transitions.md) is planned and proven with every link
of the fabric up but the one it switches. When another link loses its
carrier between the steps (a cable pulled, a port that died), every
further step is a step of a plan made for a fabric that no longer exists:
the new routing may send pairs over the dead link that the old one sent
elsewhere, and a link off may cut the fabric in two (the switched link and
the dead one together). :class:`CarrierWatch` therefore:

* before the run: refuses a fresh transition when a link other than the
  switched one is admin up without carrier (the plan would use it), and
  names it;
* between the steps: before every step that writes switches (``push``,
  ``drain``) reads the carrier of the watched links on one switch of a
  cover of them (:func:`cover`: switches holding an end of every watched
  link, 8 of the 4x4 torus's 16), the next one each time (one
  ``dump-ports-desc`` when the driver has ``carriers(switch)``, else one
  ``carrier`` call per port), and stops when one lost it, before writing
  anything more. One SSH round trip per step keeps the watch cheap on a
  loaded controller (reading every switch before every step doubled a
  transition's time at load 20); a cut is seen within as many writing
  steps as the cover has switches. The message says
  which switch holds which bank, how many host pairs the state held now
  still delivers without that link (the 802.1Q simulator walking every
  pair, :mod:`..verify.dot1q`), which do not, and how to resume;
* on a re-run that finds the transition midway while such a link is still
  dead: rolls the fabric back to the state it held before the transition
  (:func:`rollback_steps`: the states the run went through, in reverse), a
  settled fabric on its base routing from which ``link_failed.yml``
  (docs/failover.md) moves the failed link's pairs to their backup. When
  the link has carrier again, the re-run simply resumes and finishes.

Why going back is safe: each consecutive pair of states is a window the
planner proved (any switch in either state, every walk delivered, the
dependencies acyclic), whichever way the fabric moves through it. The
dead link only drops the walks that cross it, and a dropped frame makes
no flood, loop or dependency cycle elsewhere (the same argument as the
failover's, :mod:`.failover_run`). Going forward is not: the steps left
were chosen for a fabric with the dead link up.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from ..fabric.topology import Topology
from ..verify.dot1q import Dot1qFabric
from .fabric_state import bank_of
from .transition_run import (
    Data,
    TransitionRunError,
    _pool,
    cumulative_states,
    differing,
    read_states,
)

WRITING = ("push", "drain")
ALL_PAIRS_UP_TO = 64  # hosts: above, one host per switch is walked
NAMED_PAIRS = 8


class CarrierWatch:
    """The links a transition must find with carrier between its steps:
    every link but the switched one (index ``target``) that the plan holds
    up at both ends before it starts. ``state`` is the fabric's as read
    (:func:`.fabric_state.fabric_state`): a watched link whose ends do not
    both see carrier, or with one end down (a veth set down on one side
    shows so), is dead at the start."""

    def __init__(self, topology: Topology, transition: Any, state: Data, driver: Any,
                 target: int, what: str = "this transition") -> None:
        self.topology = topology
        self.transition = transition
        self.driver = driver
        self.what = what
        entries = transition.before["switches"]
        self.links = [entry for entry in state["links"] if entry["index"] != target and all(
            (entries[end.switch]["ports"].get(str(end.port)) or {}).get("admin", "up") == "up"
            for end in (topology.links[entry["index"]].a, topology.links[entry["index"]].b))]
        self.dead_at_start = [entry for entry in self.links if any(
            end["admin"] != "up" or end["carrier"] != "up" for end in entry["ends"].values())]
        self.cover = cover(self.links)
        self.turn = 0

    # ---------------------------------------------------------------- run
    def before_run(self, start: int, check_mode: bool, run: Callable[[list[Data]], list[Data]]) -> None:
        """Refuse (fresh), roll back (midway) or pass when no watched link is
        dead at the start. ``run(steps)`` runs steps (:func:`.transition_run.run_steps`)."""
        if not self.dead_at_start:
            return
        dead = _named(self.dead_at_start)
        steps = self.transition.steps
        if start == 0:
            raise TransitionRunError(
                "link(s) %s have no carrier although admin up: %s is planned and proven with them "
                "up and would still route over them; nothing was done. Restore the link, or move "
                "its pairs to their backup first (link_failed.yml -e link=%s, docs/failover.md) "
                "and run %s once it is back (link_restored.yml)."
                % (dead, self.what, self.dead_at_start[0]["a"], self.what))
        back = rollback_steps(steps, self.transition.before["switches"], start)
        if check_mode:
            raise TransitionRunError(
                "link(s) %s lost carrier while %s stood after step %d of %d; a run would roll "
                "the fabric back to the state before it (%d steps: %s) and stop"
                % (dead, self.what, start, len(steps), len(back),
                   "; ".join(step["name"] for step in back)))
        done = run(back)
        after = read_states(self.driver, self.topology.switch_names())
        left = differing(after, self.transition.before["switches"])
        if left:
            raise TransitionRunError(
                "link(s) %s: the roll back ran but %s do(es) not hold the state before %s; re-run "
                "the same playbook" % (dead, ", ".join(left), self.what), done)
        raise TransitionRunError(
            "link(s) %s lost carrier while %s stood after step %d of %d: rolled back to the state "
            "before it (%d steps, each a window the planner proved); every switch holds the routing "
            "it held before. %s Next: link_failed.yml -e link=%s moves the pairs that used the dead "
            "link to their backup (docs/failover.md); run %s again once the link is back "
            "(link_restored.yml)."
            % (dead, self.what, start, len(steps), len(back),
               delivered_text(self.transition.before, [e["name"] for e in self.dead_at_start]),
               self.dead_at_start[0]["a"], self.what), done)

    def between(self, position: int) -> None:
        """Before step ``position`` (0-based) of the transition: when it
        writes switches, read the carrier on the next switch of the cover
        (:func:`cover`, in turn) and stop if a watched link lost it there."""
        steps = self.transition.steps
        if steps[position].get("kind") not in WRITING or not self.cover:
            return
        switch = self.cover[self.turn % len(self.cover)]
        self.turn += 1
        dead = self.dead_links(switch)
        if not dead:
            return
        states = cumulative_states(self.transition.before["switches"], steps)
        names = [entry["name"] for entry in dead]
        nxt = steps[position]
        raise TransitionRunError(
            "link(s) %s lost carrier (%s) after step %d of %d; stopped before step %s (%s: %s): "
            "the steps left were planned and proven with that link up, so no further switch was "
            "written. The switches hold: %s. %s To resume: once the link has carrier again, re-run "
            "the same playbook (it resumes after step %d); if it stays down, re-run it anyway: it "
            "rolls the fabric back to its state before %s through the same proven states, after "
            "which link_failed.yml -e link=%s (docs/failover.md) moves the dead link's pairs to "
            "their backup."
            % (", ".join(names), ", ".join("%s %s" % item for e in dead for item in e["seen"].items()),
               position, len(steps), nxt.get("index", position + 1), nxt.get("kind"),
               nxt.get("name"), holdings(states[position]),
               delivered_text(dict(self.transition.before, switches=states[position]), names),
               position, self.what, dead[0]["a"]))

    # -------------------------------------------------------------- reading
    def dead_links(self, switch: str | None = None) -> list[Data]:
        """The watched links (those with an end on ``switch``; None: all)
        whose ends read do not all see carrier now, each with ``seen``
        ({end: "up"/"down"} of the ends read)."""
        links = [entry for entry in self.links
                 if switch is None or switch in (_switch(entry["a"]), _switch(entry["b"]))]
        ends = sorted({end for entry in links for end in (entry["a"], entry["b"])
                       if switch is None or _switch(end) == switch})
        seen = dict(self._carriers(ends))
        dead = []
        for entry in links:
            looked = {end: seen[end] for end in (entry["a"], entry["b"]) if end in seen}
            if any(value != "up" for value in looked.values()):
                dead.append(dict(entry, seen=looked))
        return dead

    def _carriers(self, ends: list[str]) -> list[tuple[str, str]]:
        """``[(end, carrier)]`` of the ends ``"switch:port"``: one read per
        switch (in parallel) when the driver has ``carriers``, else one
        ``carrier`` call per end."""
        by_switch: dict[str, list[str]] = {}
        for end in ends:
            by_switch.setdefault(end.rpartition(":")[0], []).append(end)
        batch = getattr(self.driver, "carriers", None)

        def one(switch: str) -> list[tuple[str, str]]:
            if batch is not None:
                ports = batch(switch)
                return [(end, ports.get(end.rpartition(":")[2], "down")) for end in by_switch[switch]]
            return [(end, self.driver.carrier(switch, end.rpartition(":")[2]))
                    for end in by_switch[switch]]

        return [item for part in _pool(one, list(by_switch)) for item in part]


def _switch(end: str) -> str:
    return end.rpartition(":")[0]


def cover(links: list[Data]) -> list[str]:
    """Switches that between them hold an end of every link of ``links``
    (greedy: the switch with the most links not yet covered first, ties by
    name). A cut shows on both ends (carrier lost, or one end down and the
    other without carrier), so one end read per link sees it; the watch
    reads one of these switches before each step that writes, in turn."""
    left = {entry["index"]: {_switch(entry["a"]), _switch(entry["b"])} for entry in links}
    chosen: list[str] = []
    while left:
        counts: dict[str, int] = {}
        for ends in left.values():
            for name in ends:
                counts[name] = counts.get(name, 0) + 1
        best = min(counts, key=lambda name: (-counts[name], name))
        chosen.append(best)
        left = {index: ends for index, ends in left.items() if best not in ends}
    return chosen


def _named(links: list[Data]) -> str:
    return ", ".join(entry["name"] for entry in links)


# ------------------------------------------------------------- reporting
def holdings(switches: Data) -> str:
    """Which switch holds which bank (VLANs of its entry) and classifies
    into which (its PVIDs), grouped: ``"banks A and B, PVIDs in B: sw1, sw2; ..."``."""
    groups: dict[str, list[str]] = {}
    for name, entry in switches.items():
        banks = sorted({bank_of(int(vid)) or "other" for vid in entry.get("vlans") or ()})
        pvids = sorted({bank_of(int(port["pvid"])) or "other"
                        for port in (entry.get("ports") or {}).values() if port.get("pvid")})
        plural = "s" if len(banks) > 1 else ""
        key = "bank%s %s, PVIDs in %s" % (plural, " and ".join(banks) or "none", " and ".join(pvids) or "none")
        groups.setdefault(key, []).append(name)
    return "; ".join("%s: %s" % (key, ", ".join(names)) for key, names in sorted(groups.items()))


def delivered_pairs(intent: Data, dead: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(delivered, not delivered)`` host pairs of ``intent`` (a full intent:
    switches, links, hosts) with the links named in ``dead`` down, by
    static entries (:meth:`..verify.dot1q.Dot1qFabric.walk_unicast`). Above
    :data:`ALL_PAIRS_UP_TO` hosts, one host per switch."""
    links = [dict(item, state="down") if "%s--%s" % (item["a"], item["b"]) in dead
             or "%s--%s" % (item["b"], item["a"]) in dead else item
             for item in intent.get("links") or ()]
    fabric = Dot1qFabric(dict(intent, links=links))
    hosts = sorted(intent.get("hosts") or {})
    if len(hosts) > ALL_PAIRS_UP_TO:
        first: dict[str, str] = {}
        for name in hosts:
            first.setdefault(intent["hosts"][name]["switch"], name)
        hosts = sorted(first.values())
    delivered: list[tuple[str, str]] = []
    lost: list[tuple[str, str]] = []
    for pair in itertools.permutations(hosts, 2):
        (lost if fabric.walk_unicast(*pair)["error"] else delivered).append(pair)
    return delivered, lost


def delivered_text(intent: Data, dead: list[str]) -> str:
    """One sentence: how many pairs the held ``intent`` delivers without the
    ``dead`` links, and the first of those it does not."""
    delivered, lost = delivered_pairs(intent, dead)
    total = len(delivered) + len(lost)
    text = "Without the dead link the state held delivers %d of %d host pairs (802.1Q simulation" % (
        len(delivered), total)
    if not lost:
        return text + "): all of them."
    shown = ", ".join("%s->%s" % pair for pair in lost[:NAMED_PAIRS])
    more = " and %d more" % (len(lost) - NAMED_PAIRS) if len(lost) > NAMED_PAIRS else ""
    return text + "); not delivered: %s%s." % (shown, more)


# -------------------------------------------------------------- going back
def rollback_steps(steps: list[Data], before: Data, done: int) -> list[Data]:
    """The steps that take a fabric standing after step ``done`` of
    ``steps`` back to ``before`` ({switch: entry}): each push undone in
    reverse order (its switches get their entry of the state before it,
    in parallel if the push was), the waits kept, and before an undo that
    removes a bank (the install's) a wait of the plan's longest, so the
    frames classified into that bank drain first.
    TransitionRunError when a drain was run (no proven way back)."""
    if any(step.get("kind") == "drain" for step in steps[:done]):
        raise TransitionRunError(
            "a drain step ran: the way back is not proven (old and new never coexisted); "
            "redeploy the routing in a maintenance window (deploy_routing.yml)")
    states = cumulative_states(before, steps)
    writes = {i for i in range(done) if steps[i].get("kind") == "push" and steps[i].get("switches")}
    wait_s = max([float(step.get("seconds", 0)) for step in steps if step.get("kind") == "wait"] or [1.0])
    back: list[Data] = []
    for i in range(done - 1, -1, -1):
        step = steps[i]
        if step.get("kind") == "wait":
            back.append({"kind": "wait", "name": "undo step %s: %s" % (step.get("index", i + 1), step.get("name")),
                         "seconds": float(step.get("seconds", 0))})
        elif i in writes:
            removes = any(set(states[i][name].get("vlans") or ()) < set(states[i + 1][name].get("vlans") or ())
                          for name in step["switches"])
            if removes and back and back[-1]["kind"] != "wait":
                back.append({"kind": "wait", "name": "frames of the bank going away drain",
                             "seconds": wait_s})
            back.append({"kind": "push", "name": "undo step %s: %s" % (step.get("index", i + 1), step.get("name")),
                         "switches": {name: states[i][name] for name in step["switches"]},
                         "parallel": bool(step.get("parallel"))})
    for number, step in enumerate(back, 1):
        step["index"] = number
    return back
