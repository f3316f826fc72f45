# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``ovs`` platform: an Open vSwitch bridge (``fail_mode=secure``) whose
OpenFlow 1.3 pipeline behaves like an IEEE 802.1Q switch with
"general"/"hybrid" ports, which OVS's own port modes cannot express (they
allow one untagged VLAN per port, switch-tagged routing needs several;
switch-tagged VLAN paper §3.1-§3.2).

Pipeline (docs/platforms.md shows it on an example):

* table 0, classification: drop link-local destinations
  (01:80:c2:00:00:0x) and multicast sources; per port, an untagged or
  priority-tagged frame gets the port's PVID in ``reg0``; a tagged frame of
  a VLAN the port is a member of (tagged or untagged) gets that VLAN, tag
  stripped; anything else is dropped (ingress filtering).
* table 1: ``learn()`` (VLAN, source MAC -> input port) into table 2 under
  :data:`LEARNED_COOKIE`, then resubmit to tables 2 and 3.
* table 2, forwarding database: static entries (VLAN, destination MAC ->
  port in ``reg1``) at priority 20, above learned ones (priority 10).
* table 3, egress: per VLAN, the chosen port if it is a member (untagged, or
  tag pushed with PCP 0), flooding to every member when the destination is
  unknown (``reg1=0``: untagged members first, then push the tag and output
  to tagged members). OVS never outputs to the input port, which gives
  "flood to all members but the input port" for free; a port that is not a
  member of the VLAN gets nothing (egress filtering).

