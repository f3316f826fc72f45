# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resident failover responder (issue 15 items 2-4; docs/failover.md,
"The resident responder").

Segment-based routing §2.3 detects a failure from the switches (SNMP traps
to a manager) and diverts the affected routes to precomputed backups. The
hand-run path (``link_failed.yml``) spends seconds before its first push:
Ansible's start, reading the settings, planning, opening a session per
switch, reading every switch. :class:`Responder` does all of that *before*
any failure and keeps it:

* **ready**: the switches are read once, the fabric must hold its base
  routing (in bank X); for every covered single link failure the move
  base -> backup is planned and proven now (:func:`.failover_run.plan_failover`),
  so a failure costs only the pushes; then the base is *armed*
  (:mod:`.failover_arming`: rows no base frame reads, filled with the
  backups' ports) and every move is put in proven parallel rounds from it
  (:mod:`.failover_rounds`); a restore arms it again, :meth:`Responder.disarm`
  writes the plain base back when the responder stops; a fabric that
  holds one of those failovers' backups instead is taken over (§2.3's
  backup manager: :func:`held_backup`, :meth:`Responder._resume`);
* **detection**: :meth:`Responder.observe` takes the carriers of every
  fabric port, switch by switch (one batched read per switch and poll, or a
  trap feed), and turns them into events: a link is down when either end
  has lost carrier and up again when both have it; a switch whose fabric
  ports all lost carrier, or whose read failed, has failed;
* **failover**: the pre-planned transition's urgent rounds run (each a
  parallel push whose every mix of old and new switches was simulated)
  and the pairs deliver again; the rest (the other flips, the drain wait,
  removing the old bank) runs in the background while the polling goes on
  (:meth:`Responder.settle` waits for it);
* **queueing**: events are handled one after the other; an event that
  arrives while one is handled waits, and is planned on the state the
  fabric holds then. A second link failure while on a backup: its backup
  is computed on the spot from the current routing
  (:func:`.failover.precompute_failover` against it: the "backup of the
  backup"); so is a switch failure while a link's backup holds (the
  switch, when back, is first written alone with its entry in the held
  routing: it kept the bank the fabric left); without a detour or a
  proven order, or for any failure while a switch's backup holds, nothing
  is pushed and the log says that only a halt-and-drain recovers;
* **restore**: when every failed link has carrier again, the move back to
  the base routing (planned with its proof; a carrier wait first);
* **switch failures**: pre-planned and pushed like the links, the failed
  switch never read or written; one without a proven plan is logged with
  its precomputed backup and not pushed.

A source-tree routing (the fixed assignment's trees) is failed over by
the planner's own backups (:func:`.failover_run.plan_failover_and_backup`:
the trees that crossed the link repaired); a second link failure repairs
the held trees under the base's turn order
(:func:`.failover_run.tree_backup_of_held`).

On switches that take a configuration line by line (``dell_os6``,
``huawei_vrp``: ``Responder(atomic=False)``) nothing is armed and no
rounds are made: each move runs as planned, every push reads the switch
first, and the carriers come from a poll of each switch's interface
status (:func:`status_reader`; such switches send no port status
message), each switch's calls one at a time (:class:`OneAtATime`).

