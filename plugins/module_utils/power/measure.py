# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measured channel utilisation for the scheduled power-save run
(playbooks/power_save.yml, docs/power_playbooks.md).

The switches' per-port byte counters are read several times, ``interval``
seconds apart (:mod:`.fabric_state`: ``ovs-ofctl dump-ports`` in the lab;
IF-MIB ``ifHCOutOctets`` over SNMP on real switches). The bytes a port
*sent* between two readings are the load of the channel leaving it
(:func:`.link_selection.channel_loads_from_counters`), divided by the
link's capacity at the speed it runs now (read from the switches) over the
time between the readings. Each pair of consecutive readings is one sample;
:func:`.link_selection.decide` applies thresholds and hysteresis (a link
goes off only when it stayed quiet in each of the last N samples), so the
hysteresis history is the run's own readings, and the link states and
speeds come from the switches: nothing is kept between runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import EtherclusterError
from .selection import channel_loads_from_counters, channel_utilisation, decide
from ..fabric.topology import Topology


class MeasureError(EtherclusterError):
    """Counter readings that cannot be turned into utilisation (names the
    reading, switch or port)."""


def sent_bytes(first: dict[str, dict[str, Any]],
               second: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """``{switch: {port: bytes sent between the readings}}``; a counter
    that went backwards (a switch or port restarted) counts 0."""
    deltas: dict[str, dict[str, int]] = {}
    for switch, ports in second.items():
        before = first.get(switch)
        if before is None:
            raise MeasureError("counters of switch %s are missing from the earlier reading"
                               % switch)
        deltas[switch] = {}
        for port, values in ports.items():
            if port not in before:
                continue
            deltas[switch][port] = max(0, int(values["tx_bytes"]) - int(before[port]["tx_bytes"]))
    return deltas


def utilisation_samples(topology: Topology, readings: list[dict[str, Any]],
                        speeds: dict[str, int] | None = None) -> list[list[float]]:
    """``readings``: ``[{"at": seconds, "counters": {switch: {port: {...}}}}]``
    in time order (at least two). Returns one sample per consecutive pair: a
    list (per channel id) of the fraction of capacity used, at the link
    speeds ``speeds`` ({link name: Mb/s}, the speeds read from the switches)."""
    if len(readings) < 2:
        raise MeasureError("at least two counter readings are needed, got %d" % len(readings))
    samples = []
    for number in range(1, len(readings)):
        first, second = readings[number - 1], readings[number]
        seconds = float(second["at"]) - float(first["at"])
        if seconds <= 0:
            raise MeasureError("readings[%d] is not later than readings[%d]" % (number, number - 1))
        loads = channel_loads_from_counters(topology, sent_bytes(first["counters"],
                                                                 second["counters"]))
        samples.append([float(value) for value in
                        channel_utilisation(topology, loads, seconds, speeds=speeds)])
    return samples


def lossless_off(topology: Topology, bank: str, engine: str = "segment", assignment: str = "renamed",
                 engine_options: dict[str, Any] | None = None, quick: bool = True) -> "LosslessOff":
    """A ``can_turn_off`` veto for :func:`.link_selection.decide`: switching
    link ``index`` off (with the links ``down`` already down, the switches
    in VLAN bank ``bank``) is fine when the transition planner finds a step
    list without a drain (:func:`.transition.plan_transition` with
    ``allow_drain=False``); else it would lose frames.

    ``quick`` (default) also gives the veto a cheap pre-test,
    :meth:`LosslessOff.quick`, for ordering candidates: planning a
    transition takes up to minutes on an 8x8 torus, most of it for links
    only a drain could switch."""
    return LosslessOff(topology, bank, engine, assignment, engine_options, quick)


class LosslessOff:
    """The veto of :func:`lossless_off`. Calling it plans the transition
    (sound); :meth:`quick` says, in milliseconds, whether the kept turn
    order still routes the fabric without the link. When it does not, the
    planner must route afresh, and the old and new routings often form a
    cycle that only a drain breaks (docs/transitions.md, "Limits") -- but
    not always (a bridge routing can do it: every link of a 3-switch
    ring), so a failed quick test only sends a link to the back of the
    queue (:func:`.selection.decide`), it never vetoes on its own."""

    def __init__(self, topology: Topology, bank: str, engine: str, assignment: str,
                 engine_options: dict[str, Any] | None, quick: bool) -> None:
        self.topology, self.bank, self.engine = topology, bank, engine
        self.assignment, self.engine_options = assignment, engine_options
        self.file_down = set(topology.down_links())
        self.kept = _KeptOrder(topology, engine, engine_options) if quick else None

    def __call__(self, index: int, down: Iterable[int]) -> str | None:
        from .transition import plan_transition  # planning code, loaded only when used
        try:
            plan_transition(self.topology, "off", index, current_down=sorted(set(down) - self.file_down),
                            current_bank=self.bank, engine=self.engine, assignment=self.assignment,
                            engine_options=self.engine_options, allow_drain=False)
        except EtherclusterError as exc:
            return "no lossless transition (%s)" % exc
        return None

    def quick(self, index: int, down: Iterable[int]) -> str | None:
        """Why planning ``index`` off would likely find only a drain (the
        kept turn order cannot route without it), or None (it can, or the
        quick test is off)."""
        if self.kept is None:
            return None
        return self.kept.unroutable(sorted(set(down) - self.file_down) + [index])


class _KeptOrder:
    """The kept-order router of a fabric, built on first use (None when the
    engine cannot build one: then every link passes the quick test)."""

    def __init__(self, topology: Topology, engine: str, engine_options: dict[str, Any] | None) -> None:
        self.topology = topology
        self.engine = engine
        self.engine_options = engine_options
        self.router: Callable[[Iterable[int]], Any] | None = None
        self.failed = False

    def unroutable(self, down: list[int]) -> str | None:
        """Why the kept turn order cannot route the fabric with ``down`` off
        (besides the file's), or None."""
        from .transition_planner import kept_order_router
        if self.router is None and not self.failed:
            try:
                self.router = kept_order_router(self.topology, self.engine, self.engine_options)
            except EtherclusterError:
                self.failed = True
        if self.router is None:
            return None
        try:
            self.router(down)
        except EtherclusterError as exc:
            return ("with %s off the kept turn order leaves a pair without a path (%s); a routing planned "
                    "afresh may form a cycle with the current one" % (self.topology.links[down[-1]].name, exc))
        return None


def power_decision(topology: Topology, state: dict[str, Any], readings: list[dict[str, Any]],
                   thresholds: dict[str, Any] | None = None,
                   can_turn_off: Callable[[int, set[int]], str | None] | None = None) -> dict[str, Any]:
    """:func:`.link_selection.decide` on the fabric's state as read
    (:func:`.fabric_state.fabric_state`) and the samples of ``readings``.
    Returns decide()'s result plus ``samples`` (how many) and the busiest
    utilisation of each sample."""
    link_states = {link["name"]: link["admin"] for link in state["links"]}
    speeds = dict(state["speeds"])
    samples = utilisation_samples(topology, readings, speeds)
    result = decide(topology, link_states, speeds, samples, thresholds, can_turn_off=can_turn_off)
    result["samples"] = len(samples)
    result["sample_peaks"] = [round(max(sample), 4) if sample else 0.0 for sample in samples]
    return result
