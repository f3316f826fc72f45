# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch-tagged paper's own path sets (Koibuchi et al., TPDS 2010,
§4.1, Table 3): the engine option ``paths: paper``.

Table 3 counts VLANs for particular routings. The engines balance each
destination over parallel links and middle switches (:mod:`.base`), which
spreads the paths from one source so that they form no tree, and the
fixed assignment then refuses them and the renamed one needs more VLANs.
These path sets keep the paper's regularity instead, built as explicit
paths for every ordered switch pair and turned into one ``C x N -> C``
table (:func:`routing_from_paths`):

* ``dor`` on a **mesh**: dimension order over the first usable cable of
  every neighbour pair (fixed k^(n-1), renamed n). One neighbour pair of
  dimension 0 left without a usable cable (the row "1-link deactivation")
  is detoured the north-last way (§4.1, [22]): along the row to the near
  end of the broken pair, one hop down in dimension 1, along that row,
  then on in dimension order.
* ``dor`` on a **torus** with two cables per neighbour pair (§4.1: "two
  links between switches are used for breaking cycles"): every ring has
  two *cuts*, the wrap hop (k-1, 0) for the first cable class and the hop
  (k//2 - 1, k//2) for the second. A frame crosses each ring in one class
  only, along the ring minus that class's cut (a line, so no cycle), and
  a source picks, per ring, the class whose line reaches farthest from it
  in fewer hops. The paths of a source form one tree, and the sources of
  one row that pick the same class share it: fixed 2k^(n-1) VLANs and
  renamed 2n, for every k (the paper has 3n). A cable down in a ring moves
  its class's cut to that hop; two down cables of one class in one ring
  are refused.
* ``north_last`` on a 2-D **mesh**: the mesh paths above.
* ``updown`` on a generated **fat tree** (u, d, r): the "mirror" paths of
  Fig. 3, up through the switches the source's digits pick and down
  through the same indexes (fixed u^r, renamed u).

Any other engine or fabric is refused, naming what the paper defines.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np

from .base import RoutingError, RoutingFunction, down_set
from ..fabric.topology import Topology

PAPER_FORMS = "dor on a mesh or a torus with two cables per neighbour pair, north_last on a 2-D " \
              "mesh, updown on a generated fat tree"

Coords = tuple


def channel_between(topology: Topology, a: str, b: str, link_index: int | None = None) -> int:
    """The channel ``a -> b`` (over ``link_index`` if given, else the lowest link)."""
    index = min(topology.graph[a][b]) if link_index is None else link_index
    link = topology.links[index]
    return 2 * link.index if link.a.switch == a else 2 * link.index + 1


def routing_from_paths(topology: Topology, paths: dict[tuple[str, str], list[Any]], engine: str,
                       down: Iterable[int] = (), options: dict[str, Any] | None = None) -> RoutingFunction:
    """A RoutingFunction from ``{(src, dst): path}`` for every ordered
    switch pair, a path being switch names or channel ids. Raises
    RoutingError when two paths leave one state (a switch, or a channel
    arriving) towards one destination differently: the set is then no
    ``C x N -> C`` table."""
    names = topology.switch_names()
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    states: list[int] = []
    targets: list[int] = []
    hops: list[int] = []
    for (src, dst), path in paths.items():
        if path and isinstance(path[0], str):
            path = [channel_between(topology, a, b) for a, b in zip(path, path[1:])]
        states.append(index[src])
        states.extend(n + channel for channel in path[:-1])
        targets.extend([index[dst]] * len(path))
        hops.extend(path)
    state, target, hop = (np.asarray(values, dtype=np.int64) for values in (states, targets, hops))
    # one next hop per (state, destination): sort by that key, compare neighbours
    key = state * n + target
    order = np.argsort(key, kind="stable")
    clash = np.nonzero((np.diff(key[order]) == 0) & (np.diff(hop[order]) != 0))[0]
    if clash.size:
        where, towards = int(state[order[clash[0]]]), names[int(target[order[clash[0]]])]
        raise RoutingError("%s: paths: paper: the paths towards %s leave %s two ways"
                           % (engine, towards, names[where] if where < n else "channel %d" % (where - n)))
    next_hop = np.full((n + len(topology.channels), n), -1, dtype=np.int32)
    next_hop[state, target] = hop
    return RoutingFunction(topology, engine, next_hop, down=down, options=options)


# -------------------------------------------------------------------- grids
class _Grid:
    """Coordinates and usable cables of a generated mesh or torus."""

    def __init__(self, topology: Topology, avoided: frozenset[int]) -> None:
        self.topology = topology
        self.dims = tuple(topology.shape["dims"])
        self.at = {sw.coords: name for name, sw in topology.switches.items()}
        self.avoided = avoided
        self._hops: dict[tuple[Coords, int, int], tuple[str, str, list[int]]] = {}
        self._channels: dict[tuple[str, str, int], int] = {}

    def cables(self, here: Coords, dim: int, sign: int) -> tuple[str, str, list[int]]:
        """The switches one hop from ``here`` and every cable between them."""
        key = (here, dim, sign)
        if key not in self._hops:
            a, b = self.at[here], self.at[_step(here, dim, sign, self.dims[dim])]
            graph = self.topology.graph
            self._hops[key] = (a, b, sorted(graph[a][b]) if graph.has_edge(a, b) else [])
        return self._hops[key]

    def channel(self, a: str, b: str, link_index: int) -> int:
        """:func:`channel_between`, remembered (every pair walks the same hops)."""
        key = (a, b, link_index)
        if key not in self._channels:
            self._channels[key] = channel_between(self.topology, a, b, link_index)
        return self._channels[key]

    def usable(self, cables: list[int]) -> list[int]:
        return [index for index in cables if index not in self.avoided]


def _step(coords: Coords, dim: int, sign: int, k: int) -> Coords:
    moved = list(coords)
    moved[dim] = (coords[dim] + sign) % k
    return tuple(moved)


# -------------------------------------------------------------------- torus
def _ring_cuts(grid: _Grid, engine: str) -> dict[tuple[int, Coords, int], int]:
    """Per (dimension, ring, cable class): the position ``h`` of the cut hop
    (h, h+1); a ring is named by its switch with coordinate 0 there."""
    cuts = {}
    for dim, k in enumerate(grid.dims):
        if k <= 2:
            continue
        for ring in (c for c in grid.at if c[dim] == 0):
            for cls, default in ((0, k - 1), (1, k // 2 - 1)):
                broken = []
                here = ring
                for position in range(k):
                    a, b, cables = grid.cables(here, dim, 1)
                    if len(cables) < 2:
                        raise RoutingError(
                            "%s: paths: paper on a torus needs two cables per neighbour pair "
                            "(switch-tagged paper §4.1); %s-%s has %d; generate with "
                            "links_per_neighbor: 2" % (engine, a, b, len(cables)))
                    if cables[cls] in grid.avoided:
                        broken.append((position, grid.topology.links[cables[cls]].name))
                    here = _step(here, dim, 1, k)
                if len(broken) > 1:
                    raise RoutingError("%s: paths: paper: links %s are down in one ring of "
                                       "dimension %d; a ring's cable class can lose one hop"
                                       % (engine, " and ".join(name for _p, name in broken), dim))
                cuts[(dim, ring, cls)] = broken[0][0] if broken else default
    return cuts


def _ring_walk(p: int, q: int, cut: int, k: int) -> tuple[int, int]:
    """(sign, hops) from p to q along a ring of k without the hop (cut, cut+1)."""
    start = (cut + 1) % k              # the line runs start, start+1, ..., cut
    lp, lq = (p - start) % k, (q - start) % k
    return (1 if lq > lp else -1), abs(lq - lp)


def _reach(p: int, cut: int, k: int) -> int:
    """The longest walk from p along the ring without the hop (cut, cut+1)."""
    position = (p - cut - 1) % k
    return max(position, k - 1 - position)


def _all_pairs(topology: Topology, walk: Any) -> dict[tuple[str, str], list[int]]:
    """``{(src, dst): walk(src's coordinates, dst's)}`` for every ordered switch pair."""
    coords = {name: sw.coords for name, sw in topology.switches.items()}
    return {(src, dst): walk(coords[src], coords[dst])
            for src, dst in itertools.permutations(topology.switch_names(), 2)}


def torus_paths(topology: Topology, avoided: frozenset[int], engine: str) -> dict[tuple[str, str], list[int]]:
    """The torus paths of the module doc, as channel lists."""
    grid = _Grid(topology, avoided)
    cuts = _ring_cuts(grid, engine)

    def walk(here: Coords, goal: Coords) -> list[int]:
        channels = []
        for dim, k in enumerate(grid.dims):
            if here[dim] == goal[dim]:
                continue
            if k <= 2:
                a, b, cables = grid.cables(here, dim, 1)
                channels.append(grid.channel(a, b, _first_usable(grid, a, b, cables, engine)))
                here = _step(here, dim, 1, k)
                continue
            ring = tuple(0 if i == dim else c for i, c in enumerate(here))
            cls = min((0, 1), key=lambda c: (_reach(here[dim], cuts[(dim, ring, c)], k), c))
            sign, hops = _ring_walk(here[dim], goal[dim], cuts[(dim, ring, cls)], k)
            for _hop in range(hops):
                a, b, cables = grid.cables(here, dim, sign)
                channels.append(grid.channel(a, b, cables[cls]))
                here = _step(here, dim, sign, k)
        return channels

    return _all_pairs(topology, walk)


def _first_usable(grid: _Grid, a: str, b: str, cables: list[int], engine: str) -> int:
    usable = grid.usable(cables)
    if not usable:
        raise RoutingError("%s: paths: paper: no usable link between %s and %s" % (engine, a, b))
    return usable[0]


# --------------------------------------------------------------------- mesh
def _broken_pair(grid: _Grid, engine: str) -> tuple[Coords, str] | None:
    """The one neighbour pair of a mesh without a usable cable, as (its low
    end's coordinates, a link name), or None. Refuses what the north-last
    detour cannot go around."""
    broken = []
    for here in grid.at:
        for dim, k in enumerate(grid.dims):
            if here[dim] + 1 < k:
                a, b, cables = grid.cables(here, dim, 1)
                if not cables:
                    raise RoutingError("%s: paths: paper: no link between %s and %s (grid "
                                       "neighbours)" % (engine, a, b))
                if not grid.usable(cables):
                    broken.append((here, dim, grid.topology.links[cables[0]].name))
    if not broken:
        return None
    here, dim, name = broken[0]
    if len(broken) > 1:
        raise RoutingError("%s: paths: paper detours around one broken neighbour pair of a mesh "
                           "(Table 3: 1-link deactivation); %d have no usable link (%s, ...)"
                           % (engine, len(broken), name))
    if dim != 0 or len(grid.dims) < 2 or here[1] == 0:
        raise RoutingError("%s: paths: paper: link %s: the north-last detour goes around a down "
                           "link of dimension 0 above the lowest row of dimension 1; use segment"
                           % (engine, name))
    return here, name


def _line(grid: _Grid, here: Coords, dim: int, target: int, engine: str) -> tuple[Coords, list[int]]:
    """Walk ``here`` to coordinate ``target`` in ``dim``: (where, channels)."""
    channels = []
    sign = 1 if target > here[dim] else -1
    while here[dim] != target:
        a, b, cables = grid.cables(here, dim, sign)
        channels.append(grid.channel(a, b, _first_usable(grid, a, b, cables, engine)))
        here = _step(here, dim, sign, grid.dims[dim])
    return here, channels


def mesh_paths(topology: Topology, avoided: frozenset[int], engine: str) -> dict[tuple[str, str], list[int]]:
    """The mesh paths of the module doc, as channel lists."""
    grid = _Grid(topology, avoided)
    broken = _broken_pair(grid, engine)
    low = broken[0] if broken else None

    def walk(here: Coords, goal: Coords) -> list[int]:
        channels: list[int] = []
        if low is not None and here[1:] == low[1:] and \
                min(here[0], goal[0]) <= low[0] < max(here[0], goal[0]):
            near = low[0] if goal[0] > here[0] else low[0] + 1
            here, walked = _line(grid, here, 0, near, engine)
            channels += walked
            here, walked = _line(grid, here, 1, here[1] - 1, engine)
            channels += walked
        for dim in range(len(grid.dims)):
            here, walked = _line(grid, here, dim, goal[dim], engine)
            channels += walked
        return channels

    return _all_pairs(topology, walk)


# ----------------------------------------------------------------- fat tree
def fat_tree_paths(topology: Topology, avoided: frozenset[int], engine: str) -> dict[tuple[str, str], list[str]]:
    """The mirror paths of a generated fat tree (module doc), as switch lists."""
    level = {name: sw.level for name, sw in topology.switches.items()}
    if any(value is None for value in level.values()):
        raise RoutingError("%s: paths: paper needs a generated fat tree (switch levels); %s"
                           % (engine, PAPER_FORMS))
    if avoided:
        raise RoutingError("%s: paths: paper on a fat tree needs every link up (the mirror paths "
                           "use them all); link %s is down" % (engine, topology.links[min(avoided)].name))
    top = max(level.values())
    ups = {name: sorted((m for m in topology.graph[name] if level[m] == level[name] + 1),
                        key=lambda m: topology.switches[m].index) for name in level}
    digits = _leaf_digits(topology, level, ups, top)

    def chain(start: str, used: list[int]) -> list[str]:
        result = [start]
        while level[result[-1]] < top:
            result.append(ups[result[-1]][used[level[result[-1]]]])
        return result

    def route(src: str, dst: str) -> list[str]:
        used = list(digits[src])
        if level[dst] > 0:          # to a spine: climb through its index at its level
            used[level[dst] - 1] = _index_in_pod(topology, level, ups, dst)
        up, down = chain(src, used), chain(dst, used)
        meet = next((name for name in up if name in down), None)
        if meet is None:
            # two top switches (no hosts there): through the lowest-id switch below src
            pivot = min((m for m in topology.graph[src] if level[m] == level[src] - 1),
                        key=lambda m: topology.switches[m].index)
            return [src] + route(pivot, dst)
        return up[:up.index(meet) + 1] + list(reversed(down[:down.index(meet)]))

    return {(src, dst): route(src, dst) for src, dst in itertools.permutations(level, 2)}


def _index_in_pod(topology: Topology, level: dict[str, int], ups: dict[str, list[str]], name: str) -> int:
    """A switch's position among the up-neighbours of any switch below it."""
    below = [m for m in topology.graph[name] if level[m] == level[name] - 1]
    return ups[below[0]].index(name) if below else 0


def _leaf_digits(topology: Topology, level: dict[str, int], ups: dict[str, list[str]],
                 top: int) -> dict[str, list[int]]:
    """Per switch, the up-link index it takes at each level (Fig. 3): the
    leaves count through every digit combination, a_1 fastest; a higher
    switch climbs "through itself", lower digits 0."""
    digits = {}
    leaves = [name for name in topology.switch_names() if level[name] == 0]
    for number, leaf in enumerate(leaves):
        width = max(1, len(ups[leaf]))
        digits[leaf] = [number % width] if top else []
        rest = number // width
        for _level in range(2, top + 1):
            digits[leaf].append(rest % width)
            rest //= width
    for name in level:
        if level[name] > 0:
            digits[name] = ([0] * (level[name] - 1) + [_index_in_pod(topology, level, ups, name)]
                            + [0] * (top - level[name]))
    return digits


# ------------------------------------------------------------------ engine
def paper_routing(topology: Topology, engine: str, down: Any = (), **options: Any) -> RoutingFunction:
    """``paths: paper`` of ``engine`` on ``topology`` (module doc). Takes no
    other option; RoutingError naming what the paper defines otherwise."""
    if options:
        raise RoutingError("%s: paths: paper takes no other engine option (got %s)"
                           % (engine, ", ".join(sorted(options))))
    avoided = down_set(topology, down)
    kind = (topology.shape or {}).get("kind")
    if engine == "updown":
        paths: dict[tuple[str, str], list[Any]] = fat_tree_paths(topology, avoided, engine)
    elif engine == "dor" and kind == "torus":
        paths = torus_paths(topology, avoided, engine)
    elif (engine == "dor" and kind == "mesh") or \
            (engine == "north_last" and kind == "mesh" and len(topology.shape["dims"]) == 2):
        paths = mesh_paths(topology, avoided, engine)
    else:
        raise RoutingError("%s: paths: paper: the switch-tagged paper (§4.1, Table 3) gives path "
                           "sets for %s only" % (engine, PAPER_FORMS))
    return routing_from_paths(topology, paths, engine, down=avoided, options={"paths": "paper"})
