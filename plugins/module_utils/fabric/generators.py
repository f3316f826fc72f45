# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topology generators: ``generate: {kind: ...}`` -> explicit topology data.

Every generator is deterministic: the same spec gives the same switch names
(``sw0``, ``sw1``, ... in id order), the same ports (host ports ``"1"`` ..
``"h"`` first, then inter-switch ports in the order links are made) and the
same host names and MACs (``node00`` with ``02:00:00:00:00:01``, ...).

Shapes follow the switch-tagged VLAN paper (Koibuchi et al., TPDS 2010):
Table 11 gives the switch and link counts the tests check, §5.2 the M-tree,
§4.1/Table 3 the fat tree (u, d, r). Docs: docs/topology.md.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any, NamedTuple

import networkx as nx
from netaddr import EUI, mac_unix_expanded

from . import input_limits
from ..errors import TopologyError

KINDS = ("mesh", "torus", "fat_tree", "myri_clos", "complete", "tree", "m_tree", "random")
COMMON_FIELDS = {"kind", "hosts_per_switch", "faults", "seed"}
KIND_FIELDS = {
    "mesh": {"dims", "links_per_neighbor"},
    "torus": {"dims", "links_per_neighbor"},
    "fat_tree": {"u", "d", "r", "links_per_neighbor"},
    "myri_clos": {"dims", "links_per_neighbor"},
    "complete": {"switches", "links_per_pair"},
    "tree": {"fanout", "depth", "width"},
    "m_tree": {"dims", "root"},
    "random": {"switches", "degree"},
}
# The maxima of every topology (input_limits, docs/topology.md "Limits"):
# a generator computes the size it would make from its fields and refuses
# before generating anything.
MAX_SWITCHES = input_limits.MAX_SWITCHES
MAX_LINKS = input_limits.MAX_LINKS
MAX_HOSTS = input_limits.MAX_HOSTS
MAX_HOSTS_PER_SWITCH = 1024
MAX_PARALLEL = 16
MAX_SEED = 2 ** 63 - 1


class Size(NamedTuple):
    """What a generator spec makes, before ``faults`` removes links."""

    switches: int
    links: int
    hosts: int


def planned_size(spec: Any) -> Size:
    """The switches, links and hosts ``generate(spec)`` would make (before
    ``faults``), computed from the fields alone. Raises TopologyError
    naming the ``generate.<field>`` at fault when a field is malformed or
    the size is over a maximum of :mod:`input_limits`."""
    return _plan(spec)[2]


def generate(spec: Any) -> dict[str, Any]:
    """Expand a generator spec into explicit topology data (a dict with
    ``switches``, ``links``, ``hosts`` and, for meshes and tori, ``shape``).

    Raises TopologyError naming the ``generate.<field>`` at fault; a spec
    over the maxima is refused before anything is generated.
    """
    kind, hosts_per_switch, dummy = _plan(spec)
    builder = _Fabric()
    host_switches = _BUILDERS[kind](spec, builder)
    if "faults" in spec:
        builder.remove_random_links(spec)
    return builder.to_data(host_switches, hosts_per_switch)


def _plan(spec):
    """Check the spec's kind and fields; return (kind, hosts_per_switch,
    its Size), refusing sizes over the maxima."""
    if not isinstance(spec, dict):
        raise TopologyError("generate: must be a mapping such as "
                            "{kind: torus, dims: [4, 4]}, got %s" % _shown(spec))
    kind = spec.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise TopologyError("generate.kind: unknown generator kind %s (known: %s)"
                            % (_shown(kind), ", ".join(KINDS)))
    allowed = COMMON_FIELDS | KIND_FIELDS[kind]
    unknown = sorted(str(key) for key in spec if key not in allowed)
    if unknown:
        raise TopologyError("generate.%s: not a field of kind %s (fields: %s)"
                            % (unknown[0], kind, ", ".join(sorted(allowed))))
    hosts_per_switch = _int(spec, "hosts_per_switch", 1, minimum=0, maximum=MAX_HOSTS_PER_SWITCH)
    _int(spec, "seed", 0, minimum=0, maximum=MAX_SEED)
    switches, links, host_switches = _SIZES[kind](spec)
    hosts = host_switches * hosts_per_switch
    _limit("generate.hosts_per_switch", hosts, MAX_HOSTS, "hosts",
           "%d switches with hosts, %d hosts each," % (host_switches, hosts_per_switch))
    return kind, hosts_per_switch, Size(switches, links, hosts)


