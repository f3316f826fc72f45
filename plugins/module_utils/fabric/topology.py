# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric model every later stage reads: switches, ports, links, hosts.

A topology is loaded from YAML (``load_topology``) or from plain data
(``topology_from_data``), either in the explicit form (``switches``,
``links``, ``hosts``) or in the generated form (``generate: {kind: ...}``,
expanded by :mod:`generators`). Validation collects every problem and
raises one :class:`TopologyError` naming file, entry and field; no input
makes this module raise anything else.

The model is a networkx ``MultiGraph`` of switches (one edge per cabled
link, keyed by the link index, so parallel links stay distinct) plus
*directed channels*: every link ``i`` gives channel ``2*i`` (a -> b) and
``2*i + 1`` (b -> a). Routing, verification, VLAN assignment and power
saving all speak in channels.

The file format is documented in docs/topology.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

import networkx as nx
from netaddr import EUI, AddrFormatError, mac_unix_expanded

from . import device_strings
from .device_strings import UnsafeString
from ..errors import TopologyError
from .input_limits import check_counts, load_yaml_text, read_text

SCHEMA = "ethercluster.routing/topology/v1"

SWITCH_DEFAULTS = {
    "platform": "ovs",
    "ports": None,  # None: exactly as many as the switch uses
    "mac_table_size": 8192,
    "max_vlans": 256,
    "power_profile": None,
    "mgmt_address": None,
    "interface_pattern": None,  # e.g. "Gi1/0/{port}"; None: the platform's own default
    "interface_names": None,  # {port: name}, beside or instead of the pattern
    "flow_control": True,  # 802.3x PAUSE: true, false, or {off: [ports]} (on elsewhere)
}
SWITCH_FIELDS = set(SWITCH_DEFAULTS) | {"coords", "level"}
LINK_FIELDS = {"a", "b", "speed_mbps", "state"}
HOST_FIELDS = {"switch", "port", "mac", "ip"}
LINK_STATES = ("up", "down")
DEFAULT_SPEED_MBPS = 1000

# Keys an inventory source file may carry beside the topology itself.
INVENTORY_KEYS = {
    "plugin", "strict", "compose", "groups", "keyed_groups",
    "leading_separator", "use_extra_vars",
}
TOP_LEVEL_FIELDS = {"name", "switches", "links", "hosts", "generate",
                    "switch_defaults", "shape", "schema", "fabric"} | INVENTORY_KEYS

MAX_PROBLEMS = 25


class Endpoint(NamedTuple):
    """One end of a link: a switch and one of its ports."""

    switch: str
    port: str

    def __str__(self):
        return "%s:%s" % (self.switch, self.port)


class Switch(NamedTuple):
    name: str
    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    platform: str
    ports: int
    mac_table_size: int
    max_vlans: int
    power_profile: str | None = None
    mgmt_address: str | None = None
    coords: tuple | None = None
    level: int | None = None
    interface_pattern: str | None = None
    interface_names: dict | None = None  # {port (str): name}, as given in the file
    # 802.3x flow control: True (every port), False (none) or the ports left off
    flow_control: bool | tuple[str, ...] = True

    def flow_control_on(self, port: str | int) -> bool:
        """Whether 802.3x flow control is on at topology port ``port``:
        switch-tagged routing is deadlock-free only with it (a lossless
        fabric, paper §4.5); ``flow_control`` turns it off per switch or
        per port."""
        if isinstance(self.flow_control, bool):
            return self.flow_control
        return str(port) not in self.flow_control

    def interface_name(self, port: str | int) -> str | None:
        """The platform's name of topology port ``port`` on this switch:
        from ``interface_names``, else ``interface_pattern``, else None
        (the renderer's default pattern applies)."""
        port = str(port)
        if self.interface_names and port in self.interface_names:
            return self.interface_names[port]
        if self.interface_pattern:
            return self.interface_pattern.format(port=port)
        return None


class Link(NamedTuple):
    """A cabled switch-to-switch link; ``index`` is its position in the file."""

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    a: Endpoint
    b: Endpoint
    speed_mbps: int = DEFAULT_SPEED_MBPS
    state: str = "up"

    @property
    def name(self) -> str:
        return "%s--%s" % (self.a, self.b)

    @property
    def channels(self) -> tuple[int, int]:
        return (2 * self.index, 2 * self.index + 1)


class Host(NamedTuple):
    name: str
    switch: str
    port: str
    mac: str
    ip: str | None = None


