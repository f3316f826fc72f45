# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``selector`` mode of the scheduled power-save run (power_save.yml,
docs/power.md): the switch-tagged paper's §5.4.2 selector on the measured
traffic instead of the threshold rule.

1. The traffic matrix is estimated from the host ports' byte counters
   between the first and the last reading
   (:func:`.selection.traffic_from_host_counters`), in bytes per second.
2. :func:`.selection.greedy_selection` (or :func:`.selection.search_selection`)
   picks, from every link on at full speed, the links to turn off and the
   lower speeds, keeping every channel's utilisation at or under the
   all-links maximum. The routings it weighs are those the transitions push
   (:func:`.transition_planner.kept_order_router`).
3. The target is compared with the fabric as read: links to turn on or
   back up to speed come first, then the links off (in the selector's
   order), then the speeds down. Each action is kept only when the fabric
   after it still has its busiest channel at or under the all-links maximum
   (or, for an action that adds capacity, no busier than before); the
   others are deferred to the end and, when they still do not fit, vetoed.
   An off the ``can_turn_off`` veto refuses (a drain would lose frames) is
   vetoed too.
4. ``max_changes`` bounds the actions of one run; the rest are reported as
   ``deferred``. Watts (:class:`.model.LinkPowerModel`) and the busiest
   channel are reported before and after the proposed actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import EtherclusterError
from ..fabric.topology import Topology
from .model import LinkPowerModel
from .selection import (DEFAULT_SPEEDS, LinkSelectionProblem, SelectionError, greedy_selection,
                        search_selection, traffic_from_host_counters, traffic_matrix)

SELECTORS = ("greedy", "search")


def host_traffic(topology: Topology, readings: list[dict[str, Any]]) -> np.ndarray:
    """The traffic matrix (bytes per second between switches) estimated from
    the host ports' counters between the first and the last of ``readings``
    (``[{"at": s, "counters": {switch: {port: {"rx_bytes", "tx_bytes"}}}}]``)."""
    if len(readings) < 2:
        raise SelectionError("at least two counter readings are needed, got %d" % len(readings))
    first, last = readings[0], readings[-1]
    seconds = float(last["at"]) - float(first["at"])
    if seconds <= 0:
        raise SelectionError("the last reading is not later than the first")
    deltas: dict[str, dict[str, float]] = {}
    for host in topology.hosts.values():
        before = first["counters"].get(host.switch, {}).get(str(host.port))
        after = last["counters"].get(host.switch, {}).get(str(host.port))
        if before is None or after is None:
            continue
        deltas["%s:%s" % (host.switch, host.port)] = {
            key: max(0.0, float(after.get(key, 0)) - float(before.get(key, 0))) / seconds
            for key in ("rx_bytes", "tx_bytes")}
    return traffic_from_host_counters(topology, deltas)


class _Fabric:
    """A fabric state during the ordering: links down (besides the file's)
    and the speed of each link (index -> Mb/s)."""

    def __init__(self, down: set[int], speeds: dict[int, int]) -> None:
        self.down = set(down)
        self.speeds = dict(speeds)

    def after(self, action: dict[str, Any]) -> "_Fabric":
        """The state after ``action``."""
        nxt = _Fabric(self.down, self.speeds)
        index = action["index"]
        if action["action"] == "off":
            nxt.down.add(index)
        elif action["action"] == "on":
            nxt.down.discard(index)
        else:
            nxt.speeds[index] = action["speed_mbps"]
        return nxt


def _busiest(problem: LinkSelectionProblem, fabric: _Fabric) -> tuple[float | None, float, str]:
    """(max utilisation, max load in bytes/s, why not) of ``fabric``; the
    utilisation is None when it cannot be routed."""
    evaluation = problem.evaluate(fabric.down)
    if evaluation.loads is None:
        return None, 0.0, evaluation.reason
    capacity = np.repeat(np.array([fabric.speeds[link.index] for link in problem.topology.links],
                                  dtype=float), 2)
    utilisation = evaluation.loads * 8.0 / (1e6 * capacity)
    return float(utilisation.max()) if utilisation.size else 0.0, evaluation.max_load, ""


