#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planning time and step count of transitions (plugins/module_utils/power/transition.py):
link off, link on and a speed change on the 4x4 and 8x8 torus, printed as a
Markdown table, and how many links of each fabric can go off losslessly
(their kept-turn-order routing exists, docs/transitions.md), with, for each
of the others, the obstruction proof (power/transition_obstruction.py). Usage:
benchmarks/transition_plan.py [--engine segment] [--assignment renamed]
[--paths per_destination|source_tree] [--sizes 4 8] [--budget N]
[--link N (default: the middle link)]"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, ".build")
LINK = os.path.join(BUILD, "ansible_collections", "ethercluster", "routing")
if not os.path.islink(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(ROOT, LINK)
sys.path.insert(0, BUILD)

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import (  # noqa: E402
    EtherclusterError,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition import (
    kept_order_router,
    plan_transition,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.power.transition_obstruction import (
    direct_obstruction,
)
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="segment")
    parser.add_argument("--assignment", default="renamed")
    parser.add_argument("--paths", default="per_destination", choices=["per_destination", "source_tree"],
                        help="the engine option paths (source_tree: what the fixed assignment carries on a torus)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--budget", type=int, default=None,
                        help="window evaluations the flip-order search may spend")
    parser.add_argument("--link", type=int, default=None, help="the link to switch")
    args = parser.parse_args()
    lossless = []
    print("| fabric | engine/assignment | link | action | steps | flips | method | windows | "
          "dependency edges | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        topology = topology_from_data({"generate": {"kind": "torus", "dims": [size, size]}})
        link = len(topology.links) // 2 if args.link is None else args.link
        options = {"paths": args.paths}
        route = kept_order_router(topology, args.engine, options)
        base = compute_routing(topology, args.engine, **options)
        routable = 0
        proofs = []
        for index in range(len(topology.links)):
            try:
                route([index])
                routable += 1
            except EtherclusterError:
                obstruction = direct_obstruction(topology, base, [index])
                reason = obstruction["reason"] if obstruction else \
                    "no obstruction found (another turn order may work)"
                proofs.append("  * %s: %s" % (topology.links[index].name, reason))
        lossless.append("%dx%d torus, %s (%s paths): %d of %d links can go off losslessly (kept turn order)"
                        % (size, size, args.engine, args.paths, routable, len(topology.links)))
        lossless.extend(proofs)
        calls = [("off", {}), ("on", {"current_down": [link]}), ("speed", {"speed_mbps": 100})]
        for action, extra in calls:
            started = time.perf_counter()
            try:
                result = plan_transition(topology, action, link, engine=args.engine,
                                         assignment=args.assignment, engine_options=options,
                                         search_budget=args.budget,
                                         max_broadcast_copies=10 ** 12, **extra)
            except EtherclusterError as exc:
                print("| %dx%d torus | %s/%s | %d | %s | refused: %s | | | | | %.2f |"
                      % (size, size, args.engine, args.assignment, link, action, str(exc)[:80],
                         time.perf_counter() - started))
                continue
            seconds = time.perf_counter() - started
            proof = result.proof
            method = "drain" if proof["drain"] else (
                "order-free" if proof["order_free"] else "searched order")
            flips = sum(1 for step in result.steps if step["name"].startswith("flip "))
            print("| %dx%d torus | %s/%s | %d | %s | %d | %d | %s | %d | %d | %.2f |"
                  % (size, size, args.engine, args.assignment, link, action, len(result.steps),
                     flips,
                     method, proof["windows"], proof["dependency_edges"], seconds))
            sys.stdout.flush()
    print()
    for line in lossless:
        print(line if line.startswith("  ") else "* " + line)


if __name__ == "__main__":
    main()
