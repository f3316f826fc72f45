# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The turn model for 2-D meshes (Glass and Ni, J. ACM 41(5), 1994; the
segment-based paper §1.1 cites it for "a routing algorithm can be viewed as
a set of turn prohibitions"): three engines in one module.

Directions: dimension 0 is x (east = +x, west = -x), dimension 1 is y
(north = +y, south = -y), following ``Switch.coords``. Each model forbids
two of the eight 90-degree turns, one from each of the two turn cycles,
and every 180-degree reversal (including over a parallel link):

* ``west_first``: no turn *into* west (north->west, south->west): go west first;
* ``north_last``: no turn *out of* north (north->east, north->west): go north last
  (the switch-tagged paper §4.1 uses it to route around a deactivated link);
* ``negative_first``: no turn from a positive to a negative direction
  (east->south, north->west): go west/south first.

The prohibitions are fed to :func:`select_paths`, so every pair gets a
shortest path the model allows: minimal in a full mesh, around down links
where the model permits it. A pair the model cannot connect raises
RoutingError naming it. Links that join no two grid neighbours are left
unused (``blocked``).

Registered as three engines; each function carries its engine name in
``.NAME``, and :func:`route` takes the model as option ``model``.
Options: ``balance`` (default true; see :func:`select_paths`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .base import RoutingError, RoutingFunction, _Arrays, check_options, down_set, select_paths
from .dor import Grid

if TYPE_CHECKING:
    from ..fabric.topology import Topology

NAME = "turn_model"
MODELS = ("west_first", "north_last", "negative_first")

EAST, WEST, NORTH, SOUTH = (0, 1), (0, -1), (1, 1), (1, -1)
# Forbidden 90-degree turns (in direction, out direction) per model.
FORBIDDEN = {
    "west_first": ((NORTH, WEST), (SOUTH, WEST)),
    "north_last": ((NORTH, EAST), (NORTH, WEST)),
    "negative_first": ((EAST, SOUTH), (NORTH, WEST)),
}


def prohibited_turns(topology: Topology, model: str, down: Any = ()) -> tuple[np.ndarray, frozenset[int]]:
    """The turns ``model`` forbids on ``topology`` as an ``(k, 2)`` array,
    plus the links it leaves unused."""
    if model not in FORBIDDEN:
        raise RoutingError("turn_model: unknown model %r (models: %s)" % (model, ", ".join(MODELS)))
    grid = Grid(topology, model)
    if grid.kind != "mesh" or len(grid.dims) != 2:
        raise RoutingError(
            "%s: the turn model needs a 2-D mesh, got a %d-D %s%s; use dor, updown or segment"
            % (model, len(grid.dims), grid.kind,
               " (its wrap links form cycles the model does not break)"
               if grid.kind == "torus" else ""))
    requested = down_set(topology, down)
    blocked = grid.blocked_links(topology) - requested
    ins, outs = _Arrays(topology, requested | blocked).turns()
    d_in, d_out = grid.dim[ins], grid.dim[outs]
    s_in, s_out = grid.sign[ins], grid.sign[outs]
    forbidden = (d_in == d_out) & (s_in != s_out)
    for (din, sin), (dout, sout) in FORBIDDEN[model]:
        forbidden |= (d_in == din) & (s_in == sin) & (d_out == dout) & (s_out == sout)
    return np.stack([ins[forbidden], outs[forbidden]], axis=1), blocked


def route(topology: Topology, down: Any = (), model: str = "west_first", **options: Any) -> RoutingFunction:
    """Route ``topology`` with turn model ``model`` (see the module doc)."""
    check_options(model, options, {"balance"})
    prohibited, blocked = prohibited_turns(topology, model, down)
    try:
        return select_paths(topology, prohibited, model, down=down, options=options,
                            balance=options.get("balance", True), blocked=blocked)
    except RoutingError as exc:
        if "no legal path" not in str(exc):
            raise
        raise RoutingError("%s; the %s turn model cannot connect this pair with these links "
                           "down; try another turn model or segment" % (exc, model)) from None


def west_first(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """West-first turn model routing."""
    return route(topology, down=down, model="west_first", **options)


def north_last(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """North-last turn model routing."""
    return route(topology, down=down, model="north_last", **options)


def negative_first(topology: Topology, down: Any = (), **options: Any) -> RoutingFunction:
    """Negative-first turn model routing."""
    return route(topology, down=down, model="negative_first", **options)


# Engine names on the functions themselves; mypy does not know function attributes.
west_first.NAME = "west_first"  # type: ignore[attr-defined]
north_last.NAME = "north_last"  # type: ignore[attr-defined]
negative_first.NAME = "negative_first"  # type: ignore[attr-defined]
