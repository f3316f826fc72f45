# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Up*/down* routing (Schroeder et al., Autonet; segment-based paper §1.1:
"UD first selects a root node, then it computes a spanning tree, and
finally it enforces turn prohibitions among the links to avoid cycles").

A BFS spanning tree from the root gives every switch a level (its distance
to the root over usable links). The *up* end of every link is the switch
nearer the root: lower level, ties to the lower switch id, so every link
has exactly one up direction. A path may go up any number of times and
then down, never down and then up again: prohibited turns = down -> up.
Since (level, id) strictly decreases along up channels and increases along
down channels, any cycle of channels contains a down -> up turn, so the
turn graph is acyclic. Shortest legal paths are balanced by
:func:`select_paths` (all links stay in use, unlike STP).

Options:

* ``root``: the root switch's name. Default: the switch of least
  eccentricity (greatest distance to any switch, over usable links), ties
  to the lowest id -- the centre of the fabric, so up paths are short
  (the segment-based paper §1.1 notes hot-spots near the root;
  docs/benchmarks.md measures how much the root matters).
* ``balance`` (default true; see :func:`select_paths`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from .base import RoutingError, RoutingFunction, _Arrays, check_options, down_set, select_paths, switch_option

if TYPE_CHECKING:
    from ..fabric.topology import Topology

NAME = "updown"

# Eccentricities are computed for this many (source x switch) cells at once.
_CHUNK_CELLS = 1 << 24


def _adjacency(topology: Topology, avoided: frozenset[int]) -> sparse.csr_matrix:
    """Switch adjacency over the usable channels (sparse, directed)."""
    arrays = _Arrays(topology, avoided)
    usable = np.flatnonzero(arrays.usable)
    return sparse.csr_matrix((np.ones(len(usable)), (arrays.src[usable], arrays.dst[usable])),
                             shape=(arrays.n, arrays.n))


def _check_connected(topology: Topology, adjacency: sparse.csr_matrix, engine: str) -> None:
    """Refuse a fabric the usable links split, naming the smaller parts."""
    count, labels = csgraph.connected_components(adjacency, directed=False)
    if count <= 1:
        return
    names = topology.switch_names()
    main = np.argmax(np.bincount(labels))
    cut = [names[i] for i in np.flatnonzero(labels != main)]
    shown = ", ".join(cut[:6]) + (", ..." if len(cut) > 6 else "")
    raise RoutingError("%s: the links that are up leave %d switch%s (%s) cut off from the rest "
                       "of the fabric; bring a link back up"
                       % (engine, len(cut), "" if len(cut) == 1 else "es", shown))


def default_root(topology: Topology, avoided: frozenset[int] = frozenset(), engine: str = NAME) -> int:
    """Index of the switch with the least eccentricity over usable links,
    ties to the lowest id."""
    n = len(topology.switches)
    if n <= 1:
        return 0
    adjacency = _adjacency(topology, avoided)
    _check_connected(topology, adjacency, engine)
    chunk = max(1, _CHUNK_CELLS // n)
    eccentricity = np.empty(n)
    for first in range(0, n, chunk):
        rows = np.arange(first, min(n, first + chunk))
        dist = csgraph.shortest_path(adjacency, method="D", unweighted=True, indices=rows)
        eccentricity[rows] = dist.max(axis=1)
    return int(np.argmin(eccentricity))  # argmin returns the first, i.e. lowest id


def root_and_levels(topology: Topology, avoided: frozenset[int], root: str | None = None,
                    engine: str = NAME) -> tuple[int, np.ndarray]:
    """The root index (option ``root`` or :func:`default_root`) and every
    switch's BFS level from it over usable links (ints)."""
    if root is None:
        root_index = default_root(topology, avoided, engine)
    else:
        root_index = switch_option(topology, engine, "root", root)
    n = len(topology.switches)
    if n <= 1:
        return root_index, np.zeros(n, dtype=np.int64)
    adjacency = _adjacency(topology, avoided)
    _check_connected(topology, adjacency, engine)
    levels = csgraph.shortest_path(adjacency, method="D", unweighted=True, indices=root_index)
    return root_index, levels.astype(np.int64)


def prohibited_turns(topology: Topology, levels: np.ndarray, avoided: frozenset[int]) -> np.ndarray:
    """Down -> up turns as an ``(k, 2)`` array, for the given BFS levels."""
    arrays = _Arrays(topology, avoided)
    order = levels * (arrays.n + 1) + np.arange(arrays.n)  # (level, id) as one number
    up = order[arrays.dst] < order[arrays.src]
    ins, outs = arrays.turns()
    forbidden = ~up[ins] & up[outs]
    return np.stack([ins[forbidden], outs[forbidden]], axis=1)


def route(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """Up*/down* routing; see the module doc."""
    check_options(NAME, options, {"root", "balance"})
    avoided = down_set(topology, down)
    root, levels = root_and_levels(topology, avoided, options.get("root"))
    prohibited = prohibited_turns(topology, levels, avoided)
    recorded = dict(options, root=topology.switch_names()[root])
    return select_paths(topology, prohibited, NAME, down=down, options=recorded,
                        balance=options.get("balance", True))
