# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state of a CLI switch (``dell_os6``, ``huawei_vrp``) in the form the
OVS read gives (:func:`.ovs.parse_state`), so the link transitions and the
fabric state (docs/transitions.md) read every platform alike.

Two show commands per platform are read:

============  ==================================  ===============================
platform      configuration                       interface status
============  ==================================  ===============================
dell_os6      ``show running-config``             ``show interfaces status``
huawei_vrp    ``display current-configuration``   ``display interface brief``
============  ==================================  ===============================

The configuration is parsed with the platform's own parser
(:func:`.dell_os6.parse`, :func:`.huawei_vrp.parse`): VLANs, per port the
membership, PVID, admin state and configured speed, the static MAC
entries, spanning tree and the MAC aging time. That canonical form is then
expressed as the OpenFlow pipeline the ``ovs`` platform would render for it
(:func:`ovs_entry`), so a switch's VLAN bank, PVIDs and its "does it hold
this intent entry" answer come out of the same comparison as on OVS
(:func:`.ovs.compare`). The status gives each port's carrier (``link``)
and, on OS6, its running speed.

A port's ``speed_mbps`` is its configured speed (``speed N``: what the
switch was told, which is what a transition sets); a port with no
configured speed reports the running speed of the status (OS6) or none
(VRP's brief table shows no speed). ``admin`` comes from the configuration
(``shutdown``), ``link`` from the status (an administratively down port has
no carrier either).

:func:`desired` gives the same form for an intent entry of a CLI switch
(rendered with the platform's renderer and parsed back, so only what the
platform can hold is compared), with the entry kept under ``"intent"``
for the write. Pure functions (jinja2 and netaddr through the parsers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import dell_os6, huawei_vrp, ovs
from .cli_diff import diff_commands
from .common import PlatformError, port_reader

CLI_PLATFORMS = ("dell_os6", "huawei_vrp")
CONFIG_COMMAND = {"dell_os6": "show running-config", "huawei_vrp": "display current-configuration"}
STATUS_COMMAND = {"dell_os6": "show interfaces status", "huawei_vrp": "display interface brief"}
MODULES = {"dell_os6": dell_os6, "huawei_vrp": huawei_vrp}

# OS6 "show interfaces status": Port, Description (may hold spaces), Vlan,
# Duplex, Speed, Neg, Link State, Flow Control Status -- read from the right
_OS6_ROW = re.compile(r"^(?P<port>(?:Gi|Te|Fo|Tw)\S*)\s.*?\s(?P<duplex>Full|Half|N/A)\s+"
                      r"(?P<speed>\d+|Unknown|N/A)\s+(?P<neg>Auto|Off|On)\s+"
                      r"(?P<link>Up|Down)\s+(?P<flow>Active|Inactive|N/A)\s*$", re.I)
# VRP "display interface brief": Interface, PHY (up, down, *down: admin down,
# with a marker such as (l) or (d)), Protocol, InUti, OutUti, inErrors, outErrors
_VRP_ROW = re.compile(r"^(?P<port>\S*(?:Ethernet|GE|XGE)\S*)\s+(?P<phy>\*?(?:up|down))(?:\([a-z]+\))?\s+"
                      r"(?P<protocol>\*?(?:up|down))(?:\([a-z]+\))?\s", re.I)


def check_platform(platform: str, switch: str = "switch") -> Any:
    """The parser module of CLI platform ``platform`` (PlatformError naming
    the switch when it has no CLI state reader)."""
    if platform not in MODULES:
        raise PlatformError("switch %s: platform %r has no CLI state reader (CLI platforms: %s)"
                            % (switch, platform, ", ".join(CLI_PLATFORMS)))
    return MODULES[platform]


def parse_os6_status(text: str) -> dict[str, dict[str, Any]]:
    """OS6 ``show interfaces status`` -> ``{interface: {"link": "up"|"down",
    "speed_mbps": int | None}}`` (interface as printed, ``Gi1/0/1``)."""
    found = {}
    for line in text.splitlines():
        row = _OS6_ROW.match(line.strip())
        if row:
            speed = row.group("speed")
            found[row.group("port")] = {"link": row.group("link").lower(),
                                        "speed_mbps": int(speed) if speed.isdigit() else None}
    return found


def parse_vrp_status(text: str) -> dict[str, dict[str, Any]]:
    """VRP ``display interface brief`` -> ``{interface: {"link", "admin",
    "speed_mbps": None}}``: ``link`` up when PHY is up, ``admin`` down for
    ``*down`` (administratively down); the table has no speed column."""
    found = {}
    for line in text.splitlines():
        row = _VRP_ROW.match(line.strip())
        if row:
            phy = row.group("phy").lower()
            found[row.group("port")] = {"link": "up" if phy == "up" else "down",
                                        "admin": "down" if phy.startswith("*") else "up",
                                        "speed_mbps": None}
    return found


def parse_status(platform: str, text: str) -> dict[str, dict[str, Any]]:
    """The interface status table of ``platform`` (``{interface: {"link",
    "speed_mbps"}}``)."""
    check_platform(platform)
    return parse_os6_status(text) if platform == "dell_os6" else parse_vrp_status(text)


def ovs_entry(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ovs`` intent entry that forwards as the canonical CLI
    configuration ``parsed`` says (a parser's result)."""
    vlans = set(parsed["vlans"])
    for entry in parsed["ports"].values():
        vlans.update(entry["untagged"], entry["tagged"])
    result = {"platform": ovs.PLATFORM, "stp": parsed["stp"], "vlans": sorted(vlans),
              "ports": {port: dict(entry) for port, entry in parsed["ports"].items()},
              "static_macs": list(parsed["static_macs"])}
    if parsed.get("mac_aging_s") is not None:
        # OS6 takes up to 1,000,000 s; the pipeline's learn() idle_timeout is 16 bits
        result["mac_aging_s"] = min(parsed["mac_aging_s"], 0xFFFF)
    return result


def _pipeline(parsed: Mapping[str, Any], switch: str) -> dict[str, Any]:
    """:func:`.ovs.render` of :func:`ovs_entry` (PlatformError naming the switch)."""
    try:
        return ovs.render(ovs_entry(parsed), switch)
    except ovs.OvsError as exc:
        raise PlatformError("switch %s: %s" % (switch, exc)) from None


def state(platform: str, config_text: str, status_text: str,
          interface_names: Mapping[Any, str] | None = None, switch: str = "switch") -> dict[str, Any]:
    """The switch's state in the :func:`.ovs.parse_state` form from its
    configuration and interface status texts: ``flows`` (the pipeline of
    its configuration), ``ports`` (every topology port the status lists or
    the configuration sets: ``admin``, ``speed_mbps``, ``link``, ``dev``
    the interface name), ``bridge``, plus ``platform`` and
    ``running_config`` (the text, for the declarative diff of a write).
    A switch whose configuration has no VLAN and no general/hybrid port
    reads with no flows (nothing deployed)."""
    module = check_platform(platform, switch)
    parsed = module.parse(config_text, interface_names, switch, strict=False)
    rendered = _pipeline(parsed, switch)
    if not parsed["ports"] and not parsed["vlans"]:
        rendered["flows"] = []  # nothing deployed: no pipeline, as an empty OVS bridge reads
    key = dell_os6._interface_key if platform == "dell_os6" else str  # pylint: disable=protected-access
    port_of = port_reader(module.INTERFACE_PATTERN, {port: key(name) for port, name in
                                                     (interface_names or {}).items()})
    status = {}
    for interface, value in parse_status(platform, status_text).items():
        port = port_of(key(interface))
        if port is not None:
            status[port] = dict(value, dev=interface)
    ports = {}
    for port in sorted(set(status) | set(parsed["ports"]), key=int):
        configured = parsed["ports"].get(port) or {}
        seen = status.get(port, {})
        admin = "down" if "down" in (configured.get("admin"), seen.get("admin")) else "up"
        speed = configured.get("speed_mbps") or seen.get("speed_mbps")
        ports[port] = {"admin": admin, "speed_mbps": speed,
                       "link": "up" if seen.get("link") == "up" and admin == "up" else "down",
                       "dev": seen.get("dev") or module.INTERFACE_PATTERN.format(port=port)}
    return {"flows": rendered["flows"], "learned_flows": [], "foreign_flows": [], "ports": ports,
            "bridge": rendered["bridge"], "gap": 0.0, "gaps": {}, "platform": platform,
            "running_config": config_text}


def desired(entry: Mapping[str, Any], switch: str = "switch") -> dict[str, Any]:
    """What CLI switch ``switch`` holds once it holds intent entry
    ``entry``, in the :func:`.ovs.render` form (``flows``, ``ports``,
    ``bridge``), plus ``platform`` and ``intent`` (the entry)."""
    platform = str(entry.get("platform"))
    module = check_platform(platform, switch)
    names = entry.get("interface_names")
    parsed = module.parse(module.render(entry, switch, names), names, switch)
    rendered = _pipeline(parsed, switch)
    rendered.update(platform=platform, intent=dict(entry))
    return rendered


def render_for(entry: Mapping[str, Any], switch: str = "switch") -> dict[str, Any]:
    """:func:`.ovs.render` for an ``ovs`` entry, :func:`desired` for a CLI
    platform's: what a switch holding ``entry`` reads as."""
    if entry.get("platform", ovs.PLATFORM) == ovs.PLATFORM:
        return ovs.render(entry, switch)
    return desired(entry, switch)


def write_commands(current: Mapping[str, Any], wanted: Mapping[str, Any], switch: str = "switch") -> list[str]:
    """The configuration lines that take a CLI switch read as ``current``
    (:func:`state`) to ``wanted`` (:func:`desired`): the declarative
    difference of :mod:`.cli_diff`, as cli_config pushes it."""
    entry = wanted["intent"]
    platform = str(entry.get("platform"))
    module = check_platform(platform, switch)
    names = entry.get("interface_names")
    return diff_commands(platform, current.get("running_config") or "",
                         module.render(entry, switch, names), names, switch)