def _wanted(problem: LinkSelectionProblem, fabric: _Fabric, off: list[int],
            speeds: dict[int, int]) -> list[dict[str, Any]]:
    """The actions from ``fabric`` to the target (``off`` in order, lowered
    ``speeds``): on and speed-ups first, then offs, then speed-downs."""
    topology = problem.topology
    target = {i: speeds.get(i, topology.links[i].speed_mbps) for i in problem.candidates}
    raising = [{"action": "on", "index": i} for i in sorted(fabric.down) if i not in off]
    lowering: list[dict[str, Any]] = []
    for index in problem.candidates:
        now, want = fabric.speeds[index], target[index]
        if index in off or now == want:
            continue
        entry = {"action": "speed", "index": index, "speed_mbps": want}
        (raising if want > now else lowering).append(entry)
    offs = [{"action": "off", "index": i} for i in off if i not in fabric.down]
    return raising + offs + lowering


def _order(problem: LinkSelectionProblem, fabric: _Fabric, wanted: list[dict[str, Any]],
           can_turn_off: Callable[[int, set[int]], str | None] | None
           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept actions in order, vetoed actions with their reason): each kept
    action leaves the busiest channel at or under the all-links maximum
    (or, when it adds capacity, no busier than before)."""
    limit = problem.limit * 8.0 / 1e6
    kept: list[dict[str, Any]] = []
    vetoed: list[dict[str, Any]] = []
    queue, waiting = list(wanted), []  # type: list[dict[str, Any]], list[dict[str, Any]]
    now = _busiest(problem, fabric)[0]
    while queue:
        action = queue.pop(0)
        if action["action"] == "off" and can_turn_off is not None:
            why = can_turn_off(action["index"], set(fabric.down))
            if why:
                vetoed.append(dict(action, reason=why, by="transition"))
                continue
        nxt = fabric.after(action)
        util, _load, why = _busiest(problem, nxt)
        adds = action["action"] == "on" or (
            action["action"] == "speed" and action["speed_mbps"] > fabric.speeds[action["index"]])
        if util is not None and (problem.fits(util / 8.0 * 1e6) or (adds and now is not None and util <= now)):
            kept.append(action)
            fabric, now = nxt, util
            queue.extend(waiting)
            waiting = []
            continue
        action["why"] = why or ("the busiest channel would be at %.1f%% (all-links maximum %.1f%%)"
                                % (100 * (util or 0.0), 100 * limit))
        waiting.append(action)
    vetoed.extend(dict(action, reason=action.pop("why"), by="order") for action in waiting)
    return kept, vetoed


def _options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The selector mode's options over their defaults, checked."""
    values = {"selector": "greedy", "speeds": list(DEFAULT_SPEEDS), "max_changes": None,
              "engine": "segment", "engine_options": None, "profiles": None, "traffic": None}
    values.update({key: value for key, value in (options or {}).items() if value is not None})
    if values["selector"] not in SELECTORS:
        raise SelectionError("selector: must be one of %s, got %r" % (", ".join(SELECTORS), values["selector"]))
    limit = values["max_changes"]
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise SelectionError("max_changes: must be a whole number >= 1 (or null: all), got %r" % (limit,))
    return values


def _fabric_now(topology: Topology, state: dict[str, Any]) -> _Fabric:
    """The fabric as read (:func:`.fabric_state.fabric_state`)."""
    file_down = set(topology.down_links())
    names = {link.name: link.index for link in topology.links}
    down = {names[link["name"]] for link in state["links"] if link["admin"] == "down"} - file_down
    speeds = {link.index: link.speed_mbps for link in topology.links}
    speeds.update({names[name]: int(speed) for name, speed in state["speeds"].items() if name in names})
    return _Fabric(down, speeds)


def _selection(topology: Topology, traffic: np.ndarray, values: dict[str, Any]) -> tuple[Any, LinkSelectionProblem]:
    """The selector's result on the fabric with every link on at full speed,
    weighing the kept-order routings the transitions push."""
    from .transition_planner import kept_order_router  # planning code, loaded only when used
    router = kept_order_router(topology, values["engine"], values["engine_options"])
    problem = LinkSelectionProblem(topology, traffic, values["engine"], values["engine_options"],
                                   router=router)
    select = greedy_selection if values["selector"] == "greedy" else search_selection
    return select(topology, traffic, values["engine"], values["engine_options"],
                  speeds=values["speeds"], profiles=values["profiles"], problem=problem), problem


def _named(topology: Topology, action: dict[str, Any]) -> dict[str, Any]:
    """An action as the playbook takes it (``link`` ``"sw:port"``, no index)."""
    named = {"action": action["action"], "link": str(topology.links[action["index"]].a)}
    if action["action"] == "speed":
        named["speed_mbps"] = action["speed_mbps"]
    for key in ("reason", "by"):
        if key in action:
            named[key] = action[key]
    return named


def _label(action: dict[str, Any]) -> str:
    """``off sw0:3`` / ``speed 100 sw0:3`` for the log."""
    if action["action"] == "speed":
        return "speed %d %s" % (action["speed_mbps"], action["link"])
    return "%s %s" % (action["action"], action["link"])


