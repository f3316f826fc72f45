# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch-tagged VLAN assignment: a verified routing -> per switch VLANs,
port PVIDs and memberships (switch-tagged VLAN routing paper, Koibuchi et
al., TPDS 2010, §3.1-§3.5; docs/vlans.md).

Hosts send and receive plain untagged frames; the *switches* tag them
(§3.1): an untagged frame entering port P belongs to VLAN ``pvid(P)``, a
frame leaves port Q only if Q is a member of its VLAN, untagged or tagged
as Q's membership says, and inside a VLAN the static MAC entries
(:mod:`macs`) pick the output port. Two ways to turn a routing into VLANs:

**Fixed assignment** (§3.2.1, :func:`fixed_assignment`; N x N -> P). All
paths from one source switch must form a tree ``t_s``; the hosts of ``s``
get the VLAN of ``t_s`` as PVID, frames stay in that VLAN, tagged, on
every inter-switch link, and leave untagged at the destination's host port
(host ports are untagged members of every VLAN, step 6). Sources share a
VLAN when the union of their trees is still a tree: a VLAN whose tree
already contains ``t_s`` is reused first (the paper's step 2), else one
whose tree stays a tree with ``t_s`` added, else a new VLAN. In a tree
there is one path between two switches, so every destination is reached
the same way from all sources of a VLAN, and flooding inside a VLAN
(broadcast, unknown unicast) dies out at the leaves (§3.4).

*When the paths from a source are not a tree* -- a switch reached over two
different channels, as a balanced ``C x N -> C`` routing often does --
the fixed assignment cannot implement the routing: one PVID per source
switch means one VLAN for all its frames, and a VLAN whose links hold a
cycle floods forever. We **refuse** (:class:`VlanError` naming the source,
the switch and both channels) instead of deriving other trees: derived
trees change the paths, so the verified channel dependency graph would no
longer describe the fabric. Use the renamed assignment for such routings,
or a routing whose paths from each source form a tree (DOR on a mesh or
torus, STP).

**Renamed assignment** (§3.2.2, :func:`renamed_assignment`; C x N -> C).
Frames travel untagged between switches and every switch re-classifies
them by the PVID of the input port, so the VLAN of a frame *is* its
routing state (input port). Each input port gets a row: hosts share the
switch's injection row (one host-side state per switch in
:class:`~.routing.base.RoutingFunction`), each inter-switch input port has
its own. A row's VLAN has as untagged members its input port(s) (step 1)
and every output port that frames of that row are routed to (step 2).
Step 4 merges rows into one VLAN only when their member ports are the same
*and* they forward every destination both carry to the same port: one
static entry ``(MAC, VLAN) -> port`` serves all merged rows. (A row's
destinations are the ones some path actually brings through it; entries a
row never uses are free.) Merging rows with the same members does not
change where a flood goes, so floods follow exactly the turns of the
routing: the flood graph across VLANs is a subgraph of the channel
dependency graph and a deadlock-free routing cannot storm (Theorem 1).
VLAN IDs are local to a switch and reused on every switch; the fabric
uses as many distinct IDs as the busiest switch.

Both assignments route only between *endpoint* switches: switches with
hosts (every switch when the topology has no hosts). Switches without
hosts (fat-tree spines) carry transit traffic only.

An input port no path ever enters (e.g. a link used in one direction
only, a down or blocked link) gets as PVID a VLAN it is already a member
of, or the switch's first VLAN; nothing can arrive there, because no
VLAN of the neighbour has the far end as an output.