Beside the flows, a switch holds per port an admin state (``ovs-ofctl
mod-port up|down``: the peer sees no carrier) and a speed (a ``tc tbf`` on
the switch side of the port's veth, egress; the lab sets the other side),
and per bridge STP/RSTP off (or RSTP on for a spanning-tree baseline).

:func:`render` gives what a switch must hold, :func:`parse_state` reads
what it holds (the output of :func:`read_script`) into the same form,
:func:`compare` diffs the two and :func:`write_script` applies the
difference in one go. Pure functions, standard library only.
"""

from __future__ import annotations

import functools
import re
import shlex

from ..fabric.device_strings import label
from typing import Any, NamedTuple

from ..errors import EtherclusterError

PLATFORM = "ovs"
DEFAULT_BRIDGE = "br0"
PIPELINE_COOKIE = 0xEC00
LEARNED_COOKIE = 0xEC01
TABLE_CLASSIFY, TABLE_LEARN, TABLE_FDB, TABLE_EGRESS = 0, 1, 2, 3
PRIORITY_GUARD = 1000
PRIORITY_PORT = 100
PRIORITY_STATIC = 20
PRIORITY_LEARNED = 10
PRIORITY_FLOOD = 10
# A broadcast on the fabric's flood tree (intent broadcast_ports) beats the
# VLAN's flood, below a static entry (which never names the broadcast MAC).
PRIORITY_BROADCAST_TREE = 15
BROADCAST_MAC = "ff:ff:ff:ff:ff:ff"
MAC_AGING_S = 300
OFP_VERSION = "OpenFlow13"
MAX_OFPORT = 0xFEFF
VLAN_ETHERTYPE = "0x8100"
SECTION = "### ethercluster:"

_MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
_MAC_SEPARATORS = re.compile(r"[-.:]")
_NUMBER_RE = re.compile(r"^(0x[0-9a-f]+|[0-9]+)$")
_BRIDGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,14}\Z")


class OvsError(EtherclusterError):
    """A switch's intent cannot be rendered for OVS, or the switch does not
    hold what the pipeline needs (names the switch, port or field)."""


# Port speeds and the renegotiation gap live on the switch host, outside
# OpenFlow: a tc token bucket on the port's device emulates a speed, and a
# file in the switch's run directory holds the gap (seconds a real switch's
# link stays down while it renegotiates a new speed). The lab writes that
# file when it builds a switch; the write script reads it.
GAP_FILE = "ethercluster-renegotiation-gap"
_SPEED_CHANGE_RE = re.compile(r"^[0-9]+>[0-9]+$")
TBF_LATENCY = "20ms"
TBF_MIN_BURST = 131072  # bytes: a 64 KiB TSO segment must fit in a bucket


def tbf_parameters(speed_mbps: int) -> list[str]:
    """``tc`` arguments of a token bucket that emulates a link speed.

    The bucket holds at least one 64 KiB TSO segment (userspace TSO sends
    segments that large), and 1 ms of traffic at higher speeds."""
    if isinstance(speed_mbps, bool) or not isinstance(speed_mbps, int) or speed_mbps <= 0:
        raise OvsError("speed_mbps: must be a whole number of Mbit/s > 0, got %r" % (speed_mbps,))
    burst = max(TBF_MIN_BURST, speed_mbps * 1000 * 1000 // 8 // 1000)
    return ["rate", "%dmbit" % speed_mbps, "burst", str(burst), "latency", TBF_LATENCY]


class Flow(NamedTuple):
    """One OpenFlow flow in a comparable form: numbers as integers, match
    fields sorted, counters dropped."""

    table: int
    priority: int
    match: tuple  # sorted (field, value) pairs; value: int, (int, int) or str
    actions: tuple  # normalised actions, in order
    cookie: int = 0
    idle_timeout: int = 0
    hard_timeout: int = 0

    def text(self) -> str:
        """The flow as ``ovs-ofctl add-flow``/``replace-flows`` reads it."""
        head = ["cookie=%s" % _hex(self.cookie), "table=%d" % self.table,
                "priority=%d" % self.priority]
        if self.idle_timeout:
            head.append("idle_timeout=%d" % self.idle_timeout)
        if self.hard_timeout:
            head.append("hard_timeout=%d" % self.hard_timeout)
        head.extend(_match_text(field, value)
                    for field, value in sorted(self.match, key=_match_order))
        return "%s,actions=%s" % (",".join(head), ",".join(self.actions) or "drop")


_MATCH_ORDER = {"in_port": 0, "reg0": 1, "reg1": 2, "vlan_tci": 3, "dl_vlan": 4, "dl_src": 5,
                "dl_dst": 6}


def _match_order(item: tuple[str, Any]) -> tuple[int, str]:
    return (_MATCH_ORDER.get(item[0], 99), item[0])


def _hex(number: int) -> str:
    return "0" if number == 0 else "0x%x" % number


def _match_text(field: str, value: Any) -> str:
    if value is None:
        return field
    if isinstance(value, tuple):
        return "%s=%s/%s" % (field, _hex(value[0]), _hex(value[1]))
    if isinstance(value, int):
        return "%s=%s" % (field, value if field in _DECIMAL_FIELDS else _hex(value))
    return "%s=%s" % (field, value)


_DECIMAL_FIELDS = {"in_port", "dl_vlan", "dl_vlan_pcp", "table", "priority"}


# ---------------------------------------------------------------- the intent
class PortIntent(NamedTuple):
    ofport: int
    pvid: int | None
    untagged: tuple
    tagged: tuple
    admin: str
    speed_mbps: int | None


class SwitchIntent(NamedTuple):
    name: str
    stp: bool
    vlans: tuple
    ports: dict  # port name -> PortIntent
    static_macs: tuple  # (vlan, mac, port name)
    broadcast_ports: tuple | None = None  # port names on the flood tree (None: flood by VLAN)
    mac_aging_s: int = MAC_AGING_S  # idle_timeout of the learned entries (0: never age)


def normalize_intent(config: Any, switch: str = "switch") -> SwitchIntent:
    """Check one switch's entry of the intent (docs/intent.md ``switches.<name>``)
    and return it as a :class:`SwitchIntent`.

    Raises :class:`OvsError` naming ``switches.<name>.<field>`` for anything
    OVS cannot hold or that contradicts 802.1Q: a port that is not a number,
    a VLAN outside 1-4094, a port both tagged and untagged member of one
    VLAN, a member VLAN missing from ``vlans``, a static entry on a port
    outside the VLAN.
    """
    where = "switches.%s" % switch
    if not isinstance(config, dict):
        raise OvsError("%s: must be a mapping (vlans, ports, static_macs), got %s"
                       % (where, type(config).__name__))
    platform = config.get("platform", PLATFORM)
    if platform != PLATFORM:
        raise OvsError("%s.platform: is %r; the ovs renderer only renders platform 'ovs'"
                       % (where, platform))
    stp = config.get("stp", False)
    if not isinstance(stp, bool):
        raise OvsError("%s.stp: must be true or false, got %r" % (where, stp))
    vlans = config.get("vlans")
    if vlans is None:
        vlans = []
    if not isinstance(vlans, list):
        raise OvsError("%s.vlans: must be a list of VLAN IDs, got %r" % (where, vlans))
    vlan_set = set()
    for position, vlan in enumerate(vlans):
        vlan_set.add(_vlan(vlan, "%s.vlans[%d]" % (where, position)))
    ports = _port_intents(config.get("ports"), where, vlan_set)
    statics = _static_entries(config.get("static_macs") or [], where, ports)
    return SwitchIntent(switch, stp, tuple(sorted(vlan_set)), ports,
                        tuple(sorted((vlan, mac, port) for (vlan, mac), port in statics.items())),
                        _broadcast_ports(config.get("broadcast_ports"), where, ports),
                        _mac_aging(config.get("mac_aging_s"), where))


def _mac_aging(value: Any, where: str) -> int:
    """``switches.<name>.mac_aging_s``: the learn() idle_timeout, a 16-bit
    field (0: learned entries never age); absent: :data:`MAC_AGING_S`."""
    if value is None:
        return MAC_AGING_S
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFF:
        raise OvsError("%s.mac_aging_s: must be whole seconds 0-65535 (learn()'s idle_timeout; "
                       "0: never age), got %r" % (where, value))
    return value


def _broadcast_ports(value: Any, where: str, ports: dict[str, PortIntent]) -> tuple | None:
    """``switches.<name>.broadcast_ports`` checked: port names in use."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise OvsError("%s.broadcast_ports: must be a list of ports, got %r" % (where, value))
    for position, port in enumerate(value):
        if str(port) not in ports:
            raise OvsError("%s.broadcast_ports[%d]: port %s is not in %s.ports"
                           % (where, position, label(port), where))
    return tuple(sorted({str(port) for port in value}, key=int))


def _port_intents(ports_data: Any, where: str, vlan_set: set[int]) -> dict[str, PortIntent]:
    """``switches.<name>.ports`` checked, as PortIntents by port number."""
    if not isinstance(ports_data, dict):
        raise OvsError("%s.ports: must be a mapping of port -> {pvid, untagged, tagged, admin, "
                       "speed_mbps}, got %r" % (where, ports_data))
    ports = {}
    for name, entry in ports_data.items():
        port_where = "%s.ports.%s" % (where, label(name))
        name = str(name)
        if not re.fullmatch(r"[0-9]{1,5}", name) or not 1 <= int(name) <= MAX_OFPORT:
            raise OvsError("%s: an ovs port is an OpenFlow port number from 1 to %d"
                           % (port_where, MAX_OFPORT))
        if name in ports:
            raise OvsError("%s: listed twice" % port_where)
        if not isinstance(entry, dict):
            raise OvsError("%s: must be a mapping {pvid, untagged, tagged, admin, speed_mbps}"
                           % port_where)
        pvid = entry.get("pvid")
        if pvid is not None:
            pvid = _vlan(pvid, port_where + ".pvid")
        members = _port_members(entry, port_where, where, vlan_set)
        admin = entry.get("admin", "up")
        if admin not in ("up", "down"):
            raise OvsError("%s.admin: must be 'up' or 'down', got %r" % (port_where, admin))
        speed = entry.get("speed_mbps")
        if speed is not None and (isinstance(speed, bool) or not isinstance(speed, int)
                                  or speed <= 0):
            raise OvsError("%s.speed_mbps: must be a whole number of Mbit/s > 0, got %r"
                           % (port_where, speed))
        ports[name] = PortIntent(int(name), pvid, tuple(sorted(members["untagged"])),
                                 tuple(sorted(members["tagged"])), admin, speed)
    return {name: ports[name] for name in sorted(ports, key=int)}


def _port_members(entry: dict[str, Any], port_where: str, where: str,
                  vlan_set: set[int]) -> dict[str, set[int]]:
    """A port's untagged and tagged VLANs, each held by the switch, none
    both."""
    members: dict[str, set[int]] = {}
    for kind in ("untagged", "tagged"):
        value = entry.get(kind) or []
        if not isinstance(value, list):
            raise OvsError("%s.%s: must be a list of VLAN IDs, got %r"
                           % (port_where, kind, value))
        members[kind] = set()
        for position, vlan in enumerate(value):
            vlan = _vlan(vlan, "%s.%s[%d]" % (port_where, kind, position))
            if vlan not in vlan_set:
                raise OvsError("%s.%s: VLAN %d is not in %s.vlans"
                               % (port_where, kind, vlan, where))
            members[kind].add(vlan)
    both = members["untagged"] & members["tagged"]
    if both:
        raise OvsError("%s: VLAN %d is both untagged and tagged on this port; a port "
                       "sends one VLAN one way" % (port_where, min(both)))
    return members


def _static_entries(static_data: Any, where: str,
                    ports: dict[str, PortIntent]) -> dict[tuple[int, str], str]:
    """``switches.<name>.static_macs`` checked: ``{(vlan, mac): port}``."""
    statics: dict[tuple[int, str], str] = {}
    if not isinstance(static_data, list):
        raise OvsError("%s.static_macs: must be a list of {mac, vlan, port}" % where)
    for position, entry in enumerate(static_data):
        entry_where = "%s.static_macs[%d]" % (where, position)
        if not isinstance(entry, dict) or set(entry) < {"mac", "vlan", "port"}:
            raise OvsError("%s: must be a mapping {mac, vlan, port}, got %r"
                           % (entry_where, entry))
        value = entry["mac"]
        # a fabric repeats each host's MAC in every VLAN on every switch: check it once
        mac = _mac_normal(value) if isinstance(value, str) else None
        if mac is None:
            mac = _mac(value, entry_where + ".mac")
        vlan = _vlan(entry["vlan"], entry_where + ".vlan")
        port = str(entry["port"])
        if port not in ports:
            raise OvsError("%s.port: port %s is not in %s.ports" % (entry_where, port, where))
        if vlan not in ports[port].untagged and vlan not in ports[port].tagged:
            raise OvsError("%s: port %s is not a member of VLAN %d, so frames of VLAN %d "
                           "cannot leave through it" % (entry_where, port, vlan, vlan))
        key = (vlan, mac)
        if key in statics and statics[key] != port:
            raise OvsError("%s: %s in VLAN %d already goes to port %s"
                           % (entry_where, mac, vlan, statics[key]))
        statics[key] = port
    return statics


def _vlan(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4094:
        raise OvsError("%s: a VLAN ID is a whole number from 1 to 4094, got %r" % (where, value))
    return value


@functools.lru_cache(maxsize=65536)
def _mac_normal(value: str) -> str | None:
    """``value`` as a unicast MAC in lower-case colon form, or None."""
    try:
        return _mac(value, "")
    except OvsError:
        return None


def _mac(value: Any, where: str) -> str:
    text = value.lower() if isinstance(value, str) else ""
    digits = _MAC_SEPARATORS.sub("", text)
    if len(digits) != 12 or not all(c in "0123456789abcdef" for c in digits):
        raise OvsError("%s: %r is not a MAC address" % (where, value))
    if int(digits[:2], 16) & 1:
        raise OvsError("%s: %s is a multicast address, not a NIC" % (where, value))
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


# --------------------------------------------------------------- rendering
def render_flows(intent: SwitchIntent) -> list[Flow]:
    """The OpenFlow pipeline of a :class:`SwitchIntent`, as :class:`Flow`
    objects in a stable order (table, then priority high to low)."""
    flows: list[Flow] = []

    def add(table: int, priority: int, match: list[tuple[str, Any]], actions: list[str]) -> None:
        # in the form parse_flow gives a dumped flow (tests hold them equal;
        # building the text and parsing it back cost 2/3 of a plan's files)
        normal = tuple(sorted(((field, value.lower() if isinstance(value, str) else value)
                              for field, value in match), key=_match_key))
        flows.append(Flow(table, priority, normal, tuple(a for a in actions if a != "drop"),
                          PIPELINE_COOKIE))

    add(TABLE_CLASSIFY, PRIORITY_GUARD,
        [("dl_dst", "01:80:c2:00:00:00/ff:ff:ff:ff:ff:f0")], [])
    # one priority above, so the two guards never overlap at equal priority
    add(TABLE_CLASSIFY, PRIORITY_GUARD + 1,
        [("dl_src", "01:00:00:00:00:00/01:00:00:00:00:00")], [])
    for port in intent.ports.values():
        if port.pvid is not None:
            classify = ["set_field:%s->reg0" % _hex(port.pvid), "goto_table:%d" % TABLE_LEARN]
            add(TABLE_CLASSIFY, PRIORITY_PORT,
                [("in_port", port.ofport), ("vlan_tci", (0x0000, 0x1FFF))], classify)
            # priority-tagged (VID 0) frames are untagged frames with a PCP
            add(TABLE_CLASSIFY, PRIORITY_PORT,
                [("in_port", port.ofport), ("dl_vlan", 0)], ["pop_vlan"] + classify)
        for vlan in sorted(port.untagged + port.tagged):
            add(TABLE_CLASSIFY, PRIORITY_PORT, [("in_port", port.ofport), ("dl_vlan", vlan)],
                ["pop_vlan", "set_field:%s->reg0" % _hex(vlan), "goto_table:%d" % TABLE_LEARN])
    add(TABLE_CLASSIFY, 0, [], [])
    add(TABLE_LEARN, 0, [], [learn_action(intent.mac_aging_s), "resubmit(,%d)" % TABLE_FDB,
                             "resubmit(,%d)" % TABLE_EGRESS])
    for vlan, mac, port in intent.static_macs:
        add(TABLE_FDB, PRIORITY_STATIC, [("reg0", vlan), ("dl_dst", mac)],
            ["set_field:%s->reg1" % _hex(intent.ports[port].ofport)])
    add(TABLE_FDB, 0, [], [])
    for vlan in intent.vlans:
        untagged = [p.ofport for p in intent.ports.values() if vlan in p.untagged]
        tagged = [p.ofport for p in intent.ports.values() if vlan in p.tagged]
        push = ["push_vlan:%s" % VLAN_ETHERTYPE, "set_field:%d->vlan_vid" % (0x1000 | vlan)]
        for ofport in untagged:
            add(TABLE_EGRESS, PRIORITY_STATIC, [("reg0", vlan), ("reg1", ofport)],
                ["output:%d" % ofport])
        for ofport in tagged:
            add(TABLE_EGRESS, PRIORITY_STATIC, [("reg0", vlan), ("reg1", ofport)],
                push + ["output:%d" % ofport])
        if untagged or tagged:
            flood = ["output:%d" % ofport for ofport in untagged]
            if tagged:
                flood += push + ["output:%d" % ofport for ofport in tagged]
            add(TABLE_EGRESS, PRIORITY_FLOOD, [("reg0", vlan), ("reg1", 0)], flood)
        if intent.broadcast_ports is not None:
            add(TABLE_EGRESS, PRIORITY_BROADCAST_TREE,
                [("reg0", vlan), ("reg1", 0), ("dl_dst", BROADCAST_MAC)],
                _tree_flood(intent, vlan, push))
    add(TABLE_EGRESS, 0, [], [])
    return sorted(flows, key=_flow_order)


def _tree_flood(intent: SwitchIntent, vlan: int, push: list[str]) -> list[str]:
    """A broadcast of ``vlan`` out of every flood-tree port (OpenFlow never
    sends it back out of its in_port), untagged unless the port is a tagged
    member of the VLAN (verify/dot1q.py, the same rule)."""
    ports = [intent.ports[name] for name in intent.broadcast_ports or ()]
    tagged = [p.ofport for p in ports if vlan in p.tagged]
    actions = ["output:%d" % p.ofport for p in ports if vlan not in p.tagged]
    if tagged:
        actions += push + ["output:%d" % ofport for ofport in tagged]
    return actions


def _flow_order(flow: Flow) -> tuple:
    # values of one field may differ in type across flows read from a switch
    # (reg0=0xa, reg0=0xa/0xfff): order them by type first
    match = tuple((field, _sortable(value))
                  for field, value in sorted(flow.match, key=_match_order))
    return (flow.table, -flow.priority, match, flow.actions, flow.cookie)


def _sortable(value: Any) -> tuple:
    if isinstance(value, int):
        return (0, value, ())
    if isinstance(value, tuple):
        return (1, 0, value)
    return (2, 0, (str(value),))


def learn_action(aging_s: int = MAC_AGING_S) -> str:
    """The ``learn()`` of table 1: (VLAN, source MAC) -> input port, into the
    forwarding database, below the static entries; learned entries age
    after ``aging_s`` idle seconds (0: never; OVS then leaves
    ``idle_timeout`` out of the dumped action, and so does this text)."""
    timeout = "idle_timeout=%d," % aging_s if aging_s else ""
    return ("learn(table=%d,%spriority=%d,cookie=%s,NXM_NX_REG0[0..11],"
            "NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],load:NXM_OF_IN_PORT[]->NXM_NX_REG1[0..15])"
            % (TABLE_FDB, timeout, PRIORITY_LEARNED, _hex(LEARNED_COOKIE)))


def render(config: Any, switch: str = "switch") -> dict[str, Any]:
    """What switch ``switch`` must hold for its intent entry ``config``:
    ``{"flows": [Flow, ...], "ports": {port: {"admin", "speed_mbps"}},
    "bridge": {"fail_mode": "secure", "stp": bool, "rstp": bool}}``."""
    intent = normalize_intent(config, switch)
    return {
        "flows": render_flows(intent),
        "ports": {name: {"admin": port.admin, "speed_mbps": port.speed_mbps}
                  for name, port in intent.ports.items()},
        # stp: true asks for a spanning tree: RSTP (3-5 s to converge on a netdev bridge)
        "bridge": {"fail_mode": "secure", "stp": False, "rstp": intent.stp},
    }


def flows_text(flows: list[Flow]) -> str:
    """Flows as the text ``ovs-ofctl replace-flows`` reads, one per line."""
    return "".join(flow.text() + "\n" for flow in flows)


def state_to_data(state: dict[str, Any]) -> dict[str, Any]:
    """A rendered or parsed state as plain data (flows as text lines)."""
    data: dict[str, Any] = {"flows": [flow.text() for flow in state["flows"]],
                            "ports": {name: dict(value) for name, value in state["ports"].items()},
                            "bridge": dict(state["bridge"])}
    for key in ("learned_flows", "foreign_flows"):
        if key in state:
            data[key] = len(state[key])
    return data


# ----------------------------------------------------------------- parsing
_STAT_FIELDS = {"duration", "n_packets", "n_bytes", "idle_age", "hard_age"}
_FLAG_FIELDS = {"send_flow_rem", "check_overlap", "reset_counts", "no_packet_counts",
                "no_byte_counts"}


def parse_flows(text: str) -> list[Flow]:
    """Parse ``ovs-ofctl dump-flows`` output (with or without statistics) or
    a flow file into :class:`Flow` objects. Lines that are not flows
    (``OFPST_FLOW reply ...``, blank, ``#`` comments) are skipped."""
    flows = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith(("OFPST_", "NXST_")):
            continue
        try:
            flows.append(parse_flow(line))
        except ValueError as exc:
            raise OvsError("flow line %d: %s: %r" % (number, exc, line))
    return flows


def parse_flow(line: str) -> Flow:
    """One flow line -> :class:`Flow` (raises ValueError when it is not one)."""
    match = re.search(r"(?:^|[\s,])actions=", line)
    if match is None:
        raise ValueError("no actions=")
    head = line[:match.start()].replace(", ", ",").strip().strip(",")
    actions_text = line[match.end():].strip()
    fields = {"cookie": 0, "table": 0, "priority": 32768, "idle_timeout": 0, "hard_timeout": 0}
    matches = []
    for token in filter(None, (part.strip() for part in head.split(","))):
        key, sep, value = token.partition("=")
        key = key.strip().lower()
        if key in _STAT_FIELDS or key in _FLAG_FIELDS:
            continue
        if key in fields:
            try:
                fields[key] = int(value.split("/")[0], 0)
            except ValueError:
                raise ValueError("%s=%s is not a number" % (key, value))
            continue
        matches.append((key, _match_value(value.strip().lower()) if sep else None))
    return Flow(fields["table"], fields["priority"], tuple(sorted(matches, key=_match_key)),
                tuple(_actions(actions_text)), fields["cookie"], fields["idle_timeout"],
                fields["hard_timeout"])


def _match_key(item: tuple[str, Any]) -> tuple[str, str]:
    return (item[0], repr(item[1]))


def _match_value(value: str) -> int | tuple[int, int] | str:
    number, slash, mask = value.partition("/")
    if _NUMBER_RE.match(number) and (not slash or _NUMBER_RE.match(mask)):
        return (int(number, 0), int(mask, 0)) if slash else int(number, 0)
    return value


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _actions(text: str) -> list[str]:
    """Actions normalised: numbers in one notation, ``drop`` left out."""
    result = []
    for action in _split_top(text.strip()):
        lowered = action.lower() if not action.startswith("learn(") else action
        if lowered == "drop":
            continue
        kind, sep, rest = lowered.partition(":")
        if sep and kind in ("set_field", "load") and "->" in rest:
            value, _arrow, target = rest.partition("->")
            if _NUMBER_RE.match(value):
                value = _hex(int(value, 0)) if target.startswith("reg") or kind == "load" \
                    else str(int(value, 0))
            lowered = "%s:%s->%s" % (kind, value, target)
        elif sep and kind in ("output", "goto_table") and _NUMBER_RE.match(rest):
            lowered = "%s:%d" % (kind, int(rest, 0))
        result.append(lowered)
    return result


def parse_ports(text: str) -> dict[int, dict[str, str]]:
    """``ovs-ofctl dump-ports-desc`` output -> ``{ofport: {"dev", "admin",
    "link"}}`` (``LOCAL`` is left out)."""
    ports = {}
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        head = re.match(r"^\s*([0-9]+)\(([^)]*)\):", line)
        if head and len(head.group(1)) > 9:  # int() raises ValueError past 4,300 digits
            raise OvsError("ports line %d: port number %s... is not an OpenFlow port" % (number, head.group(1)[:12]))
        if head:
            current = {"dev": head.group(2), "admin": "up", "link": "up"}
            ports[int(head.group(1))] = current
            continue
        if re.match(r"^\s*LOCAL\(", line):
            current = None
            continue
        if current is None:
            continue
        key, _colon, value = line.strip().partition(":")
        if key == "config" and "PORT_DOWN" in value:
            current["admin"] = "down"
        elif key == "state" and "LINK_DOWN" in value:
            current["link"] = "down"
    return ports


_RATE_UNITS = {"bit": 1e-6, "kbit": 1e-3, "mbit": 1.0, "gbit": 1e3, "tbit": 1e6}


def parse_tc(text: str) -> dict[str, int | float]:
    """``tc qdisc show`` output -> ``{device: rate in Mbit/s}`` for the root
    tbf qdiscs (the emulated port speeds)."""
    rates = {}
    for line in text.splitlines():
        found = re.search(r"qdisc tbf \S+ dev (\S+) root .*?\brate (\d+(?:\.\d+)?)([KMGT]?bit)",
                          line)
        if found:
            mbps = float(found.group(2)) * _RATE_UNITS[found.group(3).lower()]
            rates[found.group(1)] = int(mbps) if mbps == int(mbps) else mbps
    return rates


def gap_file_text(gap: float, gaps: dict[str, float] | None = None) -> str:
    """The renegotiation-gap file of a lab switch (:data:`GAP_FILE`): the
    gap of any speed change on the first line, then one ``FROM>TO SECONDS``
    line per change that has its own figure (a switch model's Table 6)."""
    return "".join(["%g\n" % gap] + ["%s %g\n" % item for item in sorted((gaps or {}).items())])


def parse_gap_file(lines: list[str]) -> tuple[float, dict[str, float]]:
    """:func:`gap_file_text` read back: ``(gap, {"FROM>TO": seconds})``;
    lines it cannot read are skipped (an old or hand-edited file)."""
    gap, gaps = 0.0, {}
    for line in lines:
        words = line.split()
        try:
            if len(words) == 1:
                gap = float(words[0])
            elif len(words) == 2 and _SPEED_CHANGE_RE.match(words[0]):
                gaps[words[0]] = float(words[1])
        except ValueError:
            continue
    return gap, gaps


def parse_state(text: str) -> dict[str, Any]:
    """The output of :func:`read_script` -> the form :func:`render` returns,
    plus what only a live switch has: ``ports[*]`` gain ``dev``, ``ofport``
    and ``link``; ``learned_flows`` and ``foreign_flows`` hold the flows
    that are not part of the pipeline; ``gap`` is the renegotiation gap and
    ``gaps`` the gaps of particular speed changes (:func:`parse_gap_file`)."""
    sections: dict[str, list[str]] = {}
    name = None
    for line in text.splitlines():
        if line.startswith(SECTION):
            name = line[len(SECTION):].strip()
            sections[name] = []
        elif name is not None:
            sections[name].append(line)
    missing = [key for key in ("flows", "ports", "bridge") if key not in sections]
    if missing:
        raise OvsError("the switch's answer lacks the %s section(s); is it an OVS switch "
                       "with the bridge?" % ", ".join(missing))
    flows = parse_flows("\n".join(sections["flows"]))
    ports_by_number = parse_ports("\n".join(sections["ports"]))
    rates = parse_tc("\n".join(sections.get("tc", [])))
    bridge_values = [value.strip().strip('"') for value in sections["bridge"] if value.strip()]
    if len(bridge_values) < 3:
        raise OvsError("cannot read the bridge settings from %r" % (sections["bridge"],))
    ports = {}
    for number, port in sorted(ports_by_number.items()):
        ports[str(number)] = {"admin": port["admin"], "speed_mbps": rates.get(port["dev"]),
                              "dev": port["dev"], "ofport": number, "link": port["link"]}
    gap, gaps = parse_gap_file(sections.get("gap", []))
    return {
        "flows": sorted((f for f in flows if f.cookie == PIPELINE_COOKIE), key=_flow_order),
        "learned_flows": [f for f in flows if f.cookie == LEARNED_COOKIE],
        "foreign_flows": [f for f in flows if f.cookie not in (PIPELINE_COOKIE, LEARNED_COOKIE)],
        "ports": ports,
        "bridge": {"stp": bridge_values[0] == "true", "rstp": bridge_values[1] == "true",
                   "fail_mode": bridge_values[2] or None},
        "gap": gap,
        "gaps": gaps,
    }


# ------------------------------------------------------------------- diff
class Changes(NamedTuple):
    """What must change on one switch: flows to add and to remove (the
    pipeline is replaced as a whole when any differ), ports to bring up or
    down, ports whose speed changes, and bridge settings."""

    flows_added: list
    flows_removed: list
    admin_up: list
    admin_down: list
    speeds: dict  # port -> Mbit/s
    bridge: dict  # setting -> value

    @property
    def changed(self) -> bool:
        """True if anything must change."""
        return bool(self.flows_added or self.flows_removed or self.admin_up or self.admin_down
                    or self.speeds or self.bridge)


def compare(current: dict[str, Any], desired: dict[str, Any], switch: str = "switch") -> Changes:
    """The :class:`Changes` that turn ``current`` (from :func:`parse_state`)
    into ``desired`` (from :func:`render`). Raises :class:`OvsError` when
    the intent names a port the switch does not have."""
    absent = [port for port in desired["ports"] if port not in current["ports"]]
    if absent:
        raise OvsError("switches.%s.ports.%s: the switch has no OpenFlow port %s (it has %s)"
                       % (switch, absent[0], absent[0],
                          ", ".join(current["ports"]) or "none"))
    have = set(current["flows"]) | set(current.get("foreign_flows", []))
    want = set(desired["flows"])
    added = sorted(want - have, key=_flow_order)
    removed = sorted(have - want, key=_flow_order)
    admin_up: list[str] = []
    admin_down: list[str] = []
    speeds = {}
    for port, wanted in desired["ports"].items():
        now = current["ports"][port]
        if wanted["admin"] != now["admin"]:
            (admin_up if wanted["admin"] == "up" else admin_down).append(port)
        if wanted["speed_mbps"] is not None and wanted["speed_mbps"] != now["speed_mbps"]:
            speeds[port] = wanted["speed_mbps"]
    bridge = {key: value for key, value in desired["bridge"].items()
              if current["bridge"].get(key) != value}
    return Changes(added, removed, admin_up, admin_down, speeds, bridge)


def describe(state: dict[str, Any], ports: set[str] | None = None) -> str:
    """A switch's state as sorted text lines for a human diff."""
    lines = ["bridge: fail_mode=%s stp=%s rstp=%s" % (
        state["bridge"].get("fail_mode"), _on(state["bridge"].get("stp")),
        _on(state["bridge"].get("rstp")))]
    for port in sorted(state["ports"], key=int):
        if ports is not None and port not in ports:
            continue
        value = state["ports"][port]
        speed = value.get("speed_mbps")
        lines.append("port %s: admin=%s speed=%s" % (
            port, value["admin"], "%s Mb/s" % speed if speed is not None else "unlimited"))
    lines.extend("flow %s" % flow.text() for flow in sorted(
        list(state["flows"]) + list(state.get("foreign_flows", [])), key=_flow_order))
    return "".join(line + "\n" for line in lines)


def _on(value: Any) -> str:
    return "on" if value else "off"


def diff(current: dict[str, Any], desired: dict[str, Any]) -> dict[str, str]:
    """``{"before", "after"}`` texts of one switch for Ansible's ``--diff``
    (ports the intent does not name are left out of both)."""
    ports = set(desired["ports"])
    return {"before": describe(current, ports), "after": describe(desired, ports)}


# ---------------------------------------------------------------- scripts
def _check_bridge(bridge: Any) -> str:
    if not isinstance(bridge, str) or not _BRIDGE_RE.match(bridge):
        raise OvsError("bridge: %r is not a bridge name" % (bridge,))
    return bridge


def read_script(bridge: str = DEFAULT_BRIDGE) -> str:
    """Shell script (run by ``sh -s`` on the switch) that prints everything
    :func:`parse_state` needs, in one round trip."""
    bridge = _check_bridge(bridge)
    return "\n".join([
        "set -e",
        "echo '%sflows'" % SECTION,
        "ovs-ofctl -O %s dump-flows --no-stats --no-names %s" % (OFP_VERSION, bridge),
        "echo '%sports'" % SECTION,
        "ovs-ofctl -O %s dump-ports-desc --no-names %s" % (OFP_VERSION, bridge),
        "echo '%sbridge'" % SECTION,
        "ovs-vsctl get Bridge %s stp_enable rstp_enable fail_mode" % bridge,
        "echo '%stc'" % SECTION,
        "tc qdisc show || true",
        "echo '%sgap'" % SECTION,
        "cat \"${OVS_RUNDIR:-/var/run/openvswitch}/%s\" 2>/dev/null || echo 0" % GAP_FILE,
        "",
    ])


def _speed_change_gap(current: dict[str, Any], port: str, speed: int) -> float:
    """How long ``port`` stays down to change to ``speed``: the switch's
    figure for that change, else its gap for any change."""
    key = "%s>%s" % (current["ports"][port].get("speed_mbps"), speed)
    return float((current.get("gaps") or {}).get(key, current.get("gap") or 0))


def write_script(changes: Changes, desired: dict[str, Any], current: dict[str, Any],
                 bridge: str = DEFAULT_BRIDGE) -> str:
    """Shell script that applies ``changes`` in one round trip.

    Order, so that the switch never holds less than both states allow:
    ports come up first, then the pipeline's differences are applied in
    one atomic bundle (:func:`flow_write_lines`), then ports go down, then
    speeds change. A speed change on a switch with a
    renegotiation gap takes the port down for the gap, as a real switch
    does while it renegotiates, and brings it back up (unless it is meant
    to be down). The script stops at the first failing command.
    """
    bridge = _check_bridge(bridge)
    lines = ["set -e"]
    ofctl = "ovs-ofctl -O %s" % OFP_VERSION
    for port in changes.admin_up:
        lines.append("%s mod-port %s %s up" % (ofctl, bridge, current["ports"][port]["ofport"]))
    if changes.bridge:
        settings = []
        for key, value in sorted(changes.bridge.items()):
            column = {"stp": "stp_enable", "rstp": "rstp_enable"}.get(key, key)
            settings.append("%s=%s" % (column, str(value).lower()))
        lines.append("ovs-vsctl set Bridge %s %s" % (bridge, " ".join(settings)))
    if changes.flows_added or changes.flows_removed:
        lines.extend(flow_write_lines(desired, ofctl, bridge))
    for port in changes.admin_down:
        lines.append("%s mod-port %s %s down" % (ofctl, bridge, current["ports"][port]["ofport"]))
    if changes.speeds:
        devices = {port: current["ports"][port]["dev"] for port in changes.speeds}
        gap = max(_speed_change_gap(current, port, speed) for port, speed in changes.speeds.items())
        if gap > 0:
            lines.extend("ip link set %s down" % shlex.quote(devices[port])
                         for port in sorted(changes.speeds, key=int))
        for port in sorted(changes.speeds, key=int):
            lines.append("tc qdisc replace dev %s root tbf %s" % (
                shlex.quote(devices[port]), " ".join(tbf_parameters(changes.speeds[port]))))
        if gap > 0:
            lines.append("sleep %g" % gap)
            lines.extend("ip link set %s up" % shlex.quote(devices[port])
                         for port in sorted(changes.speeds, key=int)
                         if desired["ports"][port]["admin"] == "up")
    lines.append("")
    return "\n".join(lines)


# Turns ``ovs-ofctl diff-flows SWITCH FILE`` ("-flow": only on the switch, "+flow": only in the file,
# a changed flow as "-" then "+") into a bundle for ``add-flows``: every delete first (strict, by table,
# priority, match and cookie), then every add; a learned entry's "-" line is skipped when keep=1.
_DIFF_TO_BUNDLE_AWK = r"""/^-/ {
  n = split(substr($0, 2), t, " "); m = ""; c = "0"
  for (i = 1; i <= n; i++) {
    if (t[i] ~ /^actions=/) break
    if (t[i] ~ /^cookie=/) c = substr(t[i], 8)
    else if (t[i] !~ /^(idle_timeout|hard_timeout|importance)=/ \
             && t[i] !~ /^(send_flow_rem|check_overlap|reset_counts|no_packet_counts|no_byte_counts)$/) m = m " " t[i]
  }
  if (keep && c == learned) next
  print "delete_strict" m " cookie=" c "/-1"; next
}
/^[+]/ { adds[++a] = "add " substr($0, 2) }
END { for (i = 1; i <= a; i++) print adds[i] }"""


def keeps_learned(desired: dict[str, Any]) -> bool:
    """Whether a write leaves the switch's learned entries alone: when the
    pipeline has static entries, they decide (priority 20 over 10) for
    every planned host, and a learned entry of another source moves with
    that source's next frame, as on a hardware switch. A self-learning
    pipeline (no static entry) forwards by its learned entries, which may
    be stale once the paths change: its writes flush them.

    Leaving them alone also keeps Open vSwitch 3.1.0 alive: a learned entry
    deleted while frames still refresh it could be put back by the
    revalidator and abort the daemon (docs/lab.md, "An emulator defect")."""
    return any(flow.table == TABLE_FDB and flow.priority == PRIORITY_STATIC for flow in desired["flows"])


def flow_write_lines(desired: dict[str, Any], ofctl: str, bridge: str) -> list[str]:
    """Shell lines that make the switch's pipeline ``desired["flows"]`` in
    one atomic bundle: the switch compares its flows with them itself
    (``diff-flows``, so the write is right even if the state it was
    planned on is old), and only the differences are sent; the learned
    entries stay unless :func:`keeps_learned` says otherwise. Before
    2026-11-29 this was ``replace-flows``, which deletes every learned
    entry on every write."""
    marker = "ETHERCLUSTER_FLOWS"
    return [
        # diff-flows exits 2 when the flows differ, 1 on an error (which stops the script)
        "ec_flow_diff=$(%s diff-flows %s /dev/stdin <<'%s'" % (ofctl, bridge, marker),
        flows_text(desired["flows"]) + marker,
        ") || [ $? -eq 2 ]",
        "printf '%%s\\n' \"$ec_flow_diff\" | awk -v keep=%d -v learned=%s %s | %s --bundle add-flows %s -"
        % (keeps_learned(desired), "%#x" % LEARNED_COOKIE, shlex.quote(_DIFF_TO_BUNDLE_AWK), ofctl, bridge),
    ]


def change_summary(changes: Changes, current: dict[str, Any], desired: dict[str, Any]) -> list[str]:
    """One line per change, for the task's result."""
    lines: list[str] = []
    lines.extend("port %s: admin up" % port for port in changes.admin_up)
    lines.extend("bridge: %s=%s" % item for item in sorted(changes.bridge.items()))
    if changes.flows_added or changes.flows_removed:
        lines.append("flows: %d to add, %d to remove, %s"
                     % (len(changes.flows_added), len(changes.flows_removed),
                        "learned entries kept" if keeps_learned(desired) else
                        "%d learned entries flushed" % len(current.get("learned_flows", []))))
    lines.extend("port %s: admin down" % port for port in changes.admin_down)
    for port, speed in sorted(changes.speeds.items(), key=lambda item: int(item[0])):
        lines.append("port %s: speed %s -> %d Mb/s"
                     % (port, current["ports"][port]["speed_mbps"], speed))
    return lines
