# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dimension-order routing (DOR) on a mesh or torus of any dimension.

DOR crosses the dimensions in increasing order and finishes one before
starting the next (switch-tagged paper §3.2, Fig. 1). It is expressed as
prohibited turns fed to :func:`select_paths`: no turn from dimension j to
a dimension i < j, no reversal inside a dimension. On a mesh that graph of
channels is acyclic, and the shortest legal paths are exactly the DOR paths.

A torus ring is a cycle, which DOR alone cannot break without virtual
channels, and Ethernet has none (segment-based paper §1.1). The
switch-tagged paper (§4.1, Table 3 note) breaks it with *two links between
neighbouring switches*; we do it with a dateline on the wrap link of every
ring (``k-1 -> 0`` going up, ``0 -> k-1`` going down):

* the usable parallel links of a non-wrap neighbour pair are split into a
  low class L (the first half by link index, rounded up) and a high class H;
* along a ring a frame may move from L to H but never back; it crosses the
  dateline (over any of the wrap links) only coming from L, and after the
  dateline it stays in H.

Prohibited inside one ring direction: H -> L, H -> wrap, wrap -> L.
Proof of acyclicity: number the channels of a ring direction by their
position ``x`` along it (the wrap link is position ``k-1``) as
``rank(L, x) = x``, ``rank(wrap) = k - 1``, ``rank(H, x) = k + x``; every
allowed turn (L->L, L->H, H->H, L->wrap, wrap->H) increases the rank, and
turns between dimensions only go to higher dimensions, so the turn graph
has no cycle (tests check it on the graph itself). Every DOR path is
legal (L up to the dateline, H after it), so paths stay minimal; which
class a frame uses before the dateline, and which way round an even ring
it goes for distance k/2, is left to the load balancing.

Needs: ``topology.shape``; every neighbour pair with a usable link; in a
torus ring of more than two switches, two usable links per non-wrap pair.
Otherwise RoutingError says which pair/link and what to use instead. Links
that join no two grid neighbours are left unused (``blocked``).