class Channel(NamedTuple):
    """A directed link: frames leave ``src`` on ``src_port`` and enter ``dst``
    on ``dst_port``. ``id`` is the channel's number (``2*link`` or
    ``2*link + 1``), ``link`` the index of the link it belongs to."""

    id: int
    link: int
    src: str
    src_port: str
    dst: str
    dst_port: str

    def __str__(self):
        return "%s:%s->%s:%s" % (self.src, self.src_port, self.dst, self.dst_port)


def normalize_mac(value: Any) -> str:
    """Return ``value`` as a lower-case colon-separated MAC, or raise ValueError."""
    if not isinstance(value, str):
        raise ValueError("must be a string such as \"02:00:00:00:00:01\"")
    if not re.fullmatch(r"[0-9A-Fa-f:.-]{12,17}", value):
        # netaddr reads "02:00:00:00:00:01\n" as a MAC: refuse anything but hex digits and separators
        raise ValueError("%s is not a MAC address (hex digits with ':', '-' or '.')"
                         % device_strings.shown(value))
    try:
        eui = EUI(value, dialect=mac_unix_expanded)
    except (AddrFormatError, TypeError, ValueError):
        raise ValueError("%r is not a MAC address" % value)
    if eui.version != 48:
        raise ValueError("%r is not a 48-bit MAC address" % value)
    if int(eui) >> 40 & 1:
        raise ValueError("%s is a multicast/broadcast address, not a NIC" % eui)
    if int(eui) == 0:
        raise ValueError("00:00:00:00:00:00 is not a NIC address")
    return str(eui)


