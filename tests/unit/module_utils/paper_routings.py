# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The path sets behind Table 3 of the switch-tagged VLAN routing paper
(§4.1), built as RoutingFunctions for the VLAN-count tests.

Table 3 counts VLANs for particular routings, not for any routing of the
fabric: the engines balance load per destination (routing/base.py), which
gives other path sets and other counts. These builders reproduce the
paper's routings from their description, as explicit paths for every
ordered switch pair turned into a ``C x N -> C`` table
(:func:`routing_from_paths` refuses path sets that are not):

* :func:`fat_tree_mirror_paths` -- fat tree (u, d, r): every switch has up
  digits (a_1 .. a_r); a frame climbs through the up links its source's
  digits pick and comes down through the switches of the same indexes
  ("mirror"), up*/down* so deadlock-free (Fig. 3: u^r fixed, u renamed);
* :func:`torus_dor_paths` -- k-ary n-cube torus, two links per neighbour:
  dimension order, minimal ring direction, dateline link classes (the low
  link before the wrap hop, the high one on and after it) and ties at
  distance k/2 broken so that sources 2j and 2j+1 omit the same hop;
* :func:`mesh_detour_paths` -- 2-D mesh, one x-link down: dimension order,
  and the pairs whose DOR path crosses the down link detour through the
  row below it (south, along, then on), which the north-last turn model
  allows.
