# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Continuation entries: the rows a failover's mixes of old and new
switches read and the routing never fills (issue 15; docs/failover.md,
"Arming").

With the renamed assignment every frame crosses the links untagged and each
switch classifies it by the PVID of the port it came in on, then looks its
destination up in that VLAN's static entries. While a failover's rounds run,
a frame can meet a switch in the other state than its last one: a flipped
neighbour sends it along the backup, the switch, not flipped yet, looks it
up in the base's row of that input port, which has no entry for a
destination the base never brings in there, and floods it (or the other
way round at a flipped switch). The proof refuses every such mix, so the
rounds stay small and many (:mod:`.failover_rounds`).

A *continuation* fills such a row with the port the other routing uses for
that input port and destination:

* **armed base** (bank in use, before any failure): each switch's base rows
  get, for every destination they lack, the port the backup of a
  pre-planned failure takes from that input port. A row no base frame reads
  changes nothing for the base (its proof shows no frame floods, so no
  frame meets a missing entry); where the failures' backups disagree, the
  port most of them take wins. The responder writes the armed base once it
  has planned its failovers, and writes the plain base back when it stops.
* **completed flips** (the backup bank a flipped switch installs): each
  backup row gets, for every destination it lacks, the port the base row of
  that input port takes, so a frame still on its base path goes on along
  it. The old bank's removal at the end writes the plain backup.

A frame that meets a continuation follows only turns one of the two
routings makes, so the dependencies stay those of the move; every window is
simulated as before (no frame may loop or flood, the dependency graph stays
acyclic). A continuation may name a port that is not yet a member of the
row's VLAN: it is added as an untagged member, which widens only the
VLAN's unknown-unicast flood, so the armed base must keep the flood graph
acyclic (:func:`storm_free`) or goes without those members.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..verify.dot1q import Dot1qFabric

Data = dict[str, Any]
Entries = dict[str, Data]
Key = tuple[int, str]          # (VLAN, destination MAC)


def rows(entry: Data) -> dict[Key, str]:
    """The static entries of a switch's intent entry: ``{(vlan, mac): port}``."""
    return {(item["vlan"], item["mac"]): str(item["port"]) for item in entry.get("static_macs") or []}


def _member(entry: Data, port: str, vlan: int) -> bool:
    settings = entry["ports"][port]
    return vlan in (settings.get("untagged") or []) or vlan in (settings.get("tagged") or [])


def continuations(entry: Data, other: Data, macs: Iterable[str], widen: bool = True) -> dict[Key, str]:
    """The rows ``entry`` lacks, filled from ``other`` (the same switch under
    the other routing): for every port with a PVID in both, each destination
    of ``macs`` the entry's row (its PVID's VLAN) has no entry for gets the
    port ``other``'s row of that input port sends it to. Left out: a port
    that is the input port itself, a VLAN whose input ports disagree, and
    (``widen`` false) a port that is not a member of the VLAN yet."""
    have, theirs = rows(entry), rows(other)
    found: dict[Key, str] = {}
    torn: set[Key] = set()
    for port, settings in entry.get("ports", {}).items():
        vlan = settings.get("pvid")
        their = (other.get("ports", {}).get(port) or {}).get("pvid")
        if vlan is None or their is None:
            continue
        for mac in macs:
            out = theirs.get((their, mac))
            if (vlan, mac) in have or out is None or out == str(port):
                continue
            if not widen and not _member(entry, out, vlan):
                continue
            if found.setdefault((vlan, mac), out) != out:
                torn.add((vlan, mac))
    return {key: out for key, out in found.items() if key not in torn}


def with_rows(entry: Data, added: Mapping[Key, str]) -> Data:
    """``entry`` with the static entries of ``added`` it lacks (each output
    port made an untagged member of its VLAN where it is none)."""
    have = rows(entry)
    fresh = {key: out for key, out in added.items() if key not in have}
    if not fresh:
        return entry
    ports = dict(entry["ports"])
    for (vlan, _mac), out in sorted(fresh.items()):
        if not _member(dict(entry, ports=ports), out, vlan):
            ports[out] = dict(ports[out], untagged=list(ports[out].get("untagged") or []) + [vlan])
    new_rows = [{"mac": mac, "vlan": vlan, "port": out} for (vlan, mac), out in sorted(fresh.items())]
    statics = list(entry.get("static_macs") or []) + new_rows
    return dict(entry, ports=ports, static_macs=statics)


def destinations(*states: Entries) -> list[str]:
    """Every destination MAC in the static entries of ``states``."""
    return sorted({item["mac"] for state in states for entry in state.values()
                   for item in entry.get("static_macs") or []})


def armed(base: Entries, backups: Iterable[Entries], widen: bool = True) -> Entries:
    """The base's switches (``{switch: entry}``) whose rows get continuations
    toward ``backups`` (each the ``{switch: entry}`` a pre-planned failover
    ends on), the port most backups take winning (ties: the lowest port
    name). Only the switches that change."""
    backups = list(backups)
    macs = destinations(base, *backups)
    votes: dict[str, dict[Key, Counter]] = {}
    for backup in backups:
        for name, entry in base.items():
            other = backup.get(name)
            if other is None or other is entry:
                continue
            for key, out in continuations(entry, other, macs, widen).items():
                votes.setdefault(name, {}).setdefault(key, Counter())[out] += 1
    made: Entries = {}
    for name, keys in votes.items():
        chosen = {key: _most_taken(count) for key, count in keys.items()}
        made[name] = with_rows(base[name], chosen)
    return made


def _most_taken(count: Counter) -> str:
    """The port most backups take (ties: the lowest name)."""
    return min(count, key=lambda port: (-count[port], port))


def storm_free(intent: Data) -> bool:
    """Whether every flood of ``intent`` (broadcast, unknown unicast) dies out."""
    return not Dot1qFabric(intent).storm_cycle()


def completed_flips(flips: Entries, before: Entries, macs: Iterable[str] | None = None) -> Entries:
    """Each flipped switch's entry (``flips``) with its backup rows completed
    from the base rows of ``before`` (module doc); ``macs``: the destinations
    (default: every one of ``before`` and ``flips``)."""
    macs = destinations(before, flips) if macs is None else list(macs)
    return {name: with_rows(entry, continuations(entry, before[name], macs)) for name, entry in flips.items()}


def added_rows(entry: Data, plain: Data) -> dict[Key, str]:
    """The static entries ``entry`` has beyond ``plain`` (an armed switch's continuations)."""
    theirs = rows(plain)
    return {key: out for key, out in rows(entry).items() if key not in theirs}
