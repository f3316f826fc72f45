# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routing quality metrics: traffic patterns, channel loads, hops, stretch
and the LP lower bound on the maximum channel load.

Everything here is a pure function over a :class:`~.topology.Topology`, a
*traffic matrix* and a *path set*:

* A **traffic matrix** is a numpy array of shape ``(n, n)`` (``n`` switches,
  in id order, ``topology.switch_names()``): entry ``[s, t]`` is the traffic
  from hosts on switch ``s`` to hosts on switch ``t``. The patterns below
  count one unit per ordered *host* pair whose hosts sit on different
  switches; hosts on the same switch never cross a channel, so the diagonal
  is always zero. A topology without hosts is treated as one host per
  switch (the host names are then the switch names).
* A **path set** is ``{(src_switch, dst_switch): [channel ids]}``, what
  ``RoutingFunction.paths()`` returns; only pairs with traffic are read.

The *channel load* of a directed channel is the traffic whose path crosses
it; with the uniform pattern and one host per switch it is the number of
ordered host pairs over that channel, the metric of docs/benchmarks.md
(where OpenSM's engines are measured the same way). :func:`lp_lower_bound` gives the optimum of the
same quantity over *any* fractional multipath routing (a concurrent
multicommodity flow), so no routing, deadlock-free or not, can go below it.

Host-level patterns follow the switch-tagged VLAN routing paper (Koibuchi
et al., TPDS 2010), §5.3: all-to-all, bit-reversal and matrix transpose.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.sparse.csgraph import shortest_path

from ..errors import EtherclusterError

if TYPE_CHECKING:
    from ..routing.base import RoutingFunction
    from ..fabric.topology import Topology

# Above this many switches the LP (destinations x channels variables) takes
# minutes and gigabytes; the bound is for benchmarking, not for planning.
LP_MAX_SWITCHES = 128


class MetricsError(EtherclusterError):
    """Bad input to a metric: unknown host, wrong matrix shape, missing path."""


class TrafficPatternError(MetricsError, ValueError):
    """A traffic pattern does not apply to this host count (e.g. bit
    reversal needs a power of two hosts)."""


# --------------------------------------------------------------- host view
def traffic_hosts(topology: Topology) -> list[tuple[str, str]]:
    """The endpoints traffic patterns run between, in host order:
    a list of ``(name, switch)``. Hosts of the topology in file/generator
    order, or, when the topology has no hosts, one per switch named after
    the switch (so patterns still apply to bare switch fabrics)."""
    if topology.hosts:
        return [(host.name, host.switch) for host in topology.hosts.values()]
    return [(name, name) for name in topology.switch_names()]


def _matrix_from_host_pairs(topology: Topology, pairs: Sequence[tuple[int, int, float]]) -> np.ndarray:
    """Sum ``(src_host_position, dst_host_position, weight)`` into a switch
    matrix; pairs whose hosts share a switch add nothing."""
    hosts = traffic_hosts(topology)
    index = {name: sw.index for name, sw in topology.switches.items()}
    switch_of = np.array([index[switch] for _name, switch in hosts], dtype=np.int64)
    n = len(topology.switches)
    traffic = np.zeros((n, n), dtype=np.float64)
    if pairs:
        src, dst, weight = (np.asarray(column) for column in zip(*pairs))
        np.add.at(traffic, (switch_of[src], switch_of[dst]), weight.astype(np.float64))
    np.fill_diagonal(traffic, 0.0)
    return traffic


# ------------------------------------------------------------------ patterns
def uniform(topology: Topology) -> np.ndarray:
    """All-to-all: every ordered pair of hosts exchanges one unit.

    Entry ``[s, t]`` (s != t) is ``hosts_on(s) * hosts_on(t)``."""
    hosts = traffic_hosts(topology)
    index = {name: sw.index for name, sw in topology.switches.items()}
    counts = np.zeros(len(topology.switches), dtype=np.float64)
    for _name, switch in hosts:
        counts[index[switch]] += 1
    traffic = np.outer(counts, counts)
    np.fill_diagonal(traffic, 0.0)
    return traffic


def bit_reversal(topology: Topology) -> np.ndarray:
    """Bit-reversal permutation (switch-tagged paper §5.3): the host with id
    ``(a0, a1, ..., a_{n-1})`` (its position in host order, n bits) sends to
    the host whose id is the reversed bits ``(a_{n-1}, ..., a1, a0)``.
    Palindromic ids send to themselves, i.e. nothing.

    Raises TrafficPatternError unless the host count is a power of two."""
    count = len(traffic_hosts(topology))
    if count < 2 or count & (count - 1):
        raise TrafficPatternError(
            "bit_reversal: the pattern needs a power-of-two number of hosts, %s has %d%s"
            % (topology.name, count, "" if topology.hosts else " (one per switch: it has no hosts)"))
    bits = count.bit_length() - 1
    pairs = [(i, int(format(i, "0%db" % bits)[::-1], 2), 1) for i in range(count)]
    return _matrix_from_host_pairs(topology, pairs)


def matrix_transpose(topology: Topology) -> np.ndarray:
    """Matrix-transpose permutation (switch-tagged paper §5.3): hosts form a
    k x k grid, host id ``i`` is ``(x, y) = (i % k, i // k)``; host ``(x, y)``
    sends to ``(k - y - 1, k - x - 1)``, or to ``(k - x - 1, k - y - 1)`` when
    ``x + y = k - 1`` (on the anti-diagonal the first rule would give the
    host itself). The map is its own inverse and does not depend on which
    coordinate is taken first.

    Raises TrafficPatternError unless the host count is a perfect square."""
    count = len(traffic_hosts(topology))
    k = math.isqrt(count)
    if count < 4 or k * k != count:
        raise TrafficPatternError(
            "matrix_transpose: the pattern needs a square number of hosts (k x k, k >= 2), "
            "%s has %d%s" % (topology.name, count,
                             "" if topology.hosts else " (one per switch: it has no hosts)"))
    pairs = []
    for i in range(count):
        x, y = i % k, i // k
        if x + y == k - 1:
            dx, dy = k - x - 1, k - y - 1
        else:
            dx, dy = k - y - 1, k - x - 1
        pairs.append((i, dx + k * dy, 1))
    return _matrix_from_host_pairs(topology, pairs)


def random_permutation(topology: Topology, seed: int = 0) -> np.ndarray:
    """A random permutation of the hosts (numpy ``default_rng(seed)``): host
    ``i`` sends one unit to host ``perm[i]``; fixed points send nothing.
    The same seed gives the same pattern."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise MetricsError("random_permutation: seed must be a whole number >= 0, got %r"
                           % (seed,))
    count = len(traffic_hosts(topology))
    perm = np.random.default_rng(int(seed)).permutation(count)
    return _matrix_from_host_pairs(topology, [(i, int(perm[i]), 1) for i in range(count)])


def user_matrix(topology: Topology, matrix: Mapping[Any, Any]) -> np.ndarray:
    """A traffic matrix given by host names, as ``{(src, dst): bytes}`` or
    ``{src: {dst: bytes}}``. Volumes are summed per switch pair; pairs on
    the same switch are dropped. Without hosts in the topology, the names
    are switch names.

    Raises MetricsError naming an unknown host or a bad volume."""
    hosts = traffic_hosts(topology)
    position = {name: i for i, (name, _switch) in enumerate(hosts)}
    if not isinstance(matrix, dict):
        raise MetricsError("user_matrix: must be a mapping {(src, dst): bytes} or "
                           "{src: {dst: bytes}}, got %s" % type(matrix).__name__)
    entries = []
    for key, value in matrix.items():
        if isinstance(key, tuple):
            if len(key) != 2:
                raise MetricsError("user_matrix: key %r is not a (src_host, dst_host) pair" % (key,))
            entries.append((key[0], key[1], value, "%s -> %s" % key))
        elif isinstance(value, dict):
            entries.extend((key, dst, volume, "%s -> %s" % (key, dst))
                           for dst, volume in value.items())
        else:
            raise MetricsError("user_matrix: entry %r must map to {dst_host: bytes} "
                               "(or use (src, dst) keys)" % (key,))
    pairs = []
    kind = "host" if topology.hosts else "host (switch name: the topology has no hosts)"
    for src, dst, volume, where in entries:
        for name in (src, dst):
            if name not in position:
                known = ", ".join(known_name for known_name, _switch in hosts[:8])
                known += ", ..." if len(hosts) > 8 else ""
                raise MetricsError("user_matrix[%s]: unknown %s %r (known: %s)"
                                   % (where, kind, name, known))
        if isinstance(volume, bool) or not isinstance(volume, (int, float, np.number)) \
                or not math.isfinite(volume) or volume < 0:
            raise MetricsError("user_matrix[%s]: the volume must be a number >= 0 (bytes), "
                               "got %r" % (where, volume))
        pairs.append((position[src], position[dst], float(volume)))
    return _matrix_from_host_pairs(topology, pairs)


PATTERNS = {
    "uniform": uniform,
    "bit_reversal": bit_reversal,
    "matrix_transpose": matrix_transpose,
    "random_permutation": random_permutation,
}


def traffic_pattern(topology: Topology, name: str, seed: int = 0) -> np.ndarray:
    """A pattern by name (see PATTERNS); ``seed`` is used by random_permutation."""
    if name not in PATTERNS:
        raise MetricsError("unknown traffic pattern %r (known: %s)" % (name, ", ".join(PATTERNS)))
    if name == "random_permutation":
        return random_permutation(topology, seed)
    return PATTERNS[name](topology)


# ------------------------------------------------------------------ metrics
def _check_traffic(topology: Topology, traffic: Any) -> np.ndarray:
    n = len(topology.switches)
    traffic = np.asarray(traffic, dtype=np.float64)
    if traffic.shape != (n, n):
        raise MetricsError("traffic matrix must have shape (%d, %d), one row and column per "
                           "switch of %s, got %r" % (n, n, topology.name, traffic.shape))
    if not np.all(np.isfinite(traffic)) or np.any(traffic < 0):
        raise MetricsError("traffic matrix must hold finite volumes >= 0")
    return traffic


def _demands(topology, traffic):
    """The pairs with traffic: (src names, dst names, weights)."""
    traffic = _check_traffic(topology, traffic)
    names = topology.switch_names()
    src, dst = np.nonzero(traffic)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    return [names[i] for i in src], [names[j] for j in dst], traffic[src, dst]


def _paths_for(paths, sources, destinations):
    found = []
    for src, dst in zip(sources, destinations):
        path = paths.get((src, dst))
        if path is None:
            raise MetricsError("no path from %s to %s in the path set, but the traffic "
                               "matrix sends traffic between them" % (src, dst))
        found.append(path)
    return found


def channel_loads(topology: Topology, paths: Mapping[tuple[str, str], list[int]], traffic: Any) -> np.ndarray:
    """Traffic over each directed channel: a float array indexed by channel id
    (``len(topology.channels)`` entries)."""
    sources, destinations, weights = _demands(topology, traffic)
    chosen = _paths_for(paths, sources, destinations)
    lengths = np.fromiter((len(path) for path in chosen), dtype=np.int64, count=len(chosen))
    flat = np.fromiter((c for path in chosen for c in path), dtype=np.int64,
                       count=int(lengths.sum()))
    if flat.size and (flat.min() < 0 or flat.max() >= len(topology.channels)):
        raise MetricsError("the path set names a channel id outside 0..%d"
                           % (len(topology.channels) - 1))
    return np.bincount(flat, weights=np.repeat(weights, lengths),
                       minlength=len(topology.channels)).astype(np.float64)


def max_channel_load(topology: Topology, paths: Mapping[tuple[str, str], list[int]], traffic: Any) -> float:
    """The largest channel load (0.0 when nothing crosses a channel)."""
    loads = channel_loads(topology, paths, traffic)
    return float(loads.max()) if loads.size else 0.0


def average_hops(topology: Topology, paths: Mapping[tuple[str, str], list[int]], traffic: Any) -> float:
    """Traffic-weighted mean path length in switch-to-switch hops (channels).
    (The switch-tagged paper's Avg.H counts switches: hops + 1.)"""
    sources, destinations, weights = _demands(topology, traffic)
    if not weights.size:
        return 0.0
    lengths = np.array([len(p) for p in _paths_for(paths, sources, destinations)], dtype=float)
    return float(np.dot(lengths, weights) / weights.sum())


def hop_distances(topology: Topology, down: Any = ()) -> np.ndarray:
    """Shortest hop count between every pair of switches over links that are
    up and not in ``down``: an (n, n) float array, ``inf`` where unreachable."""
    n = len(topology.switches)
    index = {name: sw.index for name, sw in topology.switches.items()}
    usable = _usable_channels(topology, down)
    rows = [index[topology.channels[c].src] for c in usable]
    cols = [index[topology.channels[c].dst] for c in usable]
    adjacency = sp.csr_matrix((np.ones(len(usable)), (rows, cols)), shape=(n, n))
    return shortest_path(adjacency, directed=True, unweighted=True)


def stretch(topology: Topology, paths: Mapping[tuple[str, str], list[int]], traffic: Any = None,
            down: Any = ()) -> dict[str, float]:
    """Path length over shortest length (links up and not in ``down``) for
    every pair with traffic (every pair of ``paths`` when ``traffic`` is
    None): ``{"average": traffic-weighted mean, "max": worst pair}``."""
    index = {name: sw.index for name, sw in topology.switches.items()}
    if traffic is None:
        pairs = [(src, dst) for (src, dst) in paths if src != dst]
        weights = np.ones(len(pairs))
        chosen = [paths[pair] for pair in pairs]
    else:
        sources, destinations, weights = _demands(topology, traffic)
        pairs = list(zip(sources, destinations))
        chosen = _paths_for(paths, sources, destinations)
    if not pairs:
        return {"average": 1.0, "max": 1.0}
    distances = hop_distances(topology, down)
    shortest = np.array([distances[index[s], index[t]] for s, t in pairs])
    if not np.all(np.isfinite(shortest)):
        s, t = pairs[int(np.argmax(~np.isfinite(shortest)))]
        raise MetricsError("switch %s cannot reach %s over the links that are up" % (s, t))
    ratios = np.array([len(p) for p in chosen], dtype=float) / shortest
    return {"average": float(np.dot(ratios, weights) / weights.sum()),
            "max": float(ratios.max())}


def busiest_channels(topology: Topology, loads: np.ndarray, count: int = 5) -> list[tuple[str, int | float]]:
    """The ``count`` most loaded channels as ``(str(channel), load)``, busiest first."""
    order = np.argsort(-loads, kind="stable")[:count]
    return [(str(topology.channels[c]), _plain(loads[c])) for c in order if loads[c] > 0]


# ------------------------------------------------------------------ LP bound
def _usable_channels(topology: Topology, down: Any) -> list[int]:
    down = set(down) | topology.down_links()
    return [ch.id for ch in topology.channels if ch.link not in down]


def lp_lower_bound(topology: Topology, traffic: Any, down: Any = ()) -> float:
    """The least possible maximum channel load for ``traffic`` over any
    fractional multipath routing on the links that are up and not in
    ``down`` (concurrent multicommodity flow, minimum congestion).

    Destination-aggregated formulation: one flow variable per (destination,
    channel) and the congestion ``t``; at every switch other than the
    destination, outflow - inflow of the destination's flow equals the
    traffic it sends there; for every channel the flows of all destinations
    sum to at most ``t``; minimise ``t``. Solved with HiGHS
    (``scipy.optimize.linprog``, interior point); 64 switches take about a
    second. Refused above
    LP_MAX_SWITCHES switches."""
    n = len(topology.switches)
    if n > LP_MAX_SWITCHES:
        raise MetricsError("lp_lower_bound: %s has %d switches; the LP is limited to %d "
                           "(it grows as switches x channels)" % (topology.name, n, LP_MAX_SWITCHES))
    traffic = _lp_traffic(topology, traffic, down)
    destinations = np.flatnonzero(traffic.sum(axis=0) > 0)
    if not destinations.size:
        return 0.0
    src, dst, capacity = _lp_arcs(topology, down)
    cost, a_ub, a_eq, b_eq, bounds = _lp_program(traffic, destinations, src, dst, capacity)
    # The interior-point variant of HiGHS (with crossover, so the optimum is
    # exact) is 5-15x faster than its simplex on these LPs: 64 switches in
    # about a second.
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(len(src)), A_eq=a_eq, b_eq=b_eq,
                     bounds=bounds, method="highs-ipm")
    if result.status != 0:
        raise MetricsError("lp_lower_bound: the LP solver failed on %s: %s"
                           % (topology.name, result.message))
    return float(result.x[-1])


def _lp_traffic(topology: Topology, traffic: Any, down: Any) -> np.ndarray:
    """The checked traffic matrix without its diagonal; MetricsError naming
    a pair with traffic that no path of usable links joins."""
    traffic = _check_traffic(topology, traffic)
    traffic = traffic.copy()
    np.fill_diagonal(traffic, 0.0)
    names = topology.switch_names()
    distances = hop_distances(topology, down)
    unreachable = np.argwhere((traffic > 0) & ~np.isfinite(distances))
    if unreachable.size:
        s, t = unreachable[0]
        raise MetricsError("lp_lower_bound: traffic from %s to %s but no path over the links "
                           "that are up" % (names[s], names[t]))
    return traffic


def _lp_arcs(topology: Topology, down: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The LP's arcs: source and destination switch index and capacity."""
    index = {name: sw.index for name, sw in topology.switches.items()}
    # Parallel channels (same src and dst switch) are one arc of capacity
    # "number of channels": splitting evenly over them is optimal, and the
    # LP of a torus with 2 links per neighbour gets no bigger than with 1.
    arcs: dict[tuple[int, int], int] = {}
    for c in _usable_channels(topology, down):
        channel = topology.channels[c]
        key = (index[channel.src], index[channel.dst])
        arcs[key] = arcs.get(key, 0) + 1
    src = np.array([a for a, _b in arcs], dtype=np.int64)
    dst = np.array([b for _a, b in arcs], dtype=np.int64)
    capacity = np.array(list(arcs.values()), dtype=np.float64)
    return src, dst, capacity


def _lp_program(traffic: np.ndarray, destinations: np.ndarray, src: np.ndarray, dst: np.ndarray,
                capacity: np.ndarray) -> tuple[np.ndarray, Any, Any, np.ndarray, np.ndarray]:
    """``(cost, A_ub, A_eq, b_eq, bounds)`` of the destination-aggregated
    LP (see :func:`lp_lower_bound`); variables: the flow of each destination
    on each arc, then the congestion ``t``."""
    n = len(traffic)
    m, k = len(src), len(destinations)
    # Node-arc incidence: +1 where the arc leaves, -1 where it enters.
    incidence = sp.csr_matrix(
        (np.concatenate([np.ones(m), -np.ones(m)]),
         (np.concatenate([src, dst]), np.concatenate([np.arange(m), np.arange(m)]))),
        shape=(n, m))
    blocks, rhs = [], []
    for d in destinations:
        keep = np.arange(n) != d  # no conservation row at the sink
        blocks.append(incidence[keep])
        rhs.append(traffic[keep, d])
    a_eq = sp.hstack([sp.block_diag(blocks, format="csr"), sp.csr_matrix((k * (n - 1), 1))],
                     format="csr")
    # sum over destinations of the flow on an arc <= capacity * t
    a_ub = sp.hstack([sp.kron(sp.csr_matrix(np.ones((1, k))), sp.identity(m)),
                      -sp.csr_matrix(capacity.reshape(m, 1))], format="csr")
    # Flow towards d never needs to leave d: pin those variables to 0.
    upper = np.full(k * m + 1, np.inf)
    for block, d in enumerate(destinations):
        upper[block * m + np.flatnonzero(src == d)] = 0.0
    cost = np.zeros(k * m + 1)
    cost[-1] = 1.0
    return cost, a_ub, a_eq, np.concatenate(rhs), np.column_stack([np.zeros(k * m + 1), upper])


# ------------------------------------------------------------------- report
def _plain(value: Any) -> int | float:
    value = float(value)
    return int(round(value)) if abs(value - round(value)) < 1e-9 else round(value, 6)


def routing_report(routing: RoutingFunction, traffic: Any = None, busiest: int = 5,
                   lp_bound: bool = False) -> dict[str, Any]:
    """Quality of a RoutingFunction under ``traffic`` (a matrix, a pattern
    name from PATTERNS, or None for uniform) as plain data:
    ``max_channel_load``, ``average_hops``, ``stretch`` (average, max),
    ``busiest_channels`` (strings "sw:port->sw:port = load") and, with
    ``lp_bound=True``, ``lp_bound`` and ``ratio_to_lp_bound``."""
    topology = routing.topology
    # Stretch and the bound compare against the fabric the operator left up,
    # not against the links an engine chose to leave unused (STP's blocked
    # links): those are part of what the routing is judged on.
    avoided = frozenset(routing.down) - frozenset(getattr(routing, "blocked", ()))
    if traffic is None:
        traffic = uniform(topology)
    elif isinstance(traffic, str):
        traffic = traffic_pattern(topology, traffic)
    paths = routing.paths()
    loads = channel_loads(topology, paths, traffic)
    report: dict[str, Any] = {
        "engine": routing.engine,
        "max_channel_load": _plain(loads.max() if loads.size else 0.0),
        "average_hops": round(average_hops(topology, paths, traffic), 6),
        "stretch": {key: round(value, 6) for key, value in
                    stretch(topology, paths, traffic, down=avoided).items()},
        "busiest_channels": ["%s = %s" % item for item in busiest_channels(topology, loads, busiest)],
    }
    if lp_bound:
        bound = lp_lower_bound(topology, traffic, down=avoided)
        report["lp_bound"] = _plain(bound)
        report["ratio_to_lp_bound"] = round(float(loads.max()) / bound, 6) if bound else None
    return report
