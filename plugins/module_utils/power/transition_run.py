# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a planned link transition (link off, on, speed change) against the
switches: the executor behind ``ethercluster.routing.link_transition``.

The plan comes from :func:`.transition.plan_transition` (docs/transitions.md:
make-before-break in the other VLAN bank, the Ethernet form of the Double
Scheme); this module only reads the switches and carries the steps out:

* ``push``: every switch named by the step must hold the full intent entry
  given for it; each is read, compared and, when it differs, written
  (:mod:`.platforms.ovs`: one read, at most one write, the pipeline swapped
  in one atomic bundle) — in parallel threads when the step says
  ``parallel``, else one after the other in the step's order;
* ``wait``: sleep the step's seconds (frames of the old bank drain);
* ``wait_carrier``: poll the carrier of both ends of the link until it is
  what the step wants, or fail naming the link after ``timeout_s``;
* ``drain``: a push (when it names switches) and a wait; it loses frames
  and its text says so.

**State is read, never remembered.** Before anything runs, every switch is
read (:mod:`.fabric_state`): the down links, the speeds and the bank come
from the switches. The held pipelines are then matched against the states
the plan goes through (before, after each push step, after): a fresh
transition matches *before*; a transition that stopped midway (a failed
push, an interrupted run) matches the state after its last completed push,
and the run resumes with the next step; a finished one matches *after*
and changes nothing. When nothing matches, the run refuses before touching
any switch and names the switches that hold something else.

The switches are reached through a *driver* with ``read(switch)``,
``write(switch, changes, desired, current)`` and ``carrier(switch,
port)``: :class:`OvsDriver` over SSH sessions for ``ovs`` switches,
:class:`.cli_driver.CliDriver` over network_cli for ``dell_os6`` and
``huawei_vrp`` (their show commands read into the same form,
:mod:`..platforms.cli_state`), :class:`.cli_driver.SwitchDrivers` for a
fabric that mixes them; tests use an in-memory one. ``linux_bridge`` has
none and is refused before any step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Protocol

from ..errors import EtherclusterError
from .fabric_state import (
    FabricStateError,
    counters_script,
    fabric_state,
    mixed_bank_message,
    parse_port_bytes,
)
from ..platforms import ovs
from ..platforms.cli_state import render_for
from .session_pool import SessionPool, answers
from ..fabric.topology import Link, Topology, topology_from_data

ACTIONS = ("off", "on", "speed")
RUNNABLE_PLATFORMS = ("ovs", "dell_os6", "huawei_vrp")
POLL_S = 0.2

# A switch's intent entry, a parsed switch state, a step: plain data.
Data = dict[str, Any]


