# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric's state as the switches hold it: which links are down, at
which speed each link runs, and which VLAN bank the pipelines use.

Nothing is kept in a side file: the state of a link is what its two ends
say (issue 7, item 4). A link is *down* when either end is admin down (a
link off shuts both ends; one end down carries nothing either); its speed
is the rate of the ``tc tbf`` of each end. The bank is read from the VLAN
IDs of each switch's pipeline (:data:`..vlans.VLAN_BANKS`, A 100-1999, B
2100-3999): a settled fabric uses one bank everywhere. During a
make-before-break transition (docs/transitions.md) a switch holds both
banks and the PVIDs of some switches are already in the new one; a fabric
left in such a state is an *interrupted transition*, and
:func:`mixed_bank_message` says which switch holds what and how to finish.

Pure functions on the parsed states of :func:`.platforms.ovs.parse_state`
(one per switch, read over SSH by the caller). Standard library only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..errors import EtherclusterError
from ..assign.vlans import VLAN_BANKS

if TYPE_CHECKING:  # for the type hints only: this module stays standard library only
    from ..fabric.topology import Link, Topology

_SET_REG0 = re.compile(r"^set_field:(0x[0-9a-f]+|[0-9]+)->reg0$")


class FabricStateError(EtherclusterError):
    """The switches cannot be read into one fabric state (a port missing, no
    pipeline, banks mixed); names the switch, port or link."""


def bank_of(vlan: int) -> str | None:
    """The bank (``"A"``/``"B"``) of VLAN ID ``vlan``, None outside both."""
    for bank, (first, last) in VLAN_BANKS.items():
        if first <= vlan <= last:
            return bank
    return None


def pipeline_vlans(flows: list[Any]) -> tuple[set[int], dict[str, int]]:
    """``(vlans, pvids)`` of a parsed OVS pipeline (:class:`..platforms.ovs.Flow`
    list): every VLAN ID the pipeline classifies into or forwards in, and
    ``{port: PVID}`` (from the table-0 flows of untagged frames)."""
    vlans: set[int] = set()
    pvids: dict[str, int] = {}
    for flow in flows:
        match = dict(flow.match)
        if flow.table == 3 and isinstance(match.get("reg0"), int):
            vlans.add(match["reg0"])
        if flow.table != 0:
            continue
        if isinstance(match.get("dl_vlan"), int) and match["dl_vlan"] > 0:
            vlans.add(match["dl_vlan"])
        if match.get("vlan_tci") == (0x0000, 0x1FFF) and "in_port" in match:
            for action in flow.actions:
                found = _SET_REG0.match(action)
                if found:
                    pvid = int(found.group(1), 0)
                    pvids[str(match["in_port"])] = pvid
                    vlans.add(pvid)
    return vlans, pvids


def switch_state(name: str, state: dict[str, Any]) -> dict[str, Any]:
    """Summary of one switch's parsed state: the banks its pipeline holds,
    the banks of its PVIDs, and per port admin state, carrier and speed."""
    vlans, pvids = pipeline_vlans(state["flows"])
    return {
        "banks": sorted({bank_of(vlan) or "other" for vlan in vlans}),
        "pvid_banks": sorted({bank_of(vlan) or "other" for vlan in pvids.values()}),
        "vlans": len(vlans),
        "flows": len(state["flows"]),
        "ports": {port: {"admin": value["admin"], "carrier": value.get("link", "up"),
                         "speed_mbps": value.get("speed_mbps"), "pvid": pvids.get(port)}
                  for port, value in state["ports"].items()},
    }


