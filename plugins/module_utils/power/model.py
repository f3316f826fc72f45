# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Power model of an Ethernet fabric (switch-tagged VLAN paper, Koibuchi et
al., TPDS 2010, §3.6 and Table 2).

The paper measured that a switch draws a constant *base* power ("all except
ports") plus a constant power per *active* port that depends only on the
port's speed (1 Gb/s, 100 Mb/s, 10 Mb/s), not on the traffic it carries.
A port that is shut down draws nothing, except on the Planex SF-0420G,
whose port power drops only when the port at the *other* end of the link is
shut down too (the *both-ends rule*).

So the fabric's power is::

    sum over switches (base_watts + sum over its active ports port_watts[speed])

Choices made here (documented in docs/power.md):

* **Host ports** count as active ports at the host link's speed (1000 Mb/s
  unless ``speeds`` names the host): the hosts stay on, and the fabric
  cannot save their ports by re-routing. A host port can be shut with
  ``port_states``; on a both-ends switch that saves nothing (the host NIC,
  the other end, stays up).
* **Unused ports** (no cable) draw nothing: the paper measured the same
  power with links removed as with ports shut.
* A port that is administratively up counts as active at its link's speed
  whatever the other end does (no measurement exists for a port without
  carrier, so the estimate stays on the safe side).
* A switch without ``power_profile`` uses :data:`DEFAULT_PROFILE`.

A link turned *off* (``link_states``) is shut at both ends, so the
both-ends rule changes nothing for it; the rule matters only when a single
end is shut (``port_states``: one switch port of a link, or a host port).
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple, cast

from ..errors import EtherclusterError, TopologyError
from ..fabric.topology import DEFAULT_SPEED_MBPS, Endpoint, Topology
from .link_timings import TABLE6_TIMINGS, LinkTimings, non_negative, timings_from_data

DEFAULT_PROFILE = "PC5324"
PROFILE_FIELDS = ("port_watts", "base_watts", "both_ends_rule", "description", "link_timings")


class PowerError(EtherclusterError):
    """Bad power input: an unknown or malformed profile, a speed a profile
    has no figure for, an unknown link or port. The message names the
    field, switch, link or port."""


class PowerProfile(NamedTuple):
    """Power figures of one switch model.

    ``port_watts`` maps a port speed in Mb/s to the watts one active port
    draws at that speed; ``base_watts`` is what the switch draws with every
    port shut ("all except ports"); ``both_ends_rule`` says a shut port
    keeps drawing power until the other end of its link is shut as well.
    ``link_timings`` (:mod:`.link_timings`, Table 6): how long the model
    takes to bring a link up and to change a port's speed, None when
    unknown.
    """

    name: str
    port_watts: dict
    base_watts: float
    both_ends_rule: bool = False
    description: str = ""
    link_timings: LinkTimings | None = None

    def watts_at(self, speed_mbps: Any, where: str = "port") -> float:
        """Watts of one active port at ``speed_mbps``; PowerError naming
        ``where`` when the profile has no figure for that speed."""
        try:
            return self.port_watts[int(speed_mbps)]
        except (KeyError, TypeError, ValueError):
            raise PowerError("%s: power profile %s has no figure for %r Mb/s (it knows %s Mb/s)"
                             % (where, self.name, speed_mbps,
                                ", ".join(str(s) for s in self.speeds()))) from None

    def speeds(self) -> list[int]:
        """The speeds the profile knows, fastest first."""
        return sorted(self.port_watts, reverse=True)

    def to_data(self) -> dict[str, Any]:
        """Plain data, as :func:`profile_from_data` takes it."""
        data = {"port_watts": dict(self.port_watts), "base_watts": self.base_watts,
                "both_ends_rule": self.both_ends_rule, "description": self.description}
        if self.link_timings is not None:
            data["link_timings"] = self.link_timings.to_data()
        return data


# Table 2 of the switch-tagged paper (§3.6): W per port at 1G/100M/10M and
# "all except ports"; with each model's Table 6 link timings (§4.3). The
# paper's "SF-420" row is the Planex SF-0420G.
TABLE2_PROFILES = {
    "PC5324": PowerProfile("PC5324", {1000: 1.2, 100: 0.9, 10: 0.5}, 15.0, False,
                           "Dell PowerConnect 5324, 24-port layer-2 GbE (Table 2: max 42.9 W)",
                           TABLE6_TIMINGS["PC5324"]),
    "PC6224": PowerProfile("PC6224", {1000: 2.0, 100: 0.9, 10: 0.8}, 42.5, False,
                           "Dell PowerConnect 6224, 24-port layer-3 GbE (Table 2: max 91.1 W)",
                           TABLE6_TIMINGS["PC6224"]),
    "PC6248": PowerProfile("PC6248", {1000: 2.1, 100: 1.3, 10: 1.1}, 56.8, False,
                           "Dell PowerConnect 6248, 48-port layer-3 GbE (Table 2: max 155.2 W)",
                           TABLE6_TIMINGS["PC6248"]),
    "SF-0420G": PowerProfile("SF-0420G", {1000: 1.0, 100: 0.2, 10: 0.0}, 32.6, True,
                             "Planex SF-0420G (Table 2 row SF-420: max 55.4 W); a port saves "
                             "power only when both ends of its link are shut",
                             TABLE6_TIMINGS["SF-0420G"]),
}