class Topology:
    """A validated fabric. Build it with :func:`load_topology` or
    :func:`topology_from_data`; the constructor assumes valid input."""

    def __init__(self, name, switches, links, hosts, shape=None, source="<topology>"):
        self.name = name
        self.source = source
        self.shape = shape
        self.switches = {sw.name: sw for sw in switches}
        self.links = list(links)
        self.hosts = {host.name: host for host in hosts}
        self.channels = []
        self._channel_at = {}
        self._link_at = {}
        self._out = {name: [] for name in self.switches}
        self._in = {name: [] for name in self.switches}
        for link in self.links:
            for channel_id, (src, dst) in zip(link.channels, ((link.a, link.b), (link.b, link.a))):
                channel = Channel(channel_id, link.index, src.switch, src.port, dst.switch, dst.port)
                self.channels.append(channel)
                self._channel_at[src] = channel
                self._out[src.switch].append(channel)
                self._in[dst.switch].append(channel)
            self._link_at[link.a] = link
            self._link_at[link.b] = link
        self._hosts_on = {name: [] for name in self.switches}
        for host in self.hosts.values():
            self._hosts_on[host.switch].append(host)
        self.graph = nx.MultiGraph(name=name)
        for sw in switches:
            self.graph.add_node(sw.name, index=sw.index, coords=sw.coords, level=sw.level)
        for link in self.links:
            self.graph.add_edge(link.a.switch, link.b.switch, key=link.index,
                                ports={link.a.switch: link.a.port, link.b.switch: link.b.port},
                                speed_mbps=link.speed_mbps, state=link.state)

    # ----------------------------------------------------------------- lookups
    def __repr__(self):
        return "<Topology %s: %d switches, %d links, %d hosts>" % (
            self.name, len(self.switches), len(self.links), len(self.hosts))

    def switch_names(self) -> list[str]:
        """Switch names in id order (file order, or generator order)."""
        return list(self.switches)

    def channel(self, channel_id: int) -> Channel:
        return self.channels[channel_id]

    def channel_from(self, switch: str, port: str | int) -> Channel | None:
        """The channel that leaves ``switch`` on ``port`` (None for host ports)."""
        return self._channel_at.get(Endpoint(switch, str(port)))

    def reverse(self, channel: Channel) -> Channel:
        """The opposite direction of the same link."""
        return self.channels[channel.id ^ 1]

    def link(self, ref: int | str) -> Link:
        """A link by index, by ``"sw:port"`` of either end, or by its name
        ``"swA:p--swB:q"``. Raises TopologyError naming what was asked."""
        if isinstance(ref, int) and not isinstance(ref, bool):
            if 0 <= ref < len(self.links):
                return self.links[ref]
            raise TopologyError("there is no link number %d (the fabric has %d links)"
                                % (ref, len(self.links)), self.source)
        text = str(ref)
        if "--" in text:
            end = text.split("--", 1)[0]
            found = self._link_at.get(_parse_endpoint_text(end))
            if found is not None and text in (found.name, "%s--%s" % (found.b, found.a)):
                return found
        else:
            found = self._link_at.get(_parse_endpoint_text(text))
            if found is not None:
                return found
        raise TopologyError("no switch-to-switch link at %r (write it as \"switch:port\")" % text,
                            self.source)

    def out_channels(self, switch: str, down: Iterable[int] = ()) -> list[Channel]:
        """Channels leaving ``switch`` over links that are up and not in ``down``."""
        down = set(down)
        return [ch for ch in self._out[switch]
                if ch.link not in down and self.links[ch.link].state == "up"]

    def in_channels(self, switch: str, down: Iterable[int] = ()) -> list[Channel]:
        down = set(down)
        return [ch for ch in self._in[switch]
                if ch.link not in down and self.links[ch.link].state == "up"]

    def hosts_on(self, switch: str) -> list[Host]:
        return list(self._hosts_on[switch])

    def neighbours(self, switch: str) -> list[dict[str, Any]]:
        """Per used inter-switch port: who is at the other end of its link."""
        result = []
        for channel in self._out[switch]:
            link = self.links[channel.link]
            result.append({"port": channel.src_port, "switch": channel.dst,
                           "remote_port": channel.dst_port, "link": link.name,
                           "speed_mbps": link.speed_mbps, "state": link.state})
        return result

    def used_ports(self, switch: str) -> list[str]:
        ports = [ch.src_port for ch in self._out[switch]]
        ports.extend(host.port for host in self._hosts_on[switch])
        return sorted(ports, key=_port_key)

    def down_links(self) -> set[int]:
        """Indexes of links whose state in the file is ``down``."""
        return {link.index for link in self.links if link.state == "down"}

    def switch_graph(self, down: Iterable[int] = ()) -> nx.MultiGraph:
        """A MultiGraph of switches with only the links that are up and not in ``down``."""
        down = set(down) | self.down_links()
        graph = nx.MultiGraph()
        graph.add_nodes_from(self.graph.nodes(data=True))
        graph.add_edges_from((a, b, key, data) for a, b, key, data in
                             self.graph.edges(keys=True, data=True) if key not in down)
        return graph

    # ----------------------------------------------------------- serialisation
    def to_data(self) -> dict[str, Any]:
        """The topology in explicit form: plain data that
        :func:`topology_from_data` reads back into an equal topology."""
        switches = {}
        for sw in self.switches.values():
            entry = {"platform": sw.platform, "ports": sw.ports,
                     "mac_table_size": sw.mac_table_size, "max_vlans": sw.max_vlans}
            for field in ("power_profile", "mgmt_address", "level", "interface_pattern"):
                if getattr(sw, field) is not None:
                    entry[field] = getattr(sw, field)
            if sw.coords is not None:
                entry["coords"] = list(sw.coords)
            if sw.interface_names:
                entry["interface_names"] = dict(sw.interface_names)
            if sw.flow_control is not True:
                entry["flow_control"] = sw.flow_control if isinstance(sw.flow_control, bool) \
                    else {"off": [int(port) for port in sw.flow_control]}
            switches[sw.name] = entry
        links = [{"a": str(link.a), "b": str(link.b), "speed_mbps": link.speed_mbps,
                  "state": link.state} for link in self.links]
        hosts = {}
        for host in self.hosts.values():
            entry = {"switch": host.switch, "port": host.port, "mac": host.mac}
            if host.ip is not None:
                entry["ip"] = host.ip
            hosts[host.name] = entry
        data = {"schema": SCHEMA, "name": self.name, "switches": switches,
                "links": links, "hosts": hosts}
        if self.shape is not None:
            data["shape"] = {"kind": self.shape["kind"], "dims": list(self.shape["dims"])}
        return data

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "switches": len(self.switches), "links": len(self.links),
                "links_down": len(self.down_links()), "channels": len(self.channels),
                "hosts": len(self.hosts),
                "shape": dict(self.shape) if self.shape else None}


def _port_key(port):
    return (0, int(port), "") if port.isdigit() else (1, 0, port)


def _parse_endpoint_text(text):
    switch, _sep, port = str(text).rpartition(":")
    return Endpoint(switch, port)


# ------------------------------------------------------------------- loading
def parse_yaml(text: str, source: str = "<topology>") -> Any:
    """Parse YAML text within the input limits (module input_limits),
    turning any parse problem into a TopologyError (too many switches, links
    or hosts too, counted before the data is built)."""
    return load_yaml_text(text, source, count_entries=True)


def load_topology(path: str | os.PathLike) -> Topology:
    """Read, expand and validate the topology file at ``path``."""
    source = str(path)
    return topology_from_data(parse_yaml(read_text(path, source), source), source)


INVENTORY_PLUGIN = "ethercluster.routing.topology"
_GROUP_KEYS = {"hosts", "children", "vars"}