def fabric_state(topology: Topology, states: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The fabric's state from ``states`` ({switch: parsed state}) of the
    switches of ``topology``.

    Returns plain data: ``links`` (one entry per topology link: name, index,
    ``admin`` down when either end is, ``carrier``, the speed of each end
    and ``speed_mbps`` when both agree), ``down_links`` (names) and
    ``down`` (indexes), ``speeds`` ({link name: Mb/s}), ``switches``
    (:func:`switch_state` each), ``bank`` (the one bank every switch holds
    and classifies into, else None), ``settled`` (one bank, no speed in
    disagreement) and ``problems`` (what is not settled, one line each).

    Raises :class:`FabricStateError` naming the switch and port when a
    switch of the topology was not read or lacks a port of a link."""
    missing = [name for name in topology.switch_names() if name not in states]
    if missing:
        raise FabricStateError("no state read from switch(es) %s" % ", ".join(missing))
    switches = {name: switch_state(name, states[name]) for name in topology.switch_names()}
    links, down, speeds, problems = [], [], {}, []
    for link in topology.links:
        entry = _link_entry(link, switches)
        if entry["speed_mbps"] is None:
            problems.append("link %s: the ends run at different speeds (%s)" % (
                link.name, ", ".join("%s %s Mb/s" % (where, end["speed_mbps"])
                                     for where, end in entry["ends"].items())))
        else:
            speeds[link.name] = entry["speed_mbps"]
        if entry["admin"] == "down":
            down.append(link.index)
        links.append(entry)
    empty = [name for name, sw in switches.items() if not sw["flows"]]
    if empty:
        problems.append("switch(es) %s hold no pipeline (not deployed yet: run "
                        "deploy_routing.yml)" % ", ".join(empty))
    bank = _fabric_bank(switches, bool(empty), problems)
    return {"links": links, "down": down,
            "down_links": [topology.links[index].name for index in down],
            "speeds": speeds, "switches": switches, "bank": bank,
            "settled": not problems, "problems": problems}


def _link_entry(link: Link, switches: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The state of one link from the :func:`switch_state` of its two ends:
    admin down when either end is, carrier up when both see it, the speed
    when both ends agree (else None). FabricStateError when a port is missing."""
    ends = {}
    for end in (link.a, link.b):
        port = switches[end.switch]["ports"].get(str(end.port))
        if port is None:
            raise FabricStateError(
                "link %s: switch %s has no port %s (it has %s); is it the switch of this "
                "topology?" % (link.name, end.switch, end.port,
                               ", ".join(sorted(switches[end.switch]["ports"], key=_number))
                               or "none"))
        ends[str(end)] = port
    admin = "down" if any(end["admin"] == "down" for end in ends.values()) else "up"
    carrier = "up" if all(end["carrier"] == "up" for end in ends.values()) else "down"
    rates = {end["speed_mbps"] for end in ends.values()}
    speed = rates.pop() if len(rates) == 1 else None
    return {"name": link.name, "index": link.index, "a": str(link.a),
            "b": str(link.b), "admin": admin, "carrier": carrier,
            "ends": {where: {"admin": end["admin"], "carrier": end["carrier"],
                             "speed_mbps": end["speed_mbps"]}
                     for where, end in ends.items()},
            "speed_mbps": speed, "topology_speed_mbps": link.speed_mbps}


def _fabric_bank(switches: dict[str, dict[str, Any]], empty: bool, problems: list[str]) -> str | None:
    """The one bank every switch holds and classifies into, else None (the
    reason appended to ``problems``)."""
    banks = {bank for sw in switches.values() for bank in sw["banks"] + sw["pvid_banks"]}
    bank = None
    if len(banks) == 1 and not empty:
        bank = banks.pop()
        if bank == "other":
            bank = None
            problems.append("the pipelines use VLAN IDs outside both banks (A %d-%d, B %d-%d)"
                            % (VLAN_BANKS["A"] + VLAN_BANKS["B"]))
    elif len(banks) > 1:
        problems.append(mixed_bank_message(switches))
    return bank


def mixed_bank_message(switches: dict[str, dict[str, Any]]) -> str:
    """Say which switches hold which bank (pipeline and PVIDs) when they
    disagree: an interrupted transition, and how to finish it."""
    groups: dict[str, list[str]] = {}
    for name, sw in switches.items():
        key = "bank%s %s%s" % ("s" if len(sw["banks"]) > 1 else "", " and ".join(sw["banks"])
                               or "none", ", PVIDs in %s" % " and ".join(sw["pvid_banks"])
                               if sw["pvid_banks"] and sw["pvid_banks"] != sw["banks"] else "")
        groups.setdefault(key, []).append(name)
    held = "; ".join("%s on %s" % (key, ", ".join(names)) for key, names in sorted(groups.items()))
    return ("the switches disagree on the VLAN bank (%s): a transition was interrupted. Re-run the "
            "same playbook (link_off.yml, link_on.yml or link_speed.yml with the same -e link=... "
            "and options) to finish it: it reads the state from the switches and resumes"
            % held)


def _number(port: Any) -> tuple[int, int, str]:
    """Sort key of a port: numbers in numeric order, then names."""
    return (0, int(port), "") if str(port).isdigit() else (1, 0, str(port))


def link_state(state: dict[str, Any], topology: Topology, ref: Any) -> dict[str, Any]:
    """The entry of ``state["links"]`` of the link ``ref`` (``"sw0:25"`` of
    either end, a link name or index, as :meth:`..topology.Topology.link`
    takes)."""
    return state["links"][topology.link(ref).index]


_PORT_BYTES = re.compile(r"port\s+(\d+|LOCAL):\s*rx pkts=(\d+|\?), bytes=(\d+|\?).*?\n\s*"
                         r"tx pkts=(\d+|\?), bytes=(\d+|\?)", re.S)


def parse_port_bytes(text: str) -> dict[str, dict[str, int]]:
    """``ovs-ofctl dump-ports`` output -> ``{port: {"rx_bytes", "tx_bytes",
    "rx_packets", "tx_packets"}}`` (``LOCAL`` and unknown ``?`` counters are
    left out)."""
    counters = {}
    for port, rx_pkts, rx_bytes, tx_pkts, tx_bytes in _PORT_BYTES.findall(text):
        if port == "LOCAL" or "?" in (rx_pkts, rx_bytes, tx_pkts, tx_bytes):
            continue
        counters[port] = {"rx_bytes": int(rx_bytes), "tx_bytes": int(tx_bytes),
                          "rx_packets": int(rx_pkts), "tx_packets": int(tx_pkts)}
    return counters


def counters_script(bridge: str = "br0") -> str:
    """Shell script printing the port counters of an OVS switch."""
    if not re.match(r"^[A-Za-z][A-Za-z0-9_-]{0,14}$", str(bridge)):
        raise FabricStateError("bridge: %r is not a bridge name" % (bridge,))
    return "ovs-ofctl -O OpenFlow13 dump-ports %s\n" % bridge