# ------------------------------------------------------------ profiles
def _number(value: Any, where: str, problems: list[str]) -> float | None:
    """``value`` as watts (a finite number >= 0), else None and a problem."""
    return non_negative(value, where, "watts", problems)


def profile_from_data(name: Any, data: Any, where: str | None = None) -> PowerProfile:
    """A :class:`PowerProfile` from plain data (a playbook variable)::

        {port_watts: {1000: 1.2, 100: 0.9, 10: 0.5}, base_watts: 15.0,
         both_ends_rule: false, description: "...",
         link_timings: {on_off_s: 3.2, speed_change_s: {"1000>100": 4.1}}}

    Speeds may be YAML strings (``"1000"``). Raises PowerError listing every
    bad field as ``power_profiles.<name>.<field>``."""
    where = where or "power_profiles.%s" % (name,)
    if not isinstance(name, str) or not name:
        raise PowerError("%s: a profile name must be a non-empty string" % where)
    if isinstance(data, PowerProfile):
        return data._replace(name=name)
    if not isinstance(data, dict):
        raise PowerError("%s: must be a mapping with port_watts and base_watts, got %s"
                         % (where, type(data).__name__))
    problems = ["%s.%s: unknown field (fields: %s)" % (where, key, ", ".join(PROFILE_FIELDS))
                for key in data if key not in PROFILE_FIELDS]
    port_watts: dict[int, float] = {}
    raw = data.get("port_watts")
    if not isinstance(raw, dict) or not raw:
        problems.append("%s.port_watts: must be a non-empty mapping of speed in Mb/s -> watts "
                        "per active port, e.g. {1000: 1.2, 100: 0.9}" % where)
    else:
        for speed, watts in raw.items():
            field = "%s.port_watts.%s" % (where, speed)
            text = str(speed)
            if isinstance(speed, bool) or not text.isdigit() or int(text) < 1:
                problems.append("%s: the speed must be a whole number of Mb/s >= 1" % field)
                continue
            value = _number(watts, field, problems)
            if value is not None:
                port_watts[int(text)] = value
    if "base_watts" not in data:
        problems.append("%s.base_watts: missing (watts with every port shut)" % where)
        base = None
    else:
        base = _number(data["base_watts"], where + ".base_watts", problems)
    both_ends = data.get("both_ends_rule", False)
    if not isinstance(both_ends, bool):
        problems.append("%s.both_ends_rule: must be true or false, got %r" % (where, both_ends))
    description = data.get("description", "")
    if not isinstance(description, str):
        problems.append("%s.description: must be a string" % where)
    timings = None
    if data.get("link_timings") is not None:
        timings = timings_from_data(data["link_timings"], where + ".link_timings", problems)
    if problems:
        raise PowerError("; ".join(problems))
    # base is None only with a problem, refused above
    return PowerProfile(name, port_watts, cast(float, base), both_ends, description, timings)


def power_profiles(profiles: dict[str, Any] | None = None) -> dict[str, PowerProfile]:
    """The Table-2 profiles plus user-defined ones (``{name: data or
    PowerProfile}``; a user profile may replace a built-in one)."""
    result = dict(TABLE2_PROFILES)
    if profiles is None:
        return result
    if not isinstance(profiles, dict):
        raise PowerError("power_profiles: must be a mapping of profile name -> {port_watts, "
                         "base_watts, both_ends_rule}, got %s" % type(profiles).__name__)
    for name, data in profiles.items():
        result[name] = profile_from_data(name, data)
    return result


def switch_profiles(topology: Topology, profiles: dict[str, Any] | None = None,
                    default: str = DEFAULT_PROFILE) -> dict[str, PowerProfile]:
    """``{switch: PowerProfile}``: each switch's ``power_profile`` (topology
    field ``switches.<sw>.power_profile``) or ``default``."""
    known = power_profiles(profiles)
    result = {}
    for sw in topology.switches.values():
        name = sw.power_profile if sw.power_profile is not None else default
        if name not in known:
            field = ("switches.%s.power_profile" % sw.name if sw.power_profile is not None
                     else "default power profile (switch %s has none)" % sw.name)
            raise PowerError("%s: unknown power profile %r (profiles: %s)"
                             % (field, name, ", ".join(sorted(known))))
        result[sw.name] = known[name]
    return result


