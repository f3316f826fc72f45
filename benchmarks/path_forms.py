#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Path forms benchmark (issue 19): per engine and fabric, the maximum
channel load under uniform host-to-host traffic, as a multiple of the LP
lower bound with the same hosts, of

* the per-destination paths (``C x N -> C``, the engine's default),
* source trees (engine option ``paths: source_tree``: what the fixed VLAN
  assignment carries),
* source-port trees (a tree per group of a switch's host ports, two groups
  per switch; ``routing.source_tree.source_port_loads``, measured only),

and what ``plan()`` with the defaults (``assignment: auto``, ``broadcast:
contained``, OVS switches) deploys: the assignment it picks and the load of
the paths it keeps.

    python benchmarks/path_forms.py            # prints the markdown table
    python benchmarks/path_forms.py --quick    # fewer fabrics
"""

from __future__ import annotations

import sys
import time

from checkout import make_importable, report, start

make_importable()

from ansible_collections.ethercluster.routing.plugins.module_utils.errors import EtherclusterError  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.fabric.topology import topology_from_data  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.intent.build import path_metrics, plan  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.routing import compute_routing  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.routing.source_tree import source_port_loads  # noqa: E402
from ansible_collections.ethercluster.routing.plugins.module_utils.verify.metrics import lp_lower_bound, uniform  # noqa: E402

FABRICS = [
    ("8x8 mesh", {"kind": "mesh", "dims": [8, 8]}, ["dor", "west_first", "updown", "tbtp", "segment"]),
    ("8x8 torus", {"kind": "torus", "dims": [8, 8]}, ["updown", "tbtp", "segment"]),
    ("8x8 torus, 2 links", {"kind": "torus", "dims": [8, 8], "links_per_neighbor": 2},
     ["dor", "updown", "tbtp", "segment"]),
    ("random 32", {"kind": "random", "switches": 32, "degree": 4, "seed": 0}, ["updown", "tbtp", "segment"]),
    ("random 64", {"kind": "random", "switches": 64, "degree": 4, "seed": 0}, ["updown", "tbtp", "segment"]),
    ("fat tree (2,4,2)", {"kind": "fat_tree", "u": 2, "d": 4, "r": 2}, ["updown", "tbtp", "segment"]),
]
QUICK = {"8x8 torus", "random 32", "fat tree (2,4,2)"}
HOSTS = {"8x8 torus": (1, 4), "fat tree (2,4,2)": (1, 4, 8)}


def measure(name, spec, hosts, engine):
    """One row: the loads of the three forms and of the deployed plan, x LP."""
    topology = topology_from_data({"generate": dict(spec, hosts_per_switch=hosts)})
    bound = lp_lower_bound(topology, uniform(topology))
    row = {"fabric": name, "hosts": hosts, "lp": bound, "engine": engine}
    started = time.perf_counter()
    try:
        base = compute_routing(topology, engine)
    except EtherclusterError as exc:
        row["refused"] = str(exc).split(";", maxsplit=1)[0][:90]
        return row
    row["route_s"] = time.perf_counter() - started
    row["per_destination"] = path_metrics(base)["max_channel_load"] / bound
    trees = compute_routing(topology, engine, paths="source_tree")
    row["source_tree"] = path_metrics(trees)["max_channel_load"] / bound
    row["source_port"] = float(source_port_loads(base, 2).max()) / bound if hosts > 1 else None
    try:
        made = plan(topology, engine=engine)
        choice = made.intent["fabric"]["assignment_choice"]
        row["auto"] = "%s, %s" % (choice["picked"], choice["paths"].replace("_", "-"))
        row["deployed"] = made.metrics["max_channel_load"] / bound
    except EtherclusterError as exc:
        row["auto"] = "refused: " + str(exc)[:60]
    return row


def table(rows):
    lines = ["| fabric | hosts/switch | LP bound | engine | per destination × LP | source tree × LP "
             "| source port (2 groups) × LP | auto picks (OVS) | deployed × LP |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "refused" in row:
            lines.append("| %s | %d | %.4g | %s | refused: %s |  |  |  |  |" % (
                row["fabric"], row["hosts"], row["lp"], row["engine"], row["refused"]))
            continue
        port = "–" if row["source_port"] is None else "%.2f×" % row["source_port"]
        deployed = "%.2f×" % row["deployed"] if "deployed" in row else "–"
        lines.append("| %s | %d | %.4g | %s | %.2f× | %.2f× | %s | %s | %s |" % (
            row["fabric"], row["hosts"], row["lp"], row["engine"], row["per_destination"],
            row["source_tree"], port, row["auto"], deployed))
    return "\n".join(lines)


def main(argv=None):
    args, started = start(__doc__, argv, quick="the torus, random 32 and fat tree only")
    rows = []
    for name, spec, engines in FABRICS:
        if args.quick and name not in QUICK:
            continue
        for hosts in HOSTS.get(name, (1,)):
            for engine in engines:
                rows.append(measure(name, spec, hosts, engine))
                print("measured %s, %d hosts/switch, %s" % (name, hosts, engine), file=sys.stderr)
    report("Path forms", started, table(rows), args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