def selector_decision(topology: Topology, state: dict[str, Any], readings: list[dict[str, Any]],
                      options: dict[str, Any] | None = None,
                      can_turn_off: Callable[[int, set[int]], str | None] | None = None) -> dict[str, Any]:
    """One decision in ``selector`` mode (module doc). ``options``:
    ``selector`` (greedy, search), ``speeds`` (allowed Mb/s, [] = on/off
    only), ``max_changes`` (None = every action), ``engine``,
    ``engine_options``, ``profiles``, ``traffic`` (None: estimated from
    the host ports' counters; else bytes/s as :func:`.selection.traffic_matrix`
    takes, e.g. summed from an MPI trace). Returns ``actions`` (ordered, each
    with its ``reason``), ``deferred`` (beyond ``max_changes``), ``vetoed``
    (``reason`` and ``by``: selector, transition or order), ``watts_before``
    / ``watts_after`` (after the actions) / ``watts_target`` (after every
    kept action), ``max_utilisation_before/after``, ``max_load_before/after``
    (bytes/s of the busiest channel), ``all_links_max_utilisation`` and
    ``log``."""
    values = _options(options)
    try:
        traffic = host_traffic(topology, readings) if values["traffic"] is None \
            else traffic_matrix(topology, values["traffic"])
        result, problem = _selection(topology, traffic, values)
    except EtherclusterError as exc:
        raise SelectionError("%s selector: %s" % (values["selector"], exc)) from None
    now = _fabric_now(topology, state)
    kept, vetoed = _order(problem, now, _wanted(problem, now, result.links_off, result.speeds), can_turn_off)
    vetoed = [dict(step, by="selector") for step in result.steps if not step["accepted"]] \
        + [_named(topology, action) for action in vetoed]
    limit = values["max_changes"] if values["max_changes"] is not None else len(kept)
    chosen, deferred = kept[:limit], kept[limit:]
    model = LinkPowerModel(topology, values["profiles"])
    after, target = now, now
    for number, action in enumerate(kept):
        target = target.after(action)
        if number < limit:
            after = target
    before_util, before_load = _busiest(problem, now)[:2]
    after_util, after_load = _busiest(problem, after)[:2]
    all_links = problem.limit * 8.0 / 1e6
    actions = [_named(topology, dict(action, reason="%s selector; the busiest channel stays within the "
                                     "all-links maximum %.1f%%" % (values["selector"], 100 * all_links)))
               for action in chosen]
    decision = {
        "mode": "selector", "selector": values["selector"], "actions": actions,
        "deferred": [_named(topology, action) for action in deferred], "vetoed": vetoed,
        "watts_before": round(model.total(now.down, now.speeds), 3),
        "watts_after": round(model.total(after.down, after.speeds), 3),
        "watts_target": round(model.total(target.down, target.speeds), 3),
        "all_links_max_utilisation": round(all_links, 6),
        "max_utilisation_before": round(before_util or 0.0, 6), "max_utilisation_after": round(after_util or 0.0, 6),
        "max_load_before": round(before_load, 3), "max_load_after": round(after_load, 3)}
    loads = problem.evaluate(now.down).loads
    decision["max_utilisation"] = decision["max_utilisation_before"]
    decision["busiest"] = str(topology.channels[int(np.argmax(loads))]) if loads is not None and loads.size else ""
    decision["log"] = _log_lines(decision)
    return decision


def _log_lines(decision: dict[str, Any]) -> list[str]:
    """The decision's reasoning, one line each."""
    saved = decision["watts_before"] - decision["watts_after"]
    lines = ["%s selector: all-links maximum utilisation %.1f%%; busiest channel %.1f%% -> %.1f%% "
             "(%.0f -> %.0f B/s); %.1f W -> %.1f W (%.1f W saved)"
             % (decision["selector"], 100 * decision["all_links_max_utilisation"],
                100 * decision["max_utilisation_before"], 100 * decision["max_utilisation_after"],
                decision["max_load_before"], decision["max_load_after"],
                decision["watts_before"], decision["watts_after"], saved),
             "actions: %s" % (", ".join(_label(a) for a in decision["actions"]) or "none")]
    if decision["deferred"]:
        lines.append("deferred (max_changes): %s" % ", ".join(_label(a) for a in decision["deferred"]))
    lines.extend("vetoed %s %s (%s): %s" % (v["action"], v["link"], v["by"], v["reason"])
                 for v in decision["vetoed"])
    return lines