def _limit(fields, count, limit, what, made_of):
    """Refuse ``count`` ``what`` over ``limit``, naming the fields that set it."""
    if count > limit:
        raise TopologyError("%s: %s would make %s %s, more than the %d a topology may have (%s)"
                            % (fields, made_of, _number(count), what, limit, input_limits.LIMITS_DOC))


def _number(count):
    """``count`` in digits, or as a power of ten when it is astronomic
    (Python refuses to print integers of more than 4,300 digits)."""
    if count < 10 ** 15:
        return str(count)
    return "about 10^%d" % int(count.bit_length() * math.log10(2))


def _product(values):
    """The product of ``values`` (at most 64 of them: _dims refuses more)."""
    product = 1
    for value in values:
        product *= value
    return product


class _Fabric:
    """Switches and links under construction; ports are given out later."""

    def __init__(self):
        self.count = 0
        self.attrs = []
        self.pairs = []  # (i, j) switch index pairs, one per link, in order
        self.shape = None

    def add_switches(self, count, **attrs):
        first = self.count
        self.count += count
        self.attrs.extend(dict(attrs) for _unused in range(count))
        return range(first, self.count)

    def connect(self, i, j, times=1):
        self.pairs.extend([(i, j)] * times)

    def remove_random_links(self, spec):
        """Drop ``faults`` links at random (a count, or a fraction < 1),
        never one whose loss would disconnect the fabric."""
        count = _faults(spec, len(self.pairs), self.count)
        rng = random.Random(_int(spec, "seed", 0, minimum=0, maximum=MAX_SEED))
        graph = nx.MultiGraph()
        graph.add_nodes_from(range(self.count))
        graph.add_edges_from((i, j, n) for n, (i, j) in enumerate(self.pairs))
        order = list(range(len(self.pairs)))
        rng.shuffle(order)
        removed = set()
        for n in order:
            if len(removed) == count:
                break
            i, j = self.pairs[n]
            graph.remove_edge(i, j, key=n)
            if nx.has_path(graph, i, j):
                removed.add(n)
            else:
                graph.add_edge(i, j, key=n)
        if len(removed) < count:
            raise TopologyError("generate.faults: only %d links can be removed without "
                                "disconnecting the fabric, %d asked" % (len(removed), count))
        self.pairs = [pair for n, pair in enumerate(self.pairs) if n not in removed]

    def to_data(self, host_switches, hosts_per_switch):
        next_port = [hosts_per_switch + 1 if i in host_switches else 1 for i in range(self.count)]
        links = []
        for i, j in self.pairs:
            links.append({"a": "sw%d:%d" % (i, next_port[i]), "b": "sw%d:%d" % (j, next_port[j])})
            next_port[i] += 1
            next_port[j] += 1
        switches = {}
        for i in range(self.count):
            entry = {k: (list(v) if isinstance(v, tuple) else v)
                     for k, v in self.attrs[i].items()}
            switches["sw%d" % i] = entry
        hosts = {}
        total = len(host_switches) * hosts_per_switch
        width = max(2, len(str(total - 1)))
        number = 0
        for i in sorted(host_switches):
            for port in range(1, hosts_per_switch + 1):
                mac = EUI(0x020000000000 + number + 1, dialect=mac_unix_expanded)
                hosts["node%0*d" % (width, number)] = {
                    "switch": "sw%d" % i, "port": str(port), "mac": str(mac)}
                number += 1
        data = {"switches": switches, "links": links, "hosts": hosts}
        if self.shape is not None:
            data["shape"] = self.shape
        return data