class Driver(Protocol):
    """How the executor reaches the switches (:class:`OvsDriver`; tests use
    an in-memory one)."""

    def read(self, switch: str) -> Data:
        """The parsed state of ``switch`` (:func:`.platforms.ovs.parse_state`)."""

    def write(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        """Write ``changes`` (towards ``desired``) to ``switch``."""

    def carrier(self, switch: str, port: str) -> str:
        """``"up"`` or ``"down"``: the carrier of a port."""


class TransitionRunError(EtherclusterError):
    """A transition cannot start or stopped midway. ``steps`` holds the
    results of the steps run so far; the message names the failed step,
    what the switches hold and how to resume."""

    def __init__(self, message: str, steps: Iterable[Data] = ()) -> None:
        super().__init__(message)
        self.steps = list(steps)


# ------------------------------------------------------------------ driver
# what ovs-ofctl prints when ovs-vswitchd closed its OpenFlow connection under a
# command ("talking to unix:.../br0.mgmt (End of file)"), as an emulated switch's
# daemon did in two runs of the power scenario on 2 saturated cores
_DROPPED = ("(End of file)", "(Connection reset by peer)", "(Broken pipe)")


def dropped_openflow_connection(message: str) -> bool:
    """Whether a failed write's message says ovs-vswitchd dropped
    ovs-ofctl's OpenFlow connection (not a refused command, not an
    unreachable switch)."""
    return "ovs-ofctl: talking to " in message and any(text in message for text in _DROPPED)


class OvsDriver(SessionPool):
    """Reach OVS switches over SSH: ``open_session(switch)`` returns a
    :class:`.platforms.ssh.Session` (or anything with ``run(script, what,
    timeout)`` and ``close()``); sessions are opened once and kept."""

    def __init__(self, open_session: Callable[[str], Any], bridges: dict[str, str] | None = None,
                 timeout: float = 30.0) -> None:
        super().__init__(open_session)
        self.bridges = dict(bridges or {})
        self.timeout = timeout
        self.retried: list[str] = []  # writes repeated after a dropped OpenFlow connection

    def bridge(self, switch: str) -> str:
        """The OVS bridge of ``switch``."""
        return self.bridges.get(switch) or ovs.DEFAULT_BRIDGE

    def read(self, switch: str) -> Data:
        """Read and parse the switch's state (one SSH round trip)."""
        text = self._session(switch).run(ovs.read_script(self.bridge(switch)), "read")
        return ovs.parse_state(text)

    def write(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        """Write the changes (one SSH round trip, the pipeline swapped
        atomically). When ovs-vswitchd dropped the OpenFlow connection under
        a command (:func:`dropped_openflow_connection`), the switch is read
        again and what still differs is written once more: every command
        of the script sets a state, and the bundle either committed or did
        not, so the second write finishes exactly what the first began."""
        try:
            self._write_once(switch, changes, desired, current)
        except EtherclusterError as exc:
            self._finish_dropped(switch, desired, exc)

    def write_many(self, writes: list[tuple[str, Any, Any, Data]]) -> dict[str, tuple[Exception | None, float]]:
        """Write several switches at once (``writes``: ``(switch, changes,
        desired, current)`` as :meth:`write` takes them): where a switch's
        session can (a kept shell's ``begin``), its script is sent before
        any answer is read and one thread takes the answers as they come
        (:func:`.session_pool.answers`); the other switches are written
        in threads meanwhile. ``{switch: (error or None, seconds to its
        answer)}``; a dropped OpenFlow connection is finished as
        :meth:`write` finishes it."""
        clock = time.monotonic
        started = clock()
        pending: dict[str, Any] = {}
        results: dict[str, tuple[Exception | None, float]] = {}
        threaded = []
        try:
            for switch, changes, desired, current in writes:
                session = self._session(switch)
                if not hasattr(session, "begin"):
                    threaded.append((switch, changes, desired, current))
                    continue
                try:
                    pending[switch] = session.begin(ovs.write_script(changes, desired, current, self.bridge(switch)),
                                                    "write", timeout=self.timeout + float(current.get("gap") or 0))
                except EtherclusterError as exc:
                    results[switch] = (exc, round(clock() - started, 3))
        except BaseException:
            answers(pending)    # the writes sent still answer, and their sessions are free again
            raise
        with ThreadPoolExecutor(max_workers=max(1, len(threaded))) as pool:
            futures = {item[0]: pool.submit(_attempt, self.write, item) for item in threaded}
            for switch, (_out, error, seconds) in answers(pending).items():
                if error is not None and not isinstance(error, EtherclusterError):
                    raise error
                results[switch] = (error, seconds)
            for switch, future in futures.items():
                results[switch] = (future.result(), round(clock() - started, 3))
        for switch, (error, _seconds) in list(results.items()):
            if switch in pending and error is not None and dropped_openflow_connection(str(error)):
                desired = next(item[2] for item in writes if item[0] == switch)
                results[switch] = (_attempt(self._finish_dropped, (switch, desired, error)),
                                   round(clock() - started, 3))
        return results

    def _finish_dropped(self, switch: str, desired: Any, exc: EtherclusterError) -> None:
        """After a write failed with ``exc``: when ovs-vswitchd dropped the
        OpenFlow connection under it, read the switch again and write what
        still differs; else raise ``exc``."""
        if not dropped_openflow_connection(str(exc)):
            raise exc
        self.retried.append("%s: %s; read again and rewritten" % (switch, exc))
        current = self.read(switch)
        changes = ovs.compare(current, desired, switch)
        if changes.changed:
            self._write_once(switch, changes, desired, current)

    def _write_once(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        self._session(switch).run(ovs.write_script(changes, desired, current, self.bridge(switch)),
                                  "write", timeout=self.timeout + float(current.get("gap") or 0))

    def carrier(self, switch: str, port: str) -> str:
        """``"up"`` or ``"down"``: the carrier (``LINK_DOWN`` state) of the port."""
        text = self._session(switch).run(
            "ovs-ofctl -O %s dump-ports-desc --no-names %s %s\n"
            % (ovs.OFP_VERSION, self.bridge(switch), int(port)), "carrier poll")
        ports = ovs.parse_ports(text)
        entry = ports.get(int(port))
        if entry is None:
            raise TransitionRunError("%s: no OpenFlow port %s" % (switch, port))
        return "down" if entry["link"] == "down" or entry["admin"] == "down" else "up"

    def carriers(self, switch: str) -> dict[str, str]:
        """``{port: "up"/"down"}`` of every OpenFlow port of the switch (one
        ``dump-ports-desc``): what :class:`.transition_watch.CarrierWatch` polls."""
        text = self._session(switch).run(
            "ovs-ofctl -O %s dump-ports-desc --no-names %s\n" % (ovs.OFP_VERSION, self.bridge(switch)),
            "carrier poll")
        return {str(number): "down" if entry["link"] == "down" or entry["admin"] == "down" else "up"
                for number, entry in ovs.parse_ports(text).items()}

    def counters(self, switch: str) -> dict[str, dict[str, int]]:
        """``{port: {"rx_bytes", "tx_bytes", ...}}`` of the switch (dump-ports)."""
        text = self._session(switch).run(counters_script(self.bridge(switch)), "counters")
        return parse_port_bytes(text)


def _attempt(function: Callable[..., Any], item: tuple) -> EtherclusterError | None:
    """``function(*item)``; its EtherclusterError returned, None when it succeeded."""
    try:
        function(*item)
    except EtherclusterError as exc:
        return exc
    return None


def write_in_threads(driver: Driver, writes: list[tuple[str, Any, Any, Data]]
                     ) -> dict[str, tuple[Exception | None, float]]:
    """:meth:`OvsDriver.write_many` for a driver without it: each write in a thread of its own."""
    clock = time.monotonic
    started = clock()

    def one(item: tuple[str, Any, Any, Data]) -> tuple[Exception | None, float]:
        return _attempt(driver.write, item), round(clock() - started, 3)
    return dict(zip([item[0] for item in writes], _pool(one, writes)))


# ------------------------------------------------------------------ reading
def _pool(function: Callable[[Any], Any], items: Iterable[Any], parallel: bool = True,
          workers: int = 32) -> list[Any]:
    """``function`` over ``items``, in threads when ``parallel`` (results in order).

    In threads every item runs even when another fails; the first failure
    in ``items``' order is raised once all have finished. (``pool.map``
    would cancel the items still queued when it meets the failure, so
    which switches of a failed parallel push were written would depend on
    thread timing.)"""
    items = list(items)
    if not parallel or len(items) < 2 or workers <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items))) as pool:
        futures = [pool.submit(function, item) for item in items]
        wait(futures)
    return [future.result() for future in futures]


