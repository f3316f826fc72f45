# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""deploy_routing.yml onto a live fabric (issue 14 item 4; docs/deploy.md,
"Re-deploying onto a live fabric"): what the switches hold decides how the
new intent goes on.

Every switch is read first (the state is read, never remembered; no side
file says what was deployed). Then, in this order:

* **fresh**: no switch holds a pipeline -> the plain push (one read, one
  write per switch), as before;
* **same**: the switches hold the intent already -> the plain push, which
  changes nothing;
* **held**: the switches hold the intent's routing in the *other* bank
  (what an earlier re-deploy left), or with the links a link transition
  turned off -> nothing to do; the playbook pushes that state (no change);
* **another routing**: the routing the switches hold is recognised by
  planning candidate settings (those given as hints -- the previous
  ``intent.json`` of the output directory, the role's
  ``switch_deploy_held_routing`` -- then every engine's defaults with the
  intent's assignment) in the bank the switches use and comparing the plan
  with what every switch holds: a hint is only a guess, the switches
  decide. The move is planned by :func:`.redeploy.plan_redeploy`
  (make-before-break through the other bank, every window simulated, one
  acyclic dependency graph) and run by the failover executor
  (:func:`.failover_run.execute`: read, resume where a stopped run left
  off, run the remaining steps, read back). A fabric stopped midway (both
  banks held) is recognised the same way, by the candidates' transitions
  (:func:`.transition_run.resume_index`);
* **drift**: the held routing is none of the candidates and fewer than
  half of the switches differ from the intent, the others holding it
  exactly -> the plain push puts it back on those (a hand change, as a
  deploy always undid); another routing differs on most switches;
* when no proven move exists (only a drain, or the held routing is none of
  the candidates) nothing is touched and the error names both routings and
  the pair or cycle found, unless a drain is allowed (``allow_drain``:
  frames are lost, the result says so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import EtherclusterError
from ..fabric.settings import intent_settings, transition_options
from ..fabric.topology import Topology
from ..routing import ENGINES
from . import failover_run
from .fabric_state import fabric_state, mixed_bank_message
from .redeploy import _describe, _settings, plan_redeploy
from .transition_phases import Transition
from .transition_planner import _Router, _working_topology
from .transition_proof import TransitionError
# TransitionRunError: the action catches redeploy_run.TransitionRunError
from .transition_run import TransitionRunError, _pool, differing  # pylint: disable=unused-import

Data = dict[str, Any]
DRAIN_VARIABLE = "switch_deploy_allow_drain"


class RedeployError(EtherclusterError):
    """A re-deploy refused or failed; says whether any switch was touched."""


class UnreachedSwitch(RedeployError):
    """A switch could not be read before the re-deploy: nothing was pushed.
    ``switch`` names it, the message is the connection's."""

    def __init__(self, switch: str, message: str) -> None:
        super().__init__(message)
        self.switch = switch


def read_every_switch(driver: Any, names: list[str]) -> Data:
    """``{switch: parsed state}``, read in parallel; a switch that cannot
    be read raises :class:`UnreachedSwitch` naming it (before any write)."""
    def read(name: str) -> Data:
        try:
            return driver.read(name)
        except EtherclusterError as exc:
            raise UnreachedSwitch(name, str(exc)) from None
    return dict(zip(names, _pool(read, names)))


def settings_of(intent: Data) -> Data:
    """The routing settings :func:`.redeploy.plan_redeploy` takes
    (``engine``, ``assignment``, ``engine_options``, plan keywords,
    ``mac_learning``) from an intent (what it was planned with)."""
    settings = intent_settings(intent)
    options = transition_options(settings)
    return dict(options["plan_options"], engine=options["routing"], assignment=options["assignment"],
                engine_options=options["engine_options"] or None,
                mac_learning=settings.get("mac_learning") or "static")


def candidates(wanted: Data, hints: Iterable[Any] = ()) -> list[Data]:
    """The routings the switches may hold, hints first, then every engine's
    defaults with the wanted assignment and plan keywords; duplicates and
    ``wanted`` itself left out. A hint is a settings mapping (``engine``
    at least)."""
    keywords = {key: value for key, value in wanted.items()
                if key not in ("engine", "engine_options", "mac_learning")}
    found: list[Data] = []
    for hint in list(hints) + [dict(keywords, engine=name) for name in ENGINES]:
        if not isinstance(hint, dict) or not hint.get("engine"):
            raise RedeployError("held routing hint %r: a mapping with at least 'engine' is needed" % (hint,))
        entry = dict(keywords, **hint)
        entry["engine_options"] = entry.get("engine_options") or None
        entry.pop("mac_learning", None)
        if entry != dict(wanted, mac_learning=None) and _key(entry) not in [_key(known) for known in found]:
            found.append(entry)
    return [entry for entry in found if _key(entry) != _key(wanted)]


def _key(settings: Data) -> str:
    """A comparable form of routing settings."""
    return repr(sorted((key, repr(value)) for key, value in settings.items()
                       if key != "mac_learning" and value is not None))


def planned_switches(topology: Topology, settings: Data, bank: str, down: Iterable[int]) -> Data:
    """``{switch: intent entry}`` of the routing ``settings`` in ``bank``
    with the links ``down`` down, as the transitions plan it (the routing
    keeps its base's turn order: what the link transitions leave)."""
    router = _Router(_settings("routing", settings), True, "(re-deploy)", topology.down_links())
    made = router.plan(_working_topology(topology), set(down), bank, "a routing the switches may hold")
    return dict(made.intent["switches"])


def planned_intent(topology: Topology, settings: Data, bank: str, down: Iterable[int]) -> Data:
    """The whole intent of :func:`planned_switches`."""
    router = _Router(_settings("routing", settings), True, "(re-deploy)", topology.down_links())
    return dict(router.plan(_working_topology(topology), set(down), bank, "the routing to deploy").intent)


def identify(topology: Topology, states: Data, options: list[Data], bank: str,
             down: Iterable[int]) -> Data | None:
    """The first of ``options`` whose plan in ``bank`` every switch holds,
    else None (an option that cannot be planned here is skipped)."""
    for settings in options:
        try:
            entries = planned_switches(topology, settings, bank, down)
        except EtherclusterError:
            continue
        if not differing(states, entries):
            return settings
    return None


class _Planner:
    """``planner(bank)`` for :func:`.failover_run.execute`, remembering the
    last transition planned (its end intent is what the switches hold after)."""

    def __init__(self, topology: Topology, held: Data, wanted: Data, down: list[int], wait_s: float,
                 allow_drain: bool) -> None:
        self.topology, self.held, self.wanted = topology, held, wanted
        self.down, self.wait_s, self.allow_drain = down, wait_s, allow_drain
        self.last: Transition | None = None
        self.by_bank: dict[str, Transition] = {}   # the executor may plan both banks before it chooses

    def __call__(self, bank: str) -> Transition:
        self.last = plan_redeploy(self.topology, self.held, self.wanted, current_bank=bank, down=self.down,
                                  wait_s=self.wait_s, allow_drain=self.allow_drain)
        self.by_bank[bank] = self.last
        return self.last

    def chosen(self, outcome: Data) -> Transition:
        """The transition the executor ran (or found done), by its first bank."""
        found = self.by_bank.get(outcome["banks"][0]) if outcome.get("banks") else None
        if found is None:    # execute plans before it runs or returns
            raise RedeployError("internal: the executor returned without planning")
        return found


def _outcome(mode: str, reason: str, **fields: Any) -> Data:
    """The plain-data result of :func:`redeploy` (``mode``: ``push`` -- the
    playbook pushes the intent as before --, ``held`` or ``moved`` -- the
    switches hold ``intent``, the playbook pushes that, changing nothing)."""
    result: Data = {"mode": mode, "reason": reason, "changed": False, "plan": [], "steps": [], "proof": {},
                    "held": None, "held_bank": None, "intent": None, "lossy": False}
    result.update(fields)
    return result


def refusal(held: Data, held_bank: str, wanted: Data, why: str) -> RedeployError:
    """The error of a re-deploy with no proven move: both routings, the
    obstruction the planner found, how to accept a drain."""
    why = why.replace("(allow_drain; playbooks: -e transition_allow_drain=true)", "(%s)" % DRAIN_VARIABLE)
    return RedeployError(
        "nothing pushed to any switch: the switches hold %s in bank %s, the intent is %s; no make-before-break "
        "move between them is proven: %s. Set %s: true to accept a drain (the frames hosts send during it "
        "are lost), or deploy a routing the planner can move to (docs/deploy.md, \"Re-deploying onto a live "
        "fabric\")" % (_describe(held), held_bank, _describe(wanted), why, DRAIN_VARIABLE))


def redeploy(topology: Topology, driver: Any, intent: Data, hints: Iterable[Any] = (), allow_drain: bool = False,
             check_mode: bool = False, log: Callable[[Data], Any] | None = None, max_parallel: int | None = None,
             wait_s: float = 1.0) -> Data:
    """Read every switch and put ``intent`` (fabric_design's) on the fabric:
    returns :func:`_outcome` (module doc: fresh, same, held, another
    routing). ``driver``: read/write/carrier per switch, as the link
    transitions'. Raises :class:`RedeployError` (nothing touched) when no
    proven move exists and ``allow_drain`` is False, TransitionRunError when
    a step fails (it names what is done; the same run resumes)."""
    names = topology.switch_names()
    states = read_every_switch(driver, names)
    state = fabric_state(topology, states)
    empty = [name for name in names if not state["switches"][name]["flows"]]
    if len(empty) == len(names):
        return _outcome("push", "fresh fabric: no switch holds a pipeline (plain push)")
    if not differing(states, intent["switches"]):
        return _outcome("push", "the switches hold this intent already (the push changes nothing)")
    if empty:
        return _outcome("push", "switch(es) %s hold no pipeline: an initial deploy that stopped midway; the plain "
                        "push completes it" % ", ".join(empty))
    wanted = settings_of(intent)
    down = list(state["down"])
    banks = sorted({bank for sw in state["switches"].values() for bank in sw["pvid_banks"] if bank in ("A", "B")})
    for bank in banks:
        try:
            held_now = planned_intent(topology, wanted, bank, down)
        except EtherclusterError:
            continue
        if not differing(states, held_now["switches"]):
            return _outcome("held", "the switches hold this routing already (bank %s%s): nothing to change" % (
                bank, ", links %s off" % ", ".join(state["down_links"]) if state["down_links"] else ""),
                intent=held_now, held=_describe(wanted), held_bank=bank)
    if wanted["mac_learning"] != "static":
        return _lossy(allow_drain, "the intent has mac_learning %s: a make-before-break re-deploy needs static MAC "
                      "entries (the new bank learns nothing until hosts send in it)" % wanted["mac_learning"])
    options = candidates(wanted, hints)
    if state["bank"] is not None:
        held = identify(topology, states, options, state["bank"], down)
        drifted = differing(states, intent["switches"])
        if held is None and len(drifted) * 2 < len(names):
            return _outcome("push", "switch(es) %s differ from the intent the other %d switches hold (changed by "
                            "hand?): the plain push puts the intent back on them" % (
                                ", ".join(drifted), len(names) - len(drifted)))
        if held is None:
            return _lossy(allow_drain, "the switches hold a routing in bank %s that is none of %s" % (
                state["bank"], "; ".join(_describe(option) for option in options)))
        planner = _Planner(topology, held, wanted, down, wait_s, allow_drain)
        try:
            planner(state["bank"])
        except TransitionError as exc:
            raise refusal(held, state["bank"], wanted, str(exc)) from None
    else:
        held, planner = _interrupted(topology, driver, options, wanted, down, wait_s, allow_drain, state)
    outcome = failover_run.execute(topology, driver, planner, check_mode=check_mode, log=log,
                                   max_parallel=max_parallel)
    chosen = planner.chosen(outcome)
    return _outcome("moved", "re-deploy %s -> %s: %s" % (_describe(held), _describe(wanted), outcome["reason"]),
                    **{key: value for key, value in outcome.items() if key != "reason"},
                    held=_describe(held), held_bank=chosen.banks[0], intent=chosen.after)


def _interrupted(topology: Topology, driver: Any, options: list[Data], wanted: Data, down: list[int],
                 wait_s: float, allow_drain: bool, state: Data) -> tuple[Data, _Planner]:
    """A fabric holding both banks: the candidate whose re-deploy to
    ``wanted`` passes through what the switches hold (a run stopped midway)."""
    for settings in options:
        planner = _Planner(topology, settings, wanted, down, wait_s, allow_drain)
        try:
            failover_run.execute(topology, driver, planner, check_mode=True)
        except EtherclusterError:
            continue
        return settings, planner
    raise RedeployError("nothing pushed to any switch: the switches hold both VLAN banks (%s), and no re-deploy "
                        "to %s from %s passes through that state; a link transition that stopped midway is "
                        "finished by running it again" % (mixed_bank_message(state["switches"]), _describe(wanted),
                                                          "; ".join(_describe(option) for option in options)))


def _lossy(allow_drain: bool, why: str) -> Data:
    """No make-before-break move: the plain push when a drain is allowed
    (it loses frames; said), else :class:`RedeployError`."""
    if not allow_drain:
        raise RedeployError("nothing pushed to any switch: %s. Set %s: true to push the intent over what the "
                            "switches hold (frames sent while they change are lost)" % (why, DRAIN_VARIABLE))
    return _outcome("push", "%s; %s: the plain push replaces it (NOT make-before-break: frames sent while the "
                    "switches change are LOST)" % (why, DRAIN_VARIABLE), lossy=True)


def unread(why: str) -> Data:
    """The result for a fabric the re-deploy cannot read (a platform
    without a driver): the plain push, as before, saying so."""
    return _outcome("push", "the switches cannot be read for a make-before-break re-deploy (%s): plain push, which "
                    "replaces another routing abruptly" % why.replace(" Nothing was done.", "").rstrip(". "))