"""

from __future__ import annotations

import itertools

import numpy as np

from ansible_collections.ethercluster.routing.plugins.module_utils.routing.base import (
    RoutingFunction,
)


def channel_between(topology, a, b, link_index=None):
    """The channel a -> b (over ``link_index`` if given, else the lowest link)."""
    keys = sorted(topology.graph[a][b]) if link_index is None else [link_index]
    link = topology.links[keys[0]]
    return 2 * link.index if link.a.switch == a else 2 * link.index + 1


def routing_from_paths(topology, paths, engine, down=()):
    """A RoutingFunction from ``{(src, dst): [switch names]}`` (every ordered
    pair) or ``{(src, dst): [channel ids]}``; raises ValueError when two
    paths leave one state towards one destination differently."""
    names = topology.switch_names()
    index = {name: i for i, name in enumerate(names)}
    n, C = len(names), len(topology.channels)
    next_hop = np.full((n + C, n), -1, dtype=np.int32)
    for (src, dst), path in paths.items():
        if path and isinstance(path[0], str):
            path = [channel_between(topology, a, b) for a, b in zip(path, path[1:])]
        state = index[src]
        t = index[dst]
        for channel in path:
            if next_hop[state, t] not in (-1, channel):
                raise ValueError("paths to %s disagree at state %d" % (dst, state))
            next_hop[state, t] = channel
            state = n + channel
    return RoutingFunction(topology, engine, next_hop, down=down)


# ---------------------------------------------------------------- fat tree
def fat_tree_mirror_paths(topology):
    """Every ordered switch pair of a generated fat tree (``level`` set):
    up through the source's digits to the lowest switch both chains share,
    then down the destination's chain taken with the same digits."""
    level = {name: sw.level for name, sw in topology.switches.items()}
    top = max(level.values())
    ups = {name: sorted((m for m in topology.graph[name] if level[m] == level[name] + 1),
                        key=lambda m: topology.switches[m].index) for name in level}

    def index_in_pod(name):
        """A switch's position among the up-neighbours of any switch below it."""
        below = [m for m in topology.graph[name] if level[m] == level[name] - 1]
        return ups[below[0]].index(name) if below else 0

    leaves = [name for name in topology.switch_names() if level[name] == 0]
    digits = {}
    for number, leaf in enumerate(leaves):
        # a_1 cycles fastest inside a pod, so every digit combination is used
        digits[leaf] = [(number // 1) % len(ups[leaf])] if top else []
        rest = number // max(1, len(ups[leaf]))
        for lv in range(2, top + 1):
            digits[leaf].append(rest % len(ups[leaf]))
            rest //= len(ups[leaf])
    for name in level:
        if level[name] > 0:     # came up "through itself"; lower digits 0
            digits[name] = ([0] * (level[name] - 1) + [index_in_pod(name)]
                            + [0] * (top - level[name]))

    def chain(start, digit):
        result = [start]
        while level[result[-1]] < top:
            here = result[-1]
            result.append(ups[here][digit[level[here]]])
        return result

    def route(src, dst):
        used = list(digits[src])
        if level[dst] > 0:          # to a spine: climb through its index at its level
            used[level[dst] - 1] = index_in_pod(dst)
        up = chain(src, used)
        down = chain(dst, used)
        meet = next((name for name in up if name in down), None)
        if meet is None:
            # two top switches (no hosts there): through the lowest-id switch below src
            pivot = min((m for m in topology.graph[src] if level[m] == level[src] - 1),
                        key=lambda m: topology.switches[m].index)
            return [src] + route(pivot, dst)
        return up[:up.index(meet) + 1] + list(reversed(down[:down.index(meet)]))

    return {(src, dst): route(src, dst) for src, dst in itertools.permutations(level, 2)}


# ------------------------------------------------------------------- torus
def torus_dor_paths(topology):
    """DOR on a k-ary n-cube torus with two links per neighbour pair (see
    the module doc)."""
    dims = topology.shape["dims"]
    at = {sw.coords: name for name, sw in topology.switches.items()}

    def ring_steps(p, q, k):
        """Direction (+1/-1) and hop count from p to q on a ring of k."""
        forward = (q - p) % k
        if forward * 2 < k or (forward * 2 == k and p % 2 == 0):
            return 1, forward
        return -1, k - forward

    def hop(coords, dim, sign, wrapped):
        nxt = list(coords)
        nxt[dim] = (coords[dim] + sign) % dims[dim]
        nxt = tuple(nxt)
        a, b = at[coords], at[nxt]
        crossing = (sign > 0 and coords[dim] == dims[dim] - 1) or (sign < 0 and coords[dim] == 0)
        wrapped = wrapped or crossing
        keys = sorted(topology.graph[a][b])
        return nxt, channel_between(topology, a, b, keys[1 if wrapped else 0]), wrapped

    paths = {}
    for src, dst in itertools.permutations(topology.switch_names(), 2):
        here, goal = topology.switches[src].coords, topology.switches[dst].coords
        channels = []
        for dim, k in enumerate(dims):
            sign, count = ring_steps(here[dim], goal[dim], k)
            wrapped = False
            for _unused in range(count):
                here, channel, wrapped = hop(here, dim, sign, wrapped)
                channels.append(channel)
        paths[(src, dst)] = channels
    return paths


# -------------------------------------------------------------------- mesh
def mesh_detour_paths(topology, down_link):
    """DOR on a 2-D mesh with x-link ``down_link`` (between (a, j) and
    (a+1, j), j >= 1) down: pairs whose DOR path would cross it go south
    to row j-1 at the link, along that row, then on in dimension order."""
    link = topology.links[down_link]
    ends = sorted((topology.switches[link.a.switch].coords,
                   topology.switches[link.b.switch].coords))
    (a, j), (a1, j1) = ends
    assert j == j1 and a1 == a + 1 and j >= 1, "needs an x-link above the bottom row"
    at = {sw.coords: name for name, sw in topology.switches.items()}

    def line(start, stop, fixed, along_x):
        step = 1 if stop >= start else -1
        return [at[(v, fixed) if along_x else (fixed, v)] for v in range(start, stop + step, step)]

    paths = {}
    for src, dst in itertools.permutations(topology.switch_names(), 2):
        (sx, sy), (dx, dy) = topology.switches[src].coords, topology.switches[dst].coords
        crosses = sy == j and min(sx, dx) <= a < max(sx, dx)
        if not crosses:
            path = line(sx, dx, sy, True) + line(sy, dy, dx, False)[1:]
        else:
            turn = a if dx > sx else a + 1   # the near end of the down link
            path = (line(sx, turn, sy, True) + [at[(turn, j - 1)]]
                    + line(turn, dx, j - 1, True)[1:] + line(j - 1, dy, dx, False)[1:])
        dedup = [path[0]] + [b for a_, b in zip(path, path[1:]) if b != a_]
        paths[(src, dst)] = dedup
    return paths
