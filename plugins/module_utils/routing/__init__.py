# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routing engines, one per module (OpenSM style), and their registry.

``ENGINES`` maps an engine name to ``"module"`` (the module's ``route``
function) or ``"module:function"`` (turn_model holds three engines).
Modules are imported only when an engine is asked for, so the registry
imports cleanly even while an engine module is missing.

Every engine is ``route(topology, down=(), **options) -> RoutingFunction``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..fabric.topology import Topology
from .base import RoutingError, RoutingFunction, down_set, select_paths  # noqa: F401
from .paper_paths import paper_routing
from .source_tree import PATHS_FORMS, SourceTreeRouting, in_paths_form, source_trees  # noqa: F401

ENGINES = {
    "dor": "dor",
    "west_first": "turn_model:west_first",
    "north_last": "turn_model:north_last",
    "negative_first": "turn_model:negative_first",
    "updown": "updown",
    "tbtp": "tbtp",
    "stp": "stp",
    "segment": "segment",
}


def engine_function(engine: str) -> Callable[..., RoutingFunction]:
    """The route function registered as ``engine``; RoutingError if the name
    is unknown or its module is not installed."""
    if not isinstance(engine, str) or engine not in ENGINES:
        raise RoutingError("unknown routing engine %r (engines: %s)"
                           % (engine, ", ".join(sorted(ENGINES))))
    module_name, _colon, function = ENGINES[engine].partition(":")
    qualified = "%s.%s" % (__name__, module_name)
    try:
        module = importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name != qualified:
            raise
        raise RoutingError("routing engine %r is not available: module %s is missing"
                           % (engine, qualified)) from None
    return getattr(module, function or "route")


def compute_routing(topology: Topology, engine: str, down: Any = (), **options: Any) -> RoutingFunction:
    """Run routing engine ``engine`` on ``topology``, avoiding the links in
    ``down`` (see :func:`down_set`), and return its RoutingFunction.

    The option ``paths`` every engine takes: ``per_destination`` (the
    default; a ``C x N -> C`` table), ``source_tree`` (a tree of legal
    paths per source, :mod:`.source_tree`, which the fixed VLAN assignment
    carries) or ``paper`` (the switch-tagged paper's own path sets,
    :mod:`.paper_paths`, for dor, north_last and updown)."""
    function = engine_function(engine)
    if not isinstance(topology, Topology):
        raise RoutingError("%s: expected a Topology (from load_topology or topology_from_data), "
                           "got %s" % (engine, type(topology).__name__))
    paths = options.pop("paths", "per_destination")
    if paths not in PATHS_FORMS:
        raise RoutingError("%s: option paths must be one of %s, got %r"
                           % (engine, ", ".join(PATHS_FORMS), paths))
    if paths == "paper":
        return paper_routing(topology, engine, down, **options)
    return in_paths_form(function(topology, down=down, **options), paths, options.get("balance", True))