def read_states(driver: Driver, switches: list[str]) -> dict[str, Data]:
    """``{switch: parsed state}`` of every switch, read in parallel."""
    return dict(zip(switches, _pool(driver.read, switches)))


def read_counters(driver: Any, switches: list[str]) -> dict[str, dict[str, dict[str, int]]]:
    """``{switch: {port: counters}}`` of every switch, read in parallel."""
    return dict(zip(switches, _pool(driver.counters, switches)))


def holds(state: Data, entry: Data, switch: str) -> bool:
    """True when the parsed ``state`` already holds intent ``entry``."""
    return not ovs.compare(state, render_for(entry, switch), switch).changed


def differing(states: dict[str, Data], entries: dict[str, Data]) -> list[str]:
    """Switches of ``entries`` ({switch: intent entry}) whose state differs."""
    return [switch for switch, entry in entries.items()
            if not holds(states[switch], entry, switch)]


def cumulative_states(before: dict[str, Data], steps: list[Data]) -> list[dict[str, Data]]:
    """The fabric's intended state before the first step (index 0) and after
    each step (index i): ``[{switch: entry}, ...]``, ``len(steps) + 1`` long."""
    current = dict(before)
    result = [dict(current)]
    for step in steps:
        current.update(step.get("switches") or {})
        result.append(dict(current))
    return result