VLAN IDs come from one of two disjoint banks (A, B; :func:`bank_range`,
:func:`allocate_vlan_ids`) so that a later transition can build a new
routing beside the old one, and never from 0, 1, 4095 or a platform's
reserved IDs (:data:`PLATFORM_RESERVED_VLANS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from ..errors import EtherclusterError
from ..platforms.capabilities import CAPABILITIES
from ..routing.base import RoutingError

if TYPE_CHECKING:
    from ..routing.base import RoutingFunction
    from ..fabric.topology import Channel, Topology

# Default banks (inclusive ranges). Two disjoint halves so the next routing
# can be configured beside the running one (transition, Double Scheme).
VLAN_BANKS = {"A": (100, 1999), "B": (2100, 3999)}
BANKS = tuple(VLAN_BANKS)

# Never allocated. IEEE 802.1Q-2011 §6.9.1 / Table 9-2: VID 0 means "no VLAN"
# (priority tag) and VID 4095 is reserved; VID 1 is the default PVID and
# membership of every port on nearly every switch (Dell OS6/OS9, Linux
# bridge default_pvid, Huawei, H3C), so a routing VLAN must not be it.
ALWAYS_RESERVED = frozenset({0, 1, 4095})

# IDs a platform keeps for itself (cannot be created or used as PVID), and
# how a platform can make a port an untagged member of several VLANs with
# its own PVID, which both assignments need (docs/platforms.md); None:
# access/trunk only -- cannot run switch-tagged routing. Both come from the
# platform capability table (platforms/capabilities.py, docs/platforms.md).
PLATFORM_RESERVED_VLANS = {name: row.reserved_vlans for name, row in CAPABILITIES.items()
                           if row.reserved_vlans}
PLATFORM_PORT_MODES = {name: row.port_mode for name, row in CAPABILITIES.items()}

KINDS = ("fixed", "renamed")

# Row forwarding codes (numpy arrays over destination switch indexes).
_UNUSED = -3     # no frame for this destination is ever in this row
_DELIVER = -1    # delivered to the switch's host ports


class VlanError(EtherclusterError):
    """A VLAN assignment cannot be made: the bank is too small, an option is
    wrong, or the routing cannot be implemented by the chosen assignment.
    The message names the switch, source, bank or option at fault;
    ``switch`` holds the switch when there is one."""

    def __init__(self, message: str, switch: str | None = None) -> None:
        super().__init__(message)
        self.switch = switch


# ------------------------------------------------------------- VLAN IDs
def _check_range(value: Any, where: str) -> tuple[int, int]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise VlanError("%s: must be [first, last] VLAN IDs, got %r" % (where, value))
    first, last = value
    for item in (first, last):
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise VlanError("%s: VLAN IDs must be whole numbers, got %r" % (where, value))
    first, last = int(first), int(last)
    if not 2 <= first <= last <= 4094:
        raise VlanError("%s: must satisfy 2 <= first <= last <= 4094 (802.1Q VLAN IDs; "
                        "1 is the default VLAN), got [%d, %d]" % (where, first, last))
    return first, last


def bank_range(bank: str = "A", vlan_range: Any = None) -> tuple[int, int]:
    """The inclusive ``(first, last)`` VLAN IDs of ``bank``.

    ``vlan_range`` None: :data:`VLAN_BANKS`. ``[first, last]``: the range is
    split into two halves, A the lower and B the upper, so the banks stay
    disjoint. A mapping ``{"A": [first, last], "B": [first, last]}`` gives
    both banks explicitly (they must not overlap). Raises VlanError naming
    the option."""
    if bank not in BANKS:
        raise VlanError("bank: must be one of %s, got %r" % (", ".join(BANKS), bank))
    if vlan_range is None:
        return VLAN_BANKS[bank]
    if isinstance(vlan_range, Mapping):
        unknown = sorted(str(key) for key in vlan_range if key not in BANKS)
        if unknown or set(vlan_range) != set(BANKS):
            raise VlanError("vlan_range: a mapping must give exactly the banks A and B, got %s"
                            % ", ".join(sorted(map(str, vlan_range))))
        a = _check_range(vlan_range["A"], "vlan_range.A")
        b = _check_range(vlan_range["B"], "vlan_range.B")
        if a[0] <= b[1] and b[0] <= a[1]:
            raise VlanError("vlan_range: banks A %d-%d and B %d-%d overlap; a transition needs "
                            "them disjoint" % (a + b))
        return a if bank == "A" else b
    first, last = _check_range(vlan_range, "vlan_range")
    if last == first:
        raise VlanError("vlan_range: [%d, %d] cannot be split into two banks; give at least "
                        "two IDs" % (first, last))
    middle = first + (last - first + 1) // 2 - 1
    return (first, middle) if bank == "A" else (middle + 1, last)


def reserved_vlans(platforms: Iterable[str] = (), reserved: Iterable[int] | None = ()) -> frozenset[int]:
    """IDs never to allocate: :data:`ALWAYS_RESERVED`, the reserved IDs of
    every platform in ``platforms`` and the extra ``reserved`` IDs."""
    result = set(ALWAYS_RESERVED)
    for platform in platforms:
        result |= PLATFORM_RESERVED_VLANS.get(platform, frozenset())
    for item in reserved or ():
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise VlanError("reserved: VLAN IDs must be whole numbers, got %r" % (item,))
        result.add(int(item))
    return frozenset(result)


def allocate_vlan_ids(count: int, bank: str = "A", vlan_range: Any = None,
                      reserved: Iterable[int] = ()) -> list[int]:
    """The ``count`` lowest IDs of ``bank`` that are not reserved (see
    :func:`reserved_vlans`; ``reserved`` adds to :data:`ALWAYS_RESERVED`).
    Raises VlanError naming the bank when it holds too few."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise VlanError("allocate_vlan_ids: count must be a whole number >= 0, got %r" % (count,))
    first, last = bank_range(bank, vlan_range)
    skip = reserved_vlans((), reserved)
    ids: list[int] = []
    for vid in range(first, last + 1):
        if len(ids) == count:
            break
        if vid not in skip:
            ids.append(vid)
    if len(ids) < count:
        raise VlanError("bank %s (VLAN IDs %d-%d) has only %d usable IDs, %d needed; widen "
                        "vlan_range or use the other bank" % (bank, first, last, len(ids), count))
    return ids


def _platform_reserved(topology: Topology, reserved: Iterable[int]) -> frozenset[int]:
    return reserved_vlans({sw.platform for sw in topology.switches.values()}, reserved)


# ------------------------------------------------------- walking the paths
def endpoint_switches(topology: Topology) -> np.ndarray:
    """Indexes (id order) of the switches that send and receive: those with
    hosts, or every switch when the topology has no hosts."""
    names = topology.switch_names()
    with_hosts = [i for i, name in enumerate(names) if topology.hosts_on(name)]
    return np.array(with_hosts if with_hosts else range(len(names)), dtype=np.int64)


class _Fabric:
    """Index arrays of a routing's topology shared by the assignments."""

    def __init__(self, routing: RoutingFunction) -> None:
        topology = routing.topology
        self.routing = routing
        self.topology = topology
        self.names = list(routing.switch_names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.n = len(self.names)
        self.channels = topology.channels
        self.C = len(self.channels)
        self.src = np.array([self.index[ch.src] for ch in self.channels], dtype=np.int64)
        self.dst = np.array([self.index[ch.dst] for ch in self.channels], dtype=np.int64)
        self.state_switch = np.concatenate([np.arange(self.n, dtype=np.int64), self.dst])
        self.next_hop = routing.next_hop
        self.endpoints = endpoint_switches(topology)
        self.in_channels: list[list[Channel]] = [[] for _unused in range(self.n)]   # every channel entering, any state
        for ch in self.channels:
            self.in_channels[self.index[ch.dst]].append(ch)
        self.host_ports = [[host.port for host in topology.hosts_on(name)] for name in self.names]
        self.link_ports: list[dict[str, Channel]] = [{} for _unused in range(self.n)]   # per switch {port: channel leaving}
        for ch in self.channels:
            self.link_ports[self.index[ch.src]][ch.src_port] = ch

    def walk(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Follow the table for every ordered pair of endpoint switches at
        once. Yields per hop ``(source_position, dest, state, out)`` arrays:
        the pair's source (position in ``endpoints``), destination switch
        index, the state the frame is in and the channel it leaves on
        (``_DELIVER`` when the state is the arrival at the destination).
        Raises RoutingError naming a pair the table does not deliver."""
        endpoints = self.endpoints
        count = len(endpoints)
        position = np.repeat(np.arange(count, dtype=np.int64), count)
        dest = np.tile(endpoints, count)
        keep = endpoints[position] != dest
        position, dest = position[keep], dest[keep]
        state = endpoints[position]
        for _step in range(self.n + self.C + 1):
            if not len(state):
                return
            out = self.routing.hop(endpoints[position], state, dest).astype(np.int64)
            here = self.state_switch[state]
            arrived = out < 0
            lost = np.flatnonzero(arrived & (here != dest))
            if len(lost):
                i = lost[0]
                raise RoutingError("%s: no route from %s to %s: the table has no entry at switch "
                                   "%s" % (self.routing.engine, self.names[endpoints[position[i]]],
                                           self.names[dest[i]], self.names[here[i]]))
            out[arrived] = _DELIVER
            yield position, dest, state, out
            moving = ~arrived
            position, dest, state = position[moving], dest[moving], self.n + out[moving]
        raise RoutingError("%s: the routing table loops (from %s to %s)"
                           % (self.routing.engine, self.names[endpoints[position[0]]],
                              self.names[dest[0]]))

    def port_of(self, channel_id: int) -> str:
        """The port channel ``channel_id`` leaves its switch by."""
        return self.channels[channel_id].src_port


def _port_key(port: Any) -> tuple[int, int, str]:
    return (0, int(port), "") if str(port).isdigit() else (1, 0, str(port))


# ------------------------------------------------------------ assignment
class Assignment:
    """A VLAN assignment (fixed or renamed) of one routing.

    Attributes:

    * ``kind``: ``"fixed"`` or ``"renamed"``; ``engine``: the routing engine;
      ``routing``: the RoutingFunction it implements.
    * ``bank``, ``bank_range`` (first, last), ``vlan_ids`` (sorted distinct
      IDs used), ``vlans_used`` (their number).
    * ``switches``: ``{switch: {"vlans": [ids], "ports": {port: {"pvid",
      "untagged", "tagged"}}}}`` for every port in use (host and link).
    * ``endpoints``: names of the switches that send and receive.
    * ``channel_vlans``: ``{channel id: [ids]}`` for every channel some
      frame crosses -- fixed: the VLAN tags it carries; renamed: the VLAN
      the receiving port classifies its (untagged) frames into.
    * ``trees`` (fixed): ``{vid: {"sources": [switches], "links": [link
      indexes]}}``; ``inputs`` (renamed): ``{switch: {vid: ["host" or input
      port, ...]}}`` -- the routing states each VLAN implements.
    """

    # the fabric's broadcast flood tree (assign/flood_tree.py), when the plan gives one
    broadcast_tree: dict[str, Any] | None = None

    def __init__(self, kind: str, routing: RoutingFunction, bank: str, first_last: Iterable[int],
                 switches: dict[str, dict[str, Any]], forwarding: dict[str, list[tuple]],
                 endpoints: Iterable[str], channel_vlans: dict[int, list[int]],
                 trees: dict[int, dict[str, Any]] | None = None,
                 inputs: dict[str, dict[int, list[str]]] | None = None) -> None:
        self.kind = kind
        self.routing = routing
        self.engine = routing.engine
        self.bank = bank
        self.bank_range = tuple(first_last)
        self.switches = switches
        self._forwarding = forwarding   # {switch: [(vid, dest idx array, out array)]}
        self.endpoints = list(endpoints)
        self.channel_vlans = channel_vlans
        self.trees = trees or {}
        self.inputs = inputs or {}
        ids = set()
        for entry in switches.values():
            ids.update(entry["vlans"])
        self.vlan_ids = sorted(ids)
        self.vlans_used = len(self.vlan_ids)

    def __repr__(self) -> str:
        return "<Assignment %s of %s: %d VLANs>" % (self.kind, self.engine, self.vlans_used)

    def vlan_on_channel(self, channel_id: int, dest: str | None = None) -> list[int]:
        """The VLAN(s) of frames on channel ``channel_id`` (for destination
        switch ``dest`` when given): sorted list of IDs, [] if no such frame.
        Fixed: the tags they carry; renamed: the VLAN the receiving port
        puts them in (on the wire they are untagged)."""
        if dest is None:
            return list(self.channel_vlans.get(int(channel_id), []))
        channel = self.routing.topology.channels[int(channel_id)]
        t = self.routing.index[dest]
        found = set()
        for vid, dests, outs in self._forwarding.get(channel.src, ()):
            hit = np.flatnonzero(dests == t)
            if len(hit) and int(outs[hit[0]]) == int(channel_id):
                found.add(vid)
        if self.kind == "renamed" and found:
            pvid = self.switches[channel.dst]["ports"][channel.dst_port]["pvid"]
            return [pvid]
        return sorted(found)

    def forwarding(self, switch: str) -> dict[int, dict[str, str]]:
        """``{vid: {dest_switch: output port, or "host" for delivery}}`` of
        ``switch``: where each VLAN sends frames for each destination."""
        names = self.routing.switch_names
        channels = self.routing.topology.channels
        result = {}
        for vid, dests, outs in self._forwarding.get(switch, ()):
            result[vid] = {names[t]: ("host" if o < 0 else channels[o].src_port)
                           for t, o in zip(dests.tolist(), outs.tolist())}
        return result

    def forwarding_arrays(self, switch: str) -> list[tuple]:
        """``[(vid, dest indexes, output channels)]`` of ``switch`` (numpy;
        output -1 = deliver to the host ports). Used by :mod:`macs`."""
        return list(self._forwarding.get(switch, ()))

    def to_data(self) -> dict[str, Any]:
        """Plain data: kind, engine, bank, IDs, switches, trees/inputs."""
        data = {"kind": self.kind, "engine": self.engine, "bank": self.bank,
                "bank_range": list(self.bank_range), "vlans_used": self.vlans_used,
                "vlan_ids": list(self.vlan_ids), "endpoints": list(self.endpoints),
                "switches": self.switches}
        if self.kind == "fixed":
            data["trees"] = {str(vid): tree for vid, tree in self.trees.items()}
        else:
            data["inputs"] = {sw: {str(vid): inputs for vid, inputs in rows.items()}
                              for sw, rows in self.inputs.items()}
        return data


# ------------------------------------------------------------------ fixed
def _source_trees(fabric: _Fabric) -> np.ndarray:
    """Per endpoint (position) the channel entering each switch on its
    paths; VlanError when the paths from a source are not a tree."""
    count = len(fabric.endpoints)
    tree_in = np.full((count, fabric.n), -1, dtype=np.int64)
    tree_in[np.arange(count), fabric.endpoints] = -2     # the root is never entered
    for position, dest, state, out in fabric.walk():
        moving = out >= 0
        pos, out = position[moving], out[moving]
        if not len(pos):
            continue
        reached = fabric.dst[out]
        before = tree_in[pos, reached]
        tree_in[pos, reached] = np.where(before == -1, out, before)
        after = tree_in[pos, reached]
        clash = np.flatnonzero(after != out)
        if len(clash):
            i = clash[0]
            source = fabric.names[fabric.endpoints[pos[i]]]
            where = fabric.names[reached[i]]
            other = int(after[i])
            if other == -2:
                how = "the paths from %s come back to %s itself (over %s)" % (
                    source, source, fabric.channels[out[i]])
            else:
                how = "%s is reached over %s and over %s" % (
                    where, fabric.channels[other], fabric.channels[out[i]])
            raise VlanError(
                "fixed VLAN assignment: the paths from switch %s do not form a tree (%s), so "
                "one VLAN cannot carry them (§3.2.1); use the engine option paths: source_tree "
                "(or assignment auto), or assignment renamed"
                % (source, how), switch=source)
    return tree_in


def _is_forest(links: Iterable[int], topology: Topology) -> bool:
    """True if the links ``links`` (indexes) form no cycle."""
    graph = nx.MultiGraph()
    links = list(links)
    ends = {end.switch for index in links for end in (topology.links[index].a, topology.links[index].b)}
    if len(links) >= len(ends):   # a forest on k switches has at most k - 1 links
        return False
    for index in links:
        link = topology.links[index]
        graph.add_edge(link.a.switch, link.b.switch, key=index)
    return nx.is_forest(graph) if graph.number_of_nodes() else True


def fixed_assignment(routing: RoutingFunction, bank: str = "A", vlan_range: Any = None,
                     reserved: Iterable[int] = ()) -> Assignment:
    """Fixed VLAN assignment (§3.2.1) of ``routing``: one VLAN per tree of
    source paths, shared by sources whose trees fit in one tree.

    ``reserved``: more VLAN IDs never to use (added to 0, 1, 4095 and the
    platforms' reserved IDs). Raises VlanError naming the source whose paths
    are not a tree, or the bank that is too small."""
    fabric = _Fabric(routing)
    topology = fabric.topology
    first_last = bank_range(bank, vlan_range)
    tree_in = _source_trees(fabric)
    groups, group_of = _tree_groups(fabric, tree_in)
    ids = allocate_vlan_ids(len(groups), bank, vlan_range,
                            _platform_reserved(topology, reserved))
    forwarding, channel_groups = _fixed_forwarding(fabric, group_of, ids)
    switches = _fixed_switches(fabric, groups, group_of, ids)
    trees = {}
    for g, group in enumerate(groups):
        trees[ids[g]] = {"sources": [fabric.names[fabric.endpoints[p]] for p in group["sources"]],
                         "links": sorted(group["links"])}
    channel_vlans = {c: sorted(v) for c, v in sorted(channel_groups.items())}
    return Assignment("fixed", routing, bank, first_last, switches, forwarding,
                      [fabric.names[t] for t in fabric.endpoints.tolist()], channel_vlans,
                      trees=trees)


def _tree_groups(fabric: _Fabric, tree_in: np.ndarray) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Steps 1, 2 and 5: a VLAN per group of sources whose trees form one
    tree. Returns the groups (``{"links": set, "sources": [positions]}``)
    and the group of every source position."""
    topology = fabric.topology
    groups: list[dict[str, Any]] = []
    group_of = np.zeros(len(fabric.endpoints), dtype=np.int64)
    for position in range(len(fabric.endpoints)):
        row = tree_in[position]
        links = frozenset((row[row >= 0] >> 1).tolist())
        chosen = next((g for g, group in enumerate(groups) if links <= group["links"]), None)
        if chosen is None:
            chosen = next((g for g, group in enumerate(groups)
                           if _is_forest(group["links"] | links, topology)), None)
        if chosen is None:
            groups.append({"links": set(links), "sources": [position]})
            chosen = len(groups) - 1
        else:
            groups[chosen]["links"] |= links
            groups[chosen]["sources"].append(position)
        group_of[position] = chosen
    return groups, group_of


def _fixed_forwarding(fabric: _Fabric, group_of: np.ndarray,
                      ids: list[int]) -> tuple[dict[str, list[tuple]], dict[int, set[int]]]:
    """Where each VLAN sends each destination at each switch (for the MACs):
    the out channel of the paths of its sources (a tree: one per switch).
    Returns ``({switch: [(vid, dests, outs)]}, {channel: {vids}})``."""
    n = fabric.n
    keys, values = _fixed_hops(fabric, group_of)
    forwarding: dict[str, list[tuple]] = {name: [] for name in fabric.names}
    channel_groups: dict[int, set[int]] = {}
    if not keys:
        return forwarding, channel_groups
    all_keys = np.concatenate(keys)
    all_values = np.concatenate(values)
    order = np.argsort(all_keys, kind="stable")
    all_keys, all_values = all_keys[order], all_values[order]
    # one tree per VLAN means one way to each destination (module doc)
    clash = np.flatnonzero((all_keys[1:] == all_keys[:-1]) & (all_values[1:] != all_values[:-1]))
    if len(clash):
        group, rest = divmod(int(all_keys[clash[0]]), n * n)
        where = fabric.names[rest // n]
        raise VlanError("fixed VLAN assignment: VLAN %d would send frames for %s two ways "
                        "at switch %s" % (ids[group], fabric.names[rest % n], where),
                        switch=where)
    all_keys, first = np.unique(all_keys, return_index=True)
    all_values = all_values[first]
    groups_k, rest_k = np.divmod(all_keys, n * n)
    switches_k, dests_k = np.divmod(rest_k, n)
    order = np.lexsort((dests_k, groups_k, switches_k))
    groups_k, switches_k, dests_k, all_values = (groups_k[order], switches_k[order],
                                                 dests_k[order], all_values[order])
    bounds = np.flatnonzero(np.r_[True, (switches_k[1:] != switches_k[:-1])
                                  | (groups_k[1:] != groups_k[:-1]), True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        switch = fabric.names[int(switches_k[lo])]
        forwarding[switch].append((ids[int(groups_k[lo])], dests_k[lo:hi], all_values[lo:hi]))
    moving = all_values >= 0
    for group, channel in set(zip(groups_k[moving].tolist(), all_values[moving].tolist())):
        channel_groups.setdefault(channel, set()).add(ids[group])
    return forwarding, channel_groups


def _fixed_hops(fabric: _Fabric, group_of: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every hop of every path as a key ``(group * n + switch) * n + dest``
    and the channel it leaves on (``_DELIVER`` at the destination), in
    arrays per walking step."""
    n = fabric.n
    keys, values = [], []
    for position, dest, state, out in fabric.walk():
        group = group_of[position]
        keys.append((group * n + fabric.state_switch[state]) * n + dest)
        values.append(out)
    local = [t for t in fabric.endpoints.tolist() if len(fabric.host_ports[t]) >= 2]
    if local:   # hosts of one switch talk through it in the switch's own VLAN
        at = np.array(local, dtype=np.int64)
        position_of = {t: p for p, t in enumerate(fabric.endpoints.tolist())}
        keys.append((group_of[[position_of[t] for t in at.tolist()]] * n + at) * n + at)
        values.append(np.full(len(at), _DELIVER, dtype=np.int64))
    return keys, values


def _fixed_switches(fabric: _Fabric, groups: list[dict[str, Any]], group_of: np.ndarray,
                    ids: list[int]) -> dict[str, dict[str, Any]]:
    """Steps 3, 4 and 6: PVIDs and memberships, per switch."""
    all_ids = sorted(ids)
    link_vlans: dict[int, list[int]] = {}
    for g, group in enumerate(groups):
        for index in group["links"]:
            link_vlans.setdefault(index, []).append(ids[g])
    position_of = {t: p for p, t in enumerate(fabric.endpoints.tolist())}
    switches = {}
    for x, name in enumerate(fabric.names):
        ports: dict[str, dict[str, Any]] = {}
        vlans = set()
        for port in fabric.host_ports[x]:
            own = ids[group_of[position_of[x]]]
            ports[port] = {"pvid": own, "untagged": list(all_ids), "tagged": []}
            vlans.update(all_ids)
        for port, channel in fabric.link_ports[x].items():
            tagged = sorted(link_vlans.get(channel.link, ()))
            ports[port] = {"pvid": None, "untagged": [], "tagged": tagged}
            vlans.update(tagged)
        if not vlans:
            vlans.add(all_ids[0])   # a switch no tree crosses still needs a PVID VLAN
        for entry in ports.values():
            if entry["pvid"] is None:
                entry["pvid"] = entry["tagged"][0] if entry["tagged"] else min(vlans)
        switches[name] = {"vlans": sorted(vlans),
                          "ports": {port: ports[port] for port in sorted(ports, key=_port_key)}}
    return switches


# ---------------------------------------------------------------- renamed
def _compatible(a: np.ndarray, b: np.ndarray) -> bool:
    """True if rows ``a`` and ``b`` send every destination both carry the same way."""
    both = (a != _UNUSED) & (b != _UNUSED)
    return bool(np.all(a[both] == b[both]))


def renamed_assignment(routing: RoutingFunction, bank: str = "A", vlan_range: Any = None,
                       reserved: Iterable[int] = ()) -> Assignment:
    """Renamed VLAN assignment (§3.2.2) of ``routing``: a VLAN per group of
    input ports whose rows have the same member ports and agree on every
    destination; IDs local to each switch, reused on all switches.

    ``reserved``: more VLAN IDs never to use. Raises VlanError naming the
    bank that is too small."""
    if routing.paths_form != "per_destination":
        raise VlanError("renamed VLAN assignment: the routing's paths depend on the source (%s "
                        "paths), which a VLAN per input port cannot tell apart (§3.2.2 implements "
                        "C x N -> C); use assignment fixed" % routing.paths_form)
    fabric = _Fabric(routing)
    topology = fabric.topology
    first_last = bank_range(bank, vlan_range)
    n = fabric.n
    used = _used_rows(fabric)
    # per switch: its clusters {"inputs", "in_ports", "members", "table"} and idle input ports
    per_switch = [_row_clusters(fabric, x, used) for x in range(n)]
    count = max([len(clusters) for clusters, _idle in per_switch] + [1])
    ids = allocate_vlan_ids(count, bank, vlan_range, _platform_reserved(topology, reserved))

    switches, forwarding, inputs, channel_vlans = {}, {}, {}, {}
    for x, name in enumerate(fabric.names):
        clusters, idle = per_switch[x]
        switches[name], forwarding[name], inputs[name] = _renamed_switch(fabric, x, clusters,
                                                                         idle, ids)
    for ch in fabric.channels:
        if used[n + ch.id].any():
            channel_vlans[ch.id] = [switches[ch.dst]["ports"][ch.dst_port]["pvid"]]
    return Assignment("renamed", routing, bank, first_last, switches, forwarding,
                      [fabric.names[t] for t in fabric.endpoints.tolist()], channel_vlans,
                      inputs=inputs)


def _used_rows(fabric: _Fabric) -> np.ndarray:
    """``[state, dest]``: True where some frame for ``dest`` is in ``state``."""
    n = fabric.n
    used = np.zeros((n + fabric.C, n), dtype=bool)
    for _position, dest, state, _out in fabric.walk():
        used[state, dest] = True
    for t in fabric.endpoints.tolist():
        if len(fabric.host_ports[t]) >= 2:   # hosts of one switch talk through it
            used[t, t] = True
    return used


def _row_clusters(fabric: _Fabric, x: int,
                  used: np.ndarray) -> tuple[list[dict[str, Any]], list[str]]:
    """Steps 1, 2 and 4 at switch index ``x``: the rows (host side, then
    each input port) merged into clusters, and the input ports no frame
    uses."""
    n = fabric.n
    rows = []
    if fabric.host_ports[x]:
        rows.append((x, list(fabric.host_ports[x]), "host"))
    for ch in sorted(fabric.in_channels[x], key=lambda c: _port_key(c.dst_port)):
        rows.append((n + ch.id, [ch.dst_port], ch.dst_port))
    clusters: list[dict[str, Any]] = []
    idle = []
    for state, in_ports, label in rows:
        dests = np.flatnonzero(used[state])
        if not len(dests) and label != "host":
            idle.append(label)
            continue
        outs = fabric.next_hop[state, dests].astype(np.int64)
        outs[outs < 0] = _DELIVER
        members = set(in_ports)                                       # step 1
        members.update(fabric.port_of(o) for o in set(outs[outs >= 0].tolist()))  # step 2
        if (outs == _DELIVER).any():
            members.update(fabric.host_ports[x])
        table = np.full(n, _UNUSED, dtype=np.int64)
        table[dests] = outs
        frozen = frozenset(members)
        for cluster in clusters:                                       # step 4
            if cluster["members"] == frozen and _compatible(cluster["table"], table):
                cluster["inputs"].append(label)
                cluster["in_ports"].extend(in_ports)
                cluster["table"] = np.where(cluster["table"] == _UNUSED, table,
                                            cluster["table"])
                break
        else:
            clusters.append({"inputs": [label], "in_ports": list(in_ports),
                             "members": frozen, "table": table})
    return clusters, idle


def _renamed_switch(fabric: _Fabric, x: int, clusters: list[dict[str, Any]], idle: list[str],
                    ids: list[int]) -> tuple[dict[str, Any], list[tuple], dict[int, list[str]]]:
    """Switch index ``x``'s VLANs and ports, its forwarding arrays and the
    inputs of each VLAN, the clusters numbered from ``ids[0]``."""
    ports: dict[str, dict[str, Any]] = {
        port: {"pvid": None, "untagged": [], "tagged": []}
        for port in list(fabric.host_ports[x]) + list(fabric.link_ports[x])}
    forwarding = []
    inputs = {}
    for local, cluster in enumerate(clusters):
        vid = ids[local]
        for port in cluster["members"]:
            ports[port]["untagged"].append(vid)
        for port in cluster["in_ports"]:
            ports[port]["pvid"] = vid
        table = cluster["table"]
        dests = np.flatnonzero(table != _UNUSED)
        forwarding.append((vid, dests, table[dests]))
        inputs[vid] = list(cluster["inputs"])
    vlans = [ids[local] for local in range(len(clusters))] or [ids[0]]
    for port in idle:   # nothing arrives here (module doc); keep PVID within memberships
        member_of = ports[port]["untagged"]
        ports[port]["pvid"] = min(member_of) if member_of else vlans[0]
    for entry in ports.values():
        entry["untagged"].sort()
        if entry["pvid"] is None:   # a port of no row (cannot happen; defensive)
            entry["pvid"] = vlans[0]
    switch = {"vlans": sorted(vlans),
              "ports": {port: ports[port] for port in sorted(ports, key=_port_key)}}
    return switch, forwarding, inputs


def assign_vlans(routing: RoutingFunction, kind: str = "renamed", bank: str = "A",
                 vlan_range: Any = None, reserved: Iterable[int] = ()) -> Assignment:
    """:func:`fixed_assignment` or :func:`renamed_assignment` by name."""
    if kind not in KINDS:
        raise VlanError("assignment: must be one of %s, got %r" % (", ".join(KINDS), kind))
    build = fixed_assignment if kind == "fixed" else renamed_assignment
    return build(routing, bank=bank, vlan_range=vlan_range, reserved=reserved)