def unclaimed_topology(path: str | os.PathLike) -> str:
    """Why the inventory source ``path`` is a topology file that Ansible
    read as a plain YAML inventory, or ``""``. Without a ``plugin:`` line
    naming :data:`INVENTORY_PLUGIN` Ansible's own ``yaml`` plugin takes the
    file, turns its keys into groups and yields none of its switches, and a
    play would go on with another fabric. A file counts as a topology when
    all its top-level keys are topology fields and it has ``generate``,
    ``links`` or a ``switches`` mapping that is no inventory group."""
    source = str(path)
    if not source.endswith((".yml", ".yaml")) or not os.path.isfile(source):
        return ""
    try:
        data = parse_yaml(read_text(source), source)
    except TopologyError:
        return ""  # not ours to judge: the plugin that reads it says what is wrong
    if not isinstance(data, dict) or "plugin" in data or not set(data) <= TOP_LEVEL_FIELDS:
        return ""
    switches = data.get("switches")
    group = isinstance(switches, dict) and bool(_GROUP_KEYS & set(switches))
    if "generate" in data or "links" in data or (isinstance(switches, dict) and not group):
        return ("%s: a topology file without the line 'plugin: %s', so Ansible read it as a "
                "plain YAML inventory (its keys became groups) and took none of its switches; "
                "add that line at the top of the file" % (source, INVENTORY_PLUGIN))
    return ""


def topology_from_data(data: Any, source: str = "<topology>") -> Topology:
    """Validate plain data (explicit or generated form) into a Topology.

    Raises TopologyError listing every problem found, each naming its entry
    and field, e.g. ``links[3].b: unknown switch 'sw9'``.
    """
    if not isinstance(data, dict):
        raise TopologyError("the top level must be a mapping with 'switches', 'links' and "
                            "'hosts', or with 'generate' (got %s)" % _kind(data), source)
    check_counts(data, source)
    problems = _Problems()
    for key in data:
        if key not in TOP_LEVEL_FIELDS:
            problems.add("unknown top-level field %s (expected one of: %s)"
                         % (device_strings.shown(key), ", ".join(sorted(TOP_LEVEL_FIELDS - INVENTORY_KEYS))))
    name = data.get("name", "fabric")
    if _checked("fabric name", name, "name", problems) is None:
        name = "fabric"
    defaults = data.get("switch_defaults") or {}
    if not isinstance(defaults, dict):
        problems.add("switch_defaults: must be a mapping")
        defaults = {}
    problems.raise_if_any(source)

    if "generate" in data:
        from .generators import generate  # local import: generators imports this module

        for key in ("switches", "links", "hosts", "shape"):
            if key in data:
                problems.add("%s: not allowed beside 'generate' (a topology is either "
                             "generated or explicit)" % key)
        problems.raise_if_any(source)
        try:
            data = generate(data["generate"])
        except TopologyError as exc:
            raise TopologyError(exc.problems, source)
    elif "switches" not in data:
        raise TopologyError("no 'switches' and no 'generate': nothing describes the fabric",
                            source)
    return _build(name, data, defaults, source, problems)


class _Problems:
    def __init__(self):
        self.items = []

    def add(self, message):
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(message)
        elif len(self.items) == MAX_PROBLEMS:
            self.items.append("... further problems not listed")

    def raise_if_any(self, source):
        if self.items:
            raise TopologyError(self.items, source)


def _kind(value):
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _positive_int(value, where, problems, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int):
        problems.add("%s: must be a whole number, got %s %s" % (where, _kind(value), device_strings.shown(value)))
        return None
    if value < minimum:
        problems.add("%s: must be at least %d, got %d" % (where, minimum, value))
        return None
    return value


def _port_name(value, where, problems):
    """Ports are strings of digits ("25"); YAML integers are accepted."""
    try:
        return device_strings.check_port(value, where)
    except UnsafeString as exc:
        problems.add("%s (write ports as strings of digits from \"1\", e.g. \"25\")" % exc)
        return None


# Inventory names the topology plugin or Ansible itself takes: a switch or
# host so named would merge with a group (or with the controller).
RESERVED_NAMES = frozenset(("all", "ungrouped", "switches", "nodes", "localhost"))
RESERVED_PREFIX = "platform_"


def _reserved(name, where, problems):
    """True (and the problem recorded) when ``name`` is an inventory name
    the collection or Ansible already uses."""
    if name.lower() in RESERVED_NAMES or name.lower().startswith(RESERVED_PREFIX):
        problems.add("%s: %r is reserved in the inventory (%s and names starting with %r are "
                     "groups or the controller); rename it"
                     % (where, name, ", ".join(sorted(RESERVED_NAMES)), RESERVED_PREFIX))
        return True
    return False


