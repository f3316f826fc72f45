# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long a switch model takes to bring a link up and to change a port's
speed (switch-tagged VLAN paper, Koibuchi et al., TPDS 2010, §4.3, Table 6).

The paper measured the *minimum* interruption of each operation on four
switch models: 1.2-3.2 s to turn a link on or off and 2.3-5.7 s to change
its speed, different per direction (PC6224 takes 2.8 s from 1 Gb/s down to
100 Mb/s but 5.7 s back up). A power profile (:mod:`.model`) carries these
figures as ``link_timings``; the transition planner waits that long after a
speed change before it polls for carrier, and the lab's emulated switches
keep a port down that long while it "renegotiates".

A link is ready when *both* ends are, so an operation on a link takes the
longer of its two ends' figures (:func:`link_operation_s`).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, NamedTuple

TIMING_FIELDS = ("on_off_s", "speed_change_s")


class LinkTimings(NamedTuple):
    """Seconds one switch model takes per link operation.

    ``on_off_s``: to bring a link up (or down), None when unknown;
    ``speed_change_s``: ``{(from_mbps, to_mbps): seconds}`` per direction.
    """

    on_off_s: float | None
    speed_change_s: dict

    def speed_s(self, from_mbps: Any, to_mbps: Any) -> float | None:
        """Seconds to go from ``from_mbps`` to ``to_mbps``; None when the
        model has no figure for that change (or a speed is unknown)."""
        try:
            return self.speed_change_s.get((int(from_mbps), int(to_mbps)))
        except (TypeError, ValueError):
            return None

    def to_data(self) -> dict[str, Any]:
        """Plain data, as :func:`timings_from_data` takes it."""
        return {"on_off_s": self.on_off_s,
                "speed_change_s": {speed_key(old, new): seconds
                                   for (old, new), seconds in sorted(self.speed_change_s.items(),
                                                                     reverse=True)}}


def speed_key(from_mbps: int, to_mbps: int) -> str:
    """The plain-data key of a speed change: ``"1000>100"``."""
    return "%d>%d" % (from_mbps, to_mbps)


def _table6(on_off: float, down_100: float, up_100: float, down_10_from_100: float,
            up_100_from_10: float, down_10: float, up_10: float) -> LinkTimings:
    """One row of Table 6, in its column order (Gb -> 100M, Gb <- 100M,
    100M -> 10M, 100M <- 10M, Gb -> 10M, Gb <- 10M)."""
    return LinkTimings(on_off, {(1000, 100): down_100, (100, 1000): up_100,
                                (100, 10): down_10_from_100, (10, 100): up_100_from_10,
                                (1000, 10): down_10, (10, 1000): up_10})


# Table 6 of the switch-tagged paper (§4.3), seconds; the row "SF-420G" is
# the Planex SF-0420G of Table 2.
TABLE6_TIMINGS = {
    "PC5324": _table6(3.2, 4.1, 2.4, 2.3, 3.3, 2.5, 2.4),
    "PC6224": _table6(2.6, 2.8, 5.7, 2.6, 2.6, 2.6, 5.7),
    "PC6248": _table6(2.2, 2.7, 3.3, 2.8, 3.1, 2.5, 2.3),
    "SF-0420G": _table6(1.2, 2.7, 2.5, 2.4, 2.3, 2.8, 2.3),
}


def non_negative(value: Any, where: str, unit: str, problems: list[str]) -> float | None:
    """``value`` as a finite number >= 0 of ``unit``, else None and a
    problem naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0:
        problems.append("%s: must be a number of %s >= 0, got %r" % (where, unit, value))
        return None
    return float(value)


def _seconds(value: Any, where: str, problems: list[str]) -> float | None:
    return non_negative(value, where, "seconds", problems)


def _speed_changes(raw: Any, where: str, problems: list[str]) -> dict[tuple[int, int], float]:
    """``{"1000>100": 4.1}`` -> ``{(1000, 100): 4.1}``, problems named."""
    result: dict[tuple[int, int], float] = {}
    if not isinstance(raw, dict):
        problems.append("%s: must be a mapping of \"FROM>TO\" (Mb/s) -> seconds, e.g. "
                        "{\"1000>100\": 4.1, \"100>1000\": 2.4}" % where)
        return result
    for key, value in raw.items():
        field = "%s.%s" % (where, key)
        old, sep, new = str(key).partition(">")
        if not sep or not old.strip().isdigit() or not new.strip().isdigit() \
                or int(old) < 1 or int(new) < 1 or int(old) == int(new):
            problems.append("%s: the key must be FROM>TO, two different speeds in Mb/s "
                            "(e.g. \"1000>100\")" % field)
            continue
        seconds = _seconds(value, field, problems)
        if seconds is not None:
            result[(int(old), int(new))] = seconds
    return result


def timings_from_data(data: Any, where: str, problems: list[str]) -> LinkTimings | None:
    """A :class:`LinkTimings` from plain data::

        {on_off_s: 3.2, speed_change_s: {"1000>100": 4.1, "100>1000": 2.4}}

    Both fields are optional. Appends one problem per bad field, named
    ``<where>.<field>``, and returns None when there is any."""
    if isinstance(data, LinkTimings):
        return data
    if not isinstance(data, dict):
        problems.append("%s: must be a mapping with on_off_s and speed_change_s, got %s"
                        % (where, type(data).__name__))
        return None
    count = len(problems)
    problems.extend("%s.%s: unknown field (fields: %s)" % (where, key, ", ".join(TIMING_FIELDS))
                    for key in data if key not in TIMING_FIELDS)
    on_off = None
    if data.get("on_off_s") is not None:
        on_off = _seconds(data["on_off_s"], where + ".on_off_s", problems)
    changes = _speed_changes(data.get("speed_change_s", {}), where + ".speed_change_s", problems)
    return None if len(problems) > count else LinkTimings(on_off, changes)


def link_operation_s(ends: Iterable[LinkTimings | None], action: str, from_mbps: Any = None,
                     to_mbps: Any = None) -> float | None:
    """Seconds a link takes for ``action`` (``"on"``, ``"off"`` or
    ``"speed"`` from ``from_mbps`` to ``to_mbps``) given its ends' timings:
    the longest of the ends, since the link carries frames only once both
    are ready. None when an end has no figure for it."""
    figures = []
    for timings in ends:
        if timings is None:
            return None
        figure = timings.speed_s(from_mbps, to_mbps) if action == "speed" else timings.on_off_s
        if figure is None:
            return None
        figures.append(figure)
    return max(figures) if figures else None