def resume_index(before: dict[str, Data], steps: list[Data], states: dict[str, Data]) -> int | None:
    """Where a transition stands on switches holding ``states``: the number
    of steps already done (0: none, ``len(steps)``: all), or None when the
    switches hold none of its states.

    Searched from the end: the fabric is *after step k* when every switch
    holds its entry of the state after push step k (the waits that follow
    run again: harmless), and *inside step k* when every switch holds its
    entry from before or from after push step k (a push that stopped
    midway: step k runs again, the switches already done are only read)."""
    states_after = cumulative_states(before, steps)
    judged: dict[tuple[str, int], bool] = {}

    def held(switch: str, entry: Data) -> bool:
        # a switch keeps the same entry object through every state until a step changes it:
        # render and compare each (switch, entry) once, not once per state (a CLI switch's render
        # is a template, a parse and a pipeline: a 4x4 torus' 20 steps took ~100 s under load)
        key = (switch, id(entry))
        if key not in judged:
            judged[key] = holds(states[switch], entry, switch)
        return judged[key]

    for index in range(len(steps), -1, -1):
        if index and (steps[index - 1]["kind"] not in ("push", "drain")
                      or not steps[index - 1].get("switches")):
            continue
        entries = states_after[index]
        new = [held(switch, entries[switch]) for switch in entries]
        if all(new):
            return index
        if index:
            previous = states_after[index - 1]
            old = [held(switch, previous[switch]) for switch in entries]
            # some switch already took step k, the others hold what they held before it
            if all(a or b for a, b in zip(new, old)) and not all(old):
                return index - 1
    return None


# ------------------------------------------------------------- the steps
def _push(step: Data, driver: Driver, states: dict[str, Any], max_parallel: int | None = None,
          seconds: dict[str, float] | None = None) -> list[str]:
    """Carry out a push step; return the switches written. A parallel step
    pushes at most ``max_parallel`` switches at once (None: all),
    through the driver's ``write_many`` when it has one
    (:func:`_push_together`). ``seconds`` gets each switch's time (read,
    compare, write; through ``write_many``: from the writes' start to the
    switch's answer)."""
    entries = step.get("switches") or {}
    changed: list[str] = []
    lock = threading.Lock()
    clock = time.monotonic

    def one(switch: str) -> None:
        started = clock()
        desired = render_for(entries[switch], switch)
        current = driver.read(switch)
        changes = ovs.compare(current, desired, switch)
        if changes.changed:
            driver.write(switch, changes, desired, current)
            with lock:
                changed.append(switch)
        states[switch] = None  # stale: read again when needed
        if seconds is not None:
            with lock:
                seconds[switch] = round(clock() - started, 3)

    if step.get("parallel") and len(entries) > 1 and hasattr(driver, "write_many"):
        size, names = max_parallel or len(entries), list(entries)
        for start in range(0, len(names), size):
            changed.extend(_push_together(driver, {name: entries[name] for name in names[start:start + size]},
                                          states, seconds))
    else:
        _pool(one, list(entries), parallel=bool(step.get("parallel")),
              workers=max_parallel or len(entries))
    order = list(entries)
    return sorted(changed, key=order.index)


def _push_together(driver: Any, entries: dict[str, Data], states: dict[str, Any],
                   seconds: dict[str, float] | None) -> list[str]:
    """One parallel push through the driver's ``write_many``: every switch
    read (in parallel; a driver that remembers the states answers at
    once), compared, then every write sent at once. The first error is
    raised once every write has answered, naming its switch."""
    switches = list(entries)
    remembered = getattr(driver, "remembered", None)
    if remembered is not None and all(remembered(switch) for switch in switches):
        currents = [driver.read(switch) for switch in switches]
    else:
        currents = _pool(driver.read, switches)
    writes = []
    for switch, current in zip(switches, currents):
        desired = render_for(entries[switch], switch)
        changes = ovs.compare(current, desired, switch)
        states[switch] = None  # stale: read again when needed
        if changes.changed:
            writes.append((switch, changes, desired, current))
        elif seconds is not None:
            seconds[switch] = 0.0
    results = driver.write_many(writes) if writes else {}
    if seconds is not None:
        seconds.update({switch: result[1] for switch, result in results.items()})
    failed = [(switch, results[switch][0]) for switch, *_rest in writes if results[switch][0] is not None]
    if failed:
        raise failed[0][1]
    return [switch for switch, *_rest in writes]