Every event goes to ``log`` (one JSON line each in the action plugin) with
wall-clock times and the proof's summary (dependency graph acyclic, order
free, states and walks simulated). Check mode logs what would be done and
changes nothing.
"""

from __future__ import annotations

import copy
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import EtherclusterError
from ..fabric.topology import Topology
from ..routing.base import RoutingFunction
from ..platforms import ovs
from . import failover_arming as arming
from .failover import TREE_SWITCH_REASON, Backup, Failure, backup_from_changes, precompute_failover, resolve_failure
from .failover_rounds import in_rounds
from .failover_run import (FailoverRun, base_plan, failed_ports, frozen_failed, kept_up, leave_out, plan_failover,
                           plan_failover_and_backup, plan_restore, prove_recovered, read_ports_up, recovery_proof,
                           stored_entry, tree_backup_of_held, urgent_cut)
from .fabric_state import switch_state
from .transition_phases import Transition
from .transition_planner import SEARCH_BUDGET_PER_SWITCH, _other, _plan_from_routing, _Router, _transition, \
    _working_topology
from .transition_proof import TransitionError, _check_state, _check_window, _Proof
from .transition_run import OvsDriver, TransitionRunError, _pool, check_platforms, differing, holds, run_steps, \
    write_in_threads

Data = dict[str, Any]
# How many hold-downs a link seen down by one end only waits for its other end's answer. Both ends of a
# cut link answer within 0.05-0.3 s under the lab's probes; a switch that died with its management up
# is seen first by the neighbours that answer first, and with a late own answer and one late neighbour
# its links passed the hold-down as three link failures (benchmark, 2026-11-29: docs/failover.md, "A link's
# other end awaited"). A switch that lost power entirely fails its poll, which is acted on at once.
ONE_END_HOLDS = 5
PROOF_KEYS = ("acyclic", "order_free", "drain", "kept_turn_order", "rounds", "armed", "recovered_after_step", "states",
              "walks", "simulated_states", "dependency_edges", "notes")


# ------------------------------------------------------------ carriers
def carriers_script(bridge: str, expected: str = "", hold_s: float = 0.0, interval_s: float = 0.05) -> str:
    """One batched carrier read of a switch: ``ovs-ofctl dump-ports-desc``
    of its bridge, printed once. With ``hold_s`` it is a long poll: the
    answer comes as soon as the states differ from ``expected``
    (:func:`carrier_line` of the last answer), else after ``hold_s``.

    The wait is event-driven: an ``ovs-ofctl monitor`` connection gets the
    switch's asynchronous OFPT_PORT_STATUS message the moment a port
    changes (the OpenFlow counterpart of an SNMP linkDown trap; Open vSwitch
    sends asynchronous messages to a monitor only when it is given a miss
    length, ovs-ofctl(8); it prints them on its standard error, so that is
    what the script reads: reading its standard output, the first version
    never woke and every change waited for the hold). The monitor is
    connected before the ports are read (its control socket appears only
    after it opened the switch), so a change between the read and the wait
    is not missed. Waiting costs
    no CPU, where reading every ``interval_s`` spawned 20 ``ovs-ofctl`` a
    second on every switch. When the monitor cannot be started, the
    script falls back to reading every ``interval_s``."""
    read = "ovs-ofctl -O %s dump-ports-desc --no-names %s" % (ovs.OFP_VERSION, bridge)
    if hold_s <= 0:
        return read + "\n"
    want = expected.replace("'", "")
    rounds = max(1, int(hold_s / interval_s))
    condense = "printf '%s\\n' \"$out\" | grep -E '^ *[0-9]+\\(|LINK_DOWN|PORT_DOWN' | tr -d ' \\n'"
    return "\n".join([
        "want='%s'" % want,
        "d=$(mktemp -d) || exit 1",
        "m=",
        "trap '[ -n \"$m\" ] && kill $m 2>/dev/null; rm -rf \"$d\"' EXIT",
        "mkfifo \"$d/f\" || exit 1",
        # the monitor prints the switch's messages on its standard error
        "timeout %s ovs-ofctl monitor %s 128 --unixctl=\"$d/ctl\" 2>\"$d/f\" >/dev/null &" % (
            _seconds(hold_s + 1), bridge),
        "m=$!",
        "exec 3<\"$d/f\"",
        "i=0",
        "while [ ! -e \"$d/ctl\" ] && kill -0 $m 2>/dev/null && [ $i -lt 200 ]; do sleep 0.01; i=$((i+1)); done",
        "out=$(%s) || exit 1" % read,
        "now=$(%s)" % condense,
        "if [ \"$now\" = \"$want\" ] && [ -e \"$d/ctl\" ]; then",
        "  timeout %s grep -m 1 -q PORT_STATUS <&3" % _seconds(hold_s),
        "  out=$(%s) || exit 1" % read,
        "elif [ \"$now\" = \"$want\" ]; then",
        "  i=1",
        "  while [ \"$now\" = \"$want\" ] && [ $i -lt %d ]; do" % rounds,
        "    sleep %s" % interval_s,
        "    out=$(%s) || exit 1" % read,
        "    now=$(%s)" % condense,
        "    i=$((i+1))",
        "  done",
        "fi",
        "printf '%s\\n' \"$out\"",
        ""])


def poll_hold(hold_s: float, draw: Callable[[], float] = random.random) -> float:
    """The hold of one long poll: ``hold_s`` spread over 0.75-1.25 times
    itself. The polls start together (when the responder starts watching)
    and a poll that answers at its hold's end is renewed with a new SSH
    session; with one hold for all, every switch's session ended and
    started again in the same 0.3 s every ``hold_s``, and a failure landing
    then had its pushes compete with 16 session starts (measured in the
    lab's benchmark, whose cut fell on that moment)."""
    return hold_s * (0.75 + 0.5 * draw())


def _seconds(value: float) -> str:
    """A duration for timeout(1): whole milliseconds, at least one."""
    return "%.3f" % max(0.001, float(value))


def carrier_line(text: str) -> str:
    """The condensed form of a ``dump-ports-desc`` answer the long poll compares."""
    lines = [line for line in text.splitlines()
             if ("(" in line and line.strip()[:1].isdigit()) or "LINK_DOWN" in line or "PORT_DOWN" in line]
    return "".join(lines).replace(" ", "")


def parse_carriers(text: str) -> dict[str, str]:
    """``{port: "up" | "down"}`` from a ``dump-ports-desc`` answer (down: no
    carrier or the port shut)."""
    return {str(port): "down" if "down" in (entry["link"], entry["admin"]) else "up"
            for port, entry in ovs.parse_ports(text).items()}


class WatchDriver(OvsDriver):
    """The executor's OVS driver plus the batched carrier read."""

    def long_poll(self, switch: str, expected: str = "", hold_s: float = 0.0,
                  interval_s: float = 0.05) -> tuple[dict[str, str], str]:
        """``({port: carrier}, condensed answer)`` of ``switch``: one command
        (:func:`carriers_script`, a long poll when ``hold_s``)."""
        text = self._session(switch).run(carriers_script(self.bridge(switch), expected, hold_s, interval_s),
                                         "carrier poll", timeout=self.timeout + hold_s)
        return parse_carriers(text), carrier_line(text)


def fabric_ports(topology: Topology) -> dict[str, list[str]]:
    """``{switch: [its fabric ports]}`` (ports of switch-to-switch links)."""
    result: dict[str, list[str]] = {name: [] for name in topology.switch_names()}
    for link in topology.links:
        for end in (link.a, link.b):
            result[end.switch].append(str(end.port))
    return result


def link_status(topology: Topology, carriers: dict[str, dict[str, str] | None]) -> dict[int, str]:
    """``{link index: "up" | "down"}``: down when either end has no carrier
    (or its switch could not be read: ``None``). Links with an end on a
    switch missing from ``carriers`` are left out."""
    result = {}
    for link in topology.links:
        if link.a.switch not in carriers or link.b.switch not in carriers:
            continue
        values = [(carriers[end.switch] or {}).get(str(end.port), "down") for end in (link.a, link.b)]
        result[link.index] = "up" if values == ["up", "up"] else "down"
    return result


def failed_switches(topology: Topology, carriers: dict[str, dict[str, str] | None]) -> set[str]:
    """Switches that failed: read failed (None), every fabric port without
    carrier, or every link of it down as its neighbours see it (a dead
    switch's own answer may be stale or never come)."""
    ports = fabric_ports(topology)
    result = set()
    for name, seen in carriers.items():
        if seen is None or (ports.get(name) and all(seen.get(port, "down") == "down" for port in ports[name])):
            result.add(name)
    views: dict[str, list[str | None]] = {}    # per switch, each link as the far end sees it (None: unknown)
    for link in topology.links:
        for end, other in ((link.a, link.b), (link.b, link.a)):
            far = carriers.get(other.switch)
            views.setdefault(end.switch, []).append(None if far is None else far.get(str(other.port), "down"))
    result.update(name for name, seen in views.items()
                  if name in carriers and seen and all(value == "down" for value in seen))
    return result


def whole_switches_failed(topology: Topology, before: dict[str, dict[str, str] | None],
                          now: dict[str, dict[str, str] | None]) -> bool:
    """Whether all that changed from the poll answers ``before`` to ``now``
    is that whole switches failed (:func:`failed_switches` in ``now``, not
    in ``before``; every link whose status changed is one of theirs and
    went down). No later answer makes such a change something else: the
    failed switches' other links are theirs too. The watch then need not
    hold it until it settles, which a change that is, so far, links going
    down must be (the first links of a dying switch look like a link
    failure)."""
    dead_before, dead_now = failed_switches(topology, before), failed_switches(topology, now)
    failed = dead_now - dead_before
    if not failed or dead_before - dead_now:
        return False
    for index, value in _link_changes(topology, before, now).items():
        link = topology.links[index]
        if value != "down" or not {link.a.switch, link.b.switch} & failed:
            return False
    return True


def links_confirmed(topology: Topology, before: dict[str, dict[str, str] | None],
                    now: dict[str, dict[str, str] | None]) -> bool:
    """Whether all that changed from ``before`` to ``now`` is links going
    down that both ends answered: each end's own answer has the link's port
    without carrier and another fabric port with it (so neither end is a
    switch whose every link went down), and no switch failed. A dying
    switch can still look so when its own answer caught its ports going
    down one after the other; a switch that lost power does not answer at
    all, so its links are never confirmed by both ends."""
    down = _links_going_down(topology, before, now)
    return bool(down) and _both_ends_answered(topology, now, down)


def _links_going_down(topology: Topology, before: dict[str, dict[str, str] | None],
                      now: dict[str, dict[str, str] | None]) -> list[int]:
    """The links that went down from ``before`` to ``now`` when that is all
    that changed (no link came up, no switch failed or came back), else none."""
    if failed_switches(topology, now) != failed_switches(topology, before):
        return []
    changes = _link_changes(topology, before, now)
    return [] if "up" in changes.values() else sorted(changes)


def _both_ends_answered(topology: Topology, now: dict[str, dict[str, str] | None], links: Iterable[int]) -> bool:
    """Whether each end's own answer in ``now`` has its port of ``links``
    without carrier and another fabric port with it."""
    ports = fabric_ports(topology)
    for index in links:
        link = topology.links[index]
        for end in (link.a, link.b):
            seen = now.get(end.switch) or {}
            if seen.get(str(end.port)) != "down" or not any(
                    seen.get(port) == "up" for port in ports[end.switch] if port != str(end.port)):
                return False
    return True


def _link_changes(topology: Topology, before: dict[str, dict[str, str] | None],
                  now: dict[str, dict[str, str] | None]) -> dict[int, str]:
    """``{link index: its status in now}`` of every link whose status
    (:func:`link_status`) is not what it was in ``before``."""
    status_before = link_status(topology, before)
    return {index: value for index, value in link_status(topology, now).items() if status_before.get(index) != value}


def hold_needed(topology: Topology, before: dict[str, dict[str, str] | None] | None,
                now: dict[str, dict[str, str] | None], settle_s: float) -> float:
    """How long the change from ``before`` to ``now`` must hold still before
    it is acted on: nothing when it is whole switches failing
    (:func:`whole_switches_failed`), half the hold-down when it is links
    going down that both ends answered (:func:`links_confirmed`),
    :data:`ONE_END_HOLDS` hold-downs when it is links going down that an
    end has not answered yet (the other end's answer, when it comes, is a
    change judged anew), else the hold-down ``settle_s`` (the first
    answers, a return)."""
    if before is None:
        return settle_s
    if whole_switches_failed(topology, before, now):
        return 0.0
    down = _links_going_down(topology, before, now)
    if not down:
        return settle_s
    return settle_s / 2 if _both_ends_answered(topology, now, down) else settle_s * ONE_END_HOLDS


# ------------------------------------------------------------ planning
def _keep_up(topology: Topology, links: Iterable[int]) -> dict[str, set[str]]:
    """``{switch: ports}`` of ``links``: kept as configured (a dead cable is not shut)."""
    result: dict[str, set[str]] = {}
    for index in links:
        for end in (topology.links[index].a, topology.links[index].b):
            result.setdefault(end.switch, set()).add(str(end.port))
    return result


def held_plan(topology: Topology, options: Data, routing: Any, bank: str, down: Iterable[int]) -> Any:
    """The plan the fabric holds on ``routing`` in ``bank`` with ``down``'s ports kept up."""
    made = _plan_from_routing(_working_topology(topology), routing, bank, options)
    return kept_up(made, _keep_up(topology, down)) if down else made


def plan_move(topology: Topology, options: Data, before: Any, after: Any, bank: str, label: str,
              first: list[str], down: Iterable[int], restore: Iterable[int] = (), wait_s: float = 1.0,
              carrier_timeout_s: float = 30.0, failed: int | None = None,
              absent: Failure | None = None) -> Transition:
    """The proven move from plan ``before`` (bank ``bank``) to plan ``after``
    (the other bank): :func:`.failover_run.plan_failover`'s phase between any
    two routings the responder holds (a backup of a backup, a restore after
    several failures). ``restore``: links whose carrier is awaited first;
    ``failed``: the link that just failed (the proof simulates it as alive,
    as :mod:`.failover_run` does: frames sent into it are lost there);
    ``absent``: a switch failure, proven as :func:`.failover_run.plan_failover`
    proves one (its hosts neither send nor receive, the ports into it are
    dead, it is never written, every surviving pair delivers once the
    urgent steps ran). Raises TransitionError when no order is proven
    (then only a halt-and-drain, §2.3, recovers)."""
    started = time.perf_counter()
    work = _working_topology(topology)
    down = sorted(down)
    if restore:
        before = _with_links_up(before, topology, restore)
    proof = recovery_proof(work, absent) if absent is not None else _Proof(work, "failover", label)
    _check_state(proof, before.intent, "the fabric before %s" % label)
    router = _Router(options, True, label, topology.down_links())
    router.resolve(work)
    anchor = topology.links[failed if failed is not None else (down or sorted(restore) or [0])[0]]
    run = FailoverRun(proof, before.intent, bank, router, SEARCH_BUDGET_PER_SWITCH * len(topology.switches),
                      wait_s, False, False, first=first, failed=anchor)
    run.keep_up = _keep_up(topology, set(down) | set(restore))
    for index in sorted(restore):
        link = topology.links[index]
        run.ends = {"a": str(link.a), "b": str(link.b), "name": link.name}
        run.wait_carrier("wait for carrier on %s" % link.name, "a returning link is used once both ends see carrier",
                         carrier_timeout_s, 0.0, None)
    done = run.route_phase(work, before, after, label)
    transition = _transition(run, router, "failover", before, done, True, None, started)
    transition.link = {"a": "", "b": "", "name": label}
    if absent is not None:
        try:
            leave_out(transition, str(absent.switch))
        except EtherclusterError as exc:
            raise TransitionError(str(exc)) from None
        prove_recovered(work, absent, transition, [name for name in first if name != absent.switch])
    return transition


def _with_links_up(made: Any, topology: Topology, links: Iterable[int]) -> Any:
    """``made`` with ``links`` up in its intent: they have carrier again (the
    held routing does not use them yet)."""
    names = {topology.links[index].name for index in links}
    intent = dict(made.intent)
    intent["links"] = [dict(item, state="up") if "%s--%s" % (item["a"], item["b"]) in names else item
                       for item in made.intent["links"]]
    return _AfterPlan(intent, made.routing)


def proof_summary(transition: Transition) -> Data:
    """The proof's summary lines for the log."""
    return {key: transition.proof.get(key) for key in PROOF_KEYS if key in transition.proof}


def urgent_steps(transition: Transition, first: Iterable[str]) -> tuple[list[Data], list[Data]]:
    """``(urgent, tail)``: the steps that make every pair deliver again (the
    install and the flips of the switches in ``first``, or the proven
    rounds of :mod:`.failover_rounds`) and the rest. Flips are never merged
    into one push on the strength of the phase being order-free alone: that
    keeps the dependencies acyclic, not every frame delivered, in the mixes
    of old and new switches a parallel push makes."""
    cut = urgent_cut(transition, first)
    return list(transition.steps[:cut]), list(transition.steps[cut:])


# ------------------------------------------------------------ responder
class KnownStates:
    """A driver that remembers the switches' states: each switch is read
    once (when the responder gets ready), then its state is what was last
    written to it, so a push costs one round trip (the write), not two. A
    failed write forgets the switch (read again next time). The responder
    must be the only writer while it runs (stop it for a re-deploy).
    ``seen``: the carriers the long polls last answered, which a carrier
    wait takes when they say up."""

    def __init__(self, driver: Any, remember: bool = True) -> None:
        self.driver = driver
        self.states: dict[str, Data] = {}
        self.lock = threading.Lock()
        self.seen: dict[str, dict[str, str] | None] = {}
        # a CLI switch's write is the difference from its running configuration, which a
        # remembered state would not hold: those are read before every write
        self.remember = remember

    def read(self, switch: str) -> Data:
        """The remembered state, else the switch's (then remembered)."""
        if not self.remember:
            return self.driver.read(switch)
        known = self.states.get(switch)      # one dict lookup: atomic
        return copy.deepcopy(known if known is not None else self.states.setdefault(switch, self.driver.read(switch)))

    def remembered(self, switch: str) -> bool:
        """Whether :meth:`read` answers ``switch`` without reading it."""
        return switch in self.states

    def write(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        """Write, and remember the state written: the pipeline swapped whole, the ports' settings."""
        try:
            self.driver.write(switch, changes, desired, current)
        except Exception:
            self._forget(switch)
            raise
        self._remember(switch, desired, current)

    def write_many(self, writes: list[tuple[str, Any, Any, Data]]) -> dict[str, tuple[Exception | None, float]]:
        """Write several switches at once (the driver's ``write_many``, else
        a thread each) and remember each state written; a switch whose
        write failed is forgotten (read again next time)."""
        inner = getattr(self.driver, "write_many", None)
        results = inner(writes) if inner is not None else write_in_threads(self.driver, writes)
        for switch, _changes, desired, current in writes:
            if results[switch][0] is None:
                self._remember(switch, desired, current)
            else:
                self._forget(switch)
        return results

    def _forget(self, switch: str) -> None:
        with self.lock:
            self.states.pop(switch, None)

    def _remember(self, switch: str, desired: Any, current: Data) -> None:
        if not self.remember:
            return
        state = copy.deepcopy(current)
        state["flows"] = list(desired["flows"])
        for port, value in desired["ports"].items():
            if port in state.get("ports", {}):
                state["ports"][port]["admin"] = value["admin"]
                if value.get("speed_mbps") is not None:
                    state["ports"][port]["speed_mbps"] = value["speed_mbps"]
        with self.lock:
            self.states[switch] = state

    def carrier(self, switch: str, port: str) -> str:
        """"up" when the long polls' last answer of ``switch`` says so (a
        restore starts from that answer, held still for the settle time: a
        read of its own would cost a round trip per link end and say no
        more), else the switch's carrier read now."""
        if (self.seen.get(switch) or {}).get(str(port)) == "up":
            return "up"
        return str(self.driver.carrier(switch, port))


class Responder:
    """Detection and failover against live switches (module doc).

    ``driver``: the executor's driver (read, write, carrier);
    ``document``: the stored failover (failover.json) or None; ``log``
    receives one dict per event; ``wall`` gives wall-clock seconds."""

    def __init__(self, topology: Topology, options: Data, driver: Any, document: Data | None = None,
                 log: Callable[[Data], Any] | None = None, check_mode: bool = False, wait_s: float = 1.0,
                 max_parallel: int | None = None, wall: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] = time.sleep, atomic: bool = True) -> None:
        self.topology, self.options, self.document = topology, options, document
        # atomic: every switch takes a write whole (an OVS bundle), so the base can be armed and the
        # urgent pushes made proven rounds; a CLI switch takes its lines one by one, so its moves
        # run as planned (install, then one flip per switch, each port between two proven states)
        self.atomic = atomic
        self.driver = KnownStates(driver, remember=atomic)
        self.log_to, self.wall, self.sleep = log, wall, sleep
        self.check_mode, self.wait_s, self.max_parallel = check_mode, wait_s, max_parallel
        self.plans: dict[str, tuple[Transition, Any]] = {}   # failure: (move, backup routing)
        self.status: dict[int, str] = {}
        self.dead: set[str] = set()
        self.down: set[int] = set()        # links the held routing avoids
        self.gone: set[str] = set()        # failed switches the held routing avoids (never written)
        self.rejoin: dict[str, Data] = {}  # such a switch: its entry in the held routing, written when it is back
        self.queue: list[Data] = []
        self.events: list[Data] = []
        self.tail: threading.Thread | None = None
        self.tail_error: str | None = None
        self.bank = "A"
        self.base: Any = None
        self.held: Any = None               # the plan the fabric holds (None: the base in plans_bank)
        self.held_failure: Failure | None = None   # when it is one pre-planned failover
        self.restore_plan: Transition | None = None  # its restore, planned once it settled
        self.plans_bank = "A"                 # the bank the pre-planned moves start from
        self.rounds: dict[str, int] = {}      # failure: its urgent push rounds (proven)
        self.arming: Data | None = None       # the push that arms the base (None: not armed)

    def log(self, what: str, /, **fields: Any) -> Data:
        """Record one event ``what`` (wall-clock time ``at``) and pass it to the log."""
        entry = dict(fields, event=what, at=round(self.wall(), 3))
        self.events.append(entry)
        if self.log_to is not None:
            self.log_to(entry)
        return entry

    # -------------------------------------------------------------- ready
    def ready(self, preplan: Iterable[str] | None = None) -> Data:
        """Read every switch, check the fabric holds its base routing, plan
        the failover of every covered link and switch failure (or of
        ``preplan``: link names or ends, switch names), each with its urgent
        pushes in proven rounds where they can be (:mod:`.failover_rounds`).

        A fabric that holds one of those failovers' backups instead (a
        responder restarted while a failure was held: §2.3's manager taken
        over) is *resumed*: the failure is held as if this responder had
        failed it over, so its return runs the planned restore. Raises
        TransitionRunError when the fabric holds anything else."""
        started = time.perf_counter()
        check_platforms(self.topology, "failovers")
        preplan = None if preplan is None else list(preplan)     # planned from up to two bases
        states, unread = read_answering(self.driver, self.topology.switch_names())
        planned, skipped, armed, held = self._start(states, unread, preplan)
        arm_seconds = self._arm(armed) if armed and held is None else 0.0
        if armed and held is not None:      # written with the restore's background steps, as after any restore
            self.arming = self._arming(armed)
        for name, (failure, (transition, routing)) in planned.items():
            self.plans[name] = (self._in_rounds(failure, transition, armed), routing)
        self.plans_bank = self.bank
        if held is not None:
            self._resume(*held)
        return self.log("ready", bank=self.bank, planned=sorted(self.plans), not_planned=skipped,
                        rounds=dict(sorted(self.rounds.items())), armed=sorted(armed),
                        arm_seconds=round(arm_seconds, 3), seconds=round(time.perf_counter() - started, 3),
                        resumed=held[0].name if held is not None else None)

    def _start(self, states: dict[str, Data], unread: dict[str, Exception],
               preplan: list[str] | None) -> tuple[dict[str, Any], list[str], Data, Any]:
        """The base this responder starts from (``self.bank``, ``self.base``)
        and its planned failovers, ``(planned, not planned, armed base,
        held)``: ``held`` None on the base (plain or armed), else the
        planned failover whose backup the switches hold (:func:`held_backup`).
        ``unread``: the switches whose read failed; one may be a failed
        switch whose held failover is resumed, else the read's error is raised."""
        if len(unread) > 1 or not states:
            raise next(iter(unread.values()))
        gone = next(iter(unread), None)
        own = {name: sorted(switch_state(name, state)["pvid_banks"]) for name, state in states.items()}
        banks = sorted({bank for found in own.values() for bank in found})
        most = Counter(tuple(found) for found in own.values()).most_common(1)[0][0]
        lone = [name for name in own if tuple(own[name]) != most]     # in a bank the others are not in
        mixed = len(banks) != 1 and len(most) == 1 and len(lone) == 1 and len(own[lone[0]]) == 1
        if not set(banks) <= {"A", "B"} or (len(banks) != 1 and not mixed):
            raise TransitionRunError("the switches' PVIDs are in banks %s: the responder starts from a fabric "
                                     "on its base routing in one bank (finish the transition first)" % banks)
        left: list[str] = []
        if not mixed and gone is None:
            planned, skipped, armed = self._plan_all(banks[0], preplan)
            # a switch may still hold the armed base a responder stopped without writing back
            left = [name for name in differing(states, self.base.intent["switches"])
                    if name not in armed or not holds(states[name], armed[name], name)]
            if not left:
                return planned, skipped, armed, None
        # a held failover's backup, from the base in the other bank; or a held switch failover whose switch
        # came back: it alone still holds the base's bank (the move never writes it)
        start = own[lone[0]][0] if mixed else _other(banks[0])
        planned, skipped, armed = self._plan_all(start, preplan)
        held, closest = held_backup(self.topology, states, planned, armed, gone)
        if held is not None:
            return planned, skipped, armed, held
        if gone is not None:
            raise TransitionRunError("%s could not be read (%s), and the other switches hold no planned failover "
                                     "of it from the base in bank %s (%s): the responder starts from a fabric on "
                                     "its base routing, every switch answering" % (gone, unread[gone], start, closest))
        if mixed:
            raise TransitionRunError("the switches' PVIDs are in banks %s (%s alone in bank %s), and no planned "
                                     "switch failover's backup is what they hold (%s): the responder starts from a "
                                     "fabric on its base routing in one bank (finish the transition first)"
                                     % (banks, lone[0], start, closest))
        raise TransitionRunError("%s do(es) not hold the base routing of bank %s (plain or armed for these "
                                 "failovers), nor the backup of a planned failover from the base in bank %s (%s): "
                                 "deploy it (or finish the failover in progress with link_restored.yml) before "
                                 "starting the responder" % (", ".join(left), banks[0], start, closest))

    def _plan_all(self, bank: str, preplan: Iterable[str] | None) -> tuple[dict[str, Any], list[str], Data]:
        """Take the base routing in ``bank`` as this responder's base and
        plan its failovers: ``({name: (failure, (move, backup routing))},
        [not planned: why], armed base)``."""
        self.bank = bank
        self.base = base_plan(self.topology, self.options, bank)
        skipped = []
        planned = {}
        for failure in self._failures(preplan):
            try:
                planned[failure.name] = (failure, self._preplan(failure))
            except EtherclusterError as exc:
                skipped.append("%s: %s" % (failure.name, exc))
        moves = [transition for _failure, (transition, _routing) in planned.values()]
        return planned, skipped, {} if self.check_mode or not self.atomic else self._armed(moves)

    def _resume(self, failure: Failure, transition: Transition, routing: Any, states: dict[str, Data]) -> None:
        """Hold ``failure`` as :meth:`_run` leaves a pre-planned failover it
        ran (the fabric holds ``transition.after``, read as ``states``),
        with its restore planned: its links (or switch) count as down until
        a poll sees them back, which then runs the restore."""
        if self.driver.remember:        # the failed ports as the move keeps them (admin up), not as read
            self.driver.states.update(states)
        self.bank = transition.after["fabric"]["bank"]
        self.down = set(failure.links)
        self.status = {index: "down" for index in failure.links}
        if failure.switch is not None:
            self.gone, self.dead = {failure.switch}, {failure.switch}
        self.held = _AfterPlan(transition.after, routing)
        self.held_failure = failure
        self.restore_plan = self._restore(failure)

    def _armed(self, transitions: list[Transition]) -> Data:
        """The base's switches with continuation rows toward the planned
        backups (:mod:`.failover_arming`), proven: the armed base delivers
        as the base does, every flood dies out, and the push from the base
        to it is a window like any other (any switch armed or not). ``{}``
        when that fails (the plans then start from the plain base).

        A row's port may become a member of its VLAN only where every
        switch floods broadcasts on its tree (``broadcast_ports``): where a
        broadcast floods by VLAN membership, a wider VLAN would change the
        broadcasts of a move planned from the plain base (the fallback)."""
        base = self.base.intent
        afters = [transition.after["switches"] for transition in transitions]
        work = _working_topology(self.topology)
        trees = all(entry.get("broadcast_ports") is not None for entry in base["switches"].values())
        for widen in (True, False) if trees else (False,):
            armed = arming.armed(base["switches"], afters, widen)
            intent = dict(base, switches=dict(base["switches"], **armed))
            if not armed or not arming.storm_free(intent):
                continue
            try:
                _check_window(_Proof(work, "arming", "the base"), base, intent, "arming the base")
            except TransitionError:
                continue
            return armed
        return {}

    @staticmethod
    def _arming(armed: Data) -> Data:
        """The push that arms the base with ``armed`` ({switch: armed entry})."""
        return {"kind": "push", "parallel": True, "switches": armed,
                "name": "arm the base: continuation rows on %s" % ", ".join(armed),
                "why": "the rows a failover's mixes read and the base never fills (failover_arming)"}

    def _arm(self, armed: Data) -> float:
        """Write the armed base (one parallel push); returns its seconds."""
        started = time.perf_counter()
        self.arming = self._arming(armed)
        run_steps([self.arming], self.driver, max_parallel=self.max_parallel)
        return time.perf_counter() - started

    def disarm(self) -> Data | None:
        """Write the plain base back on the armed switches when the fabric
        holds the armed base (no failover held), so that it holds what was
        deployed again once the responder stops; None when there is nothing
        to write back."""
        self.settle()
        if self.arming is None or self.check_mode or self.held is not None or self.down or self.dead \
                or self.bank != self.plans_bank:
            return None
        plain = {name: self.base.intent["switches"][name] for name in self.arming["switches"]}
        started = time.perf_counter()
        run_steps([{"kind": "push", "parallel": True, "switches": plain, "name": "disarm: the plain base",
                    "why": "the responder stops"}], self.driver, max_parallel=self.max_parallel)
        self.arming = None
        return self.log("disarmed", switches=sorted(plain), seconds=round(time.perf_counter() - started, 3))

    def _failures(self, preplan: Iterable[str] | None) -> list[Failure]:
        """The link and switch failures to plan now."""
        if preplan is not None:
            return [resolve_failure(self.topology, switch=name) if name in self.topology.switches
                    else resolve_failure(self.topology, link=name) for name in preplan]
        return ([resolve_failure(self.topology, link=link.name) for link in self.topology.links
                 if link.index not in self.topology.down_links()]
                + [resolve_failure(self.topology, switch=name) for name in self.topology.switch_names()])

    def _preplan(self, failure: Failure) -> tuple[Transition, Any]:
        """The proven move base -> backup of ``failure`` and the backup routing."""
        entry = stored_entry(self.topology, self.options, self.document, failure)
        if self.base.routing.paths_form == "source_tree":
            # the trees that crossed the failure repaired (failover.tree_failover), computed and checked
            # against a stored entry's fingerprint by the planner itself
            return plan_failover_and_backup(self.topology, self.options, failure, self.bank, stored=entry,
                                            wait_s=self.wait_s)
        if entry is None:
            entry = precompute_failover(self.base.routing, [failure])["failures"][0]
        transition = plan_failover(self.topology, self.options, failure, self.bank, stored=entry, wait_s=self.wait_s)
        return transition, backup_from_changes(self.base.routing, entry)

    def _in_rounds(self, failure: Failure, transition: Transition, armed: Data) -> Transition:
        """``transition``'s urgent pushes in proven rounds, from the armed
        base when there is one, else from the plain base (on an armed fabric
        too: its windows are proven free of floods, so no frame reads a
        continuation row), else the planned one-switch-at-a-time flips
        (always, for switches that do not take a write whole)."""
        if not self.atomic:
            return transition
        for start in ([armed, None] if armed else [None]):
            try:
                made = in_rounds(self.topology, failure, transition, changing(transition), armed=start)
            except TransitionError:
                continue
            made.proof["armed"] = bool(start)
            self.rounds[failure.name] = made.proof["rounds"]
            return made
        return transition

    # ---------------------------------------------------------- detection
    def observe(self, carriers: dict[str, dict[str, str] | None]) -> list[Data]:
        """Turn one poll's carriers (``{switch: {port: carrier}}``, None for a
        switch that could not be read) into events, queued in order: switch
        failures and returns, then links down and up (a dead switch's own
        links are part of its event)."""
        found: list[Data] = []
        self.driver.seen = copy.deepcopy(carriers)
        dead = failed_switches(self.topology, carriers)
        for name in sorted(dead - self.dead, key=self.topology.switch_names().index):
            found.append({"kind": "switch_down", "name": name})
        back = {name for name in self.dead - dead if name in carriers}
        for name in sorted(back, key=self.topology.switch_names().index):
            found.append({"kind": "switch_up", "name": name})
        self.dead = (self.dead | dead) - back
        dead = dead | back   # a switch's own links come and go with it
        for index, value in sorted(link_status(self.topology, carriers).items()):
            before = self.status.get(index, "up")
            self.status[index] = value
            link = self.topology.links[index]
            if value == before or link.a.switch in dead or link.b.switch in dead:
                continue
            found.append({"kind": "link_down" if value == "down" else "link_up", "name": link.name, "link": index})
        for event in found:
            self.queue.append(self.log("detected", **event))
        return found

    # ----------------------------------------------------------- handling
    def handle(self) -> list[Data]:
        """Handle every queued event in order (the previous one's background
        steps finished first); returns the outcomes."""
        done = []
        while self.queue:
            event = self.queue.pop(0)
            self.settle()
            try:
                if event["kind"] == "link_down":
                    done.append(self._link_down(event))
                elif event["kind"] == "link_up":
                    done.append(self._link_up(event))
                else:
                    done.append(self._switch(event))
            except EtherclusterError as exc:
                done.append(self.log("failed", name=event["name"], kind=event["kind"], error=str(exc),
                                     detected=event["at"]))
        return done

    def settle(self) -> None:
        """Wait for the background steps of the last failover (drain wait, old bank removed)."""
        if self.tail is not None:
            self.tail.join()
            self.tail = None
        if self.tail_error:
            error, self.tail_error = self.tail_error, None
            raise TransitionRunError("the background steps of the last move failed: %s" % error)

    def _link_down(self, event: Data) -> Data:
        """A link lost carrier: its pre-planned failover from the base, or a
        backup of the held routing computed now (queued second failure)."""
        index = event["link"]
        if index in self.down:
            return self.log("ignored", name=event["name"], why="the held routing already avoids it")
        failure = Failure("link", event["name"], frozenset({index}))
        if self.gone:
            raise TransitionRunError("%s: switch %s is down and its backup holds: a second failure now is not "
                                     "planned; nothing pushed; only a halt-and-drain (§2.3) and a fresh plan "
                                     "recover" % (failure.name, ", ".join(sorted(self.gone))))
        if not self.down and event["name"] in self.plans and self.bank == self.plans_bank:
            (transition, routing), how = self.plans[event["name"]], "pre-planned"
            first = changing(transition)
            self.held_failure = failure
        else:
            transition, routing, first, how = self._backup_of_held(failure)
            self.held_failure = None
        return self._run(event, transition, first, how, self.down | {index}, routing)

    def _backup_of_held(self, failure: Failure) -> tuple[Transition, Any, list[str], str]:
        """The move from the held routing to its backup for ``failure``, planned now."""
        held = self.held if self.held is not None else self.base
        # the links the held routing avoids are failed too: no detour may take them
        both = Failure("link", failure.name, frozenset(failure.links | self.down))
        if held.routing.paths_form == "source_tree":
            # the held trees that cross the failure repaired, under the base's turn order
            entry, routing = tree_backup_of_held(self.topology, self.options, held.routing, both, self.base.routing)
        else:
            entry = precompute_failover(held.routing, [both])["failures"][0]
            routing = backup_from_changes(held.routing, entry) if entry["covered"] else None
        if routing is None:
            raise TransitionRunError("%s: no backup of the held routing (%s): nothing pushed; only a "
                                     "halt-and-drain (§2.3) and a fresh plan recover" % (failure.name, entry["reason"]))
        down = self.down | set(failure.links)
        try:
            after = held_plan(self.topology, self.options, routing, _other(self.bank), down)
            transition = plan_move(self.topology, self.options, held, after, self.bank, "failover for %s" % failure.name,
                                   list(entry["switches"]), down, wait_s=self.wait_s, failed=min(failure.links))
        except TransitionError as exc:
            raise TransitionRunError("%s: no proven order from the held routing (%s): nothing pushed; only a "
                                     "halt-and-drain (§2.3) and a fresh plan recover" % (failure.name, exc)) from None
        return (self._rounds_of(both, transition, list(entry["switches"])), routing, list(entry["switches"]),
                "planned now on the held routing (backup of the backup)" if self.down else
                "planned now on the base in bank %s (the pre-planned moves start from bank %s)" % (self.bank, self.plans_bank))

    def _switch_backup_of_held(self, failure: Failure) -> tuple[Transition, Any, list[str], Data]:
        """The move from the held routing (a link's backup) to its backup for
        the switch ``failure``, planned now as a pre-planned switch failover
        is (:func:`.failover_run.plan_failover`): the failed switch keeps
        what it holds and is never written; its ports are kept up. Also the
        failed switch's own entry in the new routing, written when it returns
        (:meth:`_rejoined`): what it keeps is the old bank's routing."""
        if self.base.intent["fabric"].get("assignment") != "renamed":
            raise TransitionRunError("switch %s: a switch failure is pushed only with the renamed assignment; "
                                     "nothing pushed" % failure.switch)
        held = self.held if self.held is not None else self.base
        # the links the held routing avoids are failed too: no detour may take them
        failure = Failure("switch", failure.name, frozenset(failure.links | self.down), failure.switch)
        entry = precompute_failover(held.routing, [failure])["failures"][0]
        if not entry["covered"]:
            raise TransitionRunError("switch %s: no backup of the held routing (%s): nothing pushed; only a "
                                     "halt-and-drain (§2.3) and a fresh plan recover" % (failure.switch, entry["reason"]))
        made = backup_from_changes(held.routing, entry)
        # planned with the failed switch's links configured, as the held routing (failover_run._base_and_backup)
        routing = RoutingFunction(made.topology, made.engine, made.next_hop, down=held.routing.down,
                                  options=made.options)
        down = self.down | set(failure.links)
        live = held_plan(self.topology, self.options, routing, _other(self.bank), down)
        after = frozen_failed(live, failure, held)
        first = [name for name in entry["switches"] if name != failure.switch]
        try:
            transition = plan_move(self.topology, self.options, held, after, self.bank,
                                   "failover for %s" % failure.name, first, down, wait_s=self.wait_s,
                                   failed=min(failure.links), absent=failure)
        except TransitionError as exc:
            raise TransitionRunError("switch %s: no proven order from the held routing (%s): nothing pushed; only "
                                     "a halt-and-drain (§2.3) and a fresh plan recover" % (failure.switch, exc)) from None
        return self._rounds_of(failure, transition, first), routing, first, live.intent["switches"][failure.switch]

    def _rounds_of(self, failure: Failure, transition: Transition, first: list[str],
                   restore: bool = False) -> Transition:
        """A move planned on the spot (or a restore) with its urgent flips in
        proven parallel rounds, as a pre-planned move's (:meth:`_in_rounds`,
        from the plain held state); else as planned, one switch at a time."""
        if not self.atomic:
            return transition
        try:
            return in_rounds(self.topology, failure, transition, first, restore=restore)
        except TransitionError:
            return transition

    def _link_up(self, event: Data) -> Data:
        """A link has carrier again: back to the base once every failed link is back."""
        index = event["link"]
        if index not in self.down:
            return self.log("ignored", name=event["name"], why="the held routing does not avoid it")
        still = sorted(i for i in self.down if self.status.get(i) == "down")
        if still:
            return self.log("waiting", name=event["name"], why="still down: %s; the held routing stays until "
                            "they are back" % ", ".join(self.topology.links[i].name for i in still))
        if self.restore_plan is not None and self.held_failure is not None:
            transition = self.restore_plan
        else:
            after = base_plan(self.topology, self.options, _other(self.bank))
            transition = plan_move(self.topology, self.options, self.held, after, self.bank,
                                   "restore after %s" % event["name"], [], set(), restore=self.down,
                                   wait_s=self.wait_s)
        self.held_failure, self.restore_plan = None, None
        return self._run(event, transition, self.topology.switch_names(), "restore", set(), None)

    def _switch(self, event: Data) -> Data:
        """A switch failed (every fabric port without carrier, or unreachable):
        its pre-planned failover (the switch itself is never written), else
        logged with its precomputed backup; or it came back: the restore."""
        held = self.held_failure
        if event["kind"] == "switch_up":
            if event["name"] in self.rejoin:
                return self._rejoined(event)
            if held is None or held.switch != event["name"]:
                # a dying switch can be seen first as one of its links failing, and then be refused as a
                # second failure: the held backup avoids that link, which came back with the switch
                returned = sorted(self.down & {channel.link for channel in self.topology.out_channels(event["name"])})
                if returned:
                    return self._link_up(dict(event, link=returned[0]))
                return self.log("noted", name=event["name"], kind=event["kind"], detected=event["at"],
                                why="the switch is back; nothing was pushed for its failure, so nothing is restored")
            transition = self.restore_plan or self._restore(held)
            self.held_failure, self.restore_plan = None, None
            return self._run(event, transition, self.topology.switch_names(), "restore", set(), None)
        failure = resolve_failure(self.topology, switch=event["name"])
        if not self.down and event["name"] in self.plans and self.bank == self.plans_bank:
            transition, routing = self.plans[event["name"]]
            self.held_failure = failure
            return self._run(event, transition, changing(transition), "pre-planned", set(failure.links), routing,
                             gone=failure.switch)
        if self.down:
            if self.gone:
                raise TransitionRunError("switch %s failed while switch %s is down and its backup holds: a second "
                                         "switch failure is not planned; nothing pushed; only a halt-and-drain "
                                         "(§2.3) and a fresh plan recover" % (event["name"], ", ".join(sorted(self.gone))))
            transition, routing, first, rejoin = self._switch_backup_of_held(failure)
            self.held_failure = None
            done = self._run(event, transition, first, "planned now on the held routing (backup of the backup)",
                             self.down | set(failure.links), routing, gone=failure.switch)
            if not self.check_mode:
                self.rejoin[event["name"]] = rejoin
            return done
        entry = stored_entry(self.topology, self.options, self.document, failure)
        if entry is None and self.base.routing.paths_form == "per_destination":
            entry = precompute_failover(self.base.routing, [failure])["failures"][0]
        elif entry is None:     # source trees: no switch failover, whether planned or not (the reason, not "see ready")
            entry = Backup(failure, False, TREE_SWITCH_REASON).to_data()
        backup = {key: entry[key] for key in ("covered", "reason", "switches", "pairs_affected", "pairs_disjoint",
                                              "pairs_lost")} if entry else {}
        return self.log("not_pushed", name=event["name"], kind=event["kind"], detected=event["at"], backup=backup,
                        why="no proven failover was planned for this switch (%s): nothing pushed; the pairs "
                            "crossing it are cut until it returns" % (backup.get("reason") or "see ready's not_planned"))

    def _rejoined(self, event: Data) -> Data:
        """A switch that failed while a link's backup held is back: it still
        holds the routing of the bank the fabric left, so it is written
        first with its entry in the held routing (one switch: the held
        routing sends no frame over its links, only its own hosts' frames
        cross it), then its links return as links do (:meth:`_link_up`:
        the base again once every failed link is back; the restore's proof
        starts from this state)."""
        name = event["name"]
        entry = self.rejoin[name]
        run_steps([{"index": 1, "kind": "push", "name": "write the returned %s as the held routing has it" % name,
                    "why": "it held the routing of the bank the fabric left when it failed", "parallel": False,
                    "switches": {name: entry}}], self.driver, max_parallel=self.max_parallel)
        del self.rejoin[name]          # only once written: a failed write is logged, the held state stays
        self.held = _AfterPlan(dict(self.held.intent, switches=dict(self.held.intent["switches"], **{name: entry})),
                               self.held.routing)
        self.gone.discard(name)
        self.log("rejoined", name=name, kind=event["kind"], detected=event["at"])
        returned = sorted(self.down & {channel.link for channel in self.topology.out_channels(name)})
        return self._link_up(dict(event, link=returned[0]))

    def _restore(self, failure: Failure) -> Transition:
        """The proven move back from ``failure``'s backup to the base, its
        install and flips in proven parallel rounds when they can be."""
        transition = plan_restore(self.topology, self.options, failure, self.bank,
                                  stored=stored_entry(self.topology, self.options, self.document, failure),
                                  wait_s=self.wait_s)
        return self._rounds_of(failure, transition, self.topology.switch_names(), restore=True)

    # ------------------------------------------------------------ running
    def _run(self, event: Data, transition: Transition, first: list[str], how: str, down: set[int],
             routing: Any, gone: str | None = None) -> Data:
        """Run the urgent steps now and the rest in the background; update
        the held state (``gone``: a switch that failed now; a restore, with
        nothing ``down``, brings every failed switch back)."""
        urgent, tail = urgent_steps(transition, first)
        proof = proof_summary(transition)
        if self.check_mode:
            return self.log("would_run", name=event["name"], kind=event["kind"], how=how, detected=event["at"],
                            urgent=[step["name"] for step in urgent], tail=[step["name"] for step in tail], proof=proof)
        started = self.wall()
        results = run_steps(urgent, self.driver, max_parallel=self.max_parallel)
        recovered = self.log("recovered" if down else "restored", name=event["name"], kind=event["kind"], how=how,
                             detected=event["at"], started=round(started, 3),
                             seconds_from_detection=round(self.wall() - event["at"], 3),
                             steps=[{key: step.get(key) for key in ("name", "seconds", "changed", "switch_seconds")}
                                    for step in results],
                             proof=proof)
        self.bank = transition.after["fabric"]["bank"]
        self.down = set(down)
        if not down:
            self.gone, self.rejoin = set(), {}
        elif gone:
            self.gone = self.gone | {gone}
        if down:
            self.held = _AfterPlan(transition.after, routing)
        elif self.bank == self.plans_bank:
            self.held = None                # the base the pre-planned moves start from
        else:
            # the base in the other bank (a restore after a backup of a backup): the next failure is
            # planned on the spot from what the switches hold, not from the pre-planned moves' bank
            self.held = _AfterPlan(transition.after, self.base.routing)
        if self.arming is not None and not down and self.bank == self.plans_bank:
            tail = tail + [self.arming]      # back on the base: armed again for the next failure
        self.tail = threading.Thread(target=self._run_tail, args=(event["name"], tail), daemon=True)
        self.tail.start()
        return recovered

    def _run_tail(self, name: str, tail: list[Data]) -> None:
        """The background steps (other flips, drain wait, old bank removed)."""
        try:
            results = run_steps(tail, self.driver, max_parallel=self.max_parallel)
            self.log("settled", name=name, steps=[{key: step.get(key) for key in ("name", "seconds")}
                                                  for step in results])
            if self.held_failure is not None:   # the likely next event: plan its restore now
                self.restore_plan = self._restore(self.held_failure)
        except EtherclusterError as exc:
            self.tail_error = "%s: %s" % (name, exc)
            self.log("failed", name=name, error=str(exc), background=True)


class _AfterPlan:
    """The plan a transition ends on (its routing and intent), as the next move's start."""

    def __init__(self, intent: Data, routing: Any) -> None:
        self.intent = intent
        self.routing = routing
        self.assignment = None


# ------------------------------------------------------------ the loop
Reader = Callable[[str, str], "tuple[dict[str, str], str]"]


class OneAtATime:
    """A driver whose calls to one switch wait for each other: on CLI
    switches the carrier polls and the pushes share each switch's one
    ``network_cli`` session, which serves one command at a time. Calls to
    different switches still run at once. Once closed, every call fails
    at once (a poll thread still waiting when the responder stops must
    not open a session again)."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.locks: dict[str, threading.Lock] = {}
        self.lock = threading.Lock()
        self.closed = False

    def _lock(self, switch: str) -> threading.Lock:
        with self.lock:
            if self.closed:
                raise EtherclusterError("%s: not read, the responder has stopped" % switch)
            return self.locks.setdefault(switch, threading.Lock())

    @property
    def retried(self) -> list[str]:
        """The driver's repeated writes."""
        return list(getattr(self.driver, "retried", []))

    def read(self, switch: str) -> Data:
        """As the driver, alone on the switch."""
        with self._lock(switch):
            return dict(self.driver.read(switch))

    def write(self, switch: str, changes: Any, desired: Any, current: Data) -> None:
        """As the driver, alone on the switch."""
        with self._lock(switch):
            self.driver.write(switch, changes, desired, current)

    def carrier(self, switch: str, port: str) -> str:
        """As the driver, alone on the switch."""
        with self._lock(switch):
            return str(self.driver.carrier(switch, port))

    def carriers(self, switch: str) -> dict[str, str]:
        """As the driver, alone on the switch."""
        with self._lock(switch):
            return dict(self.driver.carriers(switch))

    def close(self) -> None:
        """Close the driver once the calls under way have ended; later calls fail."""
        with self.lock:
            self.closed = True
            locks = list(self.locks.values())
        for lock in locks:
            lock.acquire()
        try:
            self.driver.close()
        finally:
            for lock in locks:
                lock.release()


class Wakeups:
    """One event per switch, set when the switch sends a ``linkDown`` or
    ``linkUp`` notification (:mod:`.snmp_traps`): its reader waits on it
    instead of sleeping, so the trap makes the read happen now and the
    poll interval is only the fallback. A trap that comes during a read
    makes the next read happen at once: none is missed."""

    def __init__(self, names: Iterable[str]) -> None:
        self.events = {name: threading.Event() for name in names}

    def trap(self, switch: str) -> None:
        """Wake ``switch``'s reader."""
        self.events[switch].set()

    def wait(self, switch: str, seconds: float) -> bool:
        """Wait up to ``seconds`` for a trap of ``switch``; whether one came."""
        woke = self.events[switch].wait(seconds)
        self.events[switch].clear()
        return woke


def status_reader(driver: Any, topology: Topology, interval_s: float,
                  sleep: Callable[[float], Any] = time.sleep, wake: Wakeups | None = None) -> Reader:
    """``reader(switch, expected)`` for :func:`watch` on switches that send
    the responder no port status message (``dell_os6``, ``huawei_vrp``): the
    first call reads at once, every later one after ``interval_s``, or as
    soon as the switch's trap wakes it (``wake``; the interval is then the
    fallback the issue asks for); one interface status read
    (``driver.carriers``), the fabric ports' carriers and their line."""
    ports = fabric_ports(topology)

    def read(switch: str, expected: str) -> tuple[dict[str, str], str]:
        if expected and wake is not None:
            wake.wait(switch, interval_s)
        elif expected:
            sleep(interval_s)
        found = driver.carriers(switch)
        carriers = {port: str(found.get(port, "down")) for port in ports[switch]}
        return carriers, ";".join("%s=%s" % item for item in sorted(carriers.items()))
    return read


def _poller(reader: Reader, switch: str, found: Any, stopped: threading.Event, retry_s: float) -> None:
    """One switch's long poll: each answer (or None when the read fails) goes to ``found``."""
    expected = ""
    while not stopped.is_set():
        try:
            carriers, expected = reader(switch, expected)
        except EtherclusterError:
            found.put((switch, None))
            expected = ""
            stopped.wait(retry_s)
            continue
        except Exception as exc:  # pylint: disable=broad-except  # a bug: the watch stops naming it
            found.put((switch, exc))
            return
        found.put((switch, carriers))


def _take_answers(found: queue.Queue, wait: float, carriers: dict[str, dict[str, str] | None]) -> None:
    """Wait up to ``wait`` seconds for a poll's answer, then put every answer
    queued into ``carriers``; a poll that broke stops the watch, naming it."""
    pending = []
    try:
        pending.append(found.get(timeout=wait))
    except queue.Empty:
        pass
    while not found.empty():
        pending.append(found.get_nowait())
    for switch, value in pending:
        if isinstance(value, Exception):
            raise TransitionRunError("%s: the carrier poll broke: %r" % (switch, value))
        carriers[switch] = value


def watch(responder: Responder, reader: Reader, stop: Callable[[int], bool], retry_s: float = 0.5,
          tick_s: float = 0.05, settle_s: float = 0.2, clock: Callable[[], float] = time.monotonic) -> int:
    """Poll every switch (one thread each, ``reader(switch, expected)``: a
    long poll returning ``({port: carrier}, answer)``), feed the responder
    and handle its events until ``stop(events handled)`` is true. Returns
    the number of events handled.

    The carriers are passed on once they have not changed for ``settle_s``
    (a hold-down, as a switch's carrier delay): the ports of a failed switch
    go down one after the other as its neighbours see them, and handled at
    once the first would be taken for a link failure. A change that is
    whole switches failing is passed on at once (nothing that comes later
    can make it a link failure), and links going down that both ends
    answered after half the hold-down (:func:`hold_needed`).

    The ``watching`` event is logged once every switch's poll has answered
    and the answers have settled: from then on a change is seen as it
    happens (before, a switch whose first answer has not come cannot be
    compared). Each first answer is an SSH session's start, seconds on a
    loaded machine, so a cut just after ``ready`` waited for them."""
    names = responder.topology.switch_names()
    found: queue.Queue = queue.Queue()
    stopped = threading.Event()
    threads = [threading.Thread(target=_poller, args=(reader, name, found, stopped, retry_s), daemon=True)
               for name in names]
    for thread in threads:
        thread.start()
    carriers: dict[str, dict[str, str] | None] = {}
    seen: dict[str, Any] | None = None
    observed: dict[str, Any] | None = None
    started = changed_at = clock()
    needed = settle_s
    handled = 0
    watching = False
    try:
        while not stop(handled):
            wait = tick_s
            if seen is not None and seen != observed:   # wake when the change has held long enough, not a tick later
                wait = min(tick_s, max(0.0, needed - (clock() - changed_at)))
            _take_answers(found, wait, carriers)
            if len(carriers) < len(names):
                continue
            if carriers != seen:
                seen, changed_at = copy.deepcopy(carriers), clock()
                needed = hold_needed(responder.topology, observed, seen, settle_s)
            if seen != observed and clock() - changed_at >= needed:
                responder.observe(seen)
                observed = seen
                if not watching:
                    watching = True
                    responder.log("watching", switches=len(names), seconds=round(clock() - started, 3))
                handled += len(responder.handle())
    finally:
        stopped.set()
        responder.settle()
    return handled


def held_backup(topology: Topology, states: dict[str, Data], planned: dict[str, Any], armed: Data,
                gone: str | None = None) -> tuple[tuple[Failure, Transition, Any, dict[str, Data]] | None, str]:
    """The planned failover whose backup every switch holds (``states``:
    the switches as read; ``planned``: ``{name: (failure, (move, backup
    routing))}``), as ``(failure, move, routing, states)``, or None when
    none fits; and, for the message then, the closest one and the switches
    that do not hold it. The failed links' ports are read as admin up, as
    the move keeps them (:func:`ports_up`). A failed switch that is back is
    compared too: the move never writes it, so it holds its base entry,
    plain or as ``armed`` (the armed base's entries) wrote it. ``gone``: a
    switch that could not be read; only its own failure can then fit."""
    closest: tuple[int, str] = (len(topology.switches) + 1, "no failover of %s is planned" % gone if gone else
                                "no failover is planned")
    for failure, (transition, routing) in planned.values():
        if gone is not None and failure.switch != gone:
            continue
        seen = ports_up(states, {switch: ports for switch, ports in failed_ports(topology, failure).items()
                                 if switch in states})
        left = differing(seen, {name: entry for name, entry in transition.after["switches"].items() if name in seen})
        switch = failure.switch
        if switch in left and switch in armed and holds(seen[switch], armed[switch], switch):
            left.remove(switch)
        if not left:
            return (failure, transition, routing, seen), ""
        closest = min(closest, (len(left), "the closest, %s's, is not held by %s" % (failure.name, ", ".join(left))))
    return None, closest[1]


def read_answering(driver: Any, names: list[str]) -> tuple[dict[str, Data], dict[str, Exception]]:
    """Every switch read in parallel: ``({switch: state}, {switch: the
    error of a read that failed})`` (a switch without power does not
    answer; the caller decides what that means)."""
    def one(name: str) -> tuple[Data | None, Exception | None]:
        try:
            return driver.read(name), None
        except EtherclusterError as exc:
            return None, exc
    answers = _pool(one, names)      # read_states' pool; each failure is an answer here, not raised
    return ({name: state for name, (state, _e) in zip(names, answers) if state is not None},
            {name: error for name, (_s, error) in zip(names, answers) if error is not None})


def ports_up(states: dict[str, Data], ports: dict[str, set[str]]) -> dict[str, Data]:
    """``states`` with ``ports`` (``{switch: ports}``, a failure's link
    ends) read as admin up: a cut cable -- in the lab a veth set down in
    its switch's namespace -- shows as a port down, but no move shuts it
    (as ``failover_run._FailedPortsUp`` reads them for link_failed.yml)."""
    seen = dict(states)
    for switch, names in ports.items():
        seen[switch] = read_ports_up(copy.deepcopy(states[switch]), names)
    return seen


def changing(transition: Transition) -> list[str]:
    """The switches whose entries a failover changes (a failed switch is not one of them)."""
    failure = transition.proof["failure"]
    return [name for name in failure["switches"] if name != failure.get("switch")]
