# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each switch platform can do, for the plan's checks and the docs
(docs/platforms.md "Capabilities").

Switch-tagged routing needs ports that are untagged members of several
VLANs, each port with its own PVID (switch-tagged VLAN paper §3.1-§3.2):
802.1Q "general" ports (Dell OS6/PowerConnect), "hybrid" ports (Huawei VRP,
H3C Comware), a Linux bridge with ``vlan_filtering`` or an OpenFlow
pipeline (Open vSwitch). Access/trunk-only platforms (Cisco IOS style:
one untagged VLAN per port) cannot hold it and are refused by
:func:`require_renderable` before anything is rendered or pushed.

``max_vlans`` and ``static_macs`` are the platform's ceilings when a
switch of the topology does not give its own (``max_vlans``,
``mac_table_size`` per switch win: models of one family differ); ``None``
means "no platform-wide figure, the switch's own limit applies".
Standard library only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import EtherclusterError

DOT1Q_MAX_VLANS = 4094  # 802.1Q: IDs 1-4094 (0 and 4095 reserved)

# Platforms that can send broadcasts along the fabric's flood tree whatever
# the VLAN (intent ``broadcast_ports``), which contains a renamed
# assignment's broadcasts. An 802.1Q static filtering entry for the
# broadcast address (IEEE 802.1Q §8.8.1), Dell OS6/Huawei static multicast
# MAC entries and the Linux bridge's per-port bcast_flood flag can only
# *prune* a VLAN's member set, while a flood tree must cross ports that are
# no member of the frame's renamed VLAN; adding them as members would widen
# every unknown-unicast flood too. An OpenFlow pipeline matches the
# broadcast address itself (docs/platforms.md "Contained broadcasts").
BROADCAST_TREE_PLATFORMS = frozenset({"ovs"})

# The Ethernet rates of IEEE 802.3 (Mb/s): a speed change to any other figure
# is a typo even where the platform lists no speeds of its own (OVS shapes any
# rate with tc, but it stands in for a real switch).
ETHERNET_SPEEDS_MBPS = (10, 100, 1000, 2500, 5000, 10000, 25000, 40000, 50000, 100000,
                        200000, 400000, 800000)


class PlatformError(EtherclusterError):
    """A switch's platform cannot run switch-tagged routing, its intent
    cannot be rendered for it, or a config text cannot be read back (names
    the switch, port, field or line). Defined here so that this table
    imports with the standard library only (vlans.py, intent.py)."""


class Capabilities(NamedTuple):
    """One platform's row of the capability table."""

    platform: str
    port_mode: str | None   # general | hybrid | vlan_filtering | openflow | None (access/trunk only)
    max_vlans: int | None   # VLANs the platform can hold at once
    static_macs: int | None  # static MAC entries (None: the switch's mac_table_size)
    speeds_mbps: tuple      # speeds a port can be forced to (empty: not checked)
    stp_disable: str        # how STP is turned off
    reserved_vlans: frozenset  # IDs the platform keeps for itself (beyond 0, 1, 4095)
    config_extension: str   # extension of configs/<switch>.<ext>
    renderer: str | None    # module in platforms/ that renders it (None: not renderable)
    description: str