def _wait_carrier(step: Data, driver: Driver, sleep: Callable[[float], Any], clock: Callable[[], float],
                  poll_s: float) -> dict[str, str]:
    """Poll both ends of the step's link until their carrier is as wanted."""
    link = step["link"]
    ends = [link["a"], link["b"]] if isinstance(link, dict) else list(link)
    want = "up" if step.get("up", True) else "down"
    timeout = float(step.get("timeout_s", 30.0))
    if step.get("settle_s"):
        sleep(float(step["settle_s"]))  # the ports renegotiate: no carrier to see yet
    deadline = clock() + timeout
    while True:
        seen = {}
        for end in ends:
            switch, _colon, port = str(end).rpartition(":")
            seen[end] = driver.carrier(switch, port)
        if all(value == want for value in seen.values()):
            return seen
        if clock() >= deadline:
            raise TransitionRunError(
                "link %s: no carrier %s after %g s (%s)" % (
                    "--".join(ends), want, timeout,
                    ", ".join("%s %s" % item for item in seen.items())))
        sleep(poll_s)


def run_steps(steps: list[Data], driver: Driver, start: int = 0, log: Callable[[Data], Any] | None = None,
              sleep: Callable[[float], Any] = time.sleep, clock: Callable[[], float] = time.monotonic,
              wall: Callable[[], float] = time.time, poll_s: float = POLL_S,
              max_parallel: int | None = None, watch: Callable[[int], Any] | None = None) -> list[Data]:
    """Run ``steps[start:]`` in order; return one result per step run:
    ``{"index", "kind", "name", "changed": [switches], "seconds", "start",
    "end", "switch_seconds": {switch: seconds}}`` (wall-clock times, for
    attributing probe losses; each pushed switch's own time).
    ``max_parallel`` bounds how many switches of a parallel push are
    written at once (None: all). ``watch(position)`` runs before every
    step but the first and may stop the run by raising TransitionRunError
    (:class:`.transition_watch.CarrierWatch`: a link cut meanwhile).

    Raises :class:`TransitionRunError` at the first failing step (naming
    it) with the results so far in ``.steps``."""
    results: list[Data] = []
    states: dict[str, Any] = {}
    for position in range(start, len(steps)):
        if watch is not None and position > start:
            try:
                watch(position)
            except TransitionRunError as exc:
                raise TransitionRunError(str(exc), results)
        step = steps[position]
        kind = step.get("kind")
        name = step.get("name") or kind
        started, started_wall = clock(), wall()
        entry: Data = {"index": step.get("index", position + 1), "kind": kind, "name": name,
                       "changed": [], "start": round(started_wall, 3), "switch_seconds": {}}
        try:
            if kind == "push":
                entry["changed"] = _push(step, driver, states, max_parallel, entry["switch_seconds"])
            elif kind == "wait":
                sleep(float(step.get("seconds", 0)))
            elif kind == "wait_carrier":
                entry["carrier"] = _wait_carrier(step, driver, sleep, clock, poll_s)
            elif kind == "drain":
                if step.get("switches"):
                    entry["changed"] = _push(step, driver, states, max_parallel, entry["switch_seconds"])
                sleep(float(step.get("seconds", 0)))
            else:
                raise TransitionRunError("unknown step kind %r" % (kind,))
        except EtherclusterError as exc:
            entry.update(failed=True, error=str(exc), seconds=round(clock() - started, 3),
                         end=round(wall(), 3))
            results.append(entry)
            raise TransitionRunError(
                "step %s (%s: %s) failed: %s. Steps 1-%d are done; each switch holds a whole "
                "pipeline (old or new, swapped atomically). Fix the cause and re-run the same "
                "playbook: it reads the switches and resumes from this step."
                % (entry["index"], kind, name, exc, position), results)
        entry["seconds"] = round(clock() - started, 3)
        entry["end"] = round(wall(), 3)
        results.append(entry)
        if log is not None:
            log(entry)
    return results


# -------------------------------------------------------------- executor
def current_topology(topology: Topology, state: Data) -> Topology:
    """``topology`` with the speeds the switches run at (links whose ends
    agree); link states stay as the file says (the down links are passed
    to the planner as ``current_down``)."""
    data = topology.to_data()
    changed = False
    for entry, link in zip(data["links"], state["links"]):
        if link["speed_mbps"] is not None and link["speed_mbps"] != entry["speed_mbps"]:
            entry["speed_mbps"] = int(link["speed_mbps"])
            changed = True
    return topology_from_data(data, topology.source) if changed else topology