def _entry_name(name, kind):
    """A mapping key as it can be shown in ``where``: itself when it is a
    valid name, else its ``repr`` (so a newline in a name cannot break the
    message that refuses it)."""
    if isinstance(name, str) and device_strings.RULES[kind].matches(name):
        return name
    return device_strings.shown(name)


def _named_entries(section, kind, data, problems):
    """``(name, entry, where)`` for each entry of mapping ``data`` whose
    name is acceptable, ``where`` being ``"<section>.<name>"`` for
    messages; a refused name adds its problem and is skipped."""
    for name, entry in data.items():
        where = "%s.%s" % (section, _entry_name(name, kind))
        if _checked(kind, name, where, problems) is None or _reserved(name, where, problems):
            continue
        yield name, entry, where


def _unknown_fields(entry, fields, where, problems):
    """Add a problem for every key of mapping ``entry`` (at ``where``) that
    is not one of ``fields``."""
    for key in entry:
        if key not in fields:
            problems.add("%s.%s: unknown field (expected one of: %s)"
                         % (where, key, ", ".join(sorted(fields))))


def _checked(kind, value, where, problems):
    """``value`` if :mod:`device_strings` lets a string of ``kind`` reach a
    device, else None with the problem recorded."""
    try:
        return device_strings.check(kind, value, where)
    except UnsafeString as exc:
        problems.add(str(exc))
        return None


def _build(name, data, defaults, source, problems):
    switches_data = data.get("switches")
    links_data = data.get("links") or []
    hosts_data = data.get("hosts") or {}
    if not isinstance(switches_data, dict) or not switches_data:
        problems.add("switches: must be a non-empty mapping of switch name -> settings")
        switches_data = {}
    if not isinstance(links_data, list):
        problems.add("links: must be a list of {a: \"sw:port\", b: \"sw:port\"}")
        links_data = []
    if not isinstance(hosts_data, dict):
        problems.add("hosts: must be a mapping of host name -> {switch, port, mac}")
        hosts_data = {}
    _unknown_fields(defaults, SWITCH_DEFAULTS, "switch_defaults", problems)

    _check_defaults(defaults, problems)
    shape = _shape(data.get("shape"), problems)
    raw_switches = _switch_entries(switches_data, defaults, shape, problems)
    uses = {}  # Endpoint -> "links[3].a" / "hosts.node00.port"
    links = _links(links_data, raw_switches, uses, problems)
    hosts = _hosts(hosts_data, raw_switches, uses, problems)

    switches = []
    # the ports in use, grouped by switch once (a scan per switch was quadratic)
    used_on = {}
    for endpoint, where in uses.items():
        used_on.setdefault(endpoint.switch, []).append((endpoint, where))
    for index, (sw_name, entry) in enumerate(raw_switches.items()):
        used = [int(ep.port) for ep, _where in used_on.get(sw_name, ())]
        highest = max(used, default=0)
        ports = entry["ports"]
        if ports is None:
            ports = highest
        elif highest > ports:
            for endpoint, where in sorted(used_on[sw_name], key=lambda item: item[1]):
                if int(endpoint.port) > ports:
                    problems.add("%s: port %s is beyond switch %s's %d ports (switches.%s.ports)"
                                 % (where, endpoint.port, sw_name, ports, sw_name))
        switches.append(Switch(sw_name, index, entry["platform"], ports,
                               entry["mac_table_size"], entry["max_vlans"],
                               entry["power_profile"], entry["mgmt_address"],
                               entry["coords"], entry["level"], entry["interface_pattern"],
                               entry["interface_names"], entry["flow_control"]))
        _check_interface_names(switches[-1], used, problems)
        _check_flow_control_ports(switches[-1], used, problems)
    problems.raise_if_any(source)
    _check_connected(switches, links, problems)
    problems.raise_if_any(source)
    return Topology(name, switches, links, hosts, shape=shape, source=source)


def _check_defaults(defaults, problems):
    """``switch_defaults`` is checked on its own, even where every switch
    overrides a field: a hostile default must not wait for the switch that
    takes it."""
    if defaults.get("platform") is not None:
        _checked("platform", defaults["platform"], "switch_defaults.platform", problems)
    if defaults.get("power_profile") is not None:
        _checked("power profile", defaults["power_profile"], "switch_defaults.power_profile", problems)
    if defaults.get("mgmt_address") is not None:
        problems.add("switch_defaults.mgmt_address: a management address belongs to one switch")
    _interface_pattern(defaults.get("interface_pattern"), "switch_defaults", problems)
    _interface_names(defaults.get("interface_names"), "switch_defaults", problems)
    if isinstance(defaults.get("flow_control"), dict):
        problems.add("switch_defaults.flow_control: true or false (ports to leave off belong to "
                     "one switch: switches.<name>.flow_control.off)")
    elif "flow_control" in defaults:
        _flow_control(defaults["flow_control"], "switch_defaults", problems)