def _faults(spec, links, switches):
    """The number of links ``faults`` asks to remove from a connected
    fabric of ``links`` links and ``switches`` switches."""
    faults = spec["faults"]
    number = not isinstance(faults, bool) and isinstance(faults, (int, float))
    if not number or (isinstance(faults, float) and not math.isfinite(faults)) or faults < 0 \
            or (isinstance(faults, float) and faults >= 1 and not faults.is_integer()):
        raise TopologyError("generate.faults: must be a count of links (a whole number) or a "
                            "fraction below 1, got %r" % (faults,))
    count = int(round(faults * links)) if isinstance(faults, float) and faults < 1 else int(faults)
    # a connected fabric keeps at least a spanning tree: switches - 1 links
    removable = links - (switches - 1)
    if count > removable:
        raise TopologyError("generate.faults: only %d links can be removed without "
                            "disconnecting the fabric, %s asked" % (removable, _number(count)))
    return count


def _int(spec, field, default, minimum=1, maximum=None):
    value = spec.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum \
            or (maximum is not None and value > maximum):
        bound = "from %d to %d" % (minimum, maximum) if maximum is not None \
            else "at least %d" % minimum
        raise TopologyError("generate.%s: must be a whole number %s, got %s"
                            % (field, bound, _shown(value)))
    return value


def _shown(value):
    """``repr`` of a value, shortened: a 4,000-digit number or a long list
    must not make the message unreadable."""
    text = repr(value)
    return text if len(text) <= 60 else text[:40] + "...(%d characters)" % len(text)


def _dims(spec, default=None, minimum=2):
    dims = spec.get("dims", default)
    if not isinstance(dims, list) or not dims or any(
            isinstance(k, bool) or not isinstance(k, int) or k < minimum for k in dims):
        raise TopologyError("generate.dims: bad dimensions %s: must be a non-empty list of "
                            "whole numbers >= %d, e.g. [4, 4]" % (_shown(dims), minimum))
    if len(dims) > 64:
        raise TopologyError("generate.dims: %d dimensions would make at least 2^%d switches, more than "
                            "the %d a topology may have (%s)"
                            % (len(dims), len(dims), MAX_SWITCHES, input_limits.LIMITS_DOC))
    _limit("generate.dims", _product(dims), MAX_SWITCHES, "switches", _shown(dims))
    return list(dims)