def check_platforms(topology: Topology, what: str = "link transitions") -> None:
    """Refuse switches on a platform the executor cannot run yet (``what``: the work refused)."""
    others = sorted("%s (%s)" % (sw.name, sw.platform) for sw in topology.switches.values()
                    if sw.platform not in RUNNABLE_PLATFORMS)
    if others:
        raise TransitionRunError(
            "%s run on platforms %s only; these switches are on another platform: %s "
            "(linux_bridge: no transition driver yet; its switches are deployed with "
            "deploy_routing.yml only). Nothing was done." % (what, ", ".join(RUNNABLE_PLATFORMS), ", ".join(others)))


def _candidates(topology: Topology, action: str, link_index: int, speed_mbps: int | None,
                state: Data) -> list[tuple[str, frozenset[int], int | None]]:
    """The transition inputs (``current_down``, ``current_bank``, speeds)
    the switches may be in the middle of, most likely first: the state as
    read, then the state before an earlier run of the same transition."""
    read_down = frozenset(state["down"])
    banks = [state["bank"]] if state["bank"] else []
    banks += [bank for bank in ("A", "B") if bank not in banks]
    downs = [read_down, read_down - {link_index}, read_down | {link_index}]
    link = state["links"][link_index]
    speeds: list[int | None] = [None]
    if action == "speed":
        seen = [end["speed_mbps"] for end in link["ends"].values()] + [link["topology_speed_mbps"]]
        speeds = []
        for value in seen:
            if value is not None and value != speed_mbps and value not in speeds:
                speeds.append(value)
    result: list[tuple[str, frozenset[int], int | None]] = []
    for bank in banks:
        for down in downs:
            if action == "off" and link_index in down:
                continue
            if action == "on" and link_index not in down:
                continue
            for speed in speeds:
                key = (bank, down, speed)
                if key not in result:
                    result.append(key)
    return result


def _with_speed(topology: Topology, link_index: int, speed: int | None) -> Topology:
    """``topology`` with the link running at ``speed`` (None: as it is)."""
    if speed is None or topology.links[link_index].speed_mbps == speed:
        return topology
    data = topology.to_data()
    data["links"][link_index]["speed_mbps"] = int(speed)
    return topology_from_data(data, topology.source)


def prepare(topology: Topology, action: str, link: Any, driver: Driver, planner: Callable[..., Any],
            settled_intent: Callable[[Topology, tuple[int, ...], str | None], Data],
            speed_mbps: int | None = None, planner_options: dict[str, Any] | None = None) -> Data:
    """Read the switches and find the transition to run and where it stands.

    ``planner(topology, action, link, current_down=..., current_bank=...,
    speed_mbps=..., **planner_options)`` plans a transition
    (:func:`.transition.plan_transition`); ``settled_intent(topology, down,
    bank)`` gives the intent of a settled fabric (:func:`.intent.plan`), to
    recognise a transition that has nothing to do.

    Returns ``{"state", "transition", "start", "done", "reason"}``:
    ``start`` is the number of steps already done; ``done`` True when the
    switches already hold the transition's end (or the link already is as
    asked) and nothing is to run."""
    target = _requested_link(topology, action, link, speed_mbps)
    switches = topology.switch_names()
    states = read_states(driver, switches)
    try:
        state = fabric_state(topology, states)
    except FabricStateError as exc:
        raise TransitionRunError(str(exc))
    options = dict(planner_options or {})
    base = current_topology(topology, state)
    settled = _settled_as_asked(action, target, speed_mbps, state, states, base, settled_intent)
    if settled is not None:
        return settled
    empty = [name for name, sw in state["switches"].items() if not sw["flows"]]
    if empty:
        raise TransitionRunError(
            "switch(es) %s hold no pipeline: deploy the routing first (deploy_routing.yml); "
            "nothing was done" % ", ".join(empty))
    return _find_transition(topology, action, target, speed_mbps, planner, options, state, states,
                            base)