def _shape(shape, problems):
    if shape is None:
        return None
    if not isinstance(shape, dict) or shape.get("kind") not in ("mesh", "torus") \
            or not isinstance(shape.get("dims"), list) or set(shape) - {"kind", "dims"}:
        problems.add("shape: must be {kind: mesh|torus, dims: [k0, k1, ...]}")
        return None
    dims = shape["dims"]
    if not dims or any(isinstance(k, bool) or not isinstance(k, int) or k < 2 for k in dims):
        problems.add("shape.dims: every dimension must be a whole number >= 2, got %s" % device_strings.shown(dims))
        return None
    return {"kind": shape["kind"], "dims": tuple(dims)}


def _switch_entries(switches_data, defaults, shape, problems):
    result = {}
    coords_seen = {}
    for sw_name, settings, where in _named_entries("switches", "switch name", switches_data, problems):
        if settings is None:
            settings = {}
        if not isinstance(settings, dict):
            problems.add("%s: must be a mapping of settings, got %s" % (where, _kind(settings)))
            continue
        _unknown_fields(settings, SWITCH_FIELDS, where, problems)
        entry = dict(SWITCH_DEFAULTS)
        entry.update({k: v for k, v in defaults.items() if k in SWITCH_DEFAULTS})
        entry.update({k: v for k, v in settings.items() if k in SWITCH_FIELDS})
        if _checked("platform", entry["platform"], where + ".platform", problems) is None:
            entry["platform"] = None
        if entry["ports"] is not None:
            entry["ports"] = _positive_int(entry["ports"], where + ".ports", problems)
        for field in ("mac_table_size", "max_vlans"):
            entry[field] = _positive_int(entry[field], "%s.%s" % (where, field), problems)
        if entry["max_vlans"] is not None and entry["max_vlans"] > 4094:
            problems.add("%s.max_vlans: 802.1Q has at most 4094 VLANs, got %d"
                         % (where, entry["max_vlans"]))
        if entry["power_profile"] is not None:
            _checked("power profile", entry["power_profile"], where + ".power_profile", problems)
        if entry["mgmt_address"] is not None:
            try:
                entry["mgmt_address"] = device_strings.check_address(
                    entry["mgmt_address"], where + ".mgmt_address")
            except UnsafeString as exc:
                problems.add(str(exc))
        entry["interface_pattern"] = _interface_pattern(entry["interface_pattern"], where, problems)
        entry["interface_names"] = _interface_names(entry["interface_names"], where, problems)
        entry["flow_control"] = _flow_control(entry["flow_control"], where, problems)
        entry["coords"] = _coords(entry.get("coords"), where, shape, coords_seen, sw_name, problems)
        entry["level"] = entry.get("level")
        if entry["level"] is not None:
            entry["level"] = _positive_int(entry["level"], where + ".level", problems, minimum=0)
        result[sw_name] = entry
    if shape is not None:
        missing = [name for name, entry in result.items() if entry["coords"] is None]
        if missing:
            problems.add("shape: every switch of a %s needs coords; missing on %s"
                         % (shape["kind"], ", ".join(missing[:5])))
    return result


def _interface_pattern(pattern, where, problems):
    if pattern is None:
        return None
    try:
        ok = isinstance(pattern, str) and "{port}" in pattern and pattern.format(port="1")
    except (KeyError, IndexError, ValueError):
        ok = False
    if not ok:
        problems.add("%s.interface_pattern: must be a text holding {port}, such as 'Gi1/0/{port}' "
                     "(no other braces), got %s" % (where, device_strings.shown(pattern)))
        return None
    # the pattern with the widest port number must be one safe token
    if _checked("interface name", pattern.format(port="65535"), where + ".interface_pattern",
                problems) is None:
        return None
    return pattern