# ------------------------------------------------------- states and speeds
def _link_index(topology: Topology, ref: Any, where: str) -> int:
    """The index of the link ``ref`` names; PowerError naming ``where`` else."""
    try:
        if isinstance(ref, bool):
            raise TopologyError("%r is no link" % (ref,))
        return topology.link(int(ref) if isinstance(ref, numbers.Integral) else ref).index
    except TopologyError as exc:
        raise PowerError("%s[%s]: %s" % (where, ref, "; ".join(exc.problems))) from None


def _state(value: Any, where: str) -> str:
    """``"up"`` or ``"down"`` from a state (also on/off, true/false)."""
    if value in ("up", True, "on"):
        return "up"
    if value in ("down", False, "off"):
        return "down"
    raise PowerError("%s: the state must be up or down, got %r" % (where, value))


def _speed(value: Any, where: str) -> int:
    """``value`` as a whole number of Mb/s >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PowerError("%s: the speed must be a whole number of Mb/s, got %r" % (where, value))
    return value


def resolve_link_states(topology: Topology, link_states: dict[Any, Any] | None = None) -> list[str]:
    """A list, per link index, of "up"/"down": the topology's states with
    ``link_states`` (``{link ref: state}``; a ref is a link index,
    ``"sw:port"`` of either end or the link name) applied on top."""
    states = [link.state for link in topology.links]
    for ref, value in (link_states or {}).items():
        index = _link_index(topology, ref, "link_states")
        states[index] = _state(value, "link_states[%s]" % (ref,))
    return states


def resolve_link_speeds(topology: Topology, speeds: dict[Any, Any] | None = None) -> list[int]:
    """A list, per link index, of the speed in Mb/s: the topology's
    ``speed_mbps`` with the link refs of ``speeds`` applied (host names in
    ``speeds`` are ignored here)."""
    result = [link.speed_mbps for link in topology.links]
    for ref, value in (speeds or {}).items():
        if isinstance(ref, str) and ref in topology.hosts:
            continue
        index = _link_index(topology, ref, "speeds")
        result[index] = _speed(value, "speeds[%s]" % (ref,))
    return result


def _port_states(topology: Topology, port_states: dict[Any, Any] | None) -> dict[Endpoint, str]:
    """``{Endpoint: "up"|"down"}`` from ``{"sw:port" or host name: state}``."""
    result = {}
    host_ports = {Endpoint(h.switch, h.port): h.name for h in topology.hosts.values()}
    for ref, value in (port_states or {}).items():
        where = "port_states[%s]" % (ref,)
        if isinstance(ref, str) and ref in topology.hosts:
            host = topology.hosts[ref]
            endpoint = Endpoint(host.switch, host.port)
        else:
            switch, _colon, port = str(ref).partition(":")
            endpoint = Endpoint(switch, port)
            if topology.channel_from(switch, port) is None and endpoint not in host_ports:
                raise PowerError("%s: no cabled port %s (write \"switch:port\" of a link or host "
                                 "port, or a host name)" % (where, ref))
        result[endpoint] = _state(value, where)
    return result


# ------------------------------------------------------------------ power
def fabric_power(topology: Topology, link_states: dict[Any, Any] | None = None,
                 speeds: dict[Any, Any] | None = None, profiles: dict[str, Any] | None = None,
                 port_states: dict[Any, Any] | None = None,
                 default_profile: str = DEFAULT_PROFILE) -> dict[str, Any]:
    """The fabric's power in watts for a set of link states and speeds.

    ``link_states``: ``{link ref: "up"|"down"}`` over the topology's states
    (a link down is shut at both ends). ``speeds``: ``{link ref or host
    name: Mb/s}`` over the topology's link speeds (hosts: 1000 Mb/s).
    ``profiles``: user-defined profiles (see :func:`profile_from_data`),
    merged with the Table-2 ones. ``port_states``: ``{"sw:port" or host
    name: "up"|"down"}`` for single ports (where the both-ends rule
    matters). Each switch uses its ``power_profile`` or ``default_profile``.

    Returns ``{"total_w", "base_w", "ports_w", "switches": {sw: {"profile",
    "base_w", "ports_w", "total_w", "active_ports", "shut_ports"}},
    "ports": {"sw:port": {"kind": "link"|"host", "peer", "state",
    "speed_mbps", "watts"}}}`` (watts rounded to 1 mW)."""
    by_switch = switch_profiles(topology, profiles, default_profile)
    states = resolve_link_states(topology, link_states)
    link_speeds = resolve_link_speeds(topology, speeds)
    single: dict[Any, str] = _port_states(topology, port_states)
    ports = _cabled_ports(topology, states, link_speeds, _host_speeds(topology, speeds))
    switches: dict[str, dict[str, Any]] = {
        name: {"profile": profile.name, "base_w": profile.base_watts, "ports_w": 0.0,
               "active_ports": 0, "shut_ports": 0}
        for name, profile in by_switch.items()}
    port_report: dict[str, dict[str, Any]] = {}
    for end, kind, other, link_state, speed, label in ports:
        profile = by_switch[end.switch]
        shut = link_state == "down" or single.get(end) == "down"
        if kind == "link":
            other_shut = link_state == "down" or single.get(other) == "down"
        else:
            other_shut = False  # the host NIC stays up
        draws = not shut or (profile.both_ends_rule and not other_shut)
        watts = profile.watts_at(speed, "%s (%s, switch %s)" % (end, label, end.switch)) \
            if draws else 0.0
        entry = switches[end.switch]
        entry["ports_w"] += watts
        entry["shut_ports" if shut else "active_ports"] += 1
        port_report[str(end)] = {"kind": kind, "peer": str(other) if other else label.split()[1],
                                 "state": "down" if shut else "up", "speed_mbps": speed,
                                 "watts": round(watts, 3)}
    for entry in switches.values():
        entry["ports_w"] = round(entry["ports_w"], 3)
        entry["total_w"] = round(entry["base_w"] + entry["ports_w"], 3)
    base = sum(entry["base_w"] for entry in switches.values())
    port_total = sum(entry["ports_w"] for entry in switches.values())
    return {"total_w": round(base + port_total, 3), "base_w": round(base, 3),
            "ports_w": round(port_total, 3), "switches": switches, "ports": port_report}


def _host_speeds(topology: Topology, speeds: dict[Any, Any] | None) -> dict[str, int]:
    """``{host name: Mb/s}`` of the host names in ``speeds``."""
    host_speeds = {}
    for ref, value in (speeds or {}).items():
        if isinstance(ref, str) and ref in topology.hosts:
            host_speeds[ref] = _speed(value, "speeds[%s]" % ref)
    return host_speeds


def _cabled_ports(topology: Topology, states: list[str], link_speeds: list[int],
                  host_speeds: dict[str, int]) -> list[tuple[Endpoint, str, Endpoint | None, str, int, str]]:
    """Every cabled port: (endpoint, kind, peer endpoint or None, link
    state, speed, label), both ends of every link, then the host ports."""
    ports: list[tuple[Endpoint, str, Endpoint | None, str, int, str]] = []
    for link in topology.links:
        for end, other in ((link.a, link.b), (link.b, link.a)):
            ports.append((end, "link", other, states[link.index], link_speeds[link.index],
                          "link %s" % link.name))
    for host in topology.hosts.values():
        ports.append((Endpoint(host.switch, host.port), "host", None, "up",
                      host_speeds.get(host.name, DEFAULT_SPEED_MBPS), "host %s" % host.name))
    return ports


class LinkPowerModel:
    """Fast additive form of :func:`fabric_power` for link selection, where
    only whole links change (off, or a new speed at both ends): ``fixed_w``
    (bases and host ports) plus, per link that is on, the watts of its two
    ports at its speed. A link off draws 0 W whatever the both-ends rule,
    since both of its ends are shut."""

    def __init__(self, topology: Topology, profiles: dict[str, Any] | None = None,
                 default_profile: str = DEFAULT_PROFILE) -> None:
        self.topology = topology
        self.by_switch = switch_profiles(topology, profiles, default_profile)
        self.fixed_w = sum(p.base_watts for p in self.by_switch.values())
        for host in topology.hosts.values():
            self.fixed_w += self.by_switch[host.switch].watts_at(
                DEFAULT_SPEED_MBPS, "host %s (switch %s)" % (host.name, host.switch))

    def speeds(self, link_index: int) -> list[int]:
        """Speeds both ends of the link have a power figure for, fastest first."""
        link = self.topology.links[link_index]
        common = set(self.by_switch[link.a.switch].port_watts) \
            & set(self.by_switch[link.b.switch].port_watts)
        return sorted(common, reverse=True)

    def link_watts(self, link_index: int, speed_mbps: int) -> float:
        """Watts of both ports of a link that is on at ``speed_mbps``."""
        link = self.topology.links[link_index]
        return sum(self.by_switch[end.switch].watts_at(speed_mbps, "%s (link %s)" % (end, link.name))
                   for end in (link.a, link.b))

    def total(self, off: Any = (), speeds: dict[int, int] | None = None) -> float:
        """Fabric watts with the links in ``off`` (indexes) and the file's
        down links shut, the others at ``speeds[index]`` or their speed."""
        off = set(off)
        speeds = speeds or {}
        total = self.fixed_w
        for link in self.topology.links:
            if link.index in off or link.state == "down":
                continue
            total += self.link_watts(link.index, speeds.get(link.index, link.speed_mbps))
        return total