def _requested_link(topology: Topology, action: str, link: Any, speed_mbps: int | None) -> Link:
    """Check the request before any switch is read; the link it names."""
    if action not in ACTIONS:
        raise TransitionRunError("action: must be one of %s, got %r" % (", ".join(ACTIONS),
                                                                        action))
    check_platforms(topology)
    if action == "speed" and speed_mbps is None:
        raise TransitionRunError("speed_mbps: a speed change needs the new speed (Mb/s)")
    if isinstance(link, str) and link.strip().isdigit():
        link = int(link)  # a link index given as text (a playbook variable)
    try:
        return topology.link(link)
    except EtherclusterError as exc:
        raise TransitionRunError("link: %s" % exc)


def _settled_as_asked(action: str, target: Link, speed_mbps: int | None, state: Data,
                      states: dict[str, Data], base: Topology,
                      settled_intent: Callable[[Topology, tuple[int, ...], str | None], Data]) -> Data | None:
    """:func:`prepare`'s answer when the fabric is settled, the link already
    as asked and the switches hold the routing planned for this state
    (nothing to do); None otherwise (else: an interrupted run)."""
    link_now = state["links"][target.index]
    already = (action == "off" and link_now["admin"] == "down") or \
        (action == "on" and link_now["admin"] == "up") or \
        (action == "speed" and link_now["speed_mbps"] == speed_mbps)
    if not (state["settled"] and already):
        return None
    entries = settled_intent(base, tuple(sorted(state["down"])), state["bank"])["switches"]
    if differing(states, entries):
        return None
    return {"state": state, "transition": None, "start": 0, "done": True,
            "reason": "link %s is already %s; the switches hold the routing planned "
                      "for this state (bank %s): nothing to do" % (
                          target.name, {"off": "down", "on": "up"}.get(
                              action, "at %s Mb/s" % speed_mbps), state["bank"])}


def _find_transition(topology: Topology, action: str, target: Link, speed_mbps: int | None,
                     planner: Callable[..., Any], options: dict[str, Any], state: Data,
                     states: dict[str, Data], base: Topology) -> Data:
    """The first candidate transition (:func:`_candidates`) whose states the
    switches hold, and how far it got; TransitionRunError when none."""
    link_now = state["links"][target.index]
    tried = []
    for bank, down, speed in _candidates(topology, action, target.index, speed_mbps, state):
        candidate = _with_speed(base, target.index, speed)
        try:
            transition = planner(candidate, action, target.index,
                                 current_down=tuple(sorted(down)), current_bank=bank,
                                 speed_mbps=speed_mbps, **options)
        except EtherclusterError as exc:
            tried.append("bank %s, down %s: %s" % (bank, _names(topology, down), exc))
            if bank == state["bank"] and down == frozenset(state["down"]) and speed in (
                    None, link_now["speed_mbps"]) and state["settled"]:
                # the fresh transition itself is refused: say why, plainly
                raise TransitionRunError(str(exc))
            continue
        start = resume_index(transition.before["switches"], transition.steps, states)
        if start is None:
            tried.append("bank %s, down %s%s: the switches hold none of its states" % (
                bank, _names(topology, down), "" if speed is None else ", from %s Mb/s" % speed))
            continue
        done = start == len(transition.steps)
        reason = ("the switches already hold the end of this transition: nothing to do" if done
                  else "fresh transition" if start == 0
                  else "resuming after step %d of %d (an earlier run stopped there)"
                  % (start, len(transition.steps)))
        return {"state": state, "transition": transition, "start": start, "done": done,
                "reason": reason}
    raise _nothing_matches(state, tried)


def _nothing_matches(state: Data, tried: list[str]) -> TransitionRunError:
    """The refusal when the switches hold no state of any candidate transition."""
    held = mixed_bank_message(state["switches"]) if len(
        {b for sw in state["switches"].values() for b in sw["banks"] + sw["pvid_banks"]}) > 1 \
        else "bank %s, down links %s" % (state["bank"], ", ".join(state["down_links"]) or "none")
    return TransitionRunError(
        "the switches hold neither the routing planned for their state nor a state of this "
        "transition (%s); nothing was done. Tried: %s. If another transition was interrupted, "
        "re-run that one; else redeploy the routing in a maintenance window (deploy_routing.yml "
        "with -e bank=... -e down_links=...)." % (held, "; ".join(tried) or "nothing"))


def _names(topology: Topology, down: Iterable[int]) -> str:
    """The names of the links ``down``, for messages."""
    return "[%s]" % ", ".join(topology.links[index].name for index in sorted(down))


