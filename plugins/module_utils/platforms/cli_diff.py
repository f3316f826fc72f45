# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Declarative diffs of CLI configurations: the commands that turn a
switch's running configuration into the rendered one, removals included.

A line-by-line diff (``ansible.netcommon``'s ``NetworkConfig``) only adds
missing lines: it cannot take a VLAN off a port, delete a static MAC entry
or drop a VLAN, and it re-sends lines whose spelling differs. Here both
texts are parsed into the canonical intent form (:mod:`.common`) with the
platform's own parser and compared as data, then exactly the needed
commands are written, in an order the switch accepts:

1. spanning tree off (or on), 802.3x (OS6: switch-wide), the MAC aging
   time (set, or back to the default when the candidate does not set it);
2. new VLANs (before any port uses them);
3. static MAC entries that go (before their port leaves the VLAN);
4. per port that differs, in its interface context: general/hybrid mode for
   a port not yet in it, VLANs added (untagged, tagged; re-adding a VLAN
   with the other kind moves it), the PVID, VLANs removed, speed, admin
   state;
5. new static MAC entries (their port is a member by now);
6. VLANs that no longer exist in the intent (VLAN 1 is never removed).

Ports the candidate does not name are left alone. A port not yet in
general (OS6) or hybrid (VRP) mode starts from the mode's defaults: an
untagged member of VLAN 1 with PVID 1 (shown as no PVID: both platforms
omit the default PVID from their running configuration), so VLAN 1 is
removed from it as the rendered configuration does.

Without an interface-name map, ports are keyed by the candidate's own
interface names, so a cliconf plugin that only sees two texts can diff
them. Pure functions; needs the parsers (jinja2, netaddr).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import dell_os6, huawei_vrp
from .common import PlatformError, interface_namer, mac_dashed, mac_dotted

DEFAULT_VLAN = 1
_INTERFACE_LINE = re.compile(r"^interface\s+(.+?)\s*$", re.I)


def _natural(text: Any) -> list[int | str]:
    """Sort key: digit runs as numbers (port 10 after port 9)."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", str(text))]


def candidate_interfaces(text: str, platform: str) -> list[str]:
    """Interface names the candidate text configures, as the platform's
    parser keys them (``Gi1/0/3`` for ``gigabitethernet 1/0/3`` on OS6)."""
    names = []
    for line in text.splitlines():
        found = _INTERFACE_LINE.match(line.strip())
        if found:
            name = found.group(1)
            if platform == "dell_os6":
                name = dell_os6._interface_key(name)  # pylint: disable=protected-access
            if name not in names:
                names.append(name)
    return names


def _fresh_port() -> dict[str, Any]:
    # what a port holds right after "switchport mode general" / "port link-type hybrid"
    return {"pvid": None, "untagged": [DEFAULT_VLAN], "tagged": [], "admin": "up", "speed_mbps": None,
            "flow_control": False}


def _port_changes(now: dict[str, Any],
                  want: dict[str, Any]) -> tuple[list[int], list[int], tuple | None, list[int], int | None, str | None]:
    """(VLANs to add untagged, to add tagged, PVID change or None, VLANs to
    remove, speed or None, admin or None) for one port."""
    add_untagged = [vlan for vlan in want["untagged"] if vlan not in now["untagged"]]
    add_tagged = [vlan for vlan in want["tagged"] if vlan not in now["tagged"]]
    wanted = set(want["untagged"]) | set(want["tagged"])
    removed = sorted(vlan for vlan in set(now["untagged"]) | set(now["tagged"]) if vlan not in wanted)
    pvid = ("set", want["pvid"]) if want["pvid"] != now["pvid"] else None
    speed = want["speed_mbps"] if want["speed_mbps"] is not None \
        and want["speed_mbps"] != now["speed_mbps"] else None
    admin = want["admin"] if want["admin"] != now["admin"] else None
    return add_untagged, add_tagged, pvid, removed, speed, admin


def _statics(canonical: dict[str, Any]) -> set[tuple[int, str, str]]:
    """The static entries of a canonical config as ``(vlan, mac, port)``."""
    return {(entry["vlan"], entry["mac"], entry["port"]) for entry in canonical["static_macs"]}


@dataclass(frozen=True)
class _Dialect:
    """How one platform spells each change the walk of :func:`_commands`
    makes (VLAN lists already grouped the platform's way)."""

    stp: Callable[[bool], list[str]]
    # 802.3x: one global command (OS6) or one line per interface (VRP)
    flow_control_global: Callable[[bool], list[str]] | None
    flow_control_port: Callable[[bool], str] | None
    mac_aging: Callable[[int | None], str]  # set (seconds) or back to the default (None)
    add_vlans: Callable[[list[int]], list[str]]
    remove_vlans: Callable[[list[int]], list[str]]
    static: Callable[[bool, int, str, str], str]  # (add, vlan, mac, interface)
    port_mode: str  # the command that puts a port in general/hybrid mode
    untagged: Callable[[list[int]], list[str]]
    tagged: Callable[[list[int]], list[str]]
    pvid: Callable[[int | None], str]  # None: back to the default
    remove_from_port: Callable[[list[int]], list[str]]
    speed: Callable[[int], list[str]]
    admin: Callable[[str], str]
    leave_interface: str


def _listed(template: str, group: Callable[[list[int]], Any]) -> Callable[[list[int]], list[str]]:
    """VLANs ``vlans`` as commands ``template % group`` (none when empty)."""
    def commands(vlans: list[int]) -> list[str]:
        if not vlans:
            return []
        grouped = group(vlans)
        return [template % item for item in ([grouped] if isinstance(grouped, str) else grouped)]
    return commands


OS6 = _Dialect(
    stp=lambda on: ["spanning-tree" if on else "no spanning-tree"],
    flow_control_global=lambda on: ["flowcontrol" if on else "no flowcontrol"],
    flow_control_port=None,
    mac_aging=lambda seconds: ("no mac address-table aging-time" if seconds is None
                               else "mac address-table aging-time %d" % seconds),
    add_vlans=lambda vlans: ["vlan database", "vlan %s" % dell_os6.vlan_list(vlans), "exit"] if vlans else [],
    remove_vlans=lambda vlans: ["vlan database", "no vlan %s" % dell_os6.vlan_list(vlans), "exit"] if vlans else [],
    static=lambda add, vlan, mac, name: "%smac address-table static %s vlan %d interface %s" % (
        "" if add else "no ", mac_dotted(mac), vlan, name),
    port_mode="switchport mode general",
    untagged=_listed("switchport general allowed vlan add %s untagged", dell_os6.vlan_list),
    tagged=_listed("switchport general allowed vlan add %s tagged", dell_os6.vlan_list),
    pvid=lambda vlan: "no switchport general pvid" if vlan is None else "switchport general pvid %d" % vlan,
    remove_from_port=_listed("switchport general allowed vlan remove %s", dell_os6.vlan_list),
    speed=lambda mbps: ["speed %d" % mbps],
    admin=lambda state: "shutdown" if state == "down" else "no shutdown",
    leave_interface="exit",
)

VRP = _Dialect(
    stp=lambda on: ["stp enable" if on else "stp disable"],
    flow_control_global=None,
    flow_control_port=lambda on: "flow-control" if on else "undo flow-control",
    mac_aging=lambda seconds: ("undo mac-address aging-time" if seconds is None
                               else "mac-address aging-time %d" % seconds),
    add_vlans=_listed("vlan batch %s", huawei_vrp.vlan_batches),
    remove_vlans=_listed("undo vlan batch %s", huawei_vrp.vlan_batches),
    static=lambda add, vlan, mac, name: "%smac-address static %s %s vlan %d" % (
        "" if add else "undo ", mac_dashed(mac), name, vlan),
    port_mode="port link-type hybrid",
    untagged=_listed("port hybrid untagged vlan %s", huawei_vrp.vlan_batches),
    tagged=_listed("port hybrid tagged vlan %s", huawei_vrp.vlan_batches),
    pvid=lambda vlan: "undo port hybrid pvid vlan" if vlan is None else "port hybrid pvid vlan %d" % vlan,
    remove_from_port=_listed("undo port hybrid vlan %s", huawei_vrp.vlan_batches),
    speed=lambda mbps: ["undo negotiation auto", "speed %d" % mbps],
    admin=lambda state: "shutdown" if state == "down" else "undo shutdown",
    leave_interface="quit",
)


def _port_lines(dialect: _Dialect, now: dict[str, Any] | None, want: dict[str, Any]) -> list[str]:
    """The interface-context lines that take one port from ``now`` (None:
    not yet in general/hybrid mode) to ``want`` (step 4 of the module doc)."""
    lines = []
    if now is None:
        lines.append(dialect.port_mode)
        now = _fresh_port()
    add_untagged, add_tagged, pvid, removed, speed, admin = _port_changes(now, want)
    lines += dialect.untagged(add_untagged) + dialect.tagged(add_tagged)
    if pvid is not None:
        lines.append(dialect.pvid(pvid[1]))
    lines += dialect.remove_from_port(removed)
    if speed is not None:
        lines += dialect.speed(speed)
    if dialect.flow_control_port is not None and want["flow_control"] != now["flow_control"]:
        lines.append(dialect.flow_control_port(want["flow_control"]))
    if admin is not None:
        lines.append(dialect.admin(admin))
    return lines


def _commands(dialect: _Dialect, running: dict[str, Any], candidate: dict[str, Any],
              name_of: Callable[[Any], str]) -> list[str]:
    """The commands from canonical ``running`` to canonical ``candidate``, in
    the order of the module doc; ``name_of(port)`` gives interface names."""
    commands = []
    if candidate["stp"] != running["stp"]:
        commands += dialect.stp(candidate["stp"])
    if dialect.flow_control_global is not None and candidate["ports"]:
        # a switch-wide setting: every port of a parsed text holds the same value
        want_on = all(entry["flow_control"] for entry in candidate["ports"].values())
        have = {entry["flow_control"] for entry in running["ports"].values()}
        if have != {want_on}:
            commands += dialect.flow_control_global(want_on)
    if candidate.get("mac_aging_s") != running.get("mac_aging_s"):
        commands.append(dialect.mac_aging(candidate.get("mac_aging_s")))
    commands += dialect.add_vlans(sorted(set(candidate["vlans"]) - set(running["vlans"]) - {DEFAULT_VLAN}))
    have, want = _statics(running), _statics(candidate)
    commands += [dialect.static(False, vlan, mac, name_of(port)) for vlan, mac, port in sorted(have - want)]
    for port in sorted(candidate["ports"], key=_natural):
        lines = _port_lines(dialect, running["ports"].get(port), candidate["ports"][port])
        if lines:
            commands += ["interface %s" % name_of(port)] + lines + [dialect.leave_interface]
    commands += [dialect.static(True, vlan, mac, name_of(port)) for vlan, mac, port in sorted(want - have)]
    commands += dialect.remove_vlans(sorted(set(running["vlans"]) - set(candidate["vlans"]) - {DEFAULT_VLAN}))
    return commands


def dell_os6_commands(running: dict[str, Any], candidate: dict[str, Any],
                      name_of: Callable[[Any], str]) -> list[str]:
    """OS6 commands (global configuration mode) from canonical ``running``
    to canonical ``candidate``; ``name_of(port)`` gives interface names."""
    return _commands(OS6, running, candidate, name_of)


def huawei_vrp_commands(running: dict[str, Any], candidate: dict[str, Any],
                        name_of: Callable[[Any], str]) -> list[str]:
    """VRP commands (system view) from canonical ``running`` to canonical
    ``candidate``; ``name_of(port)`` gives interface names."""
    return _commands(VRP, running, candidate, name_of)


PLATFORMS = {
    "dell_os6": (dell_os6, dell_os6_commands),
    "huawei_vrp": (huawei_vrp, huawei_vrp_commands),
}


def diff_commands(platform: str, running_text: str | None, candidate_text: str,
                  interface_names: Mapping[Any, str] | None = None, switch: str = "switch") -> list[str]:
    """The commands (a list of lines, configuration mode) that make a
    switch of ``platform`` (``dell_os6`` or ``huawei_vrp``) whose running
    configuration is ``running_text`` hold ``candidate_text`` (a rendered
    configuration). Empty when it already does.

    ``interface_names`` (``{port: interface}``) is the topology's map; when
    it is None the candidate's interfaces are taken as they are named.
    Raises :class:`~.common.PlatformError` naming the switch and line of
    a text that cannot be read."""
    if platform not in PLATFORMS:
        raise PlatformError("switch %s: no CLI diff for platform %r (CLI platforms: %s)"
                            % (switch, platform, ", ".join(sorted(PLATFORMS))))
    module, commands_of = PLATFORMS[platform]
    if interface_names is None:
        interface_names = {name: name for name in candidate_interfaces(candidate_text, platform)}
    candidate = module.parse(candidate_text or "", interface_names, switch)
    running = module.parse(running_text or "", interface_names, switch, strict=False)
    return commands_of(running, candidate, interface_namer(module.INTERFACE_PATTERN, interface_names, switch, module.PLATFORM))