def _interface_names(names, where, problems):
    if names is None:
        return None
    if not isinstance(names, dict):
        problems.add("%s.interface_names: must be a mapping of port -> interface name, such as "
                     "{1: 'Gi1/0/1'}, got %s" % (where, _kind(names)))
        return None
    result = {}
    for port, name in names.items():
        try:
            key = device_strings.check_port(port, where + ".interface_names")
        except UnsafeString as exc:
            problems.add(str(exc))
            continue
        if key in result:
            problems.add("%s.interface_names: port %s is named twice (as %s and %s)"
                         % (where, key, device_strings.shown(key), device_strings.shown(port)))
            continue
        if _checked("interface name", name, "%s.interface_names.%s" % (where, key), problems) is None:
            continue
        result[key] = name
    return result


def _flow_control(value, where, problems):
    """``flow_control`` as True, False or the sorted tuple of ports left
    off (``{off: [ports]}``); a problem naming ``where`` otherwise."""
    if isinstance(value, bool):
        return value
    shape = "%s.flow_control: must be true, false or {off: [ports]}, got %s"
    if not isinstance(value, dict) or set(value) != {"off"} or not isinstance(value["off"], list):
        problems.add(shape % (where, device_strings.shown(value)))
        return True
    ports = []
    for item in value["off"]:
        if isinstance(item, bool) or not isinstance(item, (int, str)) \
                or not str(item).isdigit() or int(item) < 1:
            problems.add("%s.flow_control.off: %s is not a port number"
                         % (where, device_strings.shown(item)))
            continue
        ports.append(str(int(item)))
    return tuple(sorted(set(ports), key=int))


def _check_flow_control_ports(sw, used_ports, problems):
    """The ports ``flow_control.off`` names must be ports the switch uses."""
    if isinstance(sw.flow_control, bool):
        return
    unused = [port for port in sw.flow_control if int(port) not in set(used_ports)]
    if unused:
        problems.add("switches.%s.flow_control.off: port%s %s %s not used by a link or host of %s"
                     % (sw.name, "s" if len(unused) > 1 else "", ", ".join(unused),
                        "are" if len(unused) > 1 else "is", sw.name))


def _check_interface_names(sw, used_ports, problems):
    """Interface names apply to text platforms only, and no two used ports
    of a switch may share a name."""
    if sw.interface_pattern is None and not sw.interface_names:
        return
    where = "switches.%s" % sw.name
    if sw.platform == "ovs":
        problems.add("%s: interface_pattern/interface_names do not apply to platform ovs (its "
                     "OpenFlow ports are the topology's port numbers)" % where)
        return
    renderer = _renderer_of(sw.platform)
    field = "interface_names.%s" if sw.interface_names else "interface_pattern"
    owner = {}
    for port in sorted(set(used_ports)):
        name = sw.interface_name(port)
        if name is None:
            continue
        source = field % port if sw.interface_names and str(port) in sw.interface_names \
            else "interface_pattern"
        try:
            device_strings.check_interface(renderer, name, "%s.%s (port %d)" % (where, source, port))
        except UnsafeString as exc:
            problems.add(str(exc))
            continue
        if name.lower() in owner:
            problems.add("%s: ports %s and %d are both named %r (interface_names/interface_pattern)"
                         % (where, owner[name.lower()], port, name))
        owner.setdefault(name.lower(), port)


def _renderer_of(platform):
    """The renderer whose interface-name rule applies to ``platform``
    (None: an unknown platform, refused later by the plan's platform check)."""
    from ..platforms.capabilities import CAPABILITIES  # standard library only

    row = CAPABILITIES.get(platform)
    return row.renderer if row is not None else None


def _coords(coords, where, shape, seen, sw_name, problems):
    if coords is None:
        return None
    if not isinstance(coords, list) or not coords or any(
            isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in coords):
        problems.add("%s.coords: must be a list of whole numbers >= 0, got %s" % (where, device_strings.shown(coords)))
        return None
    coords = tuple(coords)
    if shape is not None:
        dims = shape["dims"]
        if len(coords) != len(dims) or any(c >= k for c, k in zip(coords, dims)):
            problems.add("%s.coords: %r does not fit shape.dims %r"
                         % (where, list(coords), list(dims)))
            return None
    if coords in seen:
        problems.add("%s.coords: %r already belongs to switch %s" % (where, list(coords), seen[coords]))
        return None
    seen[coords] = sw_name
    return coords


def _endpoint(value, where, switches, uses, problems):
    if not isinstance(value, str) or ":" not in value:
        problems.add("%s: must be \"switch:port\", got %s %s" % (where, _kind(value), device_strings.shown(value)))
        return None
    sw_name, _sep, port = value.rpartition(":")
    if sw_name not in switches:
        problems.add("%s: unknown switch %s in %s (known: %s)"
                     % (where, device_strings.shown(sw_name), device_strings.shown(value), _known(switches)))
        return None
    port = _port_name(port, where, problems)
    if port is None:
        return None
    return _claim(Endpoint(sw_name, port), where, uses, problems)