_TABLE = (
    # ovs: any speed (a tc tbf shaper on the lab's veth), hence no list
    Capabilities("ovs", "openflow", DOT1Q_MAX_VLANS, None, (),
                 "ovs-vsctl set Bridge br0 stp_enable=false rstp_enable=false", frozenset(), "flows", "ovs",
                 "Open vSwitch: OpenFlow 1.3 pipeline of an 802.1Q general-mode switch"),
    Capabilities("dell_os6", "general", DOT1Q_MAX_VLANS, None, (10, 100, 1000, 10000),
                 "no spanning-tree", frozenset(), "cfg", "dell_os6",
                 "Dell EMC Networking N-Series / PowerConnect (OS6): switchport mode general"),
    Capabilities("dell_powerconnect", "general", DOT1Q_MAX_VLANS, None, (10, 100, 1000),
                 "no spanning-tree", frozenset(), "cfg", "dell_os6",
                 "Dell PowerConnect (same CLI as OS6 for what is rendered)"),
    Capabilities("huawei_vrp", "hybrid", DOT1Q_MAX_VLANS, None, (10, 100, 1000, 10000),
                 "stp disable", frozenset(), "cfg", "huawei_vrp",
                 "Huawei VRP (S series): port link-type hybrid"),
    Capabilities("linux_bridge", "vlan_filtering", DOT1Q_MAX_VLANS, None, (10, 100, 1000, 10000),
                 "ip link ... type bridge stp_state 0 (ifupdown2: bridge-stp off)", frozenset(),
                 "sh", "linux_bridge",
                 "Linux bridge with vlan_filtering 1 (iproute2 script; ifupdown2 file beside it)"),
    Capabilities("pica8", "openflow", DOT1Q_MAX_VLANS, None, (), "OpenFlow mode (no STP)",
                 frozenset(), "flows", None, "Pica8 PicOS in OpenFlow mode (no renderer yet)"),
    Capabilities("huawei", "hybrid", DOT1Q_MAX_VLANS, None, (10, 100, 1000, 10000),
                 "stp disable", frozenset(), "cfg", "huawei_vrp", "alias of huawei_vrp"),
    Capabilities("h3c", "hybrid", DOT1Q_MAX_VLANS, None, (), "undo stp global enable",
                 frozenset(), "cfg", None, "H3C Comware hybrid ports (no renderer yet)"),
    Capabilities("tplink", "hybrid", DOT1Q_MAX_VLANS, None, (), "(web UI)", frozenset(), "cfg",
                 None, "TP-Link smart switches, 802.1Q VLAN per-port PVID (no renderer yet)"),
    # Cisco IOS keeps 1002-1005 for its default FDDI/Token Ring VLANs (IOS VLAN
    # configuration guide, "Normal-range VLANs"); its ports are access or trunk.
    Capabilities("cisco_ios", None, DOT1Q_MAX_VLANS, None, (10, 100, 1000),
                 "no spanning-tree vlan ...", frozenset(range(1002, 1006)), "cfg", None,
                 "Cisco IOS: access/trunk ports only (one untagged VLAN per port)"),
    Capabilities("ios", None, DOT1Q_MAX_VLANS, None, (10, 100, 1000),
                 "no spanning-tree vlan ...", frozenset(range(1002, 1006)), "cfg", None,
                 "alias of cisco_ios"),
)

CAPABILITIES = {row.platform: row for row in _TABLE}


class MacAging(NamedTuple):
    """The MAC aging time a platform can be set to (seconds, whole switch)."""

    min_s: int
    max_s: int
    never: bool  # 0 is accepted and means "learned entries never age"
    command: str  # how it is set (docs/platforms.md "MAC aging time")


# Sources in docs/platforms.md "MAC aging time". OVS: the pipeline learns
# with learn() (platforms/ovs.py), whose idle_timeout is a 16-bit field and
# 0 means permanent; Bridge other_config:mac-aging-time (15-3600 s) only
# ages OVS's own NORMAL learning, which the pipeline does not use. The
# Linux bridge learns nothing with ageing_time 0, so it has no "never".
MAC_AGING = {
    "ovs": MacAging(1, 65535, True, "learn(idle_timeout=N) in table 1"),
    "dell_os6": MacAging(10, 1000000, False, "mac address-table aging-time N"),
    "dell_powerconnect": MacAging(10, 1000000, False, "mac address-table aging-time N"),
    "huawei_vrp": MacAging(10, 1000000, True, "mac-address aging-time N (0: no aging)"),
    "huawei": MacAging(10, 1000000, True, "mac-address aging-time N (0: no aging)"),
    "linux_bridge": MacAging(10, 1000000, False, "ip link set BRIDGE type bridge ageing_time N*100"),
}


def require_mac_aging(platform: str, value: int | None, switch: str = "switch") -> int | None:
    """``value`` (an intent's ``mac_aging_s``) if ``platform`` can be set
    to it; None stays None (not set). Raises :class:`PlatformError` naming
    the switch, the figure and the platform's range."""
    if value is None:
        return None
    row = MAC_AGING.get(platform)
    if row is None:
        raise PlatformError("switch %s: mac_aging_s is set but platform %s has no settable MAC "
                            "aging time known to the renderers" % (switch, platform))
    if value == 0 and not row.never:
        raise PlatformError("switch %s: mac_aging_s 0 (never age) is not possible on platform %s; "
                            "its longest is %d s" % (switch, platform, row.max_s))
    return mac_aging_for(platform, value, switch)