# ------------------------------------------------------------------ sizes
# Per kind: (switches, links, switches with hosts) from the fields alone,
# refused over the maxima with the fields that set them. generate() checks
# that the builders below make exactly these counts.
def _grid_size(spec, wrap):
    dims = _dims(spec)
    per_pair = _int(spec, "links_per_neighbor", 1, maximum=MAX_PARALLEL)
    switches = _product(dims)
    rings = sum(switches // k * (k if wrap and k > 2 else k - 1) for k in dims)
    _limit("generate.dims", rings, MAX_LINKS, "links", _shown(dims))
    _limit("generate.links_per_neighbor", rings * per_pair, MAX_LINKS, "links",
           "%s with %d links per neighbour" % (_shown(dims), per_pair))
    return switches, rings * per_pair, switches


def _fat_tree_params(spec):
    u = _int(spec, "u", 2)
    d = _int(spec, "d", 4, minimum=2)
    r = _int(spec, "r", 2, maximum=8)
    per_pair = _int(spec, "links_per_neighbor", 1, maximum=MAX_PARALLEL)
    if u > d:
        raise TopologyError("generate.u: u (%d up links) must not exceed d (%d down links)" % (u, d))
    if r >= 2 and d % u:
        raise TopologyError("generate.d: d (%d) must be a multiple of u (%d) when r >= 2" % (d, u))
    return u, d, r, per_pair


def _fat_tree_size(spec):
    u, d, r, per_pair = _fat_tree_params(spec)
    made = "a fat tree (u=%s, d=%s, r=%d)" % (_shown(u), _shown(d), r)
    # a level-1 pod: d leaves + u switches, d*u links; a level-l pod: d/u
    # level-(l-1) pods + u switches, each of their d tops linked to the u
    switches, links, leaves = d + u, d * u, d
    for dummy in range(r - 1):  # r <= 8: exact even for huge u and d
        switches = d // u * switches + u
        links = d // u * links + d * u
        leaves = d // u * leaves
    _limit("generate.u, generate.d, generate.r", switches, MAX_SWITCHES, "switches", made)
    _limit("generate.u, generate.d, generate.r", links, MAX_LINKS, "links", made)
    _limit("generate.links_per_neighbor", links * per_pair, MAX_LINKS, "links",
           "%s with %d links per neighbour" % (made, per_pair))
    return switches, links * per_pair, leaves


def _myri_clos_size(spec):
    dims = _myri_clos_dims(spec)
    per_pair = _int(spec, "links_per_neighbor", 1, maximum=MAX_PARALLEL)
    switches = dims[0] + dims[1]
    _limit("generate.dims", switches, MAX_SWITCHES, "switches", _shown(dims))
    _limit("generate.dims", dims[0] * dims[1], MAX_LINKS, "links", _shown(dims))
    _limit("generate.links_per_neighbor", dims[0] * dims[1] * per_pair, MAX_LINKS, "links",
           "%s with %d links per neighbour" % (_shown(dims), per_pair))
    return switches, dims[0] * dims[1] * per_pair, switches


def _myri_clos_dims(spec):
    dims = spec.get("dims", [4, 4])
    if not isinstance(dims, list) or len(dims) != 2 or any(
            isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in dims):
        raise TopologyError("generate.dims: myri_clos takes two column sizes (whole numbers >= 1), "
                            "e.g. [4, 4], got %s" % _shown(dims))
    return dims


def _complete_size(spec):
    n = _int(spec, "switches", 4, minimum=2)
    _limit("generate.switches", n, MAX_SWITCHES, "switches", "a complete graph")
    per_pair = _int(spec, "links_per_pair", 1, maximum=MAX_PARALLEL)
    pairs = n * (n - 1) // 2
    _limit("generate.switches", pairs, MAX_LINKS, "links", "a complete graph of %d switches" % n)
    _limit("generate.links_per_pair", pairs * per_pair, MAX_LINKS, "links",
           "a complete graph of %d switches with %d links per pair" % (n, per_pair))
    return n, pairs * per_pair, n


def _tree_params(spec):
    return (_int(spec, "fanout", 2), _int(spec, "depth", 2, minimum=0, maximum=16),
            _int(spec, "width", 1, maximum=MAX_PARALLEL))


def _tree_size(spec):
    fanout, depth, width = _tree_params(spec)
    made = "a tree of fanout %s and depth %d" % (_shown(fanout), depth)
    switches, level = 1, 1
    for dummy in range(depth):  # depth <= 16: exact even for a huge fanout
        level *= fanout
        switches += level
    _limit("generate.fanout, generate.depth", switches, MAX_SWITCHES, "switches", made)
    _limit("generate.width", (switches - 1) * width, MAX_LINKS, "links",
           "%s with %d links per parent-child pair" % (made, width))
    return switches, (switches - 1) * width, switches


def _m_tree_size(spec):
    dims = _dims(spec, default=[4, 4])
    _m_tree_root(spec, dims)
    switches = _product(dims)
    return switches, switches - 1, switches


def _m_tree_root(spec, dims):
    root = spec.get("root", [0] * len(dims))
    if not isinstance(root, list) or len(root) != len(dims) or any(
            isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < k
            for c, k in zip(root, dims)):
        raise TopologyError("generate.root: must be coordinates inside dims %r, got %s"
                            % (dims, _shown(root)))
    return root


def _random_params(spec):
    n = _int(spec, "switches", 16, minimum=2)
    _limit("generate.switches", n, MAX_SWITCHES, "switches", "a random fabric")
    degree = _int(spec, "degree", 4, maximum=64)
    if degree >= n:
        raise TopologyError("generate.degree: %d switches allow a degree of at most %d, got %d"
                            % (n, n - 1, degree))
    return n, degree


def _random_size(spec):
    n, degree = _random_params(spec)
    links = n * degree // 2  # one switch has one link fewer when the product is odd
    _limit("generate.switches, generate.degree", links, MAX_LINKS, "links",
           "%d switches of degree %d" % (n, degree))
    return n, links, n


_SIZES = {
    "mesh": lambda spec: _grid_size(spec, wrap=False),
    "torus": lambda spec: _grid_size(spec, wrap=True),
    "fat_tree": _fat_tree_size,
    "myri_clos": _myri_clos_size,
    "complete": _complete_size,
    "tree": _tree_size,
    "m_tree": _m_tree_size,
    "random": _random_size,
}


# --------------------------------------------------------------- builders
def _grid(spec, fabric, wrap):
    """k-ary n-cube: switch id = x0 + k0*x1 + k0*k1*x2 ...; per switch and
    dimension, ``links_per_neighbor`` links to the +1 neighbour (and, in a
    torus, from the last switch of each ring back to the first). A ring of
    two switches has no separate wrap link (Table 11: torus 4x2 = 12 links)."""
    dims = _dims(spec)
    per_pair = _int(spec, "links_per_neighbor", 1, maximum=MAX_PARALLEL)
    coords = list(itertools.product(*(range(k) for k in reversed(dims))))
    coords = [tuple(reversed(c)) for c in coords]
    index = {c: n for n, c in enumerate(coords)}
    for c in coords:
        fabric.add_switches(1, coords=c)
    for c in coords:
        for dim, k in enumerate(dims):
            nxt = list(c)
            if c[dim] + 1 < k:
                nxt[dim] = c[dim] + 1
            elif wrap and k > 2:
                nxt[dim] = 0
            else:
                continue
            fabric.connect(index[c], index[tuple(nxt)], per_pair)
    fabric.shape = {"kind": "torus" if wrap else "mesh", "dims": dims}
    return set(range(fabric.count))


def _mesh(spec, fabric):
    return _grid(spec, fabric, wrap=False)


def _torus(spec, fabric):
    return _grid(spec, fabric, wrap=True)


def _fat_tree(spec, fabric):
    """Fat tree (u, d, r) of the switch-tagged paper (§4.1, Fig. 3 and 9a):
    every switch below the top has ``u`` up links, every switch above the
    leaves ``d`` down links, and ``r`` levels of switches sit above the
    leaves. A level-1 pod is ``d`` leaves fully connected to ``u`` level-1
    switches; a level-l pod (l >= 2) is ``d/u`` level-(l-1) pods whose
    ``d`` top switches are fully connected to ``u`` new level-l switches.
    So a leaf has u^r distinct up paths (Table 3: u^r fixed VLANs), and
    (2, 4, 2) gives the testbed's 14 switches and 24 links (Table 11).
    Hosts attach to the leaves."""
    u, d, r, per_pair = _fat_tree_params(spec)

    def pod(level):
        """Build a level-``level`` pod; return (leaves, its top switches)."""
        if level == 0:
            leaf = fabric.add_switches(1, level=0)[0]
            return [leaf], [leaf]
        children = [pod(level - 1) for _unused in range(d if level == 1 else d // u)]
        tops = list(fabric.add_switches(u, level=level))
        for _leaves, child_tops in children:
            for child in child_tops:
                for top in tops:
                    fabric.connect(child, top, per_pair)
        return [leaf for leaves, _tops in children for leaf in leaves], tops

    leaves, _tops = pod(r)
    return set(leaves)


def _myri_clos(spec, fabric):
    """Myrinet-Clos (a x b): two columns fully connected to each other,
    hosts on every switch (Fig. 9b; 4x4 is 8 switches and 16 links)."""
    dims = _myri_clos_dims(spec)
    per_pair = _int(spec, "links_per_neighbor", 1, maximum=MAX_PARALLEL)
    left = fabric.add_switches(dims[0], column=0)
    right = fabric.add_switches(dims[1], column=1)
    for i in left:
        for j in right:
            fabric.connect(i, j, per_pair)
    for n in range(fabric.count):
        fabric.attrs[n].pop("column")
    return set(range(fabric.count))


def _complete(spec, fabric):
    n = _int(spec, "switches", 4, minimum=2)
    per_pair = _int(spec, "links_per_pair", 1, maximum=MAX_PARALLEL)
    fabric.add_switches(n)
    for i, j in itertools.combinations(range(n), 2):
        fabric.connect(i, j, per_pair)
    return set(range(n))


def _tree(spec, fabric):
    """A rooted tree, ``fanout`` children per switch down to ``depth``, each
    parent-child pair joined by ``width`` aggregated links; hosts everywhere.
    The root is ``sw0``; ``level`` is the height above the leaves."""
    fanout, depth, width = _tree_params(spec)
    # level counts up from the leaves (0) as in the fat tree: the root is ``depth``
    level_nodes = list(fabric.add_switches(1, level=depth))
    for level in range(depth - 1, -1, -1):
        below = []
        for parent in level_nodes:
            for child in fabric.add_switches(fanout, level=level):
                fabric.connect(parent, child, width)
                below.append(child)
        level_nodes = below
    return set(range(fabric.count))


def _m_tree(spec, fabric):
    """M-tree (§5.2): the mesh-based tree made of every dimension-order path
    from one root switch of a mesh (VLAN #10 in Fig. 1). A link along
    dimension d joins switches that agree with the root in every dimension
    above d. 4x4 rooted at a corner: 16 switches, 15 links, average path
    4.81 switches (Table 11)."""
    dims = _dims(spec, default=[4, 4])
    root = _m_tree_root(spec, dims)
    coords = [tuple(reversed(c)) for c in itertools.product(*(range(k) for k in reversed(dims)))]
    index = {c: n for n, c in enumerate(coords)}
    for c in coords:
        fabric.add_switches(1, coords=c)
    for c in coords:
        for dim, k in enumerate(dims):
            if c[dim] + 1 < k and all(c[e] == root[e] for e in range(dim + 1, len(dims))):
                nxt = list(c)
                nxt[dim] += 1
                fabric.connect(index[c], index[tuple(nxt)])
    return set(range(fabric.count))


def _random(spec, fabric):
    """A seeded irregular fabric: a connected random graph in which every
    switch has ``degree`` inter-switch links (one switch has one fewer when
    switches x degree is odd), as in the segment-based routing paper's §3."""
    n, degree = _random_params(spec)
    seed = _int(spec, "seed", 0, minimum=0, maximum=MAX_SEED)
    sequence = [degree] * n
    if sum(sequence) % 2:
        sequence[-1] -= 1
    rng = random.Random(seed)
    for _attempt in range(100):
        try:
            if degree == sequence[-1]:
                graph = nx.random_regular_graph(degree, n, seed=rng.randrange(2 ** 31))
            else:
                graph = nx.random_degree_sequence_graph(sequence, seed=rng.randrange(2 ** 31),
                                                        tries=50)
        except nx.NetworkXException:
            continue  # an unlucky draw; the next seed usually works
        if nx.is_connected(graph):
            break
    else:
        raise TopologyError("generate: no connected random graph with %d switches of degree %d "
                            "found; raise the degree" % (n, degree))
    fabric.add_switches(n)
    for i, j in sorted(tuple(sorted(edge)) for edge in graph.edges()):
        fabric.connect(i, j)
    return set(range(n))


_BUILDERS = {
    "mesh": _mesh,
    "torus": _torus,
    "fat_tree": _fat_tree,
    "myri_clos": _myri_clos,
    "complete": _complete,
    "tree": _tree,
    "m_tree": _m_tree,
    "random": _random,
}
