# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Spanning tree only: the baseline of plain Ethernet (802.1D STP;
segment-based paper §1.1: STP "turns any topology into a tree by disabling
links", so it cannot deadlock but wastes every other link).

The tree is a BFS tree from the root: every switch but the root keeps one
link to a switch one level nearer the root -- the neighbour with the
lowest id, and among parallel links the lowest link index (802.1D's
lowest bridge id, then lowest port, for equal root path cost). Every other
usable link is left unused (``blocked``), so each pair has exactly one
path, along the tree.

Options: ``root`` (a switch name; default: the switch of least
eccentricity, ties to the lowest id, as for up*/down*). Note that a real
802.1D network elects the lowest bridge id instead; pass ``root`` to
reproduce that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .base import RoutingFunction, check_options, down_set, select_paths
from .updown import root_and_levels

if TYPE_CHECKING:
    from ..fabric.topology import Topology

NAME = "stp"


def tree_links(topology: Topology, levels: np.ndarray, avoided: frozenset[int]) -> frozenset[int]:
    """Indexes of the links of the BFS tree (see the module doc)."""
    names = topology.switch_names()
    index = {name: i for i, name in enumerate(names)}
    parent_link: dict[int, tuple[int, int]] = {}
    for link in topology.links:
        if link.index in avoided:
            continue
        a, b = index[link.a.switch], index[link.b.switch]
        for child, parent in ((a, b), (b, a)):
            if levels[parent] != levels[child] - 1:
                continue
            best = parent_link.get(child)
            if best is None or (parent, link.index) < best:
                parent_link[child] = (parent, link.index)
    return frozenset(link for _parent, link in parent_link.values())


def route(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """Spanning-tree routing; see the module doc."""
    check_options(NAME, options, {"root"})
    avoided = down_set(topology, down)
    root, levels = root_and_levels(topology, avoided, options.get("root"), NAME)
    tree = tree_links(topology, levels, avoided)
    blocked = frozenset(link.index for link in topology.links) - avoided - tree
    recorded = dict(options, root=topology.switch_names()[root])
    # One path per pair along the tree: nothing to balance.
    return select_paths(topology, (), NAME, down=down, options=recorded, balance=False,
                        blocked=blocked)