def _claim(endpoint, where, uses, problems):
    if endpoint in uses:
        problems.add("%s: port %s is already used by %s" % (where, endpoint, uses[endpoint]))
        return None
    uses[endpoint] = where
    return endpoint


def _known(names, limit=8):
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown + (", ..." if len(names) > limit else "")


def _links(links_data, switches, uses, problems):
    links = []
    for position, entry in enumerate(links_data):
        where = "links[%d]" % position
        if not isinstance(entry, dict):
            problems.add("%s: must be a mapping {a: \"sw:port\", b: \"sw:port\"}, got %s"
                         % (where, _kind(entry)))
            continue
        _unknown_fields(entry, LINK_FIELDS, where, problems)
        if "a" not in entry or "b" not in entry:
            problems.add("%s: needs both ends, 'a' and 'b'" % where)
            continue
        a_text, b_text = entry["a"], entry["b"]
        if isinstance(a_text, str) and isinstance(b_text, str) \
                and a_text.rpartition(":")[0] == b_text.rpartition(":")[0] \
                and a_text.rpartition(":")[0] in switches:
            problems.add("%s: self-loop: both ends are on switch %s (%s, %s)"
                         % (where, a_text.rpartition(":")[0], a_text, b_text))
            continue
        a_end = _endpoint(a_text, where + ".a", switches, uses, problems)
        b_end = _endpoint(b_text, where + ".b", switches, uses, problems)
        speed = _positive_int(entry.get("speed_mbps", DEFAULT_SPEED_MBPS),
                              where + ".speed_mbps", problems)
        state = entry.get("state", "up")
        if state not in LINK_STATES:
            problems.add("%s.state: must be 'up' or 'down', got %s" % (where, device_strings.shown(state)))
        if a_end is None or b_end is None or speed is None or state not in LINK_STATES:
            continue
        links.append(Link(len(links), a_end, b_end, speed, state))
    return links


def _hosts(hosts_data, switches, uses, problems):
    hosts = []
    macs = {}
    for host_name, entry, where in _named_entries("hosts", "host name", hosts_data, problems):
        if host_name in switches:
            problems.add("%s: %r is already a switch's name (switches and hosts share one "
                         "inventory, so names must differ)" % (where, host_name))
            continue
        if not isinstance(entry, dict):
            problems.add("%s: must be a mapping {switch, port, mac}, got %s" % (where, _kind(entry)))
            continue
        _unknown_fields(entry, HOST_FIELDS, where, problems)
        missing = [key for key in ("switch", "port", "mac") if key not in entry]
        if missing:
            problems.add("%s: missing %s" % (where, ", ".join(missing)))
            continue
        sw_name = entry["switch"]
        if not isinstance(sw_name, str) or sw_name not in switches:
            problems.add("%s.switch: unknown switch %s (known: %s)"
                         % (where, device_strings.shown(sw_name), _known(switches)))
            continue
        port = _port_name(entry["port"], where + ".port", problems)
        try:
            mac = normalize_mac(entry["mac"])
        except ValueError as exc:
            problems.add("%s.mac: %s" % (where, exc))
            mac = None
        if mac is not None and mac in macs:
            problems.add("%s.mac: %s is already the MAC of host %s" % (where, mac, macs[mac]))
            mac = None
        ip = entry.get("ip")
        if ip is not None:
            try:
                ip = device_strings.check_address(ip, where + ".ip")
            except UnsafeString as exc:
                problems.add(str(exc))
                ip = None
        if port is None or mac is None:
            continue
        endpoint = _claim(Endpoint(sw_name, port), where + ".port", uses, problems)
        if endpoint is None:
            continue
        macs[mac] = host_name
        hosts.append(Host(host_name, sw_name, port, mac, ip))
    return hosts


def _check_connected(switches, links, problems):
    graph = nx.Graph()
    graph.add_nodes_from(sw.name for sw in switches)
    graph.add_edges_from((link.a.switch, link.b.switch) for link in links)
    if len(switches) < 2 or nx.is_connected(graph):
        return
    order = {sw.name: sw.index for sw in switches}
    parts = sorted((sorted(part, key=order.get) for part in nx.connected_components(graph)),
                   key=lambda part: order[part[0]])
    main = parts[0]
    for part in parts[1:]:
        problems.add("links: the switch graph is not connected: %s cannot reach %s "
                     "(add a link between the two groups)"
                     % (_group(part), _group(main)))


def _group(names):
    if len(names) == 1:
        return "switch %s" % names[0]
    return "switches %s" % _known(names, 6)