def mac_aging_for(platform: str, wanted: int | None, switch: str = "switch") -> int:
    """The aging time (seconds, 0 = never) switch ``switch`` of ``platform``
    gets when ``wanted`` is asked (None: as long as the platform allows,
    0 where it can never age entries, else its maximum). Raises
    :class:`PlatformError` for a platform with no settable aging time or a
    figure outside its range (naming both)."""
    if platform not in MAC_AGING:
        raise PlatformError("switch %s: platform %s has no settable MAC aging time known to the "
                            "renderers; platforms with one: %s"
                            % (switch, platform, ", ".join(sorted(MAC_AGING))))
    row = MAC_AGING[platform]
    if wanted is None or (wanted == 0 and not row.never):
        return 0 if row.never else row.max_s
    if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 0:
        raise PlatformError("switch %s: MAC aging time must be whole seconds >= 0, got %r"
                            % (switch, wanted))
    if wanted != 0 and not row.min_s <= wanted <= row.max_s:
        raise PlatformError("switch %s: MAC aging time %d s is outside platform %s's range %d-%d s%s"
                            % (switch, wanted, platform, row.min_s, row.max_s,
                               " (or 0: never)" if row.never else ""))
    return wanted


def renderable_platforms() -> list[str]:
    """Names of the platforms that have a renderer, sorted."""
    return sorted(name for name, row in CAPABILITIES.items() if row.renderer and row.port_mode)


def platform_capabilities(name: str) -> Capabilities:
    """The :class:`Capabilities` row of platform ``name``; raises
    :class:`PlatformError` for a platform not in the table (listing those
    that are)."""
    if name not in CAPABILITIES:
        raise PlatformError("unknown platform %r; known platforms: %s"
                            % (name, ", ".join(sorted(CAPABILITIES))))
    return CAPABILITIES[name]


def require_renderable(name: Any, switch: str = "switch") -> Capabilities:
    """The capability row of switch ``switch``'s platform ``name`` if
    switch-tagged routing can be rendered for it; otherwise a
    :class:`PlatformError` saying why and which platforms work."""
    works = ", ".join(renderable_platforms())
    if name not in CAPABILITIES:
        raise PlatformError("switch %s: unknown platform %r; platforms that can run switch-tagged "
                            "routing: %s" % (switch, name, works))
    row = CAPABILITIES[name]
    if row.port_mode is None:
        raise PlatformError("switch %s: platform %s has access/trunk ports only (one untagged VLAN "
                            "per port); switch-tagged routing needs ports that are untagged members "
                            "of several VLANs with their own PVID (general/hybrid mode, a "
                            "vlan_filtering bridge or OpenFlow). Platforms that work: %s"
                            % (switch, name, works))
    if row.renderer is None:
        raise PlatformError("switch %s: platform %s could run switch-tagged routing (%s ports) but "
                            "has no renderer yet; platforms that can be rendered: %s"
                            % (switch, name, row.port_mode, works))
    return row


def check_switch(name: str, entry: dict[str, Any]) -> list[str]:
    """Problems (strings, each naming switch ``name``) of one intent entry
    against its platform's capabilities: the platform itself, VLAN count,
    static MAC count, port speeds and reserved VLANs. Empty when fine."""
    platform = entry.get("platform")
    try:
        row = require_renderable(platform, name)
    except PlatformError as error:
        return [str(error)]
    problems = []
    vlans = entry.get("vlans", [])
    if row.max_vlans is not None and len(vlans) > row.max_vlans:
        problems.append("switch %s: %d VLANs, platform %s holds at most %d"
                        % (name, len(vlans), platform, row.max_vlans))
    reserved = sorted(set(vlans) & row.reserved_vlans)
    if reserved:
        problems.append("switch %s: VLAN %d is reserved on platform %s" % (name, reserved[0], platform))
    statics = entry.get("static_macs", [])
    if row.static_macs is not None and len(statics) > row.static_macs:
        problems.append("switch %s: %d static MAC entries, platform %s holds at most %d"
                        % (name, len(statics), platform, row.static_macs))
    if entry.get("broadcast_ports") is not None and platform not in BROADCAST_TREE_PLATFORMS:
        problems.append("switch %s: platform %s cannot send broadcasts along a flood tree across "
                        "VLANs (broadcast_ports; only %s can); use the fixed assignment "
                        "(assignment auto picks it)"
                        % (name, platform, ", ".join(sorted(BROADCAST_TREE_PLATFORMS))))
    if row.speeds_mbps:
        for port, config in sorted(entry.get("ports", {}).items()):
            speed = config.get("speed_mbps")
            if speed is not None and speed not in row.speeds_mbps:
                problems.append("switch %s port %s: speed %s Mb/s, platform %s can force %s"
                                % (name, port, speed, platform,
                                   ", ".join(str(value) for value in row.speeds_mbps)))
    return problems