def step_lines(steps: list[Data]) -> list[str]:
    """One line per step, for check mode and logs (when the planner's
    ``text()`` is not at hand)."""
    lines = []
    for position, step in enumerate(steps, 1):
        kind = step.get("kind")
        what: Any = step.get("name") or kind
        if kind in ("push", "drain") and step.get("switches"):
            what += " [%s%s]" % ("parallel: " if step.get("parallel") else "in order: ",
                                 ", ".join(step["switches"]))
        elif kind in ("wait", "drain"):
            what += " (%g s)" % float(step.get("seconds", 0))
        elif kind == "wait_carrier":
            link = step["link"]
            ends = [link["a"], link["b"]] if isinstance(link, dict) else list(link)
            what += " (%s carrier %s, timeout %g s)" % (
                "--".join(ends), "up" if step.get("up", True) else "down",
                float(step.get("timeout_s", 30)))
        lines.append("%d. %s: %s" % (step.get("index", position), kind, what))
    return lines


def execute(topology: Topology, action: str, link: Any, driver: Driver, planner: Callable[..., Any],
            settled_intent: Callable[[Topology, tuple[int, ...], str | None], Data],
            speed_mbps: int | None = None, planner_options: dict[str, Any] | None = None,
            check_mode: bool = False, log: Callable[[Data], Any] | None = None,
            sleep: Callable[[float], Any] = time.sleep, clock: Callable[[], float] = time.monotonic,
            wall: Callable[[], float] = time.time, poll_s: float = POLL_S,
            max_parallel: int | None = None) -> Data:
    """Read the switches, plan (or find the interrupted) transition and run
    its remaining steps; in check mode plan only and change nothing.

    Returns plain data: ``changed``, ``reason``, ``bank_before``,
    ``down_before``, ``plan`` (the step list as text), ``steps_planned``,
    ``resumed_after`` (steps already done), ``steps`` (per step run:
    switches changed, seconds, wall-clock start and end), ``proof`` (the
    planner's numbers), ``start``/``end`` (wall clock) and ``seconds``.
    Raises :class:`TransitionRunError` (naming the failed step, what is done
    and how to resume) when a step fails."""
    started, started_wall = clock(), wall()
    found = prepare(topology, action, link, driver, planner, settled_intent,
                    speed_mbps=speed_mbps, planner_options=planner_options)
    state = found["state"]
    transition = found["transition"]
    result: Data = {"changed": False, "reason": found["reason"], "bank_before": state["bank"],
                    "down_before": state["down_links"], "plan": [], "steps_planned": 0,
                    "resumed_after": found["start"], "steps": [], "proof": {}}
    if transition is not None:
        steps = transition.steps
        text = transition.text() if hasattr(transition, "text") else None
        result["plan"] = text.splitlines() if isinstance(text, str) else step_lines(steps)
        result["steps_planned"] = len(steps)
        result["proof"] = getattr(transition, "proof", {}) or {}
        result["banks"] = list(getattr(transition, "banks", []) or [])
        result["bank_after"] = (transition.after.get("fabric") or {}).get("bank")
        if not found["done"]:
            result["changed"] = True
            # imported here: it imports this module (a link cut meanwhile, issue 18)
            from .transition_watch import CarrierWatch  # pylint: disable=import-outside-toplevel
            target = _requested_link(topology, action, link, speed_mbps)
            watch = CarrierWatch(topology, transition, state, driver, target.index,
                                 "the transition (%s %s)" % (action, target.name))

            def run(todo: list[Data], start: int = 0, between: Any = None) -> list[Data]:
                return run_steps(todo, driver, start=start, log=log, sleep=sleep, clock=clock, wall=wall,
                                 poll_s=poll_s, max_parallel=max_parallel, watch=between)

            watch.before_run(found["start"], check_mode, run)
            if not check_mode:
                result["steps"] = run(steps, found["start"], watch.between)
                after = read_states(driver, topology.switch_names())
                left = differing(after, transition.after["switches"])
                if left:
                    raise TransitionRunError(
                        "every step ran but %s do(es) not hold the planned end state; re-run the "
                        "same playbook" % ", ".join(left), result["steps"])
    result["seconds"] = round(clock() - started, 3)
    result["start"] = round(started_wall, 3)
    result["end"] = round(wall(), 3)
    return result