Options: ``balance`` (default true; see :func:`select_paths`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .base import RoutingError, RoutingFunction, _Arrays, check_options, down_set, select_paths

if TYPE_CHECKING:
    from ..fabric.topology import Topology

NAME = "dor"

# Copy classes of a torus ring channel (see the module doc).
LOW, WRAP, HIGH = 0, 1, 2


class Grid:
    """Per channel of a mesh/torus: its dimension (-1: not a grid link),
    direction (+1/-1) and whether it is a torus wrap link."""

    def __init__(self, topology: Topology, engine: str) -> None:
        shape = topology.shape
        if not shape or shape.get("kind") not in ("mesh", "torus"):
            raise RoutingError("%s: needs a mesh or torus (the topology has no shape; generate "
                               "it with kind mesh/torus or give shape and coords); use updown or "
                               "segment for other fabrics" % engine)
        self.kind = shape["kind"]
        self.dims = tuple(shape["dims"])
        self.coords = {name: sw.coords for name, sw in topology.switches.items()}
        C = len(topology.channels)
        self.dim = np.full(C, -1, dtype=np.int64)
        self.sign = np.zeros(C, dtype=np.int64)
        self.wrap = np.zeros(C, dtype=bool)
        for ch in topology.channels:
            a, b = self.coords[ch.src], self.coords[ch.dst]
            differ = [i for i in range(len(self.dims)) if a[i] != b[i]]
            if len(differ) != 1:
                continue
            i = differ[0]
            delta, k = b[i] - a[i], self.dims[i]
            if delta in (1, -1):
                self.dim[ch.id], self.sign[ch.id] = i, delta
            elif self.ring(i) and abs(delta) == k - 1:
                # k-1 -> 0 continues upwards, 0 -> k-1 downwards.
                self.dim[ch.id], self.sign[ch.id], self.wrap[ch.id] = i, -np.sign(delta), True

    def ring(self, dim: int) -> bool:
        """True if dimension ``dim`` is a torus ring with a separate wrap link."""
        return self.kind == "torus" and self.dims[dim] > 2

    def neighbour_pairs(self, topology: Topology) -> Iterator[tuple[str, str, int, bool]]:
        """Every (switch, switch, dim, is_wrap) that the grid says is cabled,
        the first switch the lower coordinate (wrap: the one at k-1)."""
        by_coords = {c: name for name, c in self.coords.items()}
        for name in topology.switch_names():
            c = self.coords[name]
            for i, k in enumerate(self.dims):
                nxt = list(c)
                if c[i] + 1 < k:
                    nxt[i] = c[i] + 1
                    yield name, by_coords[tuple(nxt)], i, False
                elif self.ring(i):
                    nxt[i] = 0
                    yield name, by_coords[tuple(nxt)], i, True

    def blocked_links(self, topology: Topology) -> frozenset[int]:
        """Links joining no two grid neighbours (left unused)."""
        return frozenset(link.index for link in topology.links if self.dim[2 * link.index] < 0)


def _links_between(topology: Topology, a: str, b: str) -> list[int]:
    """Indexes of the links between switches ``a`` and ``b``, sorted."""
    return sorted(key for key in topology.graph[a][b]) if topology.graph.has_edge(a, b) else []


def _check_pairs(topology: Topology, grid: Grid, avoided: frozenset[int], engine: str) -> np.ndarray:
    """Refuse a grid DOR cannot route on; return the copy class per channel."""
    copy_class = np.full(len(topology.channels), LOW, dtype=np.int64)
    single = []
    for a, b, dim, is_wrap in grid.neighbour_pairs(topology):
        cabled = _links_between(topology, a, b)
        usable = [i for i in cabled if i not in avoided]
        if not cabled:
            raise RoutingError(
                "%s: no link between %s and %s (neighbours in dimension %d); dimension-order "
                "routing needs every neighbour pair cabled; use updown or segment"
                % (engine, a, b, dim))
        if not usable:
            raise RoutingError(
                "%s: link %s between %s and %s is down and dimension-order routing cannot "
                "route around it; use north_last (2-D mesh) or segment"
                % (engine, topology.links[cabled[0]].name, a, b))
        if grid.ring(dim) and not is_wrap:
            if len(usable) < 2:
                single.append((a, b, cabled, usable))
                continue
            high = usable[(len(usable) + 1) // 2:]
            for index in high:
                copy_class[2 * index:2 * index + 2] = HIGH
        if is_wrap:
            for index in usable:
                copy_class[2 * index:2 * index + 2] = WRAP
    if single:
        a, b, cabled, usable = single[0]
        if len(cabled) >= 2:
            gone = [topology.links[i].name for i in cabled if i not in usable]
            raise RoutingError(
                "%s: link %s between %s and %s is down; DOR on a torus needs two usable links "
                "per neighbour pair to break the rings without virtual channels, so it cannot "
                "route around it; use segment or updown" % (engine, gone[0], a, b))
        raise RoutingError(
            "%s: torus with one link per neighbour pair (%d ring pairs have a single link, "
            "e.g. %s-%s): DOR cannot break the ring cycles without virtual channels; the "
            "switch-tagged paper (§4.1, Table 3) uses two links between neighbours (generate "
            "with links_per_neighbor: 2), or use updown or segment"
            % (engine, len(single), a, b))
    return copy_class


def prohibited_turns(topology: Topology, down: Any = (), engine: str = NAME) -> tuple[np.ndarray, frozenset[int]]:
    """The DOR turn restrictions of ``topology`` as an ``(k, 2)`` array of
    (in_channel, out_channel), plus the links left unused. Raises
    RoutingError when DOR cannot route the grid."""
    grid = Grid(topology, engine)
    requested = down_set(topology, down)
    blocked = grid.blocked_links(topology) - requested
    copy_class = _check_pairs(topology, grid, requested | blocked, engine)
    arrays = _Arrays(topology, requested | blocked)
    ins, outs = arrays.turns()
    d_in, d_out = grid.dim[ins], grid.dim[outs]
    same = (d_in == d_out) & (grid.sign[ins] == grid.sign[outs])
    ring = np.array([grid.ring(i) for i in range(len(grid.dims))] + [False])[d_in]
    c_in, c_out = copy_class[ins], copy_class[outs]
    dateline = ring & same & (((c_in == HIGH) & (c_out != HIGH))
                              | ((c_in == WRAP) & (c_out == LOW)))
    forbidden = (d_out < d_in) | ((d_out == d_in) & ~same) | dateline
    return np.stack([ins[forbidden], outs[forbidden]], axis=1), blocked


def route(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """Dimension-order routing; see the module doc."""
    check_options(NAME, options, {"balance"})
    prohibited, blocked = prohibited_turns(topology, down)
    return select_paths(topology, prohibited, NAME, down=down, options=options,
                        balance=options.get("balance", True), blocked=blocked)
